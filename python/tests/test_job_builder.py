"""Jobs built in Python: Job, TaskGroup, Task, Step, Op, epoch_limiter."""

import gc
import pathlib

import numpy as np
import pytest

import epochrt


def pipeline_in_python():
    """examples/jobs/pipeline.json, built in Python."""
    job = epochrt.Job("pipeline")
    job.init_group.add_task(epochrt.Task("trainer_0", [
        epochrt.Op("ConstantFill", outputs=["total"], shape=[1], value=100,
                   dtype="i64"),
        epochrt.Op("GivenTensorFill", outputs=["dataset"], shape=[10],
                   values=list(range(10)), dtype="i64"),
        epochrt.Op("CreateCursor", outputs=["cursor"]),
    ], name="init"))
    job.epoch_group.add_task(epochrt.Task("trainer_0", [
        epochrt.Op("ReadNext", ["cursor", "dataset"], ["batch", "finished"],
                   batch_size=3),
        epochrt.Op("Sum", ["batch"], ["batch_sum"]),
        epochrt.Op("Add", ["total", "batch_sum"], ["total"]),
    ], name="read", outputs=["total", "finished"], workspace_type="private"))
    job.add_stop_condition("trainer_0", "finished")
    return job


def test_a_job_built_in_python_equals_the_job_its_file_loads(pipeline_path):
    assert pipeline_in_python() == epochrt.Job.load(pipeline_path)


def test_a_job_built_in_python_runs_as_its_file_does():
    session = epochrt.LocalSession(worker_threads=2)
    assert epochrt.JobRunner(pipeline_in_python()).train(session) == 4
    assert session.fetch("trainer_0", "total").tolist() == [145]


def test_a_job_is_not_equal_to_what_is_not_a_job(pipeline_path):
    assert epochrt.Job.load(pipeline_path) != "pipeline"
    assert epochrt.Op("Add") != None  # noqa: E711


def test_a_changed_job_no_longer_equals_its_file(pipeline_path):
    job = pipeline_in_python()
    job.exit_group.add_task(epochrt.Task("trainer_0", []))
    assert job != epochrt.Job.load(pipeline_path)


def test_a_task_without_a_name_is_named_after_its_group_node_and_index():
    job = epochrt.Job("names")
    assert job.init_group.add_task(epochrt.Task("a", [])) == "init/a/0"
    assert job.init_group.add_task(epochrt.Task("b", [])) == "init/b/1"
    assert job.exit_group.add_task(
        epochrt.Task("a", [], name="bye")) == "bye"
    assert [t.name for t in job.init_group.tasks] == ["init/a/0", "init/b/1"]
    assert len(job.exit_group) == 1
    assert job.nodes() == ["a", "b"]


def test_a_group_keeps_its_job_alive():
    group = epochrt.Job("gone").epoch_group
    group.add_task(epochrt.Task("n", []))
    assert len(group) == 1


def test_a_task_added_is_a_copy():
    job = epochrt.Job("copy")
    task = epochrt.Task("n", [epochrt.Op("CreateCursor", outputs=["c"])])
    job.init_group.add_task(task)
    task.add_op(epochrt.Op("CreateCursor", outputs=["d"]))
    assert len(job.init_group.tasks[0].steps[0].ops) == 1
    assert len(task.steps[0].ops) == 2


def test_op_arguments_become_tensors_as_a_job_files_values_do():
    op = epochrt.Op("X", flag=True, count=3, rate=0.5, name="s", ints=[1, 2],
                    numbers=[1, 2.5], names=["a", "b"], empty=[],
                    array=np.arange(4, dtype=np.float32).reshape(2, 2))
    args = op.args
    assert args["flag"].dtype == np.bool_ and args["flag"].shape == ()
    assert args["count"].dtype == np.int64 and args["count"][()] == 3
    assert args["rate"].dtype == np.float64 and args["rate"][()] == 0.5
    assert args["name"].tolist() == b"s"
    assert args["ints"].dtype == np.int64 and args["ints"].tolist() == [1, 2]
    assert args["numbers"].dtype == np.float64
    assert args["numbers"].tolist() == [1.0, 2.5]
    assert args["names"].tolist() == [b"a", b"b"]
    assert args["empty"].dtype == np.int64 and args["empty"].shape == (0,)
    assert args["array"].dtype == np.float32 and args["array"].shape == (2, 2)


@pytest.mark.parametrize("value", [None, {"a": 1}, [1, "a"], [True, 1]])
def test_an_argument_no_job_file_could_hold_raises_bad_input(value):
    with pytest.raises(epochrt.BadInput, match="arg 'bad'"):
        epochrt.Op("X", bad=value)


def test_steps_run_num_iter_times_and_until_their_stop_blob():
    job = epochrt.Job("steps")
    task = epochrt.Task("n", [
        epochrt.Op("ConstantFill", outputs=["a"], shape=[1], value=0,
                   dtype="i64"),
        epochrt.Op("ConstantFill", outputs=["one"], shape=[1], value=1,
                   dtype="i64"),
        epochrt.Op("ConstantFill", outputs=["left"], value=4, dtype="i64")])
    task.add_step(epochrt.Step([epochrt.Op("Add", ["a", "one"], ["a"])],
                               num_iter=3))
    task.add_step(epochrt.Step(
        [epochrt.Op("CountDown", ["left"], ["done"])], num_iter=0,
        stop_blob="done"))
    job.init_group.add_task(task)
    epochrt.epoch_limiter(job, 1)
    session = epochrt.LocalSession(worker_threads=2)
    epochrt.JobRunner(job).train(session)
    assert session.fetch("n", "a").tolist() == [3]
    assert session.fetch("n", "left")[()] == 0


def test_a_task_takes_ops_or_steps_not_both():
    with pytest.raises(epochrt.BadInput):
        epochrt.Task("n", [], steps=[epochrt.Step()])


def test_an_unknown_workspace_type_raises_bad_input():
    with pytest.raises(epochrt.BadInput, match="workspace_type 'shared'"):
        epochrt.Task("n", [], workspace_type="shared")


def test_epoch_limiter_stops_the_job_after_that_many_epochs():
    job = epochrt.Job("limited")
    job.init_group.add_task(epochrt.Task("n", [
        epochrt.Op("ConstantFill", outputs=["x"], shape=[1], value=0,
                   dtype="i64"),
        epochrt.Op("ConstantFill", outputs=["one"], shape=[1], value=1,
                   dtype="i64")]))
    job.epoch_group.add_task(epochrt.Task("n", [
        epochrt.Op("Add", ["x", "one"], ["x"])]))
    assert epochrt.epoch_limit(job) is None
    epochrt.epoch_limiter(job, 3)
    assert epochrt.epoch_limit(job) == 3
    session = epochrt.LocalSession(worker_threads=2)
    assert epochrt.JobRunner(job).train(session) == 3
    assert session.fetch("n", "x").tolist() == [3]


def test_epoch_limiter_of_zero_epochs_raises_bad_input():
    job = epochrt.Job("none")
    job.init_group.add_task(epochrt.Task("n", []))
    with pytest.raises(epochrt.BadInput):
        epochrt.epoch_limiter(job, 0)


def test_add_stop_condition_adds_an_epoch_task_outputting_the_blob():
    job = epochrt.Job("stop")
    job.add_stop_condition("n", "done")
    assert job.stop_conditions == [("n", "done")]
    assert [t.outputs for t in job.epoch_group.tasks] == [["done"]]


def test_validate_raises_bad_input_naming_the_field_at_fault():
    job = epochrt.Job("bad")
    job.init_group.add_task(epochrt.Task("n", [epochrt.Op("Nope")]))
    epochrt.epoch_limiter(job, 1)
    with pytest.raises(epochrt.BadInput) as caught:
        job.validate()
    assert "init_group.tasks[0].steps[0].ops[0]" in str(caught.value)
    assert caught.value.code == "unknown_op"


def test_train_refuses_an_invalid_job_before_running_anything():
    job = epochrt.Job("bad")
    job.init_group.add_task(epochrt.Task("n", [
        epochrt.Op("ConstantFill", outputs=["x"], value=1, dtype="i64"),
        epochrt.Op("ConstantFill", outputs=["x"], value="one")]))
    epochrt.epoch_limiter(job, 1)
    session = epochrt.LocalSession(worker_threads=2)
    with pytest.raises(epochrt.BadInput):
        epochrt.JobRunner(job).train(session)
    with pytest.raises(epochrt.BadInput):
        session.fetch("n", "x")


def test_a_python_op_in_a_job_built_in_python():
    ops = epochrt.OpRegistry()
    ops.register("Square", lambda x: x * x, inputs=1, outputs=1)
    job = epochrt.Job("square")
    job.init_group.add_task(epochrt.Task("n", [
        epochrt.Op("GivenTensorFill", outputs=["x"], shape=[3],
                   values=[1.0, 2.0, 3.0]),
        epochrt.Op("Square", ["x"], ["y"])]))
    epochrt.epoch_limiter(job, 1)
    job.validate(ops)
    session = epochrt.LocalSession(worker_threads=2, ops=ops)
    epochrt.JobRunner(job).train(session)
    np.testing.assert_array_equal(session.fetch("n", "y"), [1.0, 4.0, 9.0])


def reader_and_trainer(capacity=2):
    """A reader task deals four batches through a channel to a trainer task
    on another node, which sums them."""
    job = epochrt.Job("dealt")
    job.add_channel(epochrt.Channel("batches", "trainer", ["x"],
                                    capacity=capacity))
    job.init_group.add_task(epochrt.Task("trainer", [
        epochrt.Op("ConstantFill", outputs=["total"], shape=[1], value=0,
                   dtype="i64")], name="init"))
    job.epoch_group.add_task(epochrt.Task("reader", steps=[
        epochrt.Step([
            epochrt.Op("GivenTensorFill", outputs=["x"], shape=[1],
                       values=[5], dtype="i64"),
            epochrt.Op("EnqueueBlobs", ["x"], channel="batches"),
        ], name="deal", num_iter=4),
        epochrt.Step([epochrt.Op("CloseBlobsQueue", channel="batches")],
                     name="close"),
    ], name="read", workspace_type="private"))
    job.epoch_group.add_task(epochrt.Task("trainer", steps=[
        epochrt.Step([
            epochrt.Op("SafeDequeueBlobs", outputs=["x", "done"],
                       channel="batches"),
            epochrt.Op("Add", ["total", "x"], ["total"]),
        ], name="sum", num_iter=0, stop_blob="done"),
    ], name="train", workspace_type="private"))
    epochrt.epoch_limiter(job, 2)
    return job


def test_a_channel_added_in_python_carries_items_between_nodes():
    job = reader_and_trainer()
    assert job.channels == [epochrt.Channel("batches", "trainer", ["x"],
                                            capacity=2)]
    session = epochrt.LocalSession()
    assert epochrt.JobRunner(job).train(session) == 2
    # Two epochs of four batches of 5; the last dequeue (done) adds nothing.
    assert session.fetch("trainer", "total").tolist() == [40]


def test_a_job_file_s_channels_load_as_channels():
    job = epochrt.Job.load(
        str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "jobs"
            / "reader_pipeline.json"))
    assert [c.name for c in job.channels][:2] == ["batches_trainer_0",
                                                  "batches_trainer_1"]
    first = job.channels[0]
    assert (first.node, first.capacity, first.blobs) == ("trainer_0", 4,
                                                          ["x", "y"])


def test_a_channel_with_no_room_is_refused_with_its_field():
    job = reader_and_trainer(capacity=0)
    with pytest.raises(epochrt.BadInput, match=r"channels\[0\]\.capacity"):
        job.validate()


def test_an_op_that_names_an_undeclared_channel_is_refused():
    job = reader_and_trainer()
    job.exit_group.add_task(epochrt.Task("reader", [
        epochrt.Op("CloseBlobsQueue", channel="nowhere")]))
    with pytest.raises(epochrt.BadInput, match="nowhere"):
        job.validate()


def test_a_group_of_a_temporary_job_keeps_the_job_alive():
    def build():
        job = epochrt.Job("temporary")
        job.init_group.add_task(epochrt.Task("a", [epochrt.Op(
            "ConstantFill", outputs=["w"], shape=[2], dtype="f32")],
            outputs=["w"]))
        return job

    groups = [build().init_group for _ in range(3)]
    gc.collect()
    for group in groups:
        assert [t.node for t in group.tasks] == ["a"]
        assert epochrt.LocalSession().run(group) == {
            "init/a/0": {"w": pytest.approx(np.zeros(2, np.float32))}}
