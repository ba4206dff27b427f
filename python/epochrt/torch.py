"""A PyTorch model trained data-parallel as an epochrt job.

`Trainer` holds an `nn.Module`, its `torch.optim` optimizer (and LR
scheduler), a loss function and a dataset, and turns them into ops and
tasks: each node trains on its shard of the data, the nodes' gradients
are averaged by one all-reduce per step, and everything a resume needs is
a blob, so checkpoints hold it and a resumed run equals an uninterrupted
one bit for bit::

    trainer = epochrt.torch.Trainer(model, optimizer, loss_fn, (x, y),
                                    batch_size=32, scheduler=scheduler)
    ops = epochrt.OpRegistry()
    trainer.register(ops)
    job = trainer.make_job(["n0", "n1", "n2"], epochs=20)
    runner = epochrt.JobRunner(job, checkpoint_manager=manager)
    runner.train(epochrt.LocalSession(ops=ops))
    trainer.load_into_module(session, "n0")

What each node's workspace holds (`<name>` is the trainer's name, "model"
unless given):

- `<name>/<key>` for each key of `model.state_dict()` (parameters and
  buffers; a tensor tied under two keys is one blob, named by the first);
- `<name>/optimizer/<key>/<state>` for each parameter's optimizer state
  (`momentum_buffer`, `exp_avg`, ...), `<name>/optimizer/steps` (steps
  taken) and `<name>/optimizer/param_groups` (the groups' hyperparameters,
  JSON: the learning rate a scheduler sets is there);
- `<name>/scheduler`: the LR scheduler's `state_dict()`, JSON;
- `<name>/rng/torch`, `<name>/rng/numpy`, `<name>/rng/python`: the node's
  own state of torch's, NumPy's and `random`'s global generators, set
  around each call of the user's code (so dropout and augmentation draw
  per node, and resume where they were);
- `<name>/sampler`: the pass over the shard and the step within it;
- `<name>/grad/<i>`: the gradient buckets, all-reduced in one collective
  call per step; `<name>/loss`: the epoch's mean loss, the epoch tasks'
  output (and a metric of the stats lines).

Memory: the module's parameters are views of the blobs while an op runs
(no copy, updated in place by `optimizer.step()`), and are released when
it returns: while a job runs, the module holds no weights of its own.
`load_into_module` gives it a node's weights back.

Threads: the nodes of a LocalSession share one module and one optimizer
object, and torch releases the GIL inside its kernels; each call of this
module's ops holds one process-wide lock, so the nodes' steps run one at
a time in a process (use daemons for parallel training).
"""

import array
import collections
import contextlib
import copy
import functools
import hashlib
import json
import math
import random
import struct
import threading
import warnings

import numpy as np
import torch

import epochrt

__all__ = ["Trainer"]

# Torch's and NumPy's global generators, the module and the optimizer are
# shared by the nodes of one process: one call at a time.
_lock = threading.RLock()


@contextlib.contextmanager
def _quiet_readonly():
    """A context in which torch.from_numpy does not warn about read-only
    arrays: the ops here never write into their read-only inputs."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore",
                                "The given NumPy array is not writable")
        yield


def _digest_tensors(tensors):
    h = hashlib.sha256()
    for t in tensors:
        t = torch.as_tensor(t).detach().contiguous()
        h.update(str(t.dtype).encode())
        h.update(repr(tuple(t.shape)).encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()[:16]


def _json_bytes(value):
    return np.array([json.dumps(value, sort_keys=True).encode()], dtype=object)


@functools.lru_cache(maxsize=64)
def _parsed_json(text):
    return json.loads(text)


def _json_of(blob, fresh=False):
    """The JSON value of a string blob, parsed once per text: shared unless
    `fresh` (a copy for a caller that may keep or change it)."""
    value = _parsed_json(bytes(blob.reshape(-1)[0]))
    return copy.deepcopy(value) if fresh else value


def _plain(value, what):
    """`value` as JSON accepts it, or TypeError naming `what`."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return value.item()
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v, what) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v, what) for k, v in value.items()}
    raise TypeError("%s holds a %s, which a checkpoint cannot hold as JSON"
                    % (what, type(value).__name__))


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


def _seeded_states(seed):
    """The three generators' states after seeding them with `seed`, without
    touching the process's own."""
    torch_state = torch.Generator().manual_seed(seed).get_state().numpy()
    numpy_state = np.random.RandomState(seed % 2**32).get_state()
    python_state = random.Random(seed).getstate()
    return (torch_state.copy(), _numpy_state_bytes(numpy_state).copy(),
            _python_state_bytes(python_state).copy())


class _NodeRandomState:
    """Swaps the process's global generators for a node's while the user's
    code runs, and writes where they ended into the node's blobs."""

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


# -- the trainer ---------------------------------------------------------------


class Trainer:
    """A module, its optimizer and scheduler, a loss and a dataset, as the
    ops and tasks of a data-parallel epochrt job.

    `loss_fn(model, *batch)` returns the loss of one batch, a scalar
    tensor; `dataset` is a tuple of tensors (or arrays) of the same first
    dimension, and a batch is one slice of each. Every node trains on its
    shard of `dataset`, as torch's DistributedSampler makes it: each pass
    (`shuffle`: permuted by a generator seeded with `seed` + the pass),
    padded by wrapping to a multiple of the node count, node k taking
    every n-th index from k. An epoch is one pass over the shard, or
    `steps_per_epoch` steps (a pass then continues in the next epoch).
    Gradients are averaged over the nodes, as DDP does, in buckets of at
    most `bucket_mib` MiB, all in one collective call per step.
    `scheduler`, when given, steps after each epoch (`scheduler_step`
    "epoch") or each step ("step").

    The module's initial weights are the ones it holds now; the job's
    init broadcasts the first node's, so every node starts with the same
    weights even where each process made its own module (daemons). Each
    node's random state starts from `seed` + its index in the node list.

    The trainer is part of the job's definition: the model's structure,
    the optimizer's and scheduler's settings, the data's digest, the batch
    size, the seed and the loss function's code are the arguments and
    code versions of its ops, so a rerun with any of them changed is a
    changed job (JobRunner refuses it, naming the difference).

    Not thread-safe: build, register and read it from one thread; the ops
    take a process-wide lock while they run.
    """

    def __init__(self, model, optimizer, loss_fn, dataset, *, batch_size,
                 scheduler=None, scheduler_step="epoch", shuffle=True,
                 seed=0, steps_per_epoch=None, bucket_mib=25, name="model"):
        if not isinstance(model, torch.nn.Module):
            raise TypeError("model must be a torch.nn.Module, got %s"
                            % type(model).__name__)
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError("optimizer must be a torch.optim.Optimizer, got %s"
                            % type(optimizer).__name__)
        if not callable(loss_fn):
            raise TypeError("loss_fn must be callable")
        if scheduler_step not in ("epoch", "step"):
            raise ValueError("scheduler_step must be 'epoch' or 'step', got %r"
                             % (scheduler_step,))
        if int(batch_size) < 1:
            raise ValueError("batch_size must be at least 1, got %r"
                             % (batch_size,))
        if steps_per_epoch is not None and int(steps_per_epoch) < 1:
            raise ValueError("steps_per_epoch must be at least 1, got %r"
                             % (steps_per_epoch,))
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.loss_fn = loss_fn
        self.name = name
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        self.steps_per_epoch = (None if steps_per_epoch is None
                                else int(steps_per_epoch))
        self.scheduler_step = scheduler_step
        self._data = self._dataset_of(dataset)
        self._layout_model()
        self._layout_optimizer()
        self._layout_buckets(int(bucket_mib) << 20)
        self._scheduler_state = (
            None if scheduler is None
            else _plain(scheduler.state_dict(), "the scheduler's state_dict"))
        self._param_groups = self._groups_of(optimizer)
        self._shards = {}

    # -- what the trainer is made of ------------------------------------------

    @staticmethod
    def _dataset_of(dataset):
        if isinstance(dataset, (torch.Tensor, np.ndarray)):
            dataset = (dataset,)
        data = tuple(torch.as_tensor(d) for d in dataset)
        if not data or any(d.dim() == 0 for d in data):
            raise ValueError("dataset must be tensors with a first dimension")
        if len({len(d) for d in data}) != 1 or len(data[0]) == 0:
            raise ValueError("dataset's tensors must have one, nonzero, first "
                             "dimension; got %s" % [len(d) for d in data])
        return data

    def _layout_model(self):
        seen = {}
        self.keys = []  # one per tensor, in state_dict order
        self._tensors = {}  # key -> the module's Parameter or buffer
        for key, tensor in self.model.state_dict(keep_vars=True).items():
            if id(tensor) in seen:
                continue
            seen[id(tensor)] = key
            self.keys.append(key)
            self._tensors[key] = tensor
        self.trainable = [k for k in self.keys
                          if isinstance(self._tensors[k], torch.nn.Parameter)
                          and self._tensors[k].requires_grad]
        self.others = [k for k in self.keys if k not in self.trainable]
        self._shapes = {k: (tuple(t.shape), t.dtype)
                        for k, t in self._tensors.items()}
        self._numpy_dtypes = {
            k: torch.empty(0, dtype=t.dtype).numpy().dtype
            for k, t in self._tensors.items()}
        self._initial = {k: t.detach().clone()
                         for k, t in self._tensors.items()}
        key_of = {id(t): k for k, t in self._tensors.items()}
        for group in self.optimizer.param_groups:
            for p in group["params"]:
                if id(p) not in key_of:
                    raise ValueError("the optimizer holds a parameter the "
                                     "model does not")
        self._key_of = key_of
        self._placeholders = {k: torch.empty(0, dtype=t.dtype)
                              for k, t in self._tensors.items()}

    def _layout_optimizer(self):
        """Finds the state the optimizer keeps per parameter by stepping a
        copy of it once with zero gradients."""
        if self.optimizer.state:
            raise ValueError("the optimizer has taken steps already; give "
                             "the trainer a new one")
        twin = copy.deepcopy(self.model)
        twin_tensors = dict(zip(self.keys,
                                (dict(twin.state_dict(keep_vars=True))[k]
                                 for k in self.keys)))
        for key in self.keys:
            twin_tensors[key].data = self._initial[key].clone()
        groups = []
        for group in self.optimizer.param_groups:
            groups.append(dict(group, params=[
                twin_tensors[self._key_of[id(p)]] for p in group["params"]]))
        try:
            twin_optimizer = type(self.optimizer)(groups)
        except TypeError:
            twin_optimizer = type(self.optimizer)(groups,
                                                  **self.optimizer.defaults)
        for key in self.trainable:
            twin_tensors[key].grad = torch.zeros_like(twin_tensors[key])
        try:
            twin_optimizer.step()
        except TypeError as e:
            raise ValueError("%s needs a closure to step (%s); the trainer "
                             "steps optimizers without one"
                             % (type(self.optimizer).__name__, e)) from None
        self.state_names = {}  # key -> [state entry, ...]
        for key in self.trainable:
            state = twin_optimizer.state.get(twin_tensors[key], {})
            state = {k: v for k, v in state.items() if v is not None}
            for entry, value in state.items():
                if not isinstance(value, torch.Tensor):
                    raise ValueError(
                        "%s keeps %r of %s as a %s; the trainer checkpoints "
                        "tensor state only" % (type(self.optimizer).__name__,
                                               entry, key,
                                               type(value).__name__))
            self.state_names[key] = sorted(state)

    def _layout_buckets(self, cap_bytes):
        """Gradient buckets as DDP makes them: parameters in reverse order,
        a new bucket when the dtype changes or the cap would be passed."""
        self._buckets = []  # [[key, ...], ...]
        size = 0
        for key in reversed(self.trainable):
            shape, dtype = self._shapes[key]
            nbytes = math.prod(shape) * torch.empty(0, dtype=dtype).element_size()
            current = self._buckets[-1] if self._buckets else None
            if (current is None or self._shapes[current[0]][1] != dtype
                    or (size + nbytes > cap_bytes and size > 0)):
                self._buckets.append([])
                size = 0
            self._buckets[-1].append(key)
            size += nbytes

    @staticmethod
    def _groups_of(optimizer):
        return [_plain({k: v for k, v in g.items() if k != "params"},
                       "an optimizer's param_groups")
                for g in optimizer.param_groups]

    # -- blob names -------------------------------------------------------------

    def blob(self, key):
        """The blob of the module's state_dict key `key`."""
        return "%s/%s" % (self.name, key)

    def _state_blobs(self):
        return ["%s/optimizer/%s/%s" % (self.name, key, entry)
                for key in self.trainable for entry in self.state_names[key]]

    def _bucket_blobs(self):
        return ["%s/grad/%d" % (self.name, i) for i in range(len(self._buckets))]

    def _names(self, *parts):
        return ["%s/%s" % (self.name, p) for p in parts]

    def blob_names(self):
        """Every blob the trainer keeps on a node, gradient buckets last."""
        return ([self.blob(k) for k in self.keys] + self._state_blobs()
                + self._names("optimizer/steps", "optimizer/param_groups")
                + (self._names("scheduler") if self.scheduler else [])
                + self._names("rng/torch", "rng/numpy", "rng/python",
                              "sampler", "loss_sum", "loss")
                + self._bucket_blobs())

    @property
    def loss_blob(self):
        """The blob of an epoch's mean loss, each epoch task's output."""
        return "%s/loss" % self.name

    @property
    def metrics(self):
        """The blobs to give JobRunner.train as `metrics`: the loss."""
        return [self.loss_blob]

    def _op_type(self, what):
        return "Torch%s.%s" % (what, self.name)

    # -- the job ------------------------------------------------------------------

    def register(self, ops):
        """Adds the trainer's ops to `ops` (an epochrt.OpRegistry): on a
        daemon, register them in the registry it serves with."""
        loss_version = epochrt.code_digest(self.loss_fn) or repr(self.loss_fn)
        version = "torch-trainer-1/" + loss_version
        ops.register(self._op_type("Init"), self._init_op, inputs=0,
                     outputs=None, args={"rank": "integer"}, version=version,
                     doc="A node's initial model, optimizer, random and "
                         "sampler state.")
        ops.register(self._op_type("Backward"), self._backward_op,
                     inputs=None, outputs=None,
                     args={"rank": "integer", "world": "integer",
                           "model": "string", "data": "string",
                           "batch_size": "integer", "shuffle": "boolean",
                           "seed": "integer"},
                     version=version,
                     doc="The next batch's loss and gradients, into buckets.")
        ops.register(self._op_type("Step"), self._step_op, inputs=None,
                     outputs=None, args={"optimizer": "string"},
                     version=version,
                     doc="The optimizer's step on the averaged gradients.")
        ops.register(self._op_type("EpochEnd"), self._epoch_end_op,
                     inputs=None, outputs=None,
                     args={"scheduler": "string"}, version=version,
                     doc="The epoch's mean loss; the scheduler's step.")

    def steps_per_pass(self, world):
        """Steps of one pass over a shard, with `world` nodes."""
        shard = -(-len(self._data[0]) // world)
        return -(-shard // self.batch_size)

    def add_to(self, job, nodes):
        """Adds to `job` an init task and an epoch task per node of `nodes`
        (a list of names, at least one), the epoch tasks named
        "<name>/<node>" with output `loss_blob`."""
        if isinstance(nodes, (str, bytes)) or not nodes:
            raise ValueError("nodes must be a list of node names")
        nodes = list(nodes)
        if len(set(nodes)) != len(nodes):
            raise ValueError("nodes must not repeat a name: %r" % (nodes,))
        world = len(nodes)
        module_blobs = [self.blob(k) for k in self.keys]
        trainable_blobs = [self.blob(k) for k in self.trainable]
        other_blobs = [self.blob(k) for k in self.others]
        rng = self._names("rng/torch", "rng/numpy", "rng/python")
        sampler, acc = self._names("sampler", "loss_sum")
        steps, groups = self._names("optimizer/steps", "optimizer/param_groups")
        scheduler = self._names("scheduler") if self.scheduler else []
        buckets = self._bucket_blobs()
        state = self._state_blobs()
        per_epoch = self.steps_per_epoch or self.steps_per_pass(world)
        model_text = repr(self.model) + " " + ",".join(
            "%s:%s%s" % (k, str(self._shapes[k][1]).replace("torch.", ""),
                         list(self._shapes[k][0])) for k in self.keys)
        data_text = "%d rows %s" % (len(self._data[0]),
                                    _digest_tensors(self._data))
        optimizer_text = "%s %s" % (type(self.optimizer).__name__,
                                    json.dumps(self._param_groups,
                                               sort_keys=True))
        scheduler_text = ("" if self.scheduler is None else "%s %s %s" % (
            type(self.scheduler).__name__, self.scheduler_step,
            json.dumps(self._scheduler_state, sort_keys=True)))
        for rank, node in enumerate(nodes):
            init_ops = [epochrt.Op(
                self._op_type("Init"), [],
                module_blobs + state + [steps, groups] + scheduler + rng
                + [sampler], rank=rank)]
            if world > 1:
                init_ops.append(epochrt.Op(
                    "Broadcast", module_blobs, module_blobs,
                    collective="%s/init" % self.name, root=nodes[0]))
            job.init_group.add_task(epochrt.Task(
                node, init_ops, name="%s/init/%s" % (self.name, node)))

            train_ops = []
            if world > 1 and other_blobs:
                train_ops.append(epochrt.Op(
                    "Broadcast", other_blobs, other_blobs,
                    collective="%s/buffers" % self.name, root=nodes[0]))
            train_ops.append(epochrt.Op(
                self._op_type("Backward"), module_blobs + rng + [sampler, acc],
                other_blobs + rng + [sampler, acc] + buckets, rank=rank,
                world=world, model=model_text, data=data_text,
                batch_size=self.batch_size, shuffle=self.shuffle,
                seed=self.seed))
            if world > 1:
                train_ops.append(epochrt.Op(
                    "Allreduce", buckets, buckets,
                    collective="%s/grad" % self.name, op="mean"))
            step_inputs = trainable_blobs + state + [steps, groups] + buckets
            step_outputs = trainable_blobs + state + [steps]
            if self.scheduler is not None and self.scheduler_step == "step":
                step_inputs += scheduler
                step_outputs += [groups] + scheduler
            train_ops.append(epochrt.Op(self._op_type("Step"), step_inputs,
                                        step_outputs,
                                        optimizer=optimizer_text))
            end_inputs = [acc]
            end_outputs = [self.loss_blob]
            if self.scheduler is not None and self.scheduler_step == "epoch":
                end_inputs += [groups] + scheduler
                end_outputs += [groups] + scheduler
            job.epoch_group.add_task(epochrt.Task(
                node, steps=[
                    epochrt.Step([epochrt.Op("ConstantFill", outputs=[acc],
                                             shape=[2], dtype="f64")],
                                 name="begin"),
                    epochrt.Step(train_ops, name="train", num_iter=per_epoch),
                    epochrt.Step([epochrt.Op(self._op_type("EpochEnd"),
                                             end_inputs, end_outputs,
                                             scheduler=scheduler_text)],
                                 name="end")],
                name="%s/%s" % (self.name, node), outputs=[self.loss_blob]))
        return job

    def make_job(self, nodes, epochs, name="torch"):
        """A new job named `name` of this trainer on `nodes`, ending after
        `epochs` epochs."""
        job = epochrt.Job(name)
        self.add_to(job, nodes)
        epochrt.epoch_limiter(job, int(epochs))
        return job

    # -- reading the model back ---------------------------------------------------

    def state_dict(self, session, node):
        """The module's state_dict as `node` of `session` holds it now, as
        new tensors."""
        return collections.OrderedDict(
            (key, torch.from_numpy(session.fetch(node, self.blob(key))))
            for key in self.keys)

    def state_dict_from_checkpoint(self, db_prefix, node, epoch):
        """The module's state_dict from `node`'s checkpoint of `epoch` in
        `db_prefix`, checked as epochrt.ckpt_show checks it."""
        blobs = epochrt.ckpt_show(str(db_prefix), node, int(epoch),
                                  [self.blob(k) for k in self.keys])
        return collections.OrderedDict(
            (key, torch.from_numpy(blobs[self.blob(key)]))
            for key in self.keys)

    def load_into_module(self, source, node, epoch=None):
        """Loads `node`'s weights into the module with load_state_dict (and
        its checks: a changed shape raises, naming the key), from a session
        (`source`), or from the checkpoint of `epoch` in directory
        `source`. Also gives the module tensors of its own again."""
        with _lock:
            for key, tensor in self._tensors.items():
                shape, dtype = self._shapes[key]
                tensor.data = torch.empty(shape, dtype=dtype)
        if epoch is None:
            state = self.state_dict(source, node)
        else:
            state = self.state_dict_from_checkpoint(source, node, epoch)
        self.model.load_state_dict(state)
        return self.model

    def weights_digest(self):
        """SHA-256 of the module's state_dict, key by key (hex)."""
        h = hashlib.sha256()
        for key, tensor in self.model.state_dict().items():
            h.update(key.encode())
            h.update(tensor.detach().contiguous().numpy().tobytes())
        return h.hexdigest()

    # -- binding blobs to the module ----------------------------------------------

    def _check_shape(self, key, array):
        shape, dtype = self._shapes[key]
        if array.shape == shape and array.dtype == self._numpy_dtypes[key]:
            return
        got = torch.from_numpy(np.empty(0, array.dtype)).dtype
        raise RuntimeError(
            "size mismatch for %s: the blob %s holds %s %s, the module "
            "expects %s %s (a checkpoint of another model?)"
            % (key, self.blob(key), str(got).replace("torch.", ""),
               list(array.shape), str(dtype).replace("torch.", ""),
               list(shape)))

    def _bind(self, key, array):
        self._check_shape(key, array)
        tensor = torch.from_numpy(array)
        self._tensors[key].data = tensor
        return tensor

    def _release_module(self):
        for key, tensor in self._tensors.items():
            tensor.data = self._placeholders[key]
            tensor.grad = None

    def _release_optimizer(self):
        self.optimizer.state = collections.defaultdict(dict)

    def _apply_groups(self, groups):
        for group, saved in zip(self.optimizer.param_groups, groups):
            for k, v in saved.items():
                group[k] = tuple(v) if isinstance(group.get(k), tuple) else v

    def _shard(self, rank, world, pass_index):
        cached = self._shards.get((rank, world))
        if cached is not None and cached[0] == pass_index:
            return cached[1]
        count = len(self._data[0])
        if self.shuffle:
            g = torch.Generator().manual_seed(self.seed + pass_index)
            order = torch.randperm(count, generator=g)
        else:
            order = torch.arange(count)
        total = -(-count // world) * world
        if total > count:
            order = torch.cat([order, order[:total - count].repeat(
                -(-(total - count) // count))[:total - count]])
        shard = order[rank:total:world]
        self._shards[(rank, world)] = (pass_index, shard)
        return shard

    # -- the ops --------------------------------------------------------------------

    def _init_op(self, rank):
        outputs = [self._initial[k].numpy().copy() for k in self.keys]
        outputs += [np.zeros(0, np.float32) for _ in self._state_blobs()]
        outputs.append(np.zeros(1, np.int64))
        outputs.append(_json_bytes(self._param_groups))
        if self.scheduler is not None:
            outputs.append(_json_bytes(self._scheduler_state))
        outputs += list(_seeded_states(self.seed + rank))
        outputs.append(np.zeros(2, np.int64))
        return tuple(outputs)

    def _backward_op(self, *inputs, rank, world, model, data, batch_size,
                     shuffle, seed):
        del model, data, batch_size, shuffle, seed  # the job's record
        n = len(self.keys)
        module, (rng_t, rng_n, rng_p, sampler, acc) = inputs[:n], inputs[n:]
        with _lock, _quiet_readonly():
            try:
                for key, array in zip(self.keys, module):
                    self._bind(key, array)
                pass_index, position = int(sampler[0]), int(sampler[1])
                shard = self._shard(rank, world, pass_index)
                batch_index = shard[position * self.batch_size:
                                    (position + 1) * self.batch_size]
                batch = tuple(d[batch_index] for d in self._data)
                self.model.train()
                with _NodeRandomState(rng_t, rng_n, rng_p):
                    loss = self.loss_fn(self.model, *batch)
                    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
                        raise TypeError("loss_fn must return a tensor of one "
                                        "element, got %r" % (loss,))
                    loss.backward()
                position += 1
                if position == -(-len(shard) // self.batch_size):
                    pass_index, position = pass_index + 1, 0
                sampler[0], sampler[1] = pass_index, position
                acc[0] += float(loss.detach())
                acc[1] += 1
                buckets = []
                for keys in self._buckets:
                    parts = []
                    for key in keys:
                        grad = self._tensors[key].grad
                        parts.append(torch.zeros(self._shapes[key][0],
                                                 dtype=self._shapes[key][1])
                                     .reshape(-1) if grad is None
                                     else grad.reshape(-1))
                    buckets.append(torch.cat(parts).numpy())
                others = [self._tensors[k].data for k in self.others]
                return tuple(others) + (rng_t, rng_n, rng_p, sampler,
                                        acc) + tuple(buckets)
            finally:
                self._release_module()

    def _step_op(self, *inputs, optimizer):
        del optimizer  # the job's record
        t = len(self.trainable)
        s = len(self._state_blobs())
        params, state = inputs[:t], inputs[t:t + s]
        steps, groups = inputs[t + s], inputs[t + s + 1]
        rest = inputs[t + s + 2:]
        buckets, scheduler = rest[:len(self._buckets)], rest[len(self._buckets):]
        with _lock, _quiet_readonly():
            try:
                tensors = [self._bind(k, a) for k, a in zip(self.trainable,
                                                           params)]
                for keys, bucket in zip(self._buckets, buckets):
                    flat = torch.from_numpy(bucket)
                    offset = 0
                    for key in keys:
                        shape = self._shapes[key][0]
                        count = math.prod(shape)
                        self._tensors[key].grad = flat[offset:offset + count] \
                            .view(shape)
                        offset += count
                self._apply_groups(_json_of(groups))
                self._release_optimizer()
                if int(steps[0]) > 0:
                    entries = iter(state)
                    for key in self.trainable:
                        param = self._tensors[key]
                        for entry in self.state_names[key]:
                            self.optimizer.state[param][entry] = \
                                torch.from_numpy(next(entries))
                self.optimizer.step()
                outputs = list(tensors)
                for key in self.trainable:
                    held = self.optimizer.state.get(self._tensors[key], {})
                    for entry in self.state_names[key]:
                        if entry not in held:
                            raise RuntimeError(
                                "%s did not keep %r for %s"
                                % (type(self.optimizer).__name__, entry, key))
                        outputs.append(held[entry])
                steps[0] += 1
                outputs.append(steps)
                if scheduler:
                    outputs += self._scheduler_step(scheduler[0])
                return tuple(outputs)
            finally:
                self._release_module()
                self._release_optimizer()

    def _scheduler_step(self, scheduler_blob):
        """Steps the scheduler from its blob (the optimizer's groups bound
        already); returns the new groups and scheduler blobs."""
        self.scheduler.load_state_dict(_json_of(scheduler_blob, fresh=True))
        with warnings.catch_warnings():
            # "lr_scheduler.step() before optimizer.step()": the optimizer
            # stepped, in another op.
            warnings.simplefilter("ignore", UserWarning)
            self.scheduler.step()
        return [_json_bytes(self._groups_of(self.optimizer)),
                _json_bytes(_plain(self.scheduler.state_dict(),
                                   "the scheduler's state_dict"))]

    def _epoch_end_op(self, acc, *state, scheduler):
        del scheduler  # the job's record
        loss = np.array(acc[0] / acc[1] if acc[1] else float("nan"))
        if not state:
            return loss
        with _lock:
            self._apply_groups(_json_of(state[0]))
            return (loss,) + tuple(self._scheduler_step(state[1]))
