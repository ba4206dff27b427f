"""Stopping always works: Ctrl-C during train, request_stop and
request_stop_now, and groups that can never end (deadlocks) fail in
bounded time, naming what waits."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import epochrt
from test_distributed import daemons  # noqa: F401 (a fixture)

# A deadlock is found after two quiet checks, 500 ms apart.
DEADLOCK_BOUND = 20.0


def job_from(spec):
    return epochrt.Job.from_json(json.dumps(spec))


def opposite_collectives():
    """Two tasks calling the collectives A (all-reduce) and B (barrier) in
    opposite orders."""
    fill = {"type": "ConstantFill", "outputs": ["x"],
            "args": {"shape": [2], "value": 1.0}}
    return {"name": "crossed", "epoch_limit": 1, "epoch": [
        {"name": "a", "node": "n0", "workspace": "private", "ops": [
            fill,
            {"type": "Allreduce", "inputs": ["x"], "outputs": ["y"],
             "args": {"collective": "A"}},
            {"type": "Barrier", "args": {"collective": "B"}}]},
        {"name": "b", "node": "n1", "workspace": "private", "ops": [
            fill,
            {"type": "Barrier", "args": {"collective": "B"}},
            {"type": "Allreduce", "inputs": ["x"], "outputs": ["y"],
             "args": {"collective": "A"}}]}]}


def crossed_channels(consumer_node="n0", q2_node="n0"):
    """A producer that fills q1 (capacity 1) three times before it puts the
    one item into q2 that its consumer takes first."""
    fill = {"type": "ConstantFill", "outputs": ["x"],
            "args": {"shape": [1], "value": 1.0}}
    put = {"type": "EnqueueBlobs", "inputs": ["x"],
           "args": {"channel": "q1"}}
    take = {"type": "DequeueBlobs", "outputs": ["x"],
            "args": {"channel": "q1"}}
    return {"name": "crossed_channels", "epoch_limit": 1,
            "channels": [
                {"name": "q1", "node": "n0", "capacity": 1, "blobs": ["x"]},
                {"name": "q2", "node": q2_node, "capacity": 1,
                 "blobs": ["x"]}],
            "epoch": [
                {"name": "producer", "node": "n0", "workspace": "private",
                 "ops": [fill, put, put, put,
                         {"type": "EnqueueBlobs", "inputs": ["x"],
                          "args": {"channel": "q2"}},
                         {"type": "CloseBlobsQueue", "args": {"channel": "q1"}},
                         {"type": "CloseBlobsQueue",
                          "args": {"channel": "q2"}}]},
                {"name": "consumer", "node": consumer_node,
                 "workspace": "private",
                 "ops": [{"type": "DequeueBlobs", "outputs": ["x"],
                          "args": {"channel": "q2"}}, take, take, take]}]}


@pytest.mark.parametrize("spec, names", [
    (opposite_collectives(), ["task 'a' on n0", "task 'b' on n1",
                              "all-reduce 'A'", "barrier 'B'"]),
    (crossed_channels(), ["task 'producer' on n0", "task 'consumer' on n0",
                          "a put into channel 'q1' (1 of 1 items)",
                          "a take from channel 'q2' (0 of 1 items)"]),
], ids=["collectives", "channels"])
def test_a_deadlocked_group_fails_naming_what_every_task_waits_in(
        spec, names):
    start = time.monotonic()
    with pytest.raises(epochrt.JobFailed) as caught:
        epochrt.JobRunner(job_from(spec)).train(
            epochrt.LocalSession(worker_threads=2))
    assert time.monotonic() - start < DEADLOCK_BOUND
    text = str(caught.value)
    assert "deadlock" in text
    for name in names:
        assert name in text, text


@pytest.mark.parametrize("spec, names", [
    (opposite_collectives(), ["task 'a' on n0", "task 'b' on n1",
                              "all-reduce 'A'", "barrier 'B'"]),
    (crossed_channels(consumer_node="n1", q2_node="n1"),
     ["task 'producer' on n0", "task 'consumer' on n1",
      "a put into channel 'q1' (1 of 1 items)",
      "a take from channel 'q2' (0 of 1 items)"]),
], ids=["collectives", "channels"])
def test_a_group_deadlocked_across_daemons_fails_naming_every_task(
        spec, names, daemons, cli):
    session = epochrt.DistributedSession(
        {"n0": daemons.cli(cli, "d0"), "n1": daemons.cli(cli, "d1")})
    runner = epochrt.JobRunner(job_from(spec))
    # Were the deadlock never found, the test would still end.
    timer = stop_later(runner.request_stop_now, DEADLOCK_BOUND)
    start = time.monotonic()
    try:
        with pytest.raises(epochrt.JobFailed) as caught:
            runner.train(session)
    finally:
        timer.cancel()
    assert time.monotonic() - start < DEADLOCK_BOUND
    text = str(caught.value)
    assert "deadlock" in text
    for name in names:
        assert name in text, text


def slow_partner(remote_channel):
    """Task 'a' on n0 sleeps past several deadlock checks before it takes
    part; task 'b' on n1 waits for it all that time, in an all-reduce or
    in a take from a channel on n0."""
    fill = {"type": "ConstantFill", "outputs": ["x"],
            "args": {"shape": [2], "value": 1.0}}
    sleep = {"type": "Sleep", "args": {"ms": 2500}}
    if remote_channel:
        return {"name": "slow_channel", "epoch_limit": 1,
                "channels": [{"name": "q", "node": "n0", "capacity": 1,
                              "blobs": ["x"]}],
                "epoch": [
                    {"name": "a", "node": "n0", "workspace": "private",
                     "ops": [fill, sleep,
                             {"type": "EnqueueBlobs", "inputs": ["x"],
                              "args": {"channel": "q"}},
                             {"type": "CloseBlobsQueue",
                              "args": {"channel": "q"}}]},
                    {"name": "b", "node": "n1", "workspace": "private",
                     "ops": [{"type": "DequeueBlobs", "outputs": ["x"],
                              "args": {"channel": "q"}}]}]}
    reduce = {"type": "Allreduce", "inputs": ["x"], "outputs": ["y"],
              "args": {"collective": "A"}}
    return {"name": "slow_collective", "epoch_limit": 1, "epoch": [
        {"name": "a", "node": "n0", "workspace": "private",
         "ops": [fill, sleep, reduce]},
        {"name": "b", "node": "n1", "workspace": "private",
         "ops": [fill, reduce]}]}


@pytest.mark.parametrize("remote_channel", [False, True],
                         ids=["collective", "channel"])
def test_a_task_that_waits_for_a_slow_one_on_another_daemon_is_no_deadlock(
        remote_channel, daemons, cli):
    session = epochrt.DistributedSession(
        {"n0": daemons.cli(cli, "d0"), "n1": daemons.cli(cli, "d1")})
    assert epochrt.JobRunner(job_from(slow_partner(remote_channel))).train(
        session) == 1


def test_the_cli_ends_a_deadlocked_job_file_with_the_deadlock(tmp_path, cli):
    path = tmp_path / "crossed.json"
    path.write_text(json.dumps(crossed_channels()))
    done = subprocess.run([cli, "run", str(path)], capture_output=True,
                          text=True, timeout=DEADLOCK_BOUND + 30)
    assert done.returncode != 0
    assert "deadlock" in done.stderr


def slow_job(sleep_ms, epochs, waiting_consumer=False):
    """Epochs that sleep `sleep_ms` each; with `waiting_consumer`, a second
    task waits in a take that the sleeper answers only after its sleep."""
    epoch = [{"name": "sleeper", "node": "n", "workspace": "private",
              "ops": [{"type": "Sleep", "args": {"ms": sleep_ms}}]}]
    spec = {"name": "slow", "epoch_limit": epochs,
            "init": [{"node": "n", "ops": [
                {"type": "ConstantFill", "outputs": ["x"],
                 "args": {"shape": [1], "value": 1.0}}]}],
            "epoch": epoch}
    if waiting_consumer:
        spec["channels"] = [{"name": "q", "node": "n", "capacity": 1,
                             "blobs": ["x"]}]
        epoch[0]["ops"] += [{"type": "EnqueueBlobs", "inputs": ["x"],
                             "args": {"channel": "q"}},
                            {"type": "CloseBlobsQueue",
                             "args": {"channel": "q"}}]
        epoch.append({"name": "consumer", "node": "n",
                      "workspace": "private",
                      "ops": [{"type": "DequeueBlobs", "outputs": ["y"],
                               "args": {"channel": "q"}}]})
    return job_from(spec)


def stop_later(fn, after):
    timer = threading.Timer(after, fn)
    timer.start()
    return timer


def test_request_stop_now_ends_an_epoch_whose_task_waits_in_a_channel(
        tmp_path):
    runner = epochrt.JobRunner(
        slow_job(3_600_000, 2, waiting_consumer=True),
        checkpoint_manager=epochrt.MultiNodeCheckpointManager(str(tmp_path)))
    timer = stop_later(runner.request_stop_now, 1.0)
    start = time.monotonic()
    with pytest.raises(epochrt.Stopped):
        runner.train(epochrt.LocalSession(worker_threads=2))
    timer.join()
    assert time.monotonic() - start < 15
    assert epochrt.ckpt_ls(str(tmp_path))["last_committed"] == 0


def test_request_stop_ends_an_endless_epoch_after_its_grace(tmp_path):
    runner = epochrt.JobRunner(
        slow_job(3_600_000, 2, waiting_consumer=True),
        checkpoint_manager=epochrt.MultiNodeCheckpointManager(str(tmp_path)),
        stop_grace=1.0)
    timer = stop_later(runner.request_stop, 0.5)
    start = time.monotonic()
    with pytest.raises(epochrt.Stopped) as caught:
        runner.train(epochrt.LocalSession(worker_threads=2))
    timer.join()
    assert time.monotonic() - start < 15
    assert "did not end within" in str(caught.value)


SCRIPT = textwrap.dedent("""
    import json, sys, time, epochrt
    spec = {"name": "paced", "epoch_limit": int(sys.argv[3]),
            "init": [{"node": "n", "ops": [
                {"type": "ConstantFill", "outputs": ["total"],
                 "args": {"shape": [1], "value": 0, "dtype": "i64"}},
                {"type": "ConstantFill", "outputs": ["one"],
                 "args": {"shape": [1], "value": 1, "dtype": "i64"}}]}],
            "epoch": [{"node": "n", "ops": [
                {"type": "Sleep", "args": {"ms": int(sys.argv[2])}},
                {"type": "Add", "inputs": ["total", "one"],
                 "outputs": ["total"]}]}]}
    job = epochrt.Job.from_json(json.dumps(spec))
    manager = epochrt.MultiNodeCheckpointManager(sys.argv[1])
    watch = {}
    if len(sys.argv) > 4:  # an on_epoch that takes this many seconds
        watch["on_epoch"] = lambda record: time.sleep(float(sys.argv[4]))
    print("training", flush=True)
    epochs = epochrt.JobRunner(job, checkpoint_manager=manager).train(
        epochrt.LocalSession(worker_threads=2), **watch)
    print("epochs", epochs, flush=True)
""")


def start_script(tmp_path, sleep_ms, epochs, on_epoch_seconds=None):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    extra = [] if on_epoch_seconds is None else [str(on_epoch_seconds)]
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "ck"), str(sleep_ms),
         str(epochs)] + extra,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ))
    assert proc.stdout.readline().strip() == "training"
    return proc


def committed(directory):
    try:
        return epochrt.ckpt_ls(str(directory))["last_committed"]
    except epochrt.Error:
        return None


def test_ctrl_c_during_train_stops_after_the_epoch_and_commits_it(tmp_path):
    proc = start_script(tmp_path, 300, 12)
    deadline = time.monotonic() + 60
    while (committed(tmp_path / "ck") or 0) < 2:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in err
    assert "stopping after the running epoch" in err
    last = committed(tmp_path / "ck")
    assert 2 <= last < 12
    # The same job resumes from it, to the uninterrupted result.
    rerun = subprocess.run(
        [sys.executable, str(tmp_path / "train.py"), str(tmp_path / "ck"),
         "300", "12"], capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert "epochs 12" in rerun.stdout


@pytest.mark.parametrize("on_epoch_seconds", [None, 0.3])
def test_a_second_ctrl_c_stops_at_once(tmp_path, on_epoch_seconds):
    proc = start_script(tmp_path, 3_600_000, 2,
                        on_epoch_seconds=on_epoch_seconds)
    deadline = time.monotonic() + 60
    while committed(tmp_path / "ck") is None:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    start = time.monotonic()
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - start < 15
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in err
    assert "stopping at once" in err
    assert committed(tmp_path / "ck") == 0


def test_ctrl_c_while_on_epoch_runs_is_the_users_not_the_callbacks(tmp_path):
    """The signal surfaces in the callback's Python code; it is still the
    user's Ctrl-C: stop after the running epoch, and say so."""
    proc = start_script(tmp_path, 20, 400, on_epoch_seconds=0.3)
    deadline = time.monotonic() + 60
    while (committed(tmp_path / "ck") or 0) < 2:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert "stopping after the running epoch" in err
    assert "resumes from its last committed epoch" in err
    assert committed(tmp_path / "ck") < 400
