"""JobRunner and MultiNodeCheckpointManager: the behaviours of Caffe2's
checkpoint_test.py on examples/jobs/pipeline.json."""

import json
import subprocess
import threading
import time

import numpy as np
import pytest

import epochrt
from conftest import PIPELINE_TOTALS


def run_pipeline(pipeline_path, ckpt_dir=None, resume_from_epoch=None):
    """Runs pipeline.json on a new session; returns the last epoch and the
    total. The manager is gone when it returns (it holds the directory's
    lock while it lives)."""
    job = epochrt.Job.load(pipeline_path)
    session = epochrt.LocalSession(worker_threads=2)
    manager = None
    if ckpt_dir is not None:
        manager = epochrt.MultiNodeCheckpointManager(str(ckpt_dir))
    runner = epochrt.JobRunner(job, checkpoint_manager=manager,
                               resume_from_epoch=resume_from_epoch)
    epochs = runner.train(session)
    return epochs, session.fetch("trainer_0", "total")


def test_train_gives_the_clis_totals(pipeline_path, cli):
    out = subprocess.run(
        [cli, "run", pipeline_path, "--fetch", "trainer_0:total", "-q"],
        check=True, capture_output=True, text=True).stdout.split()
    epochs, total = run_pipeline(pipeline_path)
    assert out == ["trainer_0:total=" + ",".join(str(v) for v in total),
                   "epochs=" + str(epochs)]
    assert epochs == 4
    assert total.dtype == np.int64
    np.testing.assert_array_equal(total, [145])


def test_train_with_checkpoints_commits_every_epoch(pipeline_path, tmp_path):
    epochs, total = run_pipeline(pipeline_path, tmp_path)
    assert (epochs, total.tolist()) == (4, [145])
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
    assert manager.get_resume_from_epoch_id() == 4
    for epoch in PIPELINE_TOTALS:
        assert manager.cp_accessible(epoch)
    assert not manager.cp_accessible(5)


def test_the_checkpoint_of_each_epoch_holds_that_epochs_total(
        pipeline_path, tmp_path):
    run_pipeline(pipeline_path, tmp_path)
    for epoch, expected in PIPELINE_TOTALS.items():
        session = epochrt.LocalSession(worker_threads=2)
        manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
        manager.init(session, ["trainer_0"], retrieve_from_epoch=epoch)
        assert sorted(manager.blob_list("trainer_0")) == [
            "cursor", "dataset", "total"]
        manager.load(epoch)
        assert session.fetch("trainer_0", "total").tolist() == [expected]


@pytest.mark.parametrize("epoch", sorted(PIPELINE_TOTALS))
def test_resuming_from_each_epoch_ends_with_the_same_total(
        pipeline_path, tmp_path, epoch):
    run_pipeline(pipeline_path, tmp_path)
    epochs, total = run_pipeline(pipeline_path, tmp_path,
                                 resume_from_epoch=epoch)
    assert (epochs, total.tolist()) == (4, [145])


def test_a_rerun_after_the_end_resumes_from_the_last_epoch(
        pipeline_path, tmp_path):
    run_pipeline(pipeline_path, tmp_path)
    epochs, total = run_pipeline(pipeline_path, tmp_path)
    assert (epochs, total.tolist()) == (4, [145])


def test_resuming_from_an_epoch_never_committed_raises_bad_input(
        pipeline_path, tmp_path):
    run_pipeline(pipeline_path, tmp_path)
    with pytest.raises(epochrt.BadInput) as caught:
        run_pipeline(pipeline_path, tmp_path, resume_from_epoch=9)
    assert caught.value.code == "not_committed"


def test_a_failing_task_raises_job_failed_with_its_text():
    job = epochrt.Job.from_json(json.dumps({
        "name": "mismatch",
        "init": [{"node": "n", "ops": [
            {"type": "ConstantFill", "outputs": ["a"],
             "args": {"shape": [2], "value": 1, "dtype": "i64"}},
            {"type": "ConstantFill", "outputs": ["b"],
             "args": {"shape": [2], "value": 1, "dtype": "f32"}},
            {"type": "Add", "inputs": ["a", "b"], "outputs": ["c"]}]}],
        "epoch_limit": 1,
    }))
    with pytest.raises(epochrt.JobFailed) as caught:
        epochrt.JobRunner(job).train(epochrt.LocalSession(worker_threads=2))
    assert "Add" in str(caught.value)


def test_train_after_request_stop_raises_stopped(pipeline_path):
    runner = epochrt.JobRunner(epochrt.Job.load(pipeline_path))
    runner.request_stop()
    with pytest.raises(epochrt.Stopped) as caught:
        runner.train(epochrt.LocalSession(worker_threads=2))
    assert caught.value.code == "stopped"


def test_train_releases_the_gil_while_the_job_runs():
    # Two epochs of 150 ms: a thread that held the GIL throughout would let
    # this one count nothing until it ended.
    job = epochrt.Job.from_json(json.dumps({
        "name": "slow",
        "epoch": [{"node": "n", "ops": [{"type": "Sleep",
                                          "args": {"ms": 150}}]}],
        "epoch_limit": 2,
    }))
    session = epochrt.LocalSession(worker_threads=2)
    result = {}
    trainer = threading.Thread(
        target=lambda: result.update(epochs=epochrt.JobRunner(job).train(
            session)))
    trainer.start()
    ticks = 0
    while trainer.is_alive():
        ticks += 1
        time.sleep(0.005)
    trainer.join()
    assert result == {"epochs": 2}
    assert ticks >= 10


def test_manager_saves_commits_and_loads_by_hand(tmp_path):
    session = epochrt.LocalSession(worker_threads=2)
    session.put("trainer_0", "w", np.arange(3, dtype=np.float32))
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
    assert manager.db_prefix == str(tmp_path)
    assert manager.get_resume_from_epoch_id() is None
    manager.init(session, ["trainer_0"])
    assert manager.blob_list("trainer_0") == ["w"]
    assert manager.get_ckpt_db_name("trainer_0", 7) == str(
        tmp_path / "trainer_0.7")
    assert manager.cp_accessible()
    manager.save(7)
    assert manager.check_db_exists(7)
    assert not manager.cp_accessible(7)
    manager.write_checkpoint_metadata(7)
    assert manager.cp_accessible(7)
    assert manager.get_resume_from_epoch_id() == 7
    session.put("trainer_0", "w", np.zeros(3, dtype=np.float32))
    manager.load(7)
    np.testing.assert_array_equal(session.fetch("trainer_0", "w"),
                                  np.arange(3, dtype=np.float32))


def test_loading_an_epoch_never_saved_raises(tmp_path):
    session = epochrt.LocalSession(worker_threads=2)
    session.put("trainer_0", "w", np.arange(3))
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
    manager.init(session, ["trainer_0"])
    assert not manager.check_db_exists(3)
    with pytest.raises(epochrt.Error) as caught:
        manager.load(3)
    assert caught.value.code == "checkpoint_failed"
    assert "trainer_0" in str(caught.value)


def test_manager_calls_before_init_raise_bad_input(tmp_path):
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
    with pytest.raises(epochrt.BadInput) as caught:
        manager.save(1)
    assert caught.value.code == "not_initialized"


def test_manager_options_out_of_range_raise_bad_input(tmp_path):
    with pytest.raises(epochrt.BadInput):
        epochrt.MultiNodeCheckpointManager(str(tmp_path), timeout=0)
    with pytest.raises(epochrt.BadInput):
        epochrt.MultiNodeCheckpointManager(str(tmp_path), full_every=-1)
