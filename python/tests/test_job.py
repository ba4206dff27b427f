"""Jobs from job files, and the bad input they are refused with."""

import json

import pytest

import epochrt


def test_load_reads_the_name_and_nodes_of_a_job_file(pipeline_path):
    job = epochrt.Job.load(pipeline_path)
    assert job.name == "pipeline"
    assert job.nodes() == ["trainer_0"]
    assert job.nodes_to_checkpoint() == ["trainer_0"]


def test_from_json_parses_a_job_with_nodes_in_first_use_order():
    job = epochrt.Job.from_json(json.dumps({
        "name": "two",
        "init": [{"node": "b", "ops": [{"type": "CreateCursor",
                                         "outputs": ["c"]}]}],
        "exit": [{"node": "a", "ops": [{"type": "CreateCursor",
                                         "outputs": ["c"]}]}],
        "epoch_limit": 1,
    }))
    assert job.name == "two"
    assert job.nodes() == ["b", "a"]


def test_a_missing_job_file_raises_bad_input_naming_it(tmp_path):
    path = str(tmp_path / "absent.json")
    with pytest.raises(epochrt.BadInput) as caught:
        epochrt.Job.load(path)
    assert caught.value.code == "unreadable_file"
    assert path in str(caught.value)


def test_an_invalid_job_raises_bad_input_with_the_field_at_fault():
    text = json.dumps({
        "name": "bad",
        "init": [{"node": "n", "ops": [
            {"type": "ConstantFill", "outputs": ["x"],
             "args": {"value": "ten"}}]}],
    })
    with pytest.raises(epochrt.BadInput) as caught:
        epochrt.Job.from_json(text, "bad.json")
    message = str(caught.value)
    assert "bad.json: init[0].ops[0].args.value: expected a number" in message
    assert caught.value.code == "bad_argument"


def test_a_job_file_with_a_syntax_error_raises_bad_input(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"name": "broken",')
    with pytest.raises(epochrt.BadInput) as caught:
        epochrt.Job.load(str(path))
    assert str(path) in str(caught.value)


def test_bad_input_is_an_epochrt_error_and_a_value_error():
    assert issubclass(epochrt.BadInput, epochrt.Error)
    assert issubclass(epochrt.BadInput, ValueError)
    for name in ("JobFailed", "Stopped", "NodeLost"):
        assert issubclass(getattr(epochrt, name), epochrt.Error)
