"""What real user code does to a job: Python ops that update their inputs
in place (as `optimizer.step()` does), keep references past their call,
return the wrong thing; jobs given more epochs or changed between runs;
names and values no checkpoint could hold. None of it may give a silent
wrong result."""

import json
import subprocess
import warnings

import numpy as np
import pytest

import epochrt

torch = pytest.importorskip("torch")


def job_of(ops, init_ops=(), epoch_ops=(), epochs=1, name="user"):
    """A job of one node `n`: `init_ops` once, `epoch_ops` every epoch,
    `epochs` epochs."""
    spec = {"name": name, "epoch_limit": epochs}
    if init_ops:
        spec["init"] = [{"node": "n", "ops": list(init_ops)}]
    if epoch_ops:
        spec["epoch"] = [{"node": "n", "ops": list(epoch_ops)}]
    return epochrt.Job.from_json(json.dumps(spec), ops=ops)


def fill(blob, count, value=0.0):
    return {"type": "ConstantFill", "outputs": [blob],
            "args": {"shape": [count], "value": value, "dtype": "f32"}}


def train(job, ops, directory=None, **runner_args):
    session = epochrt.LocalSession(worker_threads=2, ops=ops)
    manager = (epochrt.MultiNodeCheckpointManager(str(directory))
               if directory is not None else None)
    runner = epochrt.JobRunner(job, checkpoint_manager=manager, **runner_args)
    with warnings.catch_warnings():
        # torch warns once that the read-only array it was given is
        # writable through the tensor: that is what these ops do.
        warnings.simplefilter("ignore", UserWarning)
        return runner.train(session), session


def torch_step_ops():
    """`Step`: w -= 0.125 in place through torch, as optimizer.step() does,
    returning the same array."""
    ops = epochrt.OpRegistry()

    def step(w):
        torch.from_numpy(w).sub_(0.125)
        return w

    ops.register("Step", step, inputs=1, outputs=1)
    return ops


# -- in-place updates ---------------------------------------------------------


@pytest.mark.parametrize("count", [4, 65536])
def test_the_checkpoint_of_each_epoch_holds_that_epochs_in_place_update(
        tmp_path, count):
    ops = torch_step_ops()
    job = job_of(ops, [fill("w", count)],
                 [{"type": "Step", "inputs": ["w"], "outputs": ["w"]}],
                 epochs=8)
    epochs, session = train(job, ops, tmp_path)
    assert epochs == 8
    np.testing.assert_array_equal(session.fetch("n", "w"),
                                  np.full(count, -1.0, np.float32))
    for epoch in range(9):
        saved = epochrt.ckpt_show(str(tmp_path), "n", epoch, ["w"])["w"]
        np.testing.assert_array_equal(
            saved, np.full(count, -0.125 * epoch, np.float32),
            err_msg="checkpoint of epoch %d" % epoch)
    assert epochrt.ckpt_verify(str(tmp_path))["ok"]


@pytest.mark.parametrize("count", [4, 65536])
def test_a_run_resumed_from_each_epoch_ends_as_an_uninterrupted_one(
        tmp_path, count):
    ops = torch_step_ops()
    job = job_of(ops, [fill("w", count)],
                 [{"type": "Step", "inputs": ["w"], "outputs": ["w"]}],
                 epochs=8)
    train(job, ops, tmp_path)
    for epoch in (1, 5, 7):
        _, resumed = train(job, ops, tmp_path, resume_from_epoch=epoch)
        np.testing.assert_array_equal(resumed.fetch("n", "w"),
                                      np.full(count, -1.0, np.float32))


def bump(x):
    torch.from_numpy(x).add_(1.0)


def test_a_write_into_a_read_only_input_is_seen_by_the_job_and_its_checkpoint(
        tmp_path):
    ops = epochrt.OpRegistry()
    ops.register("Bump", bump, inputs=1, outputs=0)
    job = job_of(ops, [fill("w", 65536)],
                 [{"type": "Bump", "inputs": ["w"]}], epochs=3)
    _, session = train(job, ops, tmp_path)
    np.testing.assert_array_equal(session.fetch("n", "w"),
                                  np.full(65536, 3.0, np.float32))
    for epoch in range(4):
        saved = epochrt.ckpt_show(str(tmp_path), "n", epoch, ["w"])["w"]
        np.testing.assert_array_equal(saved,
                                      np.full(65536, epoch, np.float32))


def test_an_unchanged_input_is_not_written_again_by_the_next_checkpoint(
        tmp_path):
    ops = epochrt.OpRegistry()
    ops.register("Read", lambda data: None, inputs=1, outputs=0)
    job = job_of(ops, [fill("data", 1 << 20, 2.0)],
                 [{"type": "Read", "inputs": ["data"]}], epochs=3)
    train(job, ops, tmp_path)
    for epoch in (1, 2, 3):
        saved = epochrt.ckpt_show(str(tmp_path), "n", epoch, ["data"])
        np.testing.assert_array_equal(saved["data"],
                                      np.full(1 << 20, 2.0, np.float32))
    # Epochs 1 and 2 refer to epoch 0's 4 MiB payload instead of a copy,
    # as they would after a C++ op's read (the last epoch's is whole).
    sizes = {epoch: sum(f.stat().st_size
                        for f in (tmp_path / ("n.%d" % epoch)).rglob("*")
                        if f.is_file())
             for epoch in range(4)}
    assert sizes[0] > 4 << 20
    assert all(sizes[epoch] < 1 << 20 for epoch in (1, 2)), sizes


def test_an_in_place_update_returned_is_the_blob_itself_not_a_copy():
    ops = epochrt.OpRegistry()
    seen = []

    def step(w):
        seen.append(w.__array_interface__["data"][0])
        torch.from_numpy(w).sub_(1.0)
        return torch.from_numpy(w)

    ops.register("Step", step, inputs=1, outputs=1)
    job = job_of(ops, [fill("w", 1024)],
                 [{"type": "Step", "inputs": ["w"], "outputs": ["w"]}],
                 epochs=4)
    _, session = train(job, ops)
    held = session.fetch("n", "w", copy=False)
    assert len(set(seen)) == 1
    assert held.__array_interface__["data"][0] == seen[0]
    np.testing.assert_array_equal(held, np.full(1024, -4.0, np.float32))


def test_an_input_of_a_private_task_written_in_place_is_seen():
    ops = epochrt.OpRegistry()
    ops.register("Bump", bump, inputs=1, outputs=0)
    spec = {"name": "scratch", "epoch_limit": 1,
            "init": [{"node": "n", "ops": [fill("y", 3)]}],
            "epoch": [{"node": "n", "workspace": "private",
                       "ops": [fill("x", 3),
                               {"type": "Bump", "inputs": ["x"]},
                               {"type": "Copy", "inputs": ["x"],
                                "outputs": ["y"]}]}]}
    job = epochrt.Job.from_json(json.dumps(spec), ops=ops)
    _, session = train(job, ops)
    np.testing.assert_array_equal(session.fetch("n", "y"), [1.0, 1.0, 1.0])


def write_into(kept):
    """Writes 42 into what an op kept, as later user code might: through
    torch, which ignores NumPy's read-only flag."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if isinstance(kept, torch.Tensor):
            kept.fill_(42.0)
        else:
            torch.from_numpy(np.asarray(kept)).fill_(42.0)


@pytest.mark.parametrize("keep", [
    lambda w: w,
    lambda w: w[1:],
    lambda w: torch.from_numpy(w),
    lambda w: memoryview(w),
], ids=["array", "view", "torch", "memoryview"])
def test_a_reference_kept_past_the_call_is_detached_from_the_blob(
        tmp_path, keep):
    ops = torch_step_ops()
    kept = []

    def hoard(w):
        kept.append(keep(w))

    ops.register("Hoard", hoard, inputs=1, outputs=0)
    job = job_of(ops, [fill("weights", 4)],
                 [{"type": "Hoard", "inputs": ["weights"]},
                  {"type": "Step", "inputs": ["weights"],
                   "outputs": ["weights"]}], epochs=3)
    _, session = train(job, ops, tmp_path)
    # Each kept array holds what the blob held when its call ended.
    for epoch, held in enumerate(kept):
        np.testing.assert_array_equal(np.asarray(held).ravel()[-1:],
                                      [-0.125 * epoch])
        write_into(held)
    np.testing.assert_array_equal(session.fetch("n", "weights"),
                                  np.full(4, -0.375, np.float32))
    for epoch in range(4):
        saved = epochrt.ckpt_show(str(tmp_path), "n", epoch,
                                  ["weights"])["weights"]
        np.testing.assert_array_equal(saved,
                                      np.full(4, -0.125 * epoch, np.float32))


def test_a_reference_cycle_that_holds_an_input_costs_nothing_wrong():
    ops = torch_step_ops()

    def cyclic(w):
        frame = {"w": w}
        frame["self"] = frame  # freed by the collector only

    ops.register("Cyclic", cyclic, inputs=1, outputs=0)
    job = job_of(ops, [fill("w", 4)],
                 [{"type": "Cyclic", "inputs": ["w"]},
                  {"type": "Step", "inputs": ["w"], "outputs": ["w"]}],
                 epochs=2)
    _, session = train(job, ops)
    np.testing.assert_array_equal(session.fetch("n", "w"),
                                  np.full(4, -0.25, np.float32))


# -- what an op returns -------------------------------------------------------


def failure_of(fn, outputs=1):
    ops = epochrt.OpRegistry()
    ops.register("Bad", fn, inputs=0, outputs=outputs)
    job = job_of(ops, [{"type": "Bad",
                        "outputs": ["y%d" % i for i in range(outputs)]}])
    with pytest.raises(epochrt.JobFailed) as caught:
        train(job, ops)
    return str(caught.value)


def test_a_tuple_returned_for_one_output_is_refused():
    text = failure_of(lambda: (np.zeros(2), np.ones(2)))
    assert "returned a tuple of 2 items, but the call has 1 output" in text


def test_an_integer_beyond_int64_is_refused_as_such():
    text = failure_of(lambda: 2 ** 70)
    assert "output 'y0'" in text
    assert "int" in text and "1180591620717411303424" in text
    assert "a string tensor holds" not in text


def test_a_value_for_an_op_without_outputs_is_refused_naming_its_type():
    text = failure_of(lambda: {"a": 1}, outputs=0)
    assert "returned a dict, but the call has no output" in text


# -- epoch limits -------------------------------------------------------------


def counting_job(ops, epochs):
    return job_of(ops, [fill("w", 4)],
                  [{"type": "Step", "inputs": ["w"], "outputs": ["w"]}],
                  epochs=epochs)


def test_a_finished_job_given_more_epochs_trains_up_to_the_new_limit(
        tmp_path):
    ops = torch_step_ops()
    assert train(counting_job(ops, 3), ops, tmp_path)[0] == 3
    epochs, session = train(counting_job(ops, 5), ops, tmp_path)
    assert epochs == 5
    np.testing.assert_array_equal(session.fetch("n", "w"),
                                  np.full(4, -0.625, np.float32))


def test_a_stopped_job_given_fewer_epochs_stops_at_the_new_limit(tmp_path):
    ops = torch_step_ops()
    train(counting_job(ops, 6), ops, tmp_path)
    epochs, session = train(counting_job(ops, 4), ops, tmp_path,
                            resume_from_epoch=2)
    assert epochs == 4
    np.testing.assert_array_equal(session.fetch("n", "w"),
                                  np.full(4, -0.5, np.float32))


def test_a_limit_below_the_committed_epoch_ends_at_once(tmp_path):
    ops = torch_step_ops()
    train(counting_job(ops, 5), ops, tmp_path)
    epochs, session = train(counting_job(ops, 2), ops, tmp_path)
    assert epochs == 5
    np.testing.assert_array_equal(session.fetch("n", "w"),
                                  np.full(4, -0.625, np.float32))
    assert epochrt.ckpt_ls(str(tmp_path))["last_committed"] == 5


def test_a_job_ended_by_another_condition_runs_nothing_more(
        tmp_path, pipeline_path):
    job = epochrt.Job.load(pipeline_path)
    epochrt.epoch_limiter(job, 10)
    assert train(job, None, tmp_path)[0] == 4
    epochs, session = train(job, None, tmp_path)
    assert epochs == 4
    assert session.fetch("trainer_0", "total").tolist() == [145]


def test_the_cli_trains_a_finished_job_up_to_its_raised_epoch_limit(
        tmp_path, pipeline_path, cli):
    spec = {"name": "count", "epoch_limit": 3,
            "init": [{"node": "n", "ops": [
                {"type": "ConstantFill", "outputs": ["total"],
                 "args": {"shape": [1], "value": 0, "dtype": "i64"}},
                {"type": "ConstantFill", "outputs": ["one"],
                 "args": {"shape": [1], "value": 1, "dtype": "i64"}}]}],
            "epoch": [{"node": "n", "ops": [
                {"type": "Add", "inputs": ["total", "one"],
                 "outputs": ["total"]}]}]}
    path = tmp_path / "count.json"

    def run(limit):
        spec["epoch_limit"] = limit
        path.write_text(json.dumps(spec))
        done = subprocess.run(
            [cli, "run", str(path), "--checkpoint-dir", str(tmp_path / "ck"),
             "--fetch", "n:total"], capture_output=True, text=True,
            timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "n:total=3" in run(3)
    out = run(5)
    assert "n:total=5" in out and "epochs=5" in out
    out = run(4)
    assert "n:total=5" in out and "epochs=5" in out


# -- changed jobs -------------------------------------------------------------


def test_a_changed_job_is_refused_naming_the_first_difference(tmp_path):
    ops = epochrt.OpRegistry()
    ops.register("Step", lambda w: w + 1, inputs=1, outputs=1)

    def job(shape):
        return job_of(ops, [{"type": "ConstantFill", "outputs": ["w"],
                             "args": {"shape": [shape], "value": 3.0}}],
                      [{"type": "Step", "inputs": ["w"], "outputs": ["w"]}],
                      epochs=2)

    train(job(3), ops, tmp_path)
    with pytest.raises(epochrt.BadInput) as caught:
        train(job(5), ops, tmp_path)
    assert caught.value.code == "job_changed"
    assert "init[0].steps[0].ops[0].args.shape: [3] -> [5]" in str(
        caught.value)
    del caught  # its traceback holds the manager, which holds the lock
    epochs, session = train(job(5), ops, tmp_path, allow_job_change=True)
    assert epochs == 2
    assert session.fetch("n", "w").tolist() == [5.0, 5.0, 5.0]


def test_a_changed_python_op_is_refused_naming_it(tmp_path):
    def registry(fn, **kw):
        ops = epochrt.OpRegistry()
        ops.register("Layer", fn, inputs=0, outputs=1, **kw)
        return ops

    def job(ops):
        return job_of(ops, [{"type": "Layer", "outputs": ["w"]}], epochs=1)

    narrow = registry(lambda: np.zeros(3, np.float32))
    train(job(narrow), narrow, tmp_path)
    same = registry(lambda: np.zeros(3, np.float32))
    assert train(job(same), same, tmp_path)[0] == 1
    wide = registry(lambda: np.zeros(5, np.float32))
    with pytest.raises(epochrt.BadInput) as caught:
        train(job(wide), wide, tmp_path)
    assert "op_code.Layer" in str(caught.value)


def test_an_op_version_given_at_registration_stands_for_its_code(tmp_path):
    def registry(fn, version):
        ops = epochrt.OpRegistry()
        ops.register("Layer", fn, inputs=0, outputs=1, version=version)
        return ops

    def job(ops):
        return job_of(ops, [{"type": "Layer", "outputs": ["w"]}], epochs=1)

    first = registry(lambda: np.zeros(3, np.float32), 1)
    train(job(first), first, tmp_path)
    reworded = registry(lambda: np.zeros(3, dtype=np.float32), 1)
    assert train(job(reworded), reworded, tmp_path)[0] == 1
    bumped = registry(lambda: np.zeros(3, np.float32), 2)
    with pytest.raises(epochrt.BadInput) as caught:
        train(job(bumped), bumped, tmp_path)
    assert "op_code.Layer: v:1 -> v:2" in str(caught.value)


def test_a_job_given_more_epochs_is_the_same_job(tmp_path):
    ops = torch_step_ops()
    train(counting_job(ops, 2), ops, tmp_path)
    assert train(counting_job(ops, 3), ops, tmp_path)[0] == 3


# -- names and values no checkpoint could hold --------------------------------


@pytest.mark.parametrize("name", [
    "learning rate", "", "x" * 257, "a\nb", "caf\u00e9", "tab\there"])
def test_put_refuses_a_blob_name_no_checkpoint_could_hold(name):
    session = epochrt.LocalSession(worker_threads=1)
    with pytest.raises(epochrt.BadInput) as caught:
        session.put("n", name, np.zeros(2))
    assert "invalid blob name" in str(caught.value)


def test_put_of_an_array_larger_than_memory_raises_memory_error():
    session = epochrt.LocalSession(worker_threads=1)
    huge = np.broadcast_to(np.float64(0.0), (2 ** 40,))
    with pytest.raises(MemoryError):
        session.put("n", "huge", huge)


def test_put_of_a_strided_array_stores_its_elements_in_order():
    session = epochrt.LocalSession(worker_threads=1)
    values = np.arange(12, dtype=np.float64).reshape(3, 4)
    session.put("n", "t", values.T)
    session.put("n", "swapped", values.astype(">f8"))
    np.testing.assert_array_equal(session.fetch("n", "t"), values.T)
    np.testing.assert_array_equal(session.fetch("n", "swapped"), values)


@pytest.mark.parametrize("args, words", [
    ({"shape": [-1]}, "negative dimension"),
    ({"shape": [1 << 40, 1 << 40]}, "too large"),
    ({"shape": [2], "dtype": "f16"}, "got 'f16'"),
])
def test_validate_refuses_a_fill_that_would_fail_when_it_runs(args, words):
    job = epochrt.Job("fills")
    job.epoch_group.add_task(epochrt.Task("n", [
        epochrt.Op("ConstantFill", outputs=["x"], **args)]))
    epochrt.epoch_limiter(job, 1)
    with pytest.raises(epochrt.BadInput) as caught:
        job.validate()
    assert words in str(caught.value)


def test_validate_refuses_given_values_the_shape_cannot_hold():
    job = epochrt.Job("fills")
    job.epoch_group.add_task(epochrt.Task("n", [
        epochrt.Op("GivenTensorFill", outputs=["x"], shape=[3],
                   values=[1.0, 2.0])]))
    epochrt.epoch_limiter(job, 1)
    with pytest.raises(epochrt.BadInput) as caught:
        job.validate()
    assert "shape [3] holds 3 values, got 2" in str(caught.value)


@pytest.mark.parametrize("value", [None, [[1, 2], [3]], [1, "a"], 2 ** 70,
                                   {"a": 1}])
def test_an_op_argument_of_no_tensor_kind_raises_bad_input(value):
    with pytest.raises(epochrt.BadInput):
        epochrt.Op("ConstantFill", outputs=["x"], value=value)


# -- errors name their cause --------------------------------------------------


def test_a_groups_error_is_its_cause_never_a_task_cancelled_by_it():
    """A collective called 3 times on w0 and twice on w1: the third call
    cannot complete. Tasks cancelled because of it (the limiter's count on
    w0) must never be what the job reports, however the threads race."""
    def task(node, calls):
        return {"name": "t_" + node, "node": node, "workspace": "private",
                "steps": [{"num_iter": calls, "ops": [
                    {"type": "ConstantFill", "outputs": ["x"],
                     "args": {"shape": [2], "value": 1.0}},
                    {"type": "Allreduce", "inputs": ["x"], "outputs": ["y"],
                     "args": {"collective": "red"}}]}]}

    spec = {"name": "uneven", "epoch_limit": 1,
            "epoch": [task("w0", 3), task("w1", 2)]}
    job = epochrt.Job.from_json(json.dumps(spec))
    session = epochrt.LocalSession(worker_threads=2)
    for _ in range(200):
        with pytest.raises(epochrt.JobFailed) as caught:
            epochrt.JobRunner(job).train(session)
        text = str(caught.value)
        assert "all-reduce 'red' (call 3) cannot complete" in text, text


# -- an adversary's ops, killed at random moments ------------------------------

ADVERSARY = '''
import json, sys, warnings
import numpy as np
import torch
import epochrt

warnings.simplefilter("ignore", UserWarning)
kept = []

def step(w, g):
    # optimizer.step(): in place, returned as its own output
    torch.from_numpy(w).sub_(0.01 * torch.from_numpy(g))
    return w

def grad(w, seen):
    # writes into an input it does not output (read-only to NumPy)
    torch.from_numpy(seen).add_(1.0)
    return np.sin(w * 3.0).astype(np.float32)

def hoard(w):
    # keeps every array it is given, and writes into the old ones
    for old in kept:
        torch.from_numpy(old).fill_(1e9)
    kept.append(w)

def view(w):
    return w[::2]  # a view of an input, as another output

ops = epochrt.OpRegistry()
ops.register("Step", step, inputs=2, outputs=1)
ops.register("Grad", grad, inputs=2, outputs=1)
ops.register("Hoard", hoard, inputs=1, outputs=0)
ops.register("View", view, inputs=1, outputs=1)
count = 65536
spec = {"name": "adversary", "epoch_limit": 40,
        "init": [{"node": "n", "ops": [
            {"type": "ConstantFill", "outputs": ["w"],
             "args": {"shape": [count], "value": 0.5}},
            {"type": "ConstantFill", "outputs": ["seen"],
             "args": {"shape": [4], "value": 0.0}}]}],
        "epoch": [{"node": "n", "ops": [
            {"type": "Grad", "inputs": ["w", "seen"], "outputs": ["g"]},
            {"type": "Hoard", "inputs": ["w"]},
            {"type": "Step", "inputs": ["w", "g"], "outputs": ["w"]},
            {"type": "View", "inputs": ["w"], "outputs": ["half"]},
            {"type": "Sleep", "args": {"ms": 20}}]}]}
job = epochrt.Job.from_json(json.dumps(spec), ops=ops)


def train(session):
    manager = epochrt.MultiNodeCheckpointManager(sys.argv[1])
    print("training", flush=True)
    epochrt.JobRunner(job, checkpoint_manager=manager).train(session)
    w = session.fetch("n", "w")
    print("result", w.sum(dtype=np.float64),
          session.fetch("n", "seen").tolist(),
          session.fetch("n", "half").sum(dtype=np.float64), flush=True)


if sys.argv[2] == "daemon":
    # The node on a daemon (its checkpoints under its root), killed with
    # the master: both are this process.
    with epochrt.serve_node("127.0.0.1:0", checkpoint_root=sys.argv[1] + "-root",
                            ops=ops, worker_threads=2) as server:
        train(epochrt.DistributedSession({"n": server.address}, ops=ops))
else:
    train(epochrt.LocalSession(worker_threads=2, ops=ops))
'''


@pytest.mark.parametrize("where", ["local", "daemon"])
def test_an_adversarys_ops_killed_at_random_moments_end_as_uninterrupted(
        tmp_path, where):
    import random
    import subprocess
    import sys
    import time
    script = tmp_path / "adversary.py"
    script.write_text(ADVERSARY)

    def run(directory, kill_after=None):
        proc = subprocess.Popen([sys.executable, str(script), str(directory),
                                 where],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        if kill_after is not None:
            try:
                proc.wait(timeout=kill_after)
            except subprocess.TimeoutExpired:
                proc.kill()
        out, err = proc.communicate(timeout=120)
        results = [line for line in out.splitlines()
                   if line.startswith("result")]
        return results[0] if results else None, err

    reference, err = run(tmp_path / "straight")
    assert reference is not None, err
    rng = random.Random(39)
    directory = tmp_path / "killed"
    for _ in range(5):
        run(directory, kill_after=rng.uniform(0.3, 2.5))
    resumed, err = run(directory)
    assert resumed == reference, err
