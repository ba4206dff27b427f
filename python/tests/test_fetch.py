"""Blobs to NumPy arrays and back: every dtype of epochrt's tensors."""

import json

import numpy as np
import pytest

import epochrt

# A job file's dtypes, each filled by GivenTensorFill with values at the
# edges of the dtype's range.
FILLED = {
    "f32": (np.float32, [1.5, -2.25, 3.0e38, 1.0e-45, 0.0, -0.0]),
    "f64": (np.float64, [0.1, -1.0e308, 5.0e-324, 2.0 ** 53, 1.0, -0.5]),
    "i32": (np.int32, [-2147483648, 2147483647, 0, -1, 7, 42]),
    "i64": (np.int64, [-2 ** 63, 2 ** 63 - 1, 2 ** 53 + 1, -1, 0, 5]),
    "u8": (np.uint8, [0, 255, 1, 128, 7, 42]),
    "bool": (np.bool_, [1, 0, 0, 1, 1, 0]),
}


@pytest.fixture(scope="module")
def filled_session():
    """A session whose node `n` holds one blob per dtype, of shape [2, 3],
    and a scalar, made by a job file's init group."""
    ops = [{"type": "GivenTensorFill", "outputs": [name],
            "args": {"values": values, "shape": [2, 3], "dtype": name}}
           for name, (_, values) in FILLED.items()]
    ops.append({"type": "ConstantFill", "outputs": ["scalar"],
                "args": {"value": 2.5, "dtype": "f64"}})
    job = epochrt.Job.from_json(json.dumps({
        "name": "dtypes", "init": [{"node": "n", "ops": ops}],
        "epoch_limit": 1}))
    session = epochrt.LocalSession(worker_threads=2)
    epochrt.JobRunner(job).train(session)
    return session


@pytest.mark.parametrize("name", sorted(FILLED))
def test_fetch_gives_a_job_files_blob_in_its_dtype_and_shape(
        filled_session, name):
    numpy_type, values = FILLED[name]
    fetched = filled_session.fetch("n", name)
    assert fetched.dtype == numpy_type
    assert fetched.shape == (2, 3)
    np.testing.assert_array_equal(
        fetched, np.array(values, dtype=numpy_type).reshape(2, 3))


def test_fetch_gives_a_scalar_as_a_0d_array(filled_session):
    fetched = filled_session.fetch("n", "scalar")
    assert fetched.shape == ()
    assert fetched.dtype == np.float64
    assert fetched[()] == 2.5


def test_a_fetched_array_is_a_copy_of_the_blob(filled_session):
    first = filled_session.fetch("n", "i32")
    first[0, 0] = 99
    assert filled_session.fetch("n", "i32")[0, 0] == -2147483648


@pytest.mark.parametrize("numpy_type", [np.float32, np.float64, np.int32,
                                        np.int64, np.uint8, np.bool_])
def test_put_then_fetch_round_trips_every_numeric_dtype(numpy_type):
    session = epochrt.LocalSession(worker_threads=2)
    value = (np.arange(24) % 5).astype(numpy_type).reshape(2, 3, 4)
    session.put("n", "x", value)
    fetched = session.fetch("n", "x")
    assert fetched.dtype == numpy_type
    np.testing.assert_array_equal(fetched, value)


def test_put_takes_non_contiguous_and_big_endian_arrays():
    session = epochrt.LocalSession(worker_threads=2)
    value = np.arange(12, dtype=">f8").reshape(3, 4).T
    session.put("n", "x", value)
    fetched = session.fetch("n", "x")
    assert fetched.dtype == np.float64
    np.testing.assert_array_equal(fetched, value)


def test_strings_round_trip_as_an_object_array_of_bytes():
    session = epochrt.LocalSession(worker_threads=2)
    session.put("n", "s", np.array([[b"a", b"\xff\x00"], ["\u00e9", ""]],
                                   dtype=object))
    fetched = session.fetch("n", "s")
    assert fetched.dtype == object
    assert fetched.tolist() == [[b"a", b"\xff\x00"], ["\u00e9".encode(), b""]]


def test_put_of_a_dtype_epochrt_lacks_raises_type_error():
    session = epochrt.LocalSession(worker_threads=2)
    with pytest.raises(TypeError, match="float16"):
        session.put("n", "x", np.zeros(3, dtype=np.float16))


def test_fetch_of_a_missing_blob_raises_bad_input_naming_it(filled_session):
    with pytest.raises(epochrt.BadInput) as caught:
        filled_session.fetch("n", "absent")
    assert caught.value.code == "missing_blob"
    assert "absent" in str(caught.value)


@pytest.mark.parametrize("name", sorted(FILLED))
def test_fetch_into_out_fills_the_array_given_and_returns_it(
        filled_session, name):
    numpy_type, values = FILLED[name]
    out = np.zeros((2, 3), dtype=numpy_type)
    got = filled_session.fetch("n", name, out=out)
    assert got is out
    np.testing.assert_array_equal(out, np.array(values, dtype=numpy_type)
                                  .reshape(2, 3))


def test_fetch_into_an_out_that_does_not_fit_raises(filled_session):
    with pytest.raises(TypeError, match="float32"):
        filled_session.fetch("n", "f64", out=np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="shape"):
        filled_session.fetch("n", "f64", out=np.zeros(6))
    with pytest.raises(ValueError, match="C-contiguous"):
        filled_session.fetch("n", "f64", out=np.zeros((3, 2)).T)
    read_only = np.zeros((2, 3))
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        filled_session.fetch("n", "f64", out=read_only)
    with pytest.raises(epochrt.BadInput, match="has no blob 'nope'"):
        filled_session.fetch("n", "nope", out=np.zeros(1))


def test_fetch_without_a_copy_shares_the_blob_read_only():
    session = epochrt.LocalSession(worker_threads=2)
    session.put("n", "w", np.arange(4.0))
    shared = session.fetch("n", "w", copy=False)
    np.testing.assert_array_equal(shared, [0.0, 1.0, 2.0, 3.0])
    assert not shared.flags.writeable
    assert shared.base is not None  # a view of the blob, not a copy
    # The node writes a copy while the array holds the blob.
    job = epochrt.Job.from_json(json.dumps({
        "name": "add", "epoch_limit": 1, "init": [{"node": "n", "ops": [
            {"type": "Add", "inputs": ["w", "w"], "outputs": ["w"]}]}]}))
    epochrt.JobRunner(job).train(session)
    np.testing.assert_array_equal(shared, [0.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(session.fetch("n", "w"), [0, 2, 4, 6])
    with pytest.raises(epochrt.BadInput, match="has no blob 'nope'"):
        session.fetch("n", "nope", copy=False)
