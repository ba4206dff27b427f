"""The README's Python example runs as written and prints what it shows."""

import os
import re
import subprocess
import sys

from conftest import SOURCE_DIR


def readme_example(index=0):
    """The python block `index` of the README's "From Python" section, and
    the output its trailing comment lines show."""
    readme = (SOURCE_DIR / "README.md").read_text()
    section = readme.split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.*?)```", section, re.S)[index]
    lines = code.rstrip("\n").split("\n")
    shown = []
    while lines and lines[-1].startswith("# "):
        shown.insert(0, lines.pop()[2:])
    return "\n".join(lines) + "\n", shown


def test_the_readme_example_prints_its_output_and_resumes(tmp_path):
    code, shown = readme_example()
    assert shown, "the example shows no output"
    assert '"/tmp/py-ckpt"' in code
    code = code.replace('"/tmp/py-ckpt"', repr(str(tmp_path / "ckpt")))
    for _ in range(2):  # the second run resumes from the last epoch
        out = subprocess.run([sys.executable, "-c", code], cwd=SOURCE_DIR,
                             env=dict(os.environ), check=True,
                             capture_output=True, text=True).stdout
        assert out.splitlines() == shown


def test_the_readme_example_of_python_ops_prints_its_output():
    code, shown = readme_example(1)
    assert shown, "the example shows no output"
    out = subprocess.run([sys.executable, "-c", code], cwd=SOURCE_DIR,
                         env=dict(os.environ), check=True,
                         capture_output=True, text=True).stdout
    assert out.splitlines() == shown


def test_the_readme_example_of_a_daemon_prints_its_output(tmp_path):
    code, shown = readme_example(2)
    assert shown, "the example shows no output"
    assert '"/tmp/py-node"' in code
    code = code.replace('"/tmp/py-node"', repr(str(tmp_path / "node")))
    out = subprocess.run([sys.executable, "-c", code], cwd=SOURCE_DIR,
                         env=dict(os.environ), check=True, timeout=120,
                         capture_output=True, text=True).stdout
    assert out.splitlines() == shown
