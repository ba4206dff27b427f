"""JobRunner.train(session, on_epoch=fn, stats_json=path): what every epoch
cost and what it output, handed to Python as the job runs."""

import json

import pytest

import epochrt

STEP = 0.5


def countdown_job(epochs):
    """One node halves `x` each epoch and outputs it as its loss."""
    job = epochrt.Job("reports")
    job.init_group.add_task(epochrt.Task("n", [
        epochrt.Op("GivenTensorFill", outputs=["x"], values=[8.0],
                   dtype="f64"),
        epochrt.Op("GivenTensorFill", outputs=["step"], values=[STEP],
                   dtype="f64")]))
    job.epoch_group.add_task(epochrt.Task("n", [
        epochrt.Op("Mul", ["x", "step"], ["x"]),
        epochrt.Op("Copy", ["x"], ["loss"])],
        name="train", outputs=["loss"]))
    epochrt.epoch_limiter(job, epochs)
    return job


def train(job, ckpt_dir=None, **watch):
    manager = (epochrt.MultiNodeCheckpointManager(str(ckpt_dir))
               if ckpt_dir is not None else None)
    runner = epochrt.JobRunner(job, manager)
    return runner.train(epochrt.LocalSession(worker_threads=2), **watch)


def test_on_epoch_gets_every_epoch_in_order_with_its_outputs(tmp_path):
    records = []
    assert train(countdown_job(4), tmp_path, on_epoch=records.append) == 4
    assert [r["epoch"] for r in records] == [0, 1, 2, 3, 4]
    losses = [float(r["outputs"]["train"]["loss"][0]) for r in records[1:]]
    assert losses == [8.0 * STEP ** e for e in range(1, 5)]
    assert records[0]["outputs"] == {}


def test_with_checkpoints_a_record_holds_the_commit_and_each_nodes_save(
        tmp_path):
    records = []
    train(countdown_job(2), tmp_path, on_epoch=records.append)
    for r in records:
        assert r["type"] == "epoch"
        assert r["committed"] is True
        assert r["epoch_us"] >= 0 and r["commit_us"] >= 0
        assert [n["node"] for n in r["nodes"]] == ["n"]
        assert r["nodes"][0]["bytes"] > 0


def test_without_checkpoints_a_record_has_the_epochs_own_figures():
    records = []
    train(countdown_job(3), on_epoch=records.append)
    assert [r["epoch"] for r in records] == [0, 1, 2, 3]
    assert all("committed" not in r and r["epoch_us"] >= 0 for r in records)


def test_stats_json_writes_the_lines_on_epoch_gets(tmp_path):
    records = []
    path = tmp_path / "stats.jsonl"
    train(countdown_job(3), tmp_path / "ckpt", on_epoch=records.append,
          stats_json=str(path))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        del record["outputs"]
    assert [line for line in lines if line["type"] == "epoch"] == records


def test_a_named_output_is_a_metric_of_each_epochs_record_and_line(tmp_path):
    records = []
    path = tmp_path / "stats.jsonl"
    train(countdown_job(3), tmp_path / "ckpt", on_epoch=records.append,
          stats_json=path, metrics=["loss"])
    assert "metrics" not in records[0]
    assert [r["metrics"] for r in records[1:]] == [
        {"loss": {"train": 8.0 * STEP ** e}} for e in range(1, 4)]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line.get("metrics") for line in lines] == [
        r.get("metrics") for r in records]


def test_metrics_alone_need_no_callback_or_file():
    assert train(countdown_job(2), metrics=["loss"]) == 2


@pytest.mark.parametrize("metrics, problem", [
    (["los"], r'no epoch task outputs "los" \(their outputs: .*"loss"\)'),
    ("loss", "a list of blob names, got a string"),
])
def test_a_metric_no_epoch_task_outputs_is_refused(metrics, problem):
    with pytest.raises(epochrt.BadInput, match=problem):
        train(countdown_job(2), metrics=metrics)


def test_an_exception_in_on_epoch_stops_the_job_and_is_raised(tmp_path):
    seen = []

    def on_epoch(record):
        seen.append(record["epoch"])
        if record["epoch"] == 1:
            raise ZeroDivisionError("diverged at epoch 1")

    with pytest.raises(ZeroDivisionError, match="diverged"):
        train(countdown_job(50), tmp_path, on_epoch=on_epoch)
    # Stopped after the running epoch: a few at most, not fifty.
    assert seen[:2] == [0, 1] and len(seen) <= 3
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
    assert manager.get_resume_from_epoch_id() < 50


def test_a_stats_file_that_cannot_be_written_is_refused(tmp_path):
    with pytest.raises(epochrt.BadInput, match="stats_json"):
        train(countdown_job(1), stats_json=str(tmp_path / "no" / "s.jsonl"))


def test_on_epoch_must_be_callable():
    with pytest.raises(epochrt.BadInput, match="on_epoch"):
        train(countdown_job(1), on_epoch=42)


def test_on_epoch_may_ask_the_manager_for_names(tmp_path):
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
    names = []
    epochrt.JobRunner(countdown_job(2), manager).train(
        epochrt.LocalSession(worker_threads=2),
        on_epoch=lambda r: names.append(
            manager.get_ckpt_db_name("n", r["epoch"])))
    assert names == [str(tmp_path / ("n.%d" % e)) for e in range(3)]


def test_on_epoch_that_calls_the_busy_manager_is_refused_not_hung(tmp_path):
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
    with pytest.raises(epochrt.BadInput, match="on_epoch may only ask"):
        epochrt.JobRunner(countdown_job(3), manager).train(
            epochrt.LocalSession(worker_threads=2),
            on_epoch=lambda r: manager.report_checkpoint_stats("x"))
