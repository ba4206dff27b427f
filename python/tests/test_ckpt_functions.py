"""ckpt_ls, ckpt_show and ckpt_verify: `epochrt ckpt ls`, `show` and
`verify` of a checkpoint directory as functions returning Python values."""

import json
import pathlib
import subprocess

import numpy
import pytest

import epochrt
from conftest import PIPELINE_TOTALS


@pytest.fixture
def ckpt(tmp_path, pipeline_path):
    """The checkpoint directory of pipeline.json run to its end (epochs 0
    to 4 committed, node trainer_0)."""
    directory = tmp_path / "ckpt"
    job = epochrt.Job.load(pipeline_path)
    manager = epochrt.MultiNodeCheckpointManager(str(directory))
    assert epochrt.JobRunner(job, checkpoint_manager=manager).train(
        epochrt.LocalSession()) == 4
    return str(directory)


def corrupt_database(path):
    """Flips three bytes of every LevelDB file of the database at `path`,
    as the C++ tests' corrupt_database does."""
    for entry in pathlib.Path(path).iterdir():
        if entry.suffix not in (".ldb", ".log"):
            continue
        data = bytearray(entry.read_bytes())
        if len(data) < 16:
            continue
        for pos in (len(data) // 3, len(data) // 2, 2 * len(data) // 3):
            data[pos] ^= 0xFF
        entry.write_bytes(bytes(data))


def test_ckpt_ls_lists_what_the_command_lists(ckpt, cli):
    listed = epochrt.ckpt_ls(ckpt)
    shown = json.loads(subprocess.run(
        [cli, "ckpt", "ls", ckpt, "--json"], capture_output=True, text=True,
        check=True, timeout=60).stdout)
    assert listed["committed_epochs"] == shown["committed_epochs"] == \
        [0, 1, 2, 3, 4]
    assert listed["last_committed"] == 4
    for db in listed["databases"]:
        assert db["path"] == ckpt + "/%s.%d" % (db["node"], db["epoch"])
        del db["path"]
    assert listed["databases"] == shown["databases"]


def test_ckpt_ls_of_a_directory_without_checkpoints_is_empty(tmp_path):
    assert epochrt.ckpt_ls(str(tmp_path)) == {
        "databases": [], "committed_epochs": [], "last_committed": None}


def test_ckpt_show_gives_each_epochs_blobs_as_numpy_arrays(ckpt):
    for epoch, total in PIPELINE_TOTALS.items():
        blobs = epochrt.ckpt_show(ckpt, "trainer_0", epoch)
        assert blobs["total"].dtype == numpy.int64
        assert blobs["total"].tolist() == [total]
    assert epochrt.ckpt_show(ckpt, "trainer_0", 0)["dataset"].tolist() == \
        list(range(10))


def test_ckpt_show_gives_the_blobs_named_in_that_order(ckpt):
    blobs = epochrt.ckpt_show(ckpt, "trainer_0", 2, ["total", "dataset"])
    assert list(blobs) == ["total", "dataset"]
    every = epochrt.ckpt_show(ckpt, "trainer_0", 2)
    assert set(every) > {"total", "dataset"}


def test_ckpt_show_agrees_with_the_command(ckpt, cli):
    shown = json.loads(subprocess.run(
        [cli, "ckpt", "show", ckpt, "trainer_0", "3", "--json"],
        capture_output=True, text=True, check=True, timeout=60).stdout)
    blobs = epochrt.ckpt_show(ckpt, "trainer_0", 3)
    assert list(blobs) == [b["name"] for b in shown["blobs"]]
    for b in shown["blobs"]:
        if b["type"] != "string":
            assert blobs[b["name"]].ravel().tolist() == b["values"]
            assert list(blobs[b["name"]].shape) == b["shape"]


def test_ckpt_show_of_a_blob_the_checkpoint_lacks_names_it(ckpt):
    with pytest.raises(epochrt.Error) as caught:
        epochrt.ckpt_show(ckpt, "trainer_0", 1, ["total", "no_such_blob"])
    assert caught.value.code == "not_found"
    assert "no_such_blob" in str(caught.value)


def test_ckpt_show_of_a_checkpoint_that_does_not_exist_is_not_found(ckpt):
    with pytest.raises(epochrt.Error) as caught:
        epochrt.ckpt_show(ckpt, "trainer_0", 9)
    assert caught.value.code == "not_found"


@pytest.mark.parametrize("node, epoch", [("../x", 1), ("trainer_0", -1)])
def test_ckpt_show_of_a_bad_node_or_epoch_is_bad_input(ckpt, node, epoch):
    with pytest.raises(epochrt.BadInput):
        epochrt.ckpt_show(ckpt, node, epoch)


def test_ckpt_verify_of_intact_checkpoints_is_ok(ckpt):
    result = epochrt.ckpt_verify(ckpt)
    assert result["ok"]
    assert result["problems"] == []
    assert result["epochs"] == {e: {"trainer_0": None} for e in range(5)}


def test_ckpt_verify_names_a_corrupt_database_and_its_epoch(ckpt, cli):
    corrupt_database(ckpt + "/trainer_0.2")
    result = epochrt.ckpt_verify(ckpt)
    assert not result["ok"]
    assert result["epochs"][2]["trainer_0"] is not None
    assert [e for e in result["epochs"]
            if result["epochs"][e]["trainer_0"]] == [2]
    assert len(result["problems"]) == 1
    assert result["problems"][0].startswith("epoch 2: trainer_0: ")
    # As the command: it fails too.
    assert subprocess.run([cli, "ckpt", "verify", ckpt], capture_output=True,
                          timeout=60).returncode == 1
    with pytest.raises(epochrt.Error):
        epochrt.ckpt_show(ckpt, "trainer_0", 2)


def test_ckpt_functions_refuse_what_is_not_a_directory(tmp_path):
    missing = str(tmp_path / "missing")
    for call in (lambda: epochrt.ckpt_ls(missing),
                 lambda: epochrt.ckpt_show(missing, "n", 0),
                 lambda: epochrt.ckpt_verify(missing)):
        with pytest.raises(epochrt.BadInput, match="not a directory"):
            call()
