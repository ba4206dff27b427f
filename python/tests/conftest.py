"""Fixtures of the epochrt module's tests.

CTest runs them with PYTHONPATH set to the build's module directory and
EPOCHRT_CLI to the `epochrt` command of the same build (python/CMakeLists.txt).
"""

import os
import pathlib

import pytest

SOURCE_DIR = pathlib.Path(
    os.environ.get("EPOCHRT_SOURCE_DIR",
                   pathlib.Path(__file__).resolve().parents[2]))

# examples/jobs/pipeline.json: the total after each epoch (epoch 0: init).
PIPELINE_TOTALS = {0: 100, 1: 103, 2: 115, 3: 136, 4: 145}


@pytest.fixture
def pipeline_path():
    return str(SOURCE_DIR / "examples" / "jobs" / "pipeline.json")


@pytest.fixture
def cli():
    path = os.environ.get("EPOCHRT_CLI")
    if not path:
        pytest.skip("EPOCHRT_CLI is not set (CTest sets it)")
    return path
