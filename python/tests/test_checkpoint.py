"""Caffe2's checkpoint_test.py, ported: its pipeline built in Python on
three nodes, checkpointed by a MultiNodeCheckpointManager."""

import gc
import os

import pytest

import epochrt

NODES = ["trainer_0", "trainer_1", "trainer_2"]
# Each node's total after each epoch (Caffe2's EXPECTED_TOTALS).
EXPECTED_TOTALS = [103, 115, 136, 145]


def build_pipeline(job, node):
    """Caffe2's build_pipeline: a total of 100 plus the numbers 0 to 9,
    three per epoch, on `node`; the job stops when its reader is done."""
    job.init_group.add_task(epochrt.Task(node, [
        epochrt.Op("ConstantFill", outputs=["total"], shape=[1], value=100,
                   dtype="i64"),
        epochrt.Op("GivenTensorFill", outputs=["dataset"], shape=[10],
                   values=list(range(10)), dtype="i64"),
        epochrt.Op("CreateCursor", outputs=["cursor"])]))
    job.epoch_group.add_task(epochrt.Task(node, [
        epochrt.Op("ReadNext", ["cursor", "dataset"], ["batch", "finished"],
                   batch_size=3),
        epochrt.Op("Sum", ["batch"], ["batch_sum"]),
        epochrt.Op("Add", ["total", "batch_sum"], ["total"])],
        outputs=["finished"], workspace_type="private"))
    job.add_stop_condition(node, "finished")


def pipeline_job():
    job = epochrt.Job("checkpoint_test")
    for node in NODES:
        build_pipeline(job, node)
    return job


def totals(session):
    return [session.fetch(node, "total").tolist()[0] for node in NODES]


def train(ckpt_dir, resume_from_epoch=None):
    """One run on a new session and manager; returns the last epoch and the
    totals. The manager is gone when it returns."""
    session = epochrt.LocalSession(worker_threads=2)
    manager = epochrt.MultiNodeCheckpointManager(str(ckpt_dir))
    runner = epochrt.JobRunner(pipeline_job(), checkpoint_manager=manager,
                               resume_from_epoch=resume_from_epoch)
    return runner.train(session), totals(session)


def test_single_checkpoint_runs_every_epoch_to_the_expected_totals(
        tmp_path):
    assert train(tmp_path) == (len(EXPECTED_TOTALS),
                               [EXPECTED_TOTALS[-1]] * len(NODES))


@pytest.mark.parametrize("epoch", range(len(EXPECTED_TOTALS) + 1))
def test_resuming_from_each_epoch_gives_the_same_totals(tmp_path, epoch):
    train(tmp_path)
    gc.collect()
    assert train(tmp_path, resume_from_epoch=epoch) == (
        len(EXPECTED_TOTALS), [EXPECTED_TOTALS[-1]] * len(NODES))


def test_ckpt_names_are_prefix_node_epoch_and_exist_for_every_epoch(
        tmp_path):
    train(tmp_path)
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
    session = epochrt.LocalSession(worker_threads=2)
    manager.init(session, NODES)
    for epoch in range(1, len(EXPECTED_TOTALS) + 1):
        for node in NODES:
            name = manager.get_ckpt_db_name(node, epoch)
            assert name == os.path.join(str(tmp_path),
                                        "%s.%d" % (node, epoch))
            assert os.path.exists(name)
        assert manager.check_db_exists(epoch)


@pytest.mark.parametrize("epoch", range(1, len(EXPECTED_TOTALS) + 1))
def test_load_blobs_from_checkpoints_loads_only_the_named_blobs(
        tmp_path, epoch):
    train(tmp_path)
    session = epochrt.LocalSession(worker_threads=2)
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
    runner = epochrt.JobRunner(pipeline_job(), checkpoint_manager=manager)
    assert runner.load_blobs_from_checkpoints(["total"], epoch, session)
    assert totals(session) == [EXPECTED_TOTALS[epoch - 1]] * len(NODES)
    for node in NODES:
        with pytest.raises(epochrt.BadInput):
            session.fetch(node, "cursor")


def test_load_blobs_from_checkpoints_of_an_epoch_never_saved_is_false(
        tmp_path):
    train(tmp_path)
    session = epochrt.LocalSession(worker_threads=2)
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
    runner = epochrt.JobRunner(pipeline_job(), checkpoint_manager=manager)
    assert not runner.load_blobs_from_checkpoints(["total"], 9, session)


def test_load_blobs_from_checkpoints_without_a_manager_raises_bad_input():
    runner = epochrt.JobRunner(pipeline_job())
    with pytest.raises(epochrt.BadInput):
        runner.load_blobs_from_checkpoints(
            ["total"], 1, epochrt.LocalSession(worker_threads=2))


def test_a_reused_manager_resumes_a_second_job_from_the_last_epoch(
        tmp_path):
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
    results = []
    for _ in range(2):
        session = epochrt.LocalSession(worker_threads=2)
        runner = epochrt.JobRunner(pipeline_job(),
                                   checkpoint_manager=manager)
        results.append((runner.train(session), totals(session)))
    assert results == [(4, [145] * 3)] * 2
    assert manager.get_resume_from_epoch_id() == 4


def test_the_download_group_runs_once_after_the_last_epoch(tmp_path):
    job = pipeline_job()
    for node in NODES:
        job.download_group.add_task(epochrt.Task(node, [
            epochrt.Op("ConstantFill", outputs=["bonus"], shape=[1],
                       value=1000, dtype="i64"),
            epochrt.Op("Add", ["total", "bonus"], ["total"])]))
    session = epochrt.LocalSession(worker_threads=2)
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
    assert epochrt.JobRunner(job, checkpoint_manager=manager).train(
        session) == 4
    assert totals(session) == [1145] * 3


def test_a_checkpoint_directory_that_cannot_be_made_does_not_fail_the_job(
        tmp_path):
    # Caffe2's test_ckpt_save_failure: a save that fails is a warning.
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    epochrt.set_log_level("off")
    try:
        assert train(blocker / "ckpt") == (4, [145] * 3)
    finally:
        epochrt.set_log_level("warn")
