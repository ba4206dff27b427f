"""A training loop whose op is a NumPy function: a linear model's gradient
step, run by JobRunner with checkpoints, stopped or killed, and resumed to
the result of an uninterrupted run."""

import gc
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np

import epochrt

EPOCHS = 12


def make_data():
    """y = X @ [2, -3, 0.5] + 1 with a little noise, 64 rows."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(64, 3))
    y = x @ np.array([2.0, -3.0, 0.5]) + 1.0 + 0.01 * rng.normal(size=64)
    return x, y


def sgd_step(w, b, x, y, lr=0.1):
    """One full-batch gradient step of the mean squared error."""
    err = x @ w + b - y
    return (w - lr * (x.T @ err) / len(y), b - lr * err.mean(),
            np.array(np.mean(err * err)))


def training_ops(on_step=None):
    ops = epochrt.OpRegistry()
    ops.register("MakeData", lambda: make_data(), inputs=0, outputs=2)

    def step(w, b, x, y, lr=0.1):
        result = sgd_step(w, b, x, y, lr)
        if on_step is not None:
            on_step()
        return result

    ops.register("SgdStep", step, inputs=4, outputs=3, args={"lr": "number"})
    return ops


def training_job():
    job = epochrt.Job("linear")
    job.init_group.add_task(epochrt.Task("trainer", [
        epochrt.Op("MakeData", outputs=["x", "y"]),
        epochrt.Op("ConstantFill", outputs=["w"], shape=[3], dtype="f64"),
        epochrt.Op("ConstantFill", outputs=["b"], dtype="f64")]))
    job.epoch_group.add_task(epochrt.Task("trainer", [
        epochrt.Op("SgdStep", ["w", "b", "x", "y"], ["w", "b", "loss"],
                   lr=0.1)]))
    epochrt.epoch_limiter(job, EPOCHS)
    return job


def train(ckpt_dir=None, on_step=None, runner_box=None):
    """Trains on a new session; returns the last epoch and (w, b, loss).
    `runner_box`, a list, receives the runner before it trains."""
    ops = training_ops(on_step)
    session = epochrt.LocalSession(worker_threads=2, ops=ops)
    manager = (epochrt.MultiNodeCheckpointManager(str(ckpt_dir))
               if ckpt_dir is not None else None)
    runner = epochrt.JobRunner(training_job(), checkpoint_manager=manager)
    if runner_box is not None:
        runner_box.append(runner)
    epochs = runner.train(session)
    return epochs, [session.fetch("trainer", blob)
                    for blob in ("w", "b", "loss")]


def numpy_reference():
    x, y = make_data()
    w, b = np.zeros(3), np.array(0.0)
    for _ in range(EPOCHS):
        w, b, loss = sgd_step(w, b, x, y)
    return [w, b, loss]


def assert_same_model(got, expected):
    # The same float operations in the same order; a tolerance of a few
    # ulps only for NumPy's SIMD loops, whose sums may depend on alignment.
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-13, atol=0)


def assert_bitwise_same_model(got, expected):
    # Resumed or not, the runtime computes the same bits: epochrt's promise.
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and np.array_equal(g, e), (g, e)


def test_the_job_computes_what_numpy_computes_in_a_loop():
    epochs, model = train()
    assert epochs == EPOCHS
    assert_same_model(model, numpy_reference())
    x, y = make_data()
    assert model[2] < 0.5 * np.mean(y * y)  # it learns


def test_stopped_and_resumed_training_ends_as_an_uninterrupted_run(
        tmp_path):
    steps = []
    box = []

    def stop_at_the_fifth_step():
        steps.append(1)
        if len(steps) == 5:
            box[0].request_stop()

    try:
        train(tmp_path, stop_at_the_fifth_step, box)
        raise AssertionError("train did not stop")
    except epochrt.Stopped:
        pass
    del box[:]
    gc.collect()
    # The epoch that asked for the stop ran to its end and was committed.
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path))
    assert manager.get_resume_from_epoch_id() == 5
    del manager

    steps.clear()
    epochs, model = train(tmp_path, lambda: steps.append(1))
    assert epochs == EPOCHS
    assert len(steps) == EPOCHS - 5
    assert_same_model(model, numpy_reference())
    assert_bitwise_same_model(model, train()[1])


CHILD = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[2])
    import test_training

    def slow_step():
        print("step", flush=True)
        time.sleep(0.05)

    test_training.train(sys.argv[1], slow_step)
    print("done", flush=True)
""")


def test_killed_training_resumes_to_the_result_of_an_uninterrupted_run(
        tmp_path):
    ckpt = tmp_path / "ckpt"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(ckpt),
         os.path.dirname(os.path.abspath(__file__))],
        stdout=subprocess.PIPE, text=True)
    seen = 0
    for line in child.stdout:
        seen += line.strip() == "step"
        if seen == 6:
            child.send_signal(signal.SIGKILL)
            break
    child.wait(timeout=60)
    child.stdout.close()
    assert child.returncode == -signal.SIGKILL

    manager = epochrt.MultiNodeCheckpointManager(str(ckpt))
    committed = manager.get_resume_from_epoch_id()
    del manager
    assert committed is not None and 1 <= committed < EPOCHS

    steps = []
    epochs, model = train(ckpt, lambda: steps.append(1))
    assert epochs == EPOCHS
    assert len(steps) == EPOCHS - committed
    assert_same_model(model, numpy_reference())
    assert_bitwise_same_model(model, train()[1])
