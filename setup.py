"""Builds the Python package epochrt for pip (pyproject.toml).

    python3 -m venv --system-site-packages VENV
    VENV/bin/pip install --no-build-isolation .

The native module, epochrt._epochrt, is the CMake target epochrt_python,
which links epochrt's static libraries; this file runs CMake for that
target only and puts the module beside python/epochrt/*.py in the wheel.

EPOCHRT_CMAKE_BUILD_DIR names the CMake build directory; by default it is
build/pip in the source tree, kept so that the next install rebuilds only
what changed. A directory that was configured otherwise (e.g. the tree
CTest runs in) is built as configured, not reconfigured: its owner chose
its options, and its other targets are not ours to drop.
"""

import collections
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import ExecError

SOURCE_DIR = Path(__file__).resolve().parent
MODULE_TARGET = "epochrt_python"
INSTALL_DEPS_HINT = (
    "epochrt builds with Debian 12's packages (cmake, a C++ compiler, CAF, "
    "Cap'n Proto, leveldb, spdlog, pybind11-dev, python3-dev, "
    "python3-numpy...): install what is missing with `make deps` in the "
    "source tree (tools/install-deps.sh, as root), then run pip again. "
    "NumPy must be visible to the installing python: make the venv with "
    "--system-site-packages and install with --no-build-isolation.")
# Lines of a failed command's output that the error shows; the whole
# output is in the log.
TAIL_LINES = 40
ERROR_LINES = 10
ERROR_LINE = re.compile(r"CMake Error|error:|\*\*\*", re.IGNORECASE)
# Written into the trees setup.py configures: it reconfigures those (one
# whose configuration failed half way too), and builds the others as they
# are.
OWN_TREE_MARK = "pip-configured.txt"


def project_version():
    """The version in CMakeLists.txt's project(), which the native module
    also reports, so that it is written in one place only."""
    text = (SOURCE_DIR / "CMakeLists.txt").read_text()
    match = re.search(
        r"^\s*project\s*\(\s*epochrt\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)",
        text, re.MULTILINE | re.IGNORECASE)
    if not match:
        sys.exit("setup.py: CMakeLists.txt has no "
                 "`project(epochrt VERSION x.y.z ...)` to take the version "
                 "from")
    return match.group(1)


def cmake_build_dir():
    named = os.environ.get("EPOCHRT_CMAKE_BUILD_DIR")
    if named:
        return Path(named).resolve()
    return SOURCE_DIR / "build" / "pip"


def read_cmake_cache(build_dir):
    entries = {}
    for line in (build_dir / "CMakeCache.txt").read_text().splitlines():
        match = re.match(r"([A-Za-z0-9_.-]+):[A-Z]+=(.*)$", line)
        if match:
            entries[match.group(1)] = match.group(2)
    return entries


def cmake_true(value):
    return value.upper() in ("1", "ON", "YES", "TRUE", "Y")


def check_configured_tree(build_dir):
    """Refuses a given tree that cannot make a module for this source tree
    and a plain python, with the reason, rather than CMake's "no rule to
    make target"."""
    cache = read_cmake_cache(build_dir)
    home = cache.get("CMAKE_HOME_DIRECTORY", "")
    if not home or Path(home).resolve() != SOURCE_DIR:
        raise ExecError(
            f"EPOCHRT_CMAKE_BUILD_DIR={build_dir} is the build tree of "
            f"{home or 'an unknown source tree'}, not of {SOURCE_DIR}")
    for option in ("EPOCHRT_SANITIZE", "EPOCHRT_TSAN"):
        if cmake_true(cache.get(option, "OFF")):
            raise ExecError(
                f"EPOCHRT_CMAKE_BUILD_DIR={build_dir} is configured with "
                f"{option}=ON, which builds no Python module (python3 "
                f"cannot load a sanitized one); unset EPOCHRT_CMAKE_BUILD_DIR "
                f"to build in build/pip")
    if not cmake_true(cache.get("EPOCHRT_BUILD_PYTHON", "ON")):
        raise ExecError(
            f"EPOCHRT_CMAKE_BUILD_DIR={build_dir} is configured with "
            f"EPOCHRT_BUILD_PYTHON=OFF")


def run_logged(command, log_path, what):
    """Runs command, its output going to pip's (shown by pip -v) and to
    log_path; raises with the output's tail if it fails, since pip shows a
    failed build's output but a compiler's can be thousands of lines."""
    tail = collections.deque(maxlen=TAIL_LINES)
    # CMake's configuration says what is missing early, then goes on.
    errors = []
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(f"$ {shlex.join(command)}\n")
        log.flush()
        try:
            process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, errors="replace")
        except OSError as error:
            raise ExecError(f"{what}: cannot run {command[0]}: {error}. "
                            f"{INSTALL_DEPS_HINT}") from error
        with process:
            for line in process.stdout:
                sys.stdout.write(line)
                sys.stdout.flush()
                log.write(line)
                tail.append(line)
                if len(errors) < ERROR_LINES and ERROR_LINE.search(line):
                    errors.append(line)
        status = process.wait()
    if status != 0:
        message = f"{what} failed (exit status {status}). {INSTALL_DEPS_HINT}"
        early = [line for line in errors if line not in tail]
        if early:
            message += "\nIts first errors:\n" + "".join(early)
        raise ExecError(
            f"{message}\nThe last lines of its output "
            f"(all of it: {log_path}):\n" + "".join(tail))


class CMakeBuild(build_ext):
    """Builds epochrt._epochrt with the project's CMake build."""

    def build_extension(self, ext):
        cmake = shutil.which("cmake")
        if cmake is None:
            raise ExecError(f"cmake is not on PATH. {INSTALL_DEPS_HINT}")
        build_dir = cmake_build_dir()
        build_dir.mkdir(parents=True, exist_ok=True)
        own_tree = (build_dir / OWN_TREE_MARK).exists()
        configured = (build_dir / "CMakeCache.txt").exists()
        if configured and not own_tree:
            check_configured_tree(build_dir)
        log_path = build_dir / "pip-cmake.log"
        log_path.write_text("")

        if not configured or own_tree:
            (build_dir / OWN_TREE_MARK).write_text(
                "setup.py configures this CMake build tree at every pip "
                "install.\n")
            # Configured at every install, not only the first: a new venv
            # brings a new interpreter path, and CMake's own check of the
            # tree is quick when nothing changed.
            run_logged(
                [cmake, "-S", str(SOURCE_DIR), "-B", str(build_dir),
                 "-DCMAKE_BUILD_TYPE=Release",
                 "-DEPOCHRT_BUILD_TESTS=OFF",
                 "-DEPOCHRT_BUILD_EXAMPLES=OFF",
                 "-DEPOCHRT_BUILD_BENCH=OFF",
                 f"-DPython3_EXECUTABLE={sys.executable}"],
                log_path, "CMake's configuration of epochrt")
        run_logged(
            [cmake, "--build", str(build_dir), "--target", MODULE_TARGET,
             "-j", str(os.cpu_count() or 1)],
            log_path, f"CMake's build of {MODULE_TARGET}")

        # The name carries the ABI of the python the tree was configured
        # for; another python's name would be ignored by this one's import.
        destination = Path(self.get_ext_fullpath(ext.name))
        built = build_dir / "python" / "epochrt" / destination.name
        if not built.exists():
            found = sorted(p.name for p in built.parent.glob("_epochrt*"))
            raise ExecError(
                f"the build made no {built} for this python "
                f"({sys.executable}, extension suffix "
                f"{sysconfig.get_config_var('EXT_SUFFIX')}); it has: "
                f"{', '.join(found) or 'nothing'}. A tree configured for "
                f"another python cannot serve this one")
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, destination)


# setuptools' own build and egg-info directories go inside the CMake build
# directory too: pip builds in the source tree, and this way it leaves
# nothing there but build/pip. Emptied at every run, since setuptools never
# deletes from them: a file removed from python/epochrt/ would stay in
# every later wheel.
STAGING_DIR = cmake_build_dir() / "pip-staging"
shutil.rmtree(STAGING_DIR, ignore_errors=True)
STAGING_DIR.mkdir(parents=True)

setup(
    version=project_version(),
    packages=["epochrt"],
    package_dir={"epochrt": "python/epochrt"},
    ext_modules=[Extension("epochrt._epochrt", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={
        "build": {"build_base": str(STAGING_DIR)},
        "egg_info": {"egg_base": str(STAGING_DIR)},
    },
)
