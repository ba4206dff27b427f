"""Caffe2's call forms, as a script ported from Caffe2 writes them.

A port of caffe2/python/checkpoint_test.py's scenarios with numbers of
our own: a pipeline per node that adds a dataset to a total, a batch per
epoch, trained with Caffe2's forms (JobRunner(job, ckpt)(session),
MultiNodeCheckpointManager(prefix, db_type), session.run(ckpt.init(nodes)),
CheckpointManager, UploadTaskGroupBuilder, db_name, node names with ':').
"""

import gc
import os

import pytest

import epochrt

START = 7
VALUES = [3 * i + 2 for i in range(11)]
BATCH = 4
NODES = ["trainer:0", "trainer:1"]


def expected_totals():
    """The total after each epoch: START plus the batches read so far."""
    totals = []
    total = START
    for begin in range(0, len(VALUES), BATCH):
        total += sum(VALUES[begin:begin + BATCH])
        totals.append(total)
    return totals


EPOCHS = len(expected_totals())


def build_pipeline(job, node):
    job.init_group.add_task(epochrt.Task(node, [
        epochrt.Op("ConstantFill", outputs=["total"], shape=[1], value=START,
                   dtype="i64"),
        epochrt.Op("GivenTensorFill", outputs=["dataset"], shape=[len(VALUES)],
                   values=VALUES, dtype="i64"),
        epochrt.Op("CreateCursor", outputs=["cursor"])]))
    job.epoch_group.add_task(epochrt.Task(node, [
        epochrt.Op("ReadNext", ["cursor", "dataset"], ["batch", "finished"],
                   batch_size=BATCH),
        epochrt.Op("Sum", ["batch"], ["batch_sum"]),
        epochrt.Op("Add", ["total", "batch_sum"], ["total"])],
        outputs=["finished"], workspace_type="private"))
    job.add_stop_condition(node, "finished")


def pipeline_job(nodes=NODES):
    with epochrt.Job() as job:
        for node in nodes:
            build_pipeline(job, node)
    return job


def totals(session, nodes=NODES):
    return [int(session.fetch(node, "total")[0]) for node in nodes]


def test_a_runner_called_with_a_session_trains_the_job():
    session = epochrt.LocalSession(worker_threads=2)
    assert epochrt.JobRunner(pipeline_job())(session) == EPOCHS
    assert totals(session) == [expected_totals()[-1]] * len(NODES)


def test_a_job_without_a_name_is_its_own_context_and_compile_does_nothing():
    job = pipeline_job()
    assert job.name == "job"
    assert job.compile(epochrt.LocalSession) is None
    assert job == pipeline_job()


@pytest.mark.parametrize("db_type", ["minidb", "leveldb"])
def test_the_manager_takes_caffe2s_positional_db_type(tmp_path, db_type):
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path), db_type)
    session = epochrt.LocalSession(worker_threads=2)
    assert epochrt.JobRunner(pipeline_job(), manager)(session) == EPOCHS
    assert manager.get_resume_from_epoch_id() == EPOCHS


def test_an_unknown_db_type_is_refused_naming_the_choices(tmp_path):
    with pytest.raises(epochrt.BadInput, match="'sqlite'.*minidb"):
        epochrt.MultiNodeCheckpointManager(str(tmp_path), "sqlite")


def test_a_metadata_handler_is_refused_saying_where_epochrt_keeps_its_own(
        tmp_path):
    with pytest.raises(epochrt.BadInput, match="epochrt.metadata"):
        epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb",
                                           metadata_handler=object())


def test_db_name_is_prefix_slash_node_dot_epoch_or_path_prefix_node_epoch(
        tmp_path):
    assert epochrt.db_name(3, "trainer:0", "/ckpt") == "/ckpt/trainer:0.3"
    assert (epochrt.db_name(3, "trainer:0", "/ckpt", "hdfs://x/run-")
            == "hdfs://x/run-trainer:0.3")
    assert epochrt.get_ckpt_filename("trainer:0", 3) == "trainer:0.3"
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb")
    manager.init(NODES)  # Caffe2's form: a step, not run here
    assert (manager.get_ckpt_db_name("trainer:1", 10)
            == epochrt.db_name(10, "trainer:1", str(tmp_path)))


def test_a_caffe2_training_loop_by_hand_checkpoints_and_resumes(tmp_path):
    """Caffe2's JobRunner.train written out with session.run and the
    manager's task-returning calls; a second loop resumes from epoch 1."""
    job = pipeline_job()
    session = epochrt.LocalSession(worker_threads=2)
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb")
    session.run(job.init_group)
    step = manager.init(job.nodes_to_checkpoint())
    assert not step.done
    session.run(step)
    assert "total" in manager.blob_list("trainer:0")
    session.run(manager.save(0))
    manager.write_checkpoint_metadata(0)
    epoch = 1
    while True:
        outputs = session.run(job.epoch_group)
        finished = [bool(out["finished"]) for out in outputs.values()]
        session.run(manager.save(epoch))
        manager.write_checkpoint_metadata(epoch)
        if epoch == 1:
            after_first = totals(session)
        if any(finished):
            break
        epoch += 1
    assert epoch == EPOCHS
    assert totals(session) == [expected_totals()[-1]] * len(NODES)
    assert after_first == [expected_totals()[0]] * len(NODES)

    again = epochrt.LocalSession(worker_threads=2)
    reader = epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb")
    again.run(reader.init(job.nodes_to_checkpoint(), retrieve_from_epoch=1))
    again.run(reader.load(1))
    assert totals(again) == after_first


def test_save_checkpoints_saves_and_commits_an_epoch(tmp_path):
    job = pipeline_job()
    session = epochrt.LocalSession(worker_threads=2)
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb")
    runner = epochrt.JobRunner(job, manager)
    session.run(job.init_group)
    runner.save_checkpoints(0, session)
    assert manager.get_resume_from_epoch_id() == 0
    assert manager.check_db_exists(0)
    stats = manager.report_checkpoint_stats("checkpoint_save")
    assert sorted(s["node"] for s in stats) == sorted(NODES)
    assert all(s["bytes"] > 0 and s["seconds"] >= 0 for s in stats)


def test_save_checkpoints_without_a_manager_is_refused():
    session = epochrt.LocalSession(worker_threads=2)
    with pytest.raises(epochrt.BadInput, match="checkpoint manager"):
        epochrt.JobRunner(pipeline_job()).save_checkpoints(0, session)


@pytest.mark.parametrize("epoch", range(EPOCHS + 1))
def test_resuming_with_colon_node_names_from_each_epoch_ends_alike(
        tmp_path, epoch):
    def run(resume):
        session = epochrt.LocalSession(worker_threads=2)
        manager = epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb")
        runner = epochrt.JobRunner(pipeline_job(), manager, resume)
        return runner(session), totals(session)

    assert run(None) == (EPOCHS, [expected_totals()[-1]] * len(NODES))
    gc.collect()
    assert run(epoch) == (EPOCHS, [expected_totals()[-1]] * len(NODES))
    assert os.path.isdir(os.path.join(str(tmp_path),
                                      "trainer:1.%d" % EPOCHS))


def test_blob_list_after_train_names_the_checkpointed_blobs(tmp_path):
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb")
    epochrt.JobRunner(pipeline_job(), manager)(
        epochrt.LocalSession(worker_threads=2))
    for node in NODES:
        assert {"total", "dataset", "cursor"} <= set(manager.blob_list(node))


def test_load_blobs_locally_loads_only_the_named_blobs(tmp_path):
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb")
    epochrt.JobRunner(pipeline_job(), manager)(
        epochrt.LocalSession(worker_threads=2))
    del manager
    gc.collect()
    reader = epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb")
    session = epochrt.LocalSession(worker_threads=2)
    assert reader.load_blobs_locally(NODES, ["total"], 2, session)
    assert totals(session) == [expected_totals()[1]] * len(NODES)
    with pytest.raises(epochrt.BadInput):
        session.fetch("trainer:0", "dataset")
    assert not reader.load_blobs_locally(NODES, ["total"], EPOCHS + 5,
                                         session)


def test_set_params_binds_the_nodes(tmp_path):
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb")
    manager.set_params(nodes=NODES, path_type="minidb")
    assert manager.nodes == NODES


class CopyUpload(epochrt.UploadTaskGroupBuilder):
    """Uploads each node's checkpoint of the last epoch to a directory,
    with a CopyDirectory task on that node."""

    def __init__(self, dest):
        self.dest = dest
        self.calls = []

    def build(self, epoch, checkpoint_manager):
        self.calls.append(epoch)
        group = epochrt.TaskGroup()
        for node in checkpoint_manager.nodes:
            group.add_task(epochrt.Task(node, [epochrt.Op(
                "CopyDirectory",
                source=checkpoint_manager.get_ckpt_db_name(node, epoch),
                destination=os.path.join(self.dest,
                                         "%s.%d" % (node, epoch)))]))
        return group


def test_the_upload_builders_group_runs_after_the_epochs(tmp_path):
    upload = CopyUpload(str(tmp_path / "uploaded"))
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path / "ckpt"),
                                                 "minidb")
    runner = epochrt.JobRunner(pipeline_job(), manager,
                               upload_task_group_builder=upload)
    assert runner(epochrt.LocalSession(worker_threads=2)) == EPOCHS
    assert upload.calls == [EPOCHS]
    for node in NODES:
        copied = tmp_path / "uploaded" / ("%s.%d" % (node, EPOCHS))
        original = manager.get_ckpt_db_name(node, EPOCHS)
        assert sorted(os.listdir(str(copied))) == sorted(os.listdir(original))


def test_an_upload_builder_that_raises_fails_the_job_with_its_text(tmp_path):
    class Broken(epochrt.UploadTaskGroupBuilder):
        def build(self, epoch, checkpoint_manager):
            raise RuntimeError("no bucket for epoch %d" % epoch)

    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb")
    runner = epochrt.JobRunner(pipeline_job(), manager,
                               upload_task_group_builder=Broken())
    with pytest.raises(epochrt.Error, match="no bucket for epoch %d" % EPOCHS):
        runner(epochrt.LocalSession(worker_threads=2))


def test_the_base_upload_builder_is_an_interface(tmp_path):
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb")
    runner = epochrt.JobRunner(pipeline_job(), manager,
                               upload_task_group_builder=(
                                   epochrt.UploadTaskGroupBuilder()))
    with pytest.raises(epochrt.Error, match="NotImplementedError"):
        runner(epochrt.LocalSession(worker_threads=2))


def test_an_upload_builder_may_not_save_through_the_busy_manager(tmp_path):
    class Saves(epochrt.UploadTaskGroupBuilder):
        def build(self, epoch, checkpoint_manager):
            checkpoint_manager.save(epoch + 1)

    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb")
    runner = epochrt.JobRunner(pipeline_job(), manager,
                               upload_task_group_builder=Saves())
    with pytest.raises(epochrt.Error, match="only ask the checkpoint manager"):
        runner(epochrt.LocalSession(worker_threads=2))


def test_a_single_node_manager_checkpoints_its_node(tmp_path):
    node = "trainer:0"
    manager = epochrt.CheckpointManager(str(tmp_path), node, "minidb")
    session = epochrt.LocalSession(worker_threads=2)
    assert epochrt.JobRunner(pipeline_job([node]), manager)(session) == EPOCHS
    assert "total" in manager.blob_list()
    fresh = epochrt.LocalSession(worker_threads=2)
    assert fresh.run(manager.load_blobs_from_checkpoint(["total"], 1))
    assert totals(fresh, [node]) == [expected_totals()[0]]


def test_a_single_node_manager_refuses_a_job_of_other_nodes(tmp_path):
    manager = epochrt.CheckpointManager(str(tmp_path), "trainer:0", "minidb")
    with pytest.raises(epochrt.BadInput, match="MultiNodeCheckpointManager|"
                       "multi_node_checkpoint_manager"):
        epochrt.JobRunner(pipeline_job(), manager)(
            epochrt.LocalSession(worker_threads=2))


def test_session_run_refuses_what_is_not_a_group():
    with pytest.raises(TypeError, match="TaskGroup"):
        epochrt.LocalSession(worker_threads=2).run("init_group")


@pytest.mark.parametrize("call", [
    lambda m, s: m.init(s, "trainer:0"),
    lambda m, s: m.init("trainer:0"),
    lambda m, s: m.init(["trainer:0", "trainer:0"]),
    lambda m, s: m.init([None]),
    lambda m, s: m.set_params("trainer:0"),
    lambda m, s: m.load_blobs_locally("trainer:0", ["total"], 1, s),
    lambda m, s: m.load_blobs_locally(["trainer:0"], "total", 1, s),
])
def test_a_string_or_a_repeat_where_nodes_belong_is_refused(tmp_path, call):
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path), "minidb")
    with pytest.raises(epochrt.BadInput, match="string|twice|None"):
        call(manager, epochrt.LocalSession(worker_threads=2))


def test_paths_may_be_path_objects(tmp_path):
    manager = epochrt.MultiNodeCheckpointManager(tmp_path / "ckpt", "minidb")
    runner = epochrt.JobRunner(pipeline_job(), manager)
    runner.train(epochrt.LocalSession(worker_threads=2),
                 stats_json=tmp_path / "stats.jsonl")
    assert (tmp_path / "stats.jsonl").read_text().count("\n") >= EPOCHS


def test_a_group_on_a_node_a_training_job_holds_is_refused():
    import threading
    slow = epochrt.Job("slow")
    slow.epoch_group.add_task(epochrt.Task("g:0", [
        epochrt.Op("Sleep", ms=1500)]))
    epochrt.epoch_limiter(slow, 1)
    session = epochrt.LocalSession(worker_threads=2)
    done = []
    t = threading.Thread(
        target=lambda: done.append(epochrt.JobRunner(slow)(session)))
    t.start()
    import time
    time.sleep(0.5)
    group = epochrt.TaskGroup()
    group.add_task(epochrt.Task("g:0", [
        epochrt.Op("ConstantFill", outputs=["x"])]))
    with pytest.raises(epochrt.BadInput, match="in use by job 'slow'"):
        session.run(group)
    t.join()
    assert done == [1]
    assert session.run(group) == {}
