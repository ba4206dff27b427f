"""`pip install .` gives a package that works without the source tree.

Run by its own CTest entry, python_pip_install_test (python/CMakeLists.txt),
not by python_test: the name keeps pytest from collecting it there, since
it needs EPOCHRT_CMAKE_BUILD_DIR, which lets pip build the module in the
CTest tree (no more than an up-to-date check) instead of building the whole
library again in build/pip.
"""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR

BUILD_DIR = os.environ.get("EPOCHRT_CMAKE_BUILD_DIR")

# Run by the venv's python away from the source tree: the README's job with
# a Python op, on the package as installed.
TRAIN = """
import json
import epochrt

ops = epochrt.OpRegistry()
ops.register("Scale", lambda x, factor=1.0: x * factor,
             inputs=1, outputs=1, args={"factor": "number"})
job = epochrt.Job("t")
job.init_group.add_task(epochrt.Task("n", [
    epochrt.Op("GivenTensorFill", outputs=["x"], values=[1.0, 2.0],
               dtype="f64")]))
job.epoch_group.add_task(epochrt.Task("n", [
    epochrt.Op("Scale", ["x"], ["x"], factor=3.0)]))
epochrt.epoch_limiter(job, 2)
session = epochrt.LocalSession(ops=ops)
epochs = epochrt.JobRunner(job).train(session)
x = session.fetch("n", "x")
print(json.dumps({
    "file": epochrt.__file__,
    "native": epochrt._epochrt.__file__,
    "version": epochrt.__version__,
    "epochs": epochs,
    "x": x.tolist(),
    "dtype": str(x.dtype),
}))
"""


def cmake_project_version():
    text = (SOURCE_DIR / "CMakeLists.txt").read_text()
    return re.search(r"project\s*\(\s*epochrt\s+VERSION\s+([0-9.]+)",
                     text).group(1)


def clean_env(**extra):
    """What a user's shell would give, without the test's PYTHONPATH,
    which points at the build tree's copy of the package."""
    env = {name: os.environ[name]
           for name in ("PATH", "HOME", "LANG", "TMPDIR")
           if name in os.environ}
    env.update(extra)
    return env


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True,
                            **kwargs)
    assert result.returncode == 0, (
        f"{command} exited with {result.returncode}\n"
        f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result.stdout


@pytest.mark.skipif(not BUILD_DIR,
                    reason="EPOCHRT_CMAKE_BUILD_DIR is not set (its CTest "
                           "entry sets it)")
def test_pip_install_then_import_and_train_from_elsewhere(tmp_path):
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    python = venv / "bin" / "python"

    top_level_before = sorted(p.name for p in SOURCE_DIR.iterdir())
    # --no-index: the test must not reach for the network; Debian's NumPy
    # and setuptools come through --system-site-packages.
    run([str(python), "-m", "pip", "install", "--no-index",
         "--no-build-isolation", "--no-cache-dir",
         "--disable-pip-version-check",
         str(SOURCE_DIR)],
        cwd=tmp_path,
        env=clean_env(EPOCHRT_CMAKE_BUILD_DIR=BUILD_DIR,
                      PIP_NO_INPUT="1"))
    # pip builds in the source tree; setup.py keeps its staging in the
    # CMake build directory.
    assert sorted(p.name for p in SOURCE_DIR.iterdir()) == top_level_before

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = run([str(python), "-c", TRAIN], cwd=elsewhere, env=clean_env())
    result = json.loads(out.splitlines()[-1])

    site = venv.resolve()
    for name in ("file", "native"):
        assert pathlib.Path(result[name]).resolve().is_relative_to(site), (
            f"epochrt imported from {result[name]}, not from {site}")
    assert result["version"] == cmake_project_version()
    assert result["epochs"] == 2
    assert result["x"] == [9.0, 18.0]
    assert result["dtype"] == "float64"

    # The installed module needs system libraries only: none of the build
    # tree's, none missing.
    libraries = run(["ldd", result["native"]])
    assert "not found" not in libraries, libraries
    for tree in (SOURCE_DIR.resolve(), pathlib.Path(BUILD_DIR).resolve()):
        assert str(tree) not in libraries, libraries

    metadata = run([str(python), "-m", "pip", "show", "epochrt"],
                   cwd=elsewhere, env=clean_env())
    assert f"Version: {cmake_project_version()}" in metadata
    assert "Requires: numpy" in metadata
