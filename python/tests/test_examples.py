"""examples/python/linear.py does what its README walks through: train,
interrupt (SIGINT, SIGKILL), resume to the model of an uninterrupted run,
read a checkpoint."""

import re
import signal
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR

SCRIPT = str(SOURCE_DIR / "examples" / "python" / "linear.py")
EPOCHS = "12"


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args],
                          capture_output=True, text=True, timeout=120)


def start_and_interrupt(ckpt, sig, after):
    """Starts a slow training and sends `sig` once `after` epochs ran;
    returns the process's return code and output."""
    child = subprocess.Popen(
        [sys.executable, SCRIPT, "train", ckpt, "--epochs", EPOCHS,
         "--pace", "0.1"], stdout=subprocess.PIPE, text=True)
    lines = []
    for line in child.stdout:
        lines.append(line)
        if line.startswith("epoch %d:" % after):
            child.send_signal(sig)
            if sig == signal.SIGKILL:
                break
    rest = child.stdout.read()
    child.stdout.close()
    return child.wait(timeout=60), "".join(lines) + rest


def model_line(out):
    return re.search(r"w=.*", out).group(0)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    ckpt = str(tmp_path_factory.mktemp("uninterrupted"))
    result = run("train", ckpt, "--epochs", EPOCHS)
    assert result.returncode == 0, result.stderr
    assert "trained 12 epochs" in result.stdout
    return ckpt, model_line(result.stdout)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_interrupted_training_resumes_to_the_uninterrupted_model(
        tmp_path, uninterrupted, sig):
    ckpt = str(tmp_path)
    code, out = start_and_interrupt(ckpt, sig, after=3)
    if sig == signal.SIGINT:
        assert code == 3
        assert "stopped at epoch 3; run again to resume" in out
    else:
        assert code == -signal.SIGKILL
    result = run("train", ckpt, "--epochs", EPOCHS)
    assert result.returncode == 0, result.stderr
    resumed = int(re.search(r"resuming from epoch (\d+)",
                            result.stdout).group(1))
    assert 1 <= resumed <= 3
    assert "epoch %d:" % (resumed + 1) in result.stdout
    assert "epoch 1:" not in result.stdout
    assert model_line(result.stdout) == uninterrupted[1]


def test_show_reads_the_model_of_the_last_checkpoint(uninterrupted):
    ckpt, model = uninterrupted
    result = run("show", ckpt)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("epoch 12: ")
    assert model_line(result.stdout) == model


def test_show_of_an_earlier_epoch_reads_an_earlier_model(uninterrupted):
    ckpt, model = uninterrupted
    result = run("show", ckpt, "--epoch", "3")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("epoch 3: ")
    assert model_line(result.stdout) != model
