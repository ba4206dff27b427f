"""What epochrt.torch keeps of torch's state in blobs, and how: the
process's random generators swapped per node, and optimizer groups and
LR scheduler states as JSON that reads back to the same Python values."""

import array
import collections
import contextlib
import copy
import functools
import json
import random
import struct
import warnings
import weakref

import numpy as np
import torch

# -- the per-node random state -------------------------------------------------

_NUMPY_TAIL = struct.Struct("<qqd")
_PYTHON_TAIL = struct.Struct("<qd")


def _numpy_state_bytes(state):
    _, keys, pos, has_gauss, cached = state
    return np.frombuffer(np.asarray(keys, np.uint32).tobytes()
                         + _NUMPY_TAIL.pack(pos, has_gauss, cached), np.uint8)


def _numpy_state_of(data):
    raw = data.tobytes()
    keys = np.frombuffer(raw[:624 * 4], np.uint32)
    pos, has_gauss, cached = _NUMPY_TAIL.unpack(raw[624 * 4:])
    return ("MT19937", keys, pos, has_gauss, cached)


def _python_state_bytes(state):
    version, internal, gauss = state
    assert version == 3, version
    return np.frombuffer(
        array.array("I", internal).tobytes()
        + _PYTHON_TAIL.pack(gauss is not None, gauss or 0.0), np.uint8)


def _python_state_of(data):
    raw = data.tobytes()
    internal = array.array("I")
    internal.frombytes(raw[:625 * 4])
    has_gauss, gauss = _PYTHON_TAIL.unpack(raw[625 * 4:])
    return (3, tuple(internal), gauss if has_gauss else None)


def seeded_states(seed):
    """Torch's, NumPy's and `random`'s generator states after seeding them
    with `seed`, as three uint8 arrays, without touching the process's."""
    torch_state = torch.Generator().manual_seed(seed).get_state().numpy()
    numpy_state = np.random.RandomState(seed % 2**32).get_state()
    python_state = random.Random(seed).getstate()
    return (torch_state.copy(), _numpy_state_bytes(numpy_state).copy(),
            _python_state_bytes(python_state).copy())


class NodeRandomState:
    """Swaps the process's global generators for a node's (three writable
    uint8 arrays, `seeded_states`) while the user's code runs, writes where
    they ended into the arrays, and gives the process its own back."""

    def __init__(self, torch_blob, numpy_blob, python_blob):
        self.blobs = (torch_blob, numpy_blob, python_blob)

    def __enter__(self):
        self.saved = (torch.get_rng_state(), np.random.get_state(),
                      random.getstate())
        torch_blob, numpy_blob, python_blob = self.blobs
        torch.set_rng_state(torch.from_numpy(torch_blob.copy()))
        np.random.set_state(_numpy_state_of(numpy_blob))
        random.setstate(_python_state_of(python_blob))
        return self

    def __exit__(self, *exc):
        torch_blob, numpy_blob, python_blob = self.blobs
        torch_blob[...] = torch.get_rng_state().numpy()
        numpy_blob[...] = _numpy_state_bytes(np.random.get_state())
        python_blob[...] = _python_state_bytes(random.getstate())
        torch.set_rng_state(self.saved[0])
        np.random.set_state(self.saved[1])
        random.setstate(self.saved[2])
        return False


@contextlib.contextmanager
def quiet_readonly():
    """torch.from_numpy without its warning about read-only arrays: the
    ops never write into their read-only inputs."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore",
                                "The given NumPy array is not writable")
        yield


# -- Python values as JSON, and back ---------------------------------------------

_TAG = "__epochrt__"


def encode(value, where):
    """`value` as JSON accepts it, such that `decode` gives it back: a
    tuple, a Counter, a dict of keys other than strings are tagged; a
    one-element tensor becomes its number. Raises TypeError naming
    `where` (a path such as "scheduler.milestones") for anything else."""
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise TypeError("%s is a tensor of %d elements, which the trainer "
                            "cannot keep as JSON" % (where, value.numel()))
        return value.item()
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, list):
        return [encode(v, "%s[%d]" % (where, i)) for i, v in enumerate(value)]
    if isinstance(value, tuple):
        return {_TAG: "tuple", "items": [encode(v, "%s[%d]" % (where, i))
                                         for i, v in enumerate(value)]}
    if isinstance(value, dict):
        if type(value) is dict and all(isinstance(k, str) and k != _TAG
                                       for k in value):
            return {k: encode(v, "%s.%s" % (where, k))
                    for k, v in value.items()}
        kind = ("Counter" if isinstance(value, collections.Counter)
                else "OrderedDict" if isinstance(value, collections.OrderedDict)
                else "dict")
        return {_TAG: kind, "items": [
            [encode(k, where + " (a key)"), encode(v, "%s[%r]" % (where, k))]
            for k, v in value.items()]}
    raise TypeError("%s holds a %s, which the trainer cannot keep as JSON"
                    % (where, type(value).__name__))


def decode(value):
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    kind = value.get(_TAG)
    if kind is None:
        return {k: decode(v) for k, v in value.items()}
    if kind == "tuple":
        return tuple(decode(v) for v in value["items"])
    pairs = dict((decode(k), decode(v)) for k, v in value["items"])
    return {"Counter": collections.Counter,
            "OrderedDict": collections.OrderedDict}.get(kind, dict)(pairs)


def is_code(value):
    """Functions, methods and weak references to them: what a scheduler
    rebuilds from its constructor (OneCycleLR's anneal_func, CyclicLR's
    scale function), never data a checkpoint holds."""
    return callable(value) or isinstance(value, (weakref.ref,
                                                  weakref.WeakMethod))


def scheduler_state(scheduler):
    """The scheduler's state_dict without its code, encoded."""
    state = {k: v for k, v in scheduler.state_dict().items()
             if not is_code(v)}
    return encode(state, "the scheduler's state_dict")


def group_settings(optimizer):
    """Each param group's settings but its parameters, encoded."""
    return [encode({k: v for k, v in g.items() if k != "params"},
                   "the optimizer's param_groups[%d]" % i)
            for i, g in enumerate(optimizer.param_groups)]


def json_blob(value):
    return np.array([json.dumps(value, sort_keys=True).encode()],
                    dtype=object)


@functools.lru_cache(maxsize=64)
def _parsed(text):
    return json.loads(text)


def json_of(blob):
    """The JSON value of a string blob, parsed once per text: a fresh copy
    (callers keep and change it)."""
    return copy.deepcopy(_parsed(bytes(blob.reshape(-1)[0])))


def merge(old_definition, new_definition, current):
    """What a job changed (allowed) on a resume means for state that both
    the job's definition and the run set: each value the new definition
    changed takes the new definition's value; any other keeps the run's
    (a scheduler's learning rate goes on); a key the new definition lacks
    is gone. Dicts and lists of one length merge item by item, so a field
    changed in one of a chained scheduler's schedulers leaves the others'
    state as the run left it."""
    if (isinstance(new_definition, dict) and isinstance(old_definition, dict)
            and isinstance(current, dict)):
        return {key: (merge(old_definition[key], value, current[key])
                      if key in old_definition and key in current else value)
                for key, value in new_definition.items()}
    if (isinstance(new_definition, list) and isinstance(old_definition, list)
            and isinstance(current, list)
            and len(new_definition) == len(old_definition) == len(current)):
        return [merge(o, n, c) for o, n, c
                in zip(old_definition, new_definition, current)]
    return current if old_definition == new_definition else new_definition
