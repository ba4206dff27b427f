"""Ops written in Python: OpRegistry, NumPy inputs and outputs, and the
failure path of an op that raises."""

import json
import subprocess
import sys
import threading

import numpy as np
import pytest

import epochrt


def job_of(ops, epoch_ops=(), init_ops=(), epochs=1, name="pyops"):
    """A job of one node `n`: `init_ops` once, `epoch_ops` every epoch,
    `epochs` epochs."""
    spec = {"name": name, "epoch_limit": epochs}
    if init_ops:
        spec["init"] = [{"node": "n", "ops": list(init_ops)}]
    if epoch_ops:
        spec["epoch"] = [{"node": "n", "ops": list(epoch_ops)}]
    return epochrt.Job.from_json(json.dumps(spec), ops=ops)


def fill(blob, values, dtype="f64"):
    return {"type": "GivenTensorFill", "outputs": [blob],
            "args": {"values": values, "shape": [len(values)],
                     "dtype": dtype}}


def run(job, ops, manager=None):
    session = epochrt.LocalSession(worker_threads=2, ops=ops)
    epochs = epochrt.JobRunner(job, checkpoint_manager=manager).train(session)
    return epochs, session


def test_a_python_op_computes_its_output_from_its_numpy_inputs():
    ops = epochrt.OpRegistry()
    ops.register("Scale", lambda x, factor=1.0: x * factor, inputs=1,
                 outputs=1, args={"factor": "number"})
    job = job_of(ops, init_ops=[
        fill("x", [1.0, 2.0, 3.0]),
        {"type": "Scale", "inputs": ["x"], "outputs": ["y"],
         "args": {"factor": 2.5}}])
    _, session = run(job, ops)
    y = session.fetch("n", "y")
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y, [2.5, 5.0, 7.5])


def test_an_argument_the_call_does_not_give_is_not_passed():
    ops = epochrt.OpRegistry()
    seen = []
    ops.register("Args", lambda **kw: seen.append(kw), inputs=0, outputs=0,
                 args={"n": "integer", "s": "string", "l": "number_list"})
    job = job_of(ops, init_ops=[
        {"type": "Args", "args": {"n": 3, "l": [1, 2.5]}},
        {"type": "Args"}])
    run(job, ops)
    assert seen == [{"n": 3, "l": [1.0, 2.5]}, {}]


def test_inputs_are_read_only_views_of_the_blobs_not_copies():
    ops = epochrt.OpRegistry()
    seen = []

    def look(x):
        seen.append((x.__array_interface__["data"][0], x.flags.writeable))
        with pytest.raises(ValueError):
            x[0] = 7.0

    ops.register("Look", look, inputs=1, outputs=0)
    job = job_of(ops, init_ops=[
        fill("x", [1.0, 2.0]),
        {"type": "Look", "inputs": ["x"]},
        {"type": "Look", "inputs": ["x"]}])
    _, session = run(job, ops)
    # Both calls saw the blob's own bytes, at one address, unwritable.
    assert len(seen) == 2
    assert seen[0] == seen[1]
    assert seen[0][1] is False
    np.testing.assert_array_equal(session.fetch("n", "x"), [1.0, 2.0])


def test_an_input_kept_after_the_call_stays_valid_when_the_blob_changes():
    ops = epochrt.OpRegistry()
    kept = []
    ops.register("Keep", lambda x: kept.append(x), inputs=1, outputs=0)
    # Add writes its output in place when the workspace alone holds it.
    job = job_of(ops, init_ops=[
        fill("x", [4.0, 5.0]),
        {"type": "Keep", "inputs": ["x"]},
        {"type": "Add", "inputs": ["x", "x"], "outputs": ["x"]}])
    _, session = run(job, ops)
    np.testing.assert_array_equal(session.fetch("n", "x"), [8.0, 10.0])
    np.testing.assert_array_equal(kept[0], [4.0, 5.0])


def test_an_op_of_several_outputs_returns_a_tuple_of_them():
    ops = epochrt.OpRegistry()
    ops.register("Split", lambda x: (x[:1], x[1:].astype(np.int32)),
                 inputs=1, outputs=2)
    job = job_of(ops, init_ops=[
        fill("x", [1.0, 2.0, 3.0]),
        {"type": "Split", "inputs": ["x"], "outputs": ["a", "b"]}])
    _, session = run(job, ops)
    np.testing.assert_array_equal(session.fetch("n", "a"), [1.0])
    b = session.fetch("n", "b")
    assert b.dtype == np.int32
    np.testing.assert_array_equal(b, [2, 3])


def test_an_op_that_fills_its_outputs_reshapes_and_writes_them_in_place():
    ops = epochrt.OpRegistry()

    def split(x, head, tail):
        head.reshape([1], "f64")[:] = x[:1]
        values = tail.reshape([2], "i32")
        values[:] = x[1:]
        assert tail.data is not None and tail.name == "b"

    ops.register("Split", split, inputs=1, outputs=2, fills_outputs=True)
    job = job_of(ops, init_ops=[
        fill("x", [1.0, 2.0, 3.0]),
        {"type": "Split", "inputs": ["x"], "outputs": ["a", "b"]}])
    _, session = run(job, ops)
    np.testing.assert_array_equal(session.fetch("n", "a"), [1.0])
    b = session.fetch("n", "b")
    assert b.dtype == np.int32
    np.testing.assert_array_equal(b, [2, 3])


def test_an_op_that_fills_its_output_may_feed_it_a_value():
    ops = epochrt.OpRegistry()
    ops.register("Name", lambda out: out.feed(np.array(["w"], dtype=object)),
                 inputs=0, outputs=1, fills_outputs=True)
    job = job_of(ops, init_ops=[{"type": "Name", "outputs": ["s"]}])
    _, session = run(job, ops)
    assert session.fetch("n", "s").tolist() == [b"w"]


def test_an_array_an_op_keeps_past_its_call_does_not_change_the_blob():
    ops = epochrt.OpRegistry()
    kept = []

    def keep(out):
        values = out.reshape([2], "i64")
        values[:] = [4, 5]
        kept.append(values[1:])  # a view of the output's array

    ops.register("Keep", keep, inputs=0, outputs=1, fills_outputs=True)
    job = job_of(ops, init_ops=[{"type": "Keep", "outputs": ["k"]}])
    _, session = run(job, ops)
    kept[0][0] = 99
    assert session.fetch("n", "k").tolist() == [4, 5]


def test_an_output_not_filled_fails_the_job_naming_it():
    ops = epochrt.OpRegistry()
    ops.register("Lazy", lambda a, b: a.reshape([1]), inputs=0, outputs=2,
                 fills_outputs=True)
    job = job_of(ops, init_ops=[{"type": "Lazy", "outputs": ["y", "z"]}])
    with pytest.raises(epochrt.JobFailed) as caught:
        run(job, ops)
    assert "returned a value, but an op that fills its outputs returns " \
        "None" in str(caught.value)
    ops = epochrt.OpRegistry()
    ops.register("Lazy", lambda a, b: a.feed([1.0]), inputs=0, outputs=2,
                 fills_outputs=True)
    job = job_of(ops, init_ops=[{"type": "Lazy", "outputs": ["y", "z"]}])
    with pytest.raises(epochrt.JobFailed) as caught:
        run(job, ops)
    assert "output 'z' was neither reshaped nor fed" in str(caught.value)


def test_an_output_used_after_its_call_or_reshaped_badly_raises_bad_input():
    ops = epochrt.OpRegistry()
    slots, errors = [], []

    def probe(out):
        slots.append(out)
        for shape, dtype in (([-1], "f32"), ([2], "string"), ([2], "f16")):
            try:
                out.reshape(shape, dtype)
            except epochrt.BadInput as e:
                errors.append(str(e))
        out.reshape([1])

    ops.register("Probe", probe, inputs=0, outputs=1, fills_outputs=True)
    run(job_of(ops, init_ops=[{"type": "Probe", "outputs": ["p"]}]), ops)
    assert len(errors) == 3
    assert "negative dimension -1" in errors[0]
    assert "not 'string'" in errors[1] and "not 'f16'" in errors[2]
    with pytest.raises(epochrt.BadInput, match="the op's call is over"):
        slots[0].reshape([1])
    with pytest.raises(epochrt.BadInput, match="the op's call is over"):
        slots[0].feed([1.0])


def test_an_output_larger_than_memory_fails_the_task_not_the_process():
    ops = epochrt.OpRegistry()
    ops.register("Huge", lambda out: out.reshape([2 ** 44], "f64"),
                 inputs=0, outputs=1, fills_outputs=True)
    job = job_of(ops, init_ops=[{"type": "Huge", "outputs": ["h"]}])
    with pytest.raises(epochrt.JobFailed, match="MemoryError"):
        run(job, ops)


def test_string_inputs_arrive_as_bytes_and_str_outputs_become_strings():
    ops = epochrt.OpRegistry()
    ops.register("Upper", lambda s: np.array([v.upper() for v in s],
                                             dtype=object),
                 inputs=1, outputs=1)
    session = epochrt.LocalSession(worker_threads=2, ops=ops)
    session.put("n", "s", np.array([b"ab", "c\u00e9"], dtype=object))
    job = job_of(ops, init_ops=[
        {"type": "Upper", "inputs": ["s"], "outputs": ["t"]}])
    epochrt.JobRunner(job).train(session)
    assert session.fetch("n", "t").tolist() == [b"AB", "C\u00e9".encode()]


def test_python_ops_run_on_epochrts_worker_threads():
    ops = epochrt.OpRegistry()
    threads = []
    ops.register("Where", lambda: threads.append(threading.get_ident()),
                 inputs=0, outputs=0)
    run(job_of(ops, init_ops=[{"type": "Where"}]), ops)
    assert len(threads) == 1
    assert threads[0] != threading.get_ident()


def test_an_exception_in_a_python_op_raises_job_failed_with_its_traceback():
    ops = epochrt.OpRegistry()

    def broken_step(x):
        raise ValueError("the batch has no rows")

    ops.register("Broken", broken_step, inputs=1, outputs=1)
    job = job_of(ops, init_ops=[
        fill("x", [1.0]),
        {"type": "Broken", "inputs": ["x"], "outputs": ["y"]}])
    with pytest.raises(epochrt.JobFailed) as caught:
        run(job, ops)
    message = str(caught.value)
    assert "Broken" in message
    assert "Traceback (most recent call last)" in message
    assert "in broken_step" in message
    assert "test_python_ops.py" in message
    assert "ValueError: the batch has no rows" in message


def test_a_wrong_number_of_outputs_fails_the_job_saying_so():
    ops = epochrt.OpRegistry()
    ops.register("One", lambda x: x, inputs=1, outputs=None)
    job = job_of(ops, init_ops=[
        fill("x", [1.0]),
        {"type": "One", "inputs": ["x"], "outputs": ["a", "b"]}])
    with pytest.raises(epochrt.JobFailed) as caught:
        run(job, ops)
    assert "but the call has 2 outputs" in str(caught.value)


def test_an_output_of_a_dtype_epochrt_lacks_fails_the_job_naming_it():
    ops = epochrt.OpRegistry()
    ops.register("Half", lambda: np.zeros(2, dtype=np.float16), inputs=0)
    job = job_of(ops, init_ops=[{"type": "Half", "outputs": ["h"]}])
    with pytest.raises(epochrt.JobFailed) as caught:
        run(job, ops)
    assert "float16" in str(caught.value)


def test_a_python_op_that_calls_the_session_fails_instead_of_hanging():
    ops_calls = []

    def reentrant(x):
        ops_calls.append(1)
        return session.fetch("n", "x")

    ops = epochrt.OpRegistry()
    ops.register("Reentrant", reentrant, inputs=1)
    session = epochrt.LocalSession(worker_threads=2, ops=ops)
    job = job_of(ops, init_ops=[
        fill("x", [1.0]),
        {"type": "Reentrant", "inputs": ["x"], "outputs": ["y"]}])
    with pytest.raises(epochrt.JobFailed) as caught:
        epochrt.JobRunner(job).train(session)
    assert ops_calls == [1]
    assert "LocalSession.fetch from a Python op" in str(caught.value)


def test_a_job_using_a_python_op_is_refused_without_its_registry():
    text = json.dumps({"name": "j", "epoch_limit": 1,
                       "init": [{"node": "n", "ops": [{"type": "Mine"}]}]})
    with pytest.raises(epochrt.BadInput) as caught:
        epochrt.Job.from_json(text)
    assert caught.value.code == "unknown_op"


def test_registering_a_type_twice_or_a_builtins_raises_bad_input():
    ops = epochrt.OpRegistry()
    ops.register("Mine", lambda: None, inputs=0, outputs=0)
    assert "Mine" in ops and "Add" in ops
    with pytest.raises(epochrt.BadInput):
        ops.register("Mine", lambda: None)
    with pytest.raises(epochrt.BadInput):
        ops.register("Add", lambda: None)


def test_a_registry_is_complete_once_a_job_uses_it():
    ops = epochrt.OpRegistry()
    assert not ops.frozen
    job_of(ops, init_ops=[fill("x", [1.0])])
    assert ops.frozen
    with pytest.raises(epochrt.BadInput) as caught:
        ops.register("Late", lambda: None)
    assert "register every op before" in str(caught.value)


def test_a_registry_is_complete_once_a_session_uses_it():
    ops = epochrt.OpRegistry()
    epochrt.LocalSession(worker_threads=2, ops=ops)
    with pytest.raises(epochrt.BadInput):
        ops.register("Late", lambda: None)


def test_an_unknown_argument_kind_raises_bad_input():
    with pytest.raises(epochrt.BadInput, match="kind 'float'"):
        epochrt.OpRegistry().register("K", lambda: None,
                                      args={"lr": "float"})


def counting_job(ops):
    """Five epochs of Count, which adds 1 to `w` and fails while `fail_at`
    holds the value `w` has when it would fail."""
    return job_of(ops, name="count", epochs=5,
                  init_ops=[fill("w", [0.0])],
                  epoch_ops=[{"type": "Count", "inputs": ["w"],
                              "outputs": ["w"]}])


def counting_ops(calls, fail_at):
    ops = epochrt.OpRegistry()

    def count(w):
        calls.append(int(w[0]))
        if w[0] == fail_at:
            raise RuntimeError("lost the data source at w=%d" % w[0])
        return w + 1

    ops.register("Count", count, inputs=1, outputs=1)
    return ops


def train_counting(ckpt_dir, fail_at):
    """Trains counting_job with checkpoints in `ckpt_dir`; returns the
    values of `w` Count saw, the last committed epoch, and the last epoch
    and `w` or the text of JobFailed. The manager is gone when it returns
    (it holds the directory's lock while it lives)."""
    calls = []
    ops = counting_ops(calls, fail_at)
    manager = epochrt.MultiNodeCheckpointManager(str(ckpt_dir))
    try:
        epochs, session = run(counting_job(ops), ops, manager)
        outcome = (epochs, session.fetch("n", "w").tolist())
    except epochrt.JobFailed as failed:
        outcome = str(failed)
    return calls, manager.get_resume_from_epoch_id(), outcome


def test_a_raising_op_fails_a_checkpointed_job_and_a_rerun_resumes(tmp_path):
    calls, committed, outcome = train_counting(tmp_path, fail_at=2)
    # Epochs 1 and 2 ran, epoch 3 failed. The save of epoch 2 runs beside
    # epoch 3; the failed job ends only once it committed.
    assert calls == [0, 1, 2]
    assert committed == 2
    assert "RuntimeError: lost the data source at w=2" in outcome

    calls, last_committed, outcome = train_counting(tmp_path, fail_at=None)
    assert calls == list(range(committed, 5))
    assert last_committed == 5
    assert outcome == (5, [5.0])


def test_an_uninterrupted_run_of_the_counting_job_ends_as_the_resumed_one(
        tmp_path):
    calls, committed, outcome = train_counting(tmp_path, fail_at=None)
    assert calls == [0, 1, 2, 3, 4]
    assert outcome == (5, [5.0])


def test_python_ops_converting_their_first_arrays_at_once_do_not_deadlock():
    # In a fresh interpreter, where NumPy's C API is not loaded yet: eight
    # nodes' Python ops start on eight threads at once.
    script = """
import epochrt
ops = epochrt.OpRegistry()
ops.register("Twice", lambda x: x * 2, inputs=1, outputs=1)
job = epochrt.Job("first")
for i in range(8):
    job.init_group.add_task(epochrt.Task("n%d" % i, [
        epochrt.Op("GivenTensorFill", outputs=["x"], values=[1.0]),
        epochrt.Op("Twice", ["x"], ["x"])]))
epochrt.epoch_limiter(job, 1)
epochrt.JobRunner(job).train(epochrt.LocalSession(worker_threads=8, ops=ops))
print("done")
"""
    for _ in range(3):
        run = subprocess.run([sys.executable, "-c", script],
                             capture_output=True, text=True, timeout=60)
        assert run.stdout.strip() == "done", run.stderr


def test_a_value_numpy_cannot_convert_fails_the_task_with_numpys_reason():
    ops = epochrt.OpRegistry()
    ops.register("Ragged", lambda: [[1.0], [1.0, 2.0]], inputs=0, outputs=1)
    job = epochrt.Job("ragged")
    job.init_group.add_task(epochrt.Task("n", [
        epochrt.Op("Ragged", [], ["x"])]))
    epochrt.epoch_limiter(job, 1)
    with pytest.raises(epochrt.JobFailed, match="ValueError"):
        epochrt.JobRunner(job).train(epochrt.LocalSession(ops=ops))
