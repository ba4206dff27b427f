"""examples/python/torch_digits.py, run as its users run it: to the end,
killed (the whole process group, with SIGKILL) at several moments and run
again on the same directory, in one process and on three daemons. Every
way ends with the weights of an uninterrupted run."""

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from conftest import SOURCE_DIR

pytest.importorskip("torch")
pytest.importorskip("sklearn")

EXAMPLE = SOURCE_DIR / "examples" / "python" / "torch_digits.py"
EPOCHS = 12
WAIT = 300  # seconds a run may take on a busy machine


def command(*args):
    return [sys.executable, str(EXAMPLE), "--epochs", str(EPOCHS), *args]


def result_of(stdout):
    """(accuracy, digest) from the example's last two lines."""
    *_, accuracy, digest = stdout.strip().splitlines()
    assert accuracy.startswith("accuracy=") and digest.startswith(
        "weights_digest="), stdout
    return float(accuracy.split("=")[1]), digest.split("=")[1]


def run_to_the_end(*args):
    out = subprocess.run(command(*args), capture_output=True, text=True,
                         timeout=WAIT)
    assert out.returncode == 0, out.stderr
    return result_of(out.stdout)


def killed(args, after_line=None, after_seconds=None):
    """Runs the example in a process group of its own and kills the group
    once it printed `after_line` or `after_seconds` passed (or it ended);
    returns what it printed."""
    child = subprocess.Popen(command(*args), stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True,
                             start_new_session=True)
    printed = []
    try:
        if after_line is not None:
            for line in child.stdout:
                printed.append(line)
                if line.startswith(after_line):
                    break
        else:
            time.sleep(after_seconds)
    finally:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.wait(timeout=WAIT)
        child.stdout.close()
    return "".join(printed)


@pytest.fixture(scope="module")
def uninterrupted():
    return run_to_the_end()


def test_the_example_learns_the_digits(uninterrupted):
    accuracy, digest = uninterrupted
    assert accuracy > 0.85
    assert len(digest) == 64


def test_a_checkpointed_run_ends_as_one_without_checkpoints(
        tmp_path, uninterrupted):
    assert run_to_the_end("--checkpoint-dir", str(tmp_path)) == uninterrupted


def test_runs_killed_at_epoch_ends_resume_to_the_same_weights(
        tmp_path, uninterrupted):
    # Killed as soon as epoch k's line is out (epoch k is committed then),
    # while epoch k+1 runs and is being checkpointed.
    for k in (1, 5, 9):
        printed = killed(["--checkpoint-dir", str(tmp_path)],
                         after_line="epoch %d:" % k)
        assert "epoch %d:" % k in printed
    assert run_to_the_end("--checkpoint-dir", str(tmp_path)) == uninterrupted


def test_runs_killed_at_random_moments_resume_to_the_same_weights(
        tmp_path, uninterrupted):
    moments = random.Random(42)
    for _ in range(4):
        killed(["--checkpoint-dir", str(tmp_path)],
               after_seconds=moments.uniform(1.5, 4.0))
    assert run_to_the_end("--checkpoint-dir", str(tmp_path)) == uninterrupted


def test_three_daemons_train_the_same_weights_and_resume_after_a_kill(
        tmp_path, uninterrupted):
    printed = killed(["--checkpoint-dir", str(tmp_path), "--daemons"],
                     after_line="epoch 4:")
    assert "epoch 4:" in printed
    assert run_to_the_end("--checkpoint-dir", str(tmp_path),
                          "--daemons") == uninterrupted
