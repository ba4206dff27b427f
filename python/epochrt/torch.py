"""A PyTorch model trained data-parallel as an epochrt job.

`Trainer` takes an `nn.Module`, its `torch.optim` optimizer (and LR
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
    runner.train(epochrt.LocalSession(ops=ops, worker_threads=1))
    trainer.load_into_module(session, "n0")

What each node's workspace holds (`<name>` is the trainer's name, "model"
unless given):

- `<name>/<key>` for each key of `model.state_dict()` (parameters and
  buffers; a tensor tied under two keys is one blob, named by the first);
- `<name>/optimizer/<key>/<state>` for each parameter's optimizer state
  (`momentum_buffer`, `exp_avg`, `step`, ...), `<name>/optimizer/steps`
  (steps taken) and `<name>/optimizer/param_groups` (the groups' settings,
  JSON: the learning rate a scheduler sets is there);
- `<name>/scheduler`: the LR scheduler's `state_dict()`, JSON;
- `<name>/rng/torch`, `<name>/rng/numpy`, `<name>/rng/python`: the node's
  own state of torch's, NumPy's and `random`'s global generators, set
  around each call of the user's code (so dropout and augmentation draw
  per node, and resume where they were);
- `<name>/sampler`: the pass over the shard and the step within it;
- `<name>/grad/<i>` and `<name>/grad/used`: the gradient buckets and which
  parameters had a gradient, all-reduced in one collective call per step;
  `<name>/loss`: the epoch's mean loss over every node, the epoch tasks'
  output (and a metric of the stats lines).

The module, optimizer and scheduler given are templates: the trainer
trains copies of its own, whose parameters are views of a node's blobs
while an op runs (no copy; `optimizer.step()` updates them in place).
The module given keeps its weights until `load_into_module` gives it a
node's, so it can be evaluated while the job runs.

Threads: the nodes of a LocalSession share the trainer's copies and the
process's random generators, and torch releases the GIL inside its
kernels; each call of the trainer's ops holds one process-wide lock, so
the nodes' steps run one at a time in a process (use daemons for parallel
training). Code of yours that draws from the global generators while a
job runs in this process holds `global_generators()`.
"""

import collections
import copy
import hashlib
import json
import math
import threading
import types
import warnings
import weakref

import numpy as np
import torch

import epochrt
from epochrt import _torch_state as state

__all__ = ["Trainer", "global_generators"]

# Torch's, NumPy's and random's global generators, the trainer's module
# and optimizer are shared by the nodes of one process: one call at a time.
_lock = threading.RLock()


def global_generators():
    """A context manager that holds the process's global generators
    (torch's, NumPy's, `random`'s) for the code in it, with the lock the
    trainer's ops take while a node's random state is swapped in. In a
    process that runs a trainer's ops (a LocalSession; a daemon), code of
    yours that draws from them while a job runs (in `on_epoch`, or on a
    thread of your own) must hold it: a draw without it can take a number
    from a node's stream, and that node's dropout or shuffling then
    differs from an uninterrupted run. Inside it, do not call into a
    session (fetch, load_into_module): the ops that wait for the lock hold
    their node's workspace."""
    return _lock

# A state entry the optimizer holds no value of yet: its blob is empty
# bytes (no optimizer keeps its state as a uint8 tensor).
_NO_STATE = np.zeros(0, np.uint8)


def _is_no_state(array):
    return array.dtype == np.uint8 and array.shape == (0,)

# What a blob holds; a parameter or state of another dtype is refused.
_BLOB_DTYPES = {torch.float32, torch.float64, torch.int32, torch.int64,
                torch.uint8, torch.bool}


def _digest_tensors(tensors):
    h = hashlib.sha256()
    for t in tensors:
        t = torch.as_tensor(t).detach().contiguous()
        h.update(str(t.dtype).encode())
        h.update(repr(tuple(t.shape)).encode())
        h.update(t.numpy().tobytes())
    return h.hexdigest()[:16]


def _shortened(value, limit=80):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _schedulers_in(scheduler):
    """The scheduler and those it chains (ChainedScheduler, SequentialLR)."""
    found = [scheduler]
    for inner in getattr(scheduler, "_schedulers", None) or []:
        found += _schedulers_in(inner)
    return found


def _functions_of(scheduler):
    """The user functions a scheduler calls (LambdaLR's lambdas, CyclicLR's
    scale_fn), whose code is part of the job."""
    found = []
    for s in _schedulers_in(scheduler):
        for value in vars(s).values():
            values = value if isinstance(value, (list, tuple)) else [value]
            found += [v for v in values if isinstance(v, types.FunctionType)]
    return found


def _copies(model, optimizer, scheduler):
    """Copies of the three that refer to each other as the originals do
    (the optimizer to the copy's parameters, the scheduler to the copy of
    the optimizer)."""
    memo = {}
    model_copy = copy.deepcopy(model, memo)
    optimizer_copy = copy.deepcopy(optimizer, memo)
    # A scheduler wraps its optimizer's step in an attribute that calls
    # the original optimizer, even in a copy: the copy steps as its class.
    optimizer_copy.__dict__.pop("step", None)
    return model_copy, optimizer_copy, _scheduler_copy(scheduler,
                                                       optimizer_copy, memo)


def _scheduler_copy(scheduler, optimizer, memo):
    """A scheduler's copy scheduling `optimizer`. The user's functions it
    calls (a LambdaLR's lambdas, a scale function) are shared: they compute
    from their arguments. Its own methods that it holds (OneCycleLR's
    anneal function; CyclicLR's, by a weak reference) are the copy's."""
    if scheduler is None:
        return None
    twin = copy.copy(scheduler)
    for key, value in vars(scheduler).items():
        if key == "optimizer":
            twin.optimizer = optimizer
        elif key == "_schedulers":
            twin._schedulers = [_scheduler_copy(s, optimizer, memo)
                                for s in value]
        elif state.is_code(value):
            setattr(twin, key, _rebound(value, scheduler, twin))
        else:
            setattr(twin, key, copy.deepcopy(value, memo))
    return twin


def _rebound(code, original, twin):
    """`code` with a method of `original` it is (or weakly refers to)
    replaced by the same method of `twin`."""
    weak = isinstance(code, weakref.WeakMethod)
    method = code() if weak else code
    if getattr(method, "__self__", None) is not original:
        return code
    rebound = types.MethodType(method.__func__, twin)
    return weakref.WeakMethod(rebound) if weak else rebound


class Trainer:
    """A module, its optimizer and scheduler, a loss and a dataset, as the
    ops and tasks of a data-parallel epochrt job.

    `loss_fn(model, *batch)` returns the loss of one batch, a scalar
    tensor. `dataset` is a tuple of tensors (or arrays) of one first
    dimension, or a TensorDataset, and a batch is one slice of each. Every
    node trains on its shard of `dataset`, as torch's DistributedSampler
    makes it: each pass (`shuffle`: permuted by a generator seeded with
    `seed` + the pass), padded by wrapping to a multiple of the node
    count, node k taking every n-th index from k. An epoch is one pass
    over the shard, or `steps_per_epoch` steps (a pass then continues in
    the next epoch). Gradients are averaged over the nodes, as DDP does,
    in buckets of at most `bucket_mib` MiB, all in one collective call per
    step; a parameter no node used keeps no gradient, as in a plain loop.
    `before_step(model)`, when given, runs after the averaging and before
    the optimizer's step (to clip gradients, say). `scheduler` steps after
    each epoch (`scheduler_step` "epoch"; ReduceLROnPlateau with the
    epoch's mean loss over the nodes) or each step ("step").

    The job starts from the state the module and optimizer hold now (an
    optimizer that has stepped, or loaded a state, goes on from there);
    its init broadcasts the first node's weights, so every node starts
    with the same ones even where each process made its own module
    (daemons). Each node's random state starts from `seed` + its index in
    the node list.

    The trainer is part of the job's definition: the model's structure,
    shapes and `forward` code, the optimizer's and scheduler's settings
    (and the scheduler's functions), the data's digest, the batch size,
    the seed, and the code of `loss_fn` and `before_step` are its ops'
    arguments and code versions, so a rerun with any of them changed is a
    changed job (JobRunner refuses it, naming the difference). `version`
    (any str) joins them: change it when something they cannot see
    changed (a value a closure holds). A change allowed anyway
    (`allow_job_change=True`) takes effect: the optimizer settings and
    scheduler fields the new definition changed replace the checkpointed
    ones, and the others go on as checkpointed; state it adds (momentum,
    a scheduler, another optimizer's) starts as a fresh one starts it.

    Not thread-safe: build, register and read it from one thread; the ops
    take a process-wide lock while they run.
    """

    def __init__(self, model, optimizer, loss_fn, dataset, *, batch_size,
                 scheduler=None, scheduler_step="epoch", shuffle=True,
                 seed=0, steps_per_epoch=None, bucket_mib=25,
                 before_step=None, version=None, name="model"):
        if not isinstance(model, torch.nn.Module):
            raise TypeError("model must be a torch.nn.Module, got %s"
                            % type(model).__name__)
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError("optimizer must be a torch.optim.Optimizer, got %s"
                            % type(optimizer).__name__)
        if not callable(loss_fn):
            raise TypeError("loss_fn must be callable")
        if before_step is not None and not callable(before_step):
            raise TypeError("before_step must be callable or None")
        if scheduler_step not in ("epoch", "step"):
            raise ValueError("scheduler_step must be 'epoch' or 'step', got %r"
                             % (scheduler_step,))
        plateau = isinstance(scheduler,
                             torch.optim.lr_scheduler.ReduceLROnPlateau)
        if plateau and scheduler_step != "epoch":
            raise ValueError("ReduceLROnPlateau steps after each epoch, on "
                             "the epoch's mean loss: scheduler_step='epoch'")
        if scheduler is not None and getattr(scheduler, "optimizer",
                                             optimizer) is not optimizer:
            raise ValueError("the scheduler schedules another optimizer")
        if int(batch_size) < 1:
            raise ValueError("batch_size must be at least 1, got %r"
                             % (batch_size,))
        if steps_per_epoch is not None and int(steps_per_epoch) < 1:
            raise ValueError("steps_per_epoch must be at least 1, got %r"
                             % (steps_per_epoch,))
        self.model = model
        self.loss_fn = loss_fn
        self.before_step = before_step
        self.name = name
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        self.steps_per_epoch = (None if steps_per_epoch is None
                                else int(steps_per_epoch))
        self.scheduler_step = scheduler_step
        self._plateau = plateau
        self._user_version = None if version is None else str(version)
        self._data = self._dataset_of(dataset)
        self._data_text = "%d rows %s" % (len(self._data[0]),
                                          _digest_tensors(self._data))
        for module_name, module in model.named_modules():
            if getattr(module, "sparse", False) is True:
                raise ValueError(
                    "%s (%s) makes sparse gradients, which the trainer does "
                    "not all-reduce: make it with sparse=False"
                    % (module_name or "the model", type(module).__name__))
        # The trainer's own copies: the user's objects stay theirs.
        try:
            self._model, self._optimizer, self._scheduler = _copies(
                model, optimizer, scheduler)
        except (RuntimeError, TypeError) as e:
            raise ValueError("the trainer trains deep copies of the model, "
                             "optimizer and scheduler, and copying them "
                             "failed: %s" % e) from None
        self._layout_model(optimizer)
        self._layout_optimizer()
        self._layout_buckets(int(bucket_mib) << 20)
        self._groups_definition = state.group_settings(self._optimizer)
        self._scheduler_definition = (
            None if scheduler is None
            else state.scheduler_state(self._scheduler))
        self._shards = {}
        self._groups_cache = {}
        self._warned = False
        self._release_model()

    @property
    def optimizer(self):
        """The trainer's copy of the optimizer (its state lives in blobs)."""
        return self._optimizer

    @property
    def scheduler(self):
        """The trainer's copy of the scheduler, or None."""
        return self._scheduler

    # -- what the trainer is made of ------------------------------------------

    @staticmethod
    def _dataset_of(dataset):
        if isinstance(dataset, torch.utils.data.TensorDataset):
            dataset = dataset.tensors
        elif isinstance(dataset, (torch.Tensor, np.ndarray)):
            dataset = (dataset,)
        elif not isinstance(dataset, (tuple, list)):
            raise TypeError("dataset must be a tuple of tensors or arrays, "
                            "or a TensorDataset; got %s"
                            % type(dataset).__name__)
        try:
            data = tuple(torch.as_tensor(d) for d in dataset)
        except (TypeError, ValueError, RuntimeError) as e:
            raise TypeError("dataset must be a tuple of tensors or arrays: "
                            "%s" % e) from None
        if not data or any(d.dim() == 0 for d in data):
            raise ValueError("dataset must be tensors with a first dimension")
        if len({len(d) for d in data}) != 1 or len(data[0]) == 0:
            raise ValueError("dataset's tensors must have one, nonzero, first "
                             "dimension; got %s" % [len(d) for d in data])
        return data

    def _layout_model(self, user_optimizer):
        user_ids = {id(t) for t in self.model.state_dict(keep_vars=True)
                    .values()}
        for group in user_optimizer.param_groups:
            for p in group["params"]:
                if id(p) not in user_ids:
                    raise ValueError("the optimizer holds a parameter the "
                                     "model does not")
        seen = {}
        self.keys = []  # one per tensor, in state_dict order
        self._aliases = collections.OrderedDict()  # every key -> its blob's
        self._tensors = {}  # key -> the trainer's Parameter or buffer
        for key, tensor in self._model.state_dict(keep_vars=True).items():
            if not torch.is_tensor(tensor):
                raise ValueError(
                    "%s is a module's extra state (get_extra_state), which "
                    "the trainer does not keep: keep it in a buffer" % key)
            if id(tensor) in seen:
                self._aliases[key] = seen[id(tensor)]
                continue
            if tensor.dtype not in _BLOB_DTYPES:
                raise ValueError(
                    "%s is %s, which no blob holds (float32, float64, int32, "
                    "int64, uint8, bool)" % (key, _dtype_name(tensor.dtype)))
            if tensor.is_sparse or tensor.device.type != "cpu":
                raise ValueError("%s must be a dense CPU tensor" % key)
            seen[id(tensor)] = key
            self._aliases[key] = key
            self.keys.append(key)
            self._tensors[key] = tensor
        self.trainable = [k for k in self.keys
                          if isinstance(self._tensors[k], torch.nn.Parameter)
                          and self._tensors[k].requires_grad]
        self.others = [k for k in self.keys if k not in self.trainable]
        self._trainable_index = {k: i for i, k in enumerate(self.trainable)}
        self._shapes = {k: (tuple(t.shape), t.dtype)
                        for k, t in self._tensors.items()}
        self._numpy_dtypes = {
            k: torch.empty(0, dtype=t.dtype).numpy().dtype
            for k, t in self._tensors.items()}
        self._initial = {k: t.detach().clone()
                         for k, t in self._tensors.items()}
        self._key_of = {id(t): k for k, t in self._tensors.items()}
        self._placeholders = {k: torch.empty(0, dtype=t.dtype)
                              for k, t in self._tensors.items()}
        # Where each key's tensor hangs (tied keys too), for forward code
        # that replaces a buffer (self.count = self.count + 1).
        self._owners = {}
        for key in self._aliases:
            path, _, attr = key.rpartition(".")
            owner = self._model.get_submodule(path) if path else self._model
            self._owners[key] = (owner, attr)
        self._model_text = repr(self._model) + " " + ",".join(
            "%s:%s%s" % (k, _dtype_name(self._shapes[k][1]),
                         list(self._shapes[k][0])) for k in self.keys)

    def _layout_optimizer(self):
        """The state the optimizer keeps per parameter: what it holds now
        (the job's initial state) and what a step adds, found by stepping
        a copy of it once with zero gradients."""
        kind_of = {}  # (key, entry) -> "tensor", "int" or "float"
        initial = {}
        for key in self.trainable:
            for entry, value in self._optimizer.state.get(
                    self._tensors[key], {}).items():
                kind_of[(key, entry)] = self._state_kind(key, entry, value)
                if value is not None:
                    initial[(key, entry)] = (value.detach().clone()
                                             if torch.is_tensor(value)
                                             else value)
        twin_model, twin = copy.deepcopy((self._model, self._optimizer))
        twin.__dict__.pop("step", None)
        twin_tensors = dict(twin_model.state_dict(keep_vars=True))
        for key in self.trainable:
            twin_tensors[key].grad = torch.zeros_like(twin_tensors[key])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                twin.step()
        except TypeError as e:
            raise ValueError("%s needs a closure to step (%s); the trainer "
                             "steps optimizers without one"
                             % (type(self._optimizer).__name__, e)) from None
        except RuntimeError as e:
            raise ValueError("%s cannot step on dense gradients of the "
                             "model's parameters: %s"
                             % (type(self._optimizer).__name__, e)) from None
        for key in self.trainable:
            for entry, value in twin.state.get(twin_tensors[key], {}).items():
                kind = self._state_kind(key, entry, value)
                if kind is not None:
                    kind_of.setdefault((key, entry), kind)
        self.state_names = {key: sorted(e for k, e in kind_of if k == key
                                        and kind_of[(k, e)] is not None)
                            for key in self.trainable}
        self._state_kinds = kind_of
        self._initial_state = initial

    def _state_kind(self, key, entry, value):
        if value is None:
            return None
        if torch.is_tensor(value):
            if (value.dtype not in _BLOB_DTYPES or value.is_sparse
                    or value.dtype == torch.uint8):  # uint8: _NO_STATE
                raise ValueError("%s keeps %r of %s as a %s tensor, which no "
                                 "blob holds" % (type(self._optimizer).__name__,
                                                 entry, key,
                                                 _dtype_name(value.dtype)))
            return "tensor"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError("%s keeps %r of %s as a %s; the trainer keeps "
                             "tensors and numbers" % (
                                 type(self._optimizer).__name__, entry, key,
                                 type(value).__name__))
        return "int" if isinstance(value, int) else "float"

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

    # -- blob names -------------------------------------------------------------

    def blob(self, key):
        """The blob of the module's state_dict key `key` (a tied key: the
        blob of the first key of its tensor)."""
        return "%s/%s" % (self.name, self._aliases.get(key, key))

    def _state_blobs(self):
        return ["%s/optimizer/%s/%s" % (self.name, key, entry)
                for key in self.trainable for entry in self.state_names[key]]

    def _bucket_blobs(self):
        return (["%s/grad/%d" % (self.name, i)
                 for i in range(len(self._buckets))]
                + ["%s/grad/used" % self.name])

    def _names(self, *parts):
        return ["%s/%s" % (self.name, p) for p in parts]

    def blob_names(self):
        """Every blob the trainer keeps on a node, gradient buckets last."""
        return ([self.blob(k) for k in self.keys] + self._state_blobs()
                + self._names("optimizer/steps", "optimizer/param_groups")
                + (self._names("scheduler") if self._scheduler else [])
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

    # -- the job's definition -------------------------------------------------------

    def _code_version(self):
        parts = ["loss:" + (epochrt.code_digest(self.loss_fn)
                            or repr(self.loss_fn))]
        for cls in sorted({type(m) for m in self._model.modules()},
                          key=lambda c: c.__module__ + "." + c.__qualname__):
            parts.append("%s.%s:%s" % (cls.__module__, cls.__qualname__,
                                       epochrt.code_digest(cls.forward)))
        if self._scheduler is not None:
            parts += ["scheduler:" + epochrt.code_digest(f)
                      for f in _functions_of(self._scheduler)]
        if self.before_step is not None:
            parts.append("before_step:" + epochrt.code_digest(self.before_step))
        if self._user_version is not None:
            parts.append("version:" + self._user_version)
        digest = hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]
        return "torch-trainer-2/" + digest

    def _optimizer_args(self):
        args = {"optimizer": type(self._optimizer).__name__}
        for i, group in enumerate(self._groups_definition):
            for key, value in group.items():
                args["optimizer.%d.%s" % (i, key)] = json.dumps(value,
                                                               sort_keys=True)
        return args

    def _scheduler_args(self):
        if self._scheduler is None:
            return {"scheduler": ""}
        args = {"scheduler": "%s per %s" % (type(self._scheduler).__name__,
                                            self.scheduler_step)}
        for key, value in self._scheduler_definition.items():
            args["scheduler." + key] = json.dumps(value, sort_keys=True)
        return args

    def register(self, ops):
        """Adds the trainer's ops to `ops` (an epochrt.OpRegistry): on a
        daemon, register them in the registry it serves with."""
        self._own_optimizer_args = self._optimizer_args()
        self._own_scheduler_args = self._scheduler_args()
        version = self._code_version()
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
                     outputs=None,
                     args={k: "string" for k in self._optimizer_args()},
                     version=version,
                     doc="The optimizer's step on the averaged gradients.")
        ops.register(self._op_type("EpochEnd"), self._epoch_end_op,
                     inputs=None, outputs=None,
                     args={k: "string" for k in self._scheduler_args()},
                     version=version,
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
        scheduler = self._names("scheduler") if self._scheduler else []
        buckets = self._bucket_blobs()
        state_blobs = self._state_blobs()
        per_epoch = self.steps_per_epoch or self.steps_per_pass(world)
        per_step = self._scheduler is not None and self.scheduler_step == "step"
        for rank, node in enumerate(nodes):
            init_ops = [epochrt.Op(
                self._op_type("Init"), [],
                module_blobs + state_blobs + [steps, groups] + scheduler + rng
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
                world=world, model=self._model_text, data=self._data_text,
                batch_size=self.batch_size, shuffle=self.shuffle,
                seed=self.seed))
            if world > 1:
                train_ops.append(epochrt.Op(
                    "Allreduce", buckets, buckets,
                    collective="%s/grad" % self.name, op="mean"))
            # before_step is the user's code: it sees the whole module and
            # draws from the node's generators.
            hooked = (other_blobs, rng) if self.before_step else ([], [])
            stepped = (trainable_blobs + hooked[0] + state_blobs
                       + [steps, groups] + (scheduler if per_step else [])
                       + hooked[1])
            train_ops.append(epochrt.Op(
                self._op_type("Step"), stepped + buckets, stepped,
                **self._optimizer_args()))
            end_ops = []
            if world > 1:
                end_ops.append(epochrt.Op(
                    "Allreduce", [acc], [acc],
                    collective="%s/loss" % self.name, op="mean"))
            per_epoch_scheduler = self._scheduler is not None and not per_step
            end_ops.append(epochrt.Op(
                self._op_type("EpochEnd"),
                [acc] + ([groups] + scheduler if per_epoch_scheduler else []),
                [self.loss_blob] + ([groups] + scheduler
                                    if per_epoch_scheduler else []),
                **self._scheduler_args()))
            # State a checkpoint of an earlier definition lacks (momentum
            # or a scheduler added, allowed by allow_job_change) starts as
            # none: the optimizer or scheduler makes it.
            begin_ops = [epochrt.Op("ConstantFill", outputs=[blob], shape=[0],
                                    dtype="u8", if_missing=True)
                         for blob in state_blobs + scheduler]
            begin_ops.append(epochrt.Op("ConstantFill", outputs=[acc],
                                        shape=[2], dtype="f64"))
            job.epoch_group.add_task(epochrt.Task(
                node, steps=[
                    epochrt.Step(begin_ops, name="begin"),
                    epochrt.Step(train_ops, name="train", num_iter=per_epoch),
                    epochrt.Step(end_ops, name="end")],
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
        """The module's state_dict (every key, tied ones sharing a tensor)
        as `node` of `session` holds it now, as new tensors."""
        tensors = {k: torch.from_numpy(session.fetch(node, self.blob(k)))
                   for k in self.keys}
        return collections.OrderedDict(
            (key, tensors[canonical])
            for key, canonical in self._aliases.items())

    def state_dict_from_checkpoint(self, db_prefix, node, epoch):
        """The module's state_dict from `node`'s checkpoint of `epoch` in
        `db_prefix`, checked as epochrt.ckpt_show checks it."""
        blobs = epochrt.ckpt_show(str(db_prefix), node, int(epoch),
                                  [self.blob(k) for k in self.keys])
        return collections.OrderedDict(
            (key, torch.from_numpy(blobs[self.blob(canonical)]))
            for key, canonical in self._aliases.items())

    def load_into_module(self, source, node, epoch=None):
        """Loads `node`'s weights into the module given to the trainer with
        load_state_dict (and its checks: a changed shape raises, naming
        the key), from a session (`source`) or from the checkpoint of
        `epoch` in directory `source`; returns the module. Reads all it
        loads first: a failed read leaves the module as it was. Safe while
        the job runs (from on_epoch, say): the trainer trains a copy."""
        if epoch is None:
            loaded = self.state_dict(source, node)
        else:
            loaded = self.state_dict_from_checkpoint(source, node, epoch)
        self.model.load_state_dict(loaded)
        return self.model

    def weights_digest(self):
        """SHA-256 of the given module's state_dict, key by key (hex)."""
        h = hashlib.sha256()
        for key, tensor in self.model.state_dict().items():
            h.update(key.encode())
            h.update(tensor.detach().contiguous().numpy().tobytes())
        return h.hexdigest()

    # -- binding blobs to the trainer's module ----------------------------------------

    def _check_shape(self, key, array):
        shape, dtype = self._shapes[key]
        if array.shape == shape and array.dtype == self._numpy_dtypes[key]:
            return
        got = torch.from_numpy(np.empty(0, array.dtype)).dtype
        raise RuntimeError(
            "size mismatch for %s: the blob %s holds %s %s, the module "
            "expects %s %s (a checkpoint of another model?)"
            % (key, self.blob(key), _dtype_name(got), list(array.shape),
               _dtype_name(dtype), list(shape)))

    def _bind(self, key, array):
        self._check_shape(key, array)
        tensor = torch.from_numpy(array)
        self._tensors[key].data = tensor
        return tensor

    def _release_model(self):
        for key, tensor in self._tensors.items():
            tensor.data = self._placeholders[key]
            tensor.grad = None

    def _release_optimizer(self):
        self._optimizer.state = collections.defaultdict(dict)

    def _groups_now(self, blob):
        """The param groups' settings a blob holds, with what a changed
        definition changed (state.merge), decoded and shared by the calls
        that read the same text (the settings are not changed in place);
        and whether the definition changed."""
        text = bytes(blob.reshape(-1)[0])
        found = self._groups_cache.get(text)
        if found is None:
            if len(self._groups_cache) > 16:
                self._groups_cache.clear()
            merged, changed = self._merged_groups(blob)
            found = ([state.decode(g) for g in merged], changed)
            self._groups_cache[text] = found
        return found

    def _merged_groups(self, blob):
        saved = state.json_of(blob)
        groups = saved["current"]
        changed = saved["defined"] != self._groups_definition
        if changed:
            if len(saved["defined"]) != len(self._groups_definition):
                raise RuntimeError(
                    "the optimizer has %d param groups, its checkpoint %d"
                    % (len(self._groups_definition), len(saved["defined"])))
            groups = [state.merge(old, new, current) for old, new, current
                      in zip(saved["defined"], self._groups_definition,
                             groups)]
        return groups, changed

    def _apply_groups(self, groups):
        for group, settings in zip(self._optimizer.param_groups, groups):
            group.update(settings)

    def _load_scheduler(self, blob):
        if _is_no_state(blob):  # a scheduler the checkpoint had not
            self._scheduler.load_state_dict(
                state.decode(self._scheduler_definition))
            return
        saved = state.json_of(blob)
        current = saved["current"]
        if saved["defined"] != self._scheduler_definition:
            current = state.merge(saved["defined"], self._scheduler_definition,
                                  current)
        self._scheduler.load_state_dict(state.decode(current))

    def _saved_groups(self):
        return state.json_blob({
            "defined": self._groups_definition,
            "current": state.group_settings(self._optimizer)})

    def _saved_scheduler(self):
        return state.json_blob({
            "defined": self._scheduler_definition,
            "current": state.scheduler_state(self._scheduler)})

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
        for key in self.trainable:
            for entry in self.state_names[key]:
                value = self._initial_state.get((key, entry))
                if value is None:
                    outputs.append(_NO_STATE.copy())
                elif torch.is_tensor(value):
                    outputs.append(value.numpy().copy())
                else:
                    outputs.append(np.array(value))
        outputs.append(np.zeros(1, np.int64))
        outputs.append(state.json_blob({"defined": self._groups_definition,
                                        "current": self._groups_definition}))
        if self._scheduler is not None:
            outputs.append(state.json_blob({
                "defined": self._scheduler_definition,
                "current": self._scheduler_definition}))
        outputs += list(state.seeded_states(self.seed + rank))
        outputs.append(np.zeros(2, np.int64))
        return tuple(outputs)

    def _check_job(self, job_args, own_args):
        """Raises when the job's arguments of an op are not what this
        process's trainer would give: a daemon whose trainer was built
        with other settings or data would train with its own silently."""
        differ = sorted(k for k in job_args if job_args[k] != own_args.get(k))
        if differ:
            key = differ[0]
            raise RuntimeError(
                "the trainer in this process is not the job's: %s is %s "
                "here, %s in the job (build the same Trainer, with the same "
                "data, wherever the job's ops run)"
                % (key, _shortened(own_args.get(key)),
                   _shortened(job_args[key])))

    def _take_replaced(self, keys):
        """Forward code may replace a buffer (or a frozen parameter) rather
        than update it (self.count = self.count + 1): the new tensor's
        values go into the blob and the module gets the blob's tensor
        back. A replaced trainable parameter is refused."""
        for key, canonical in self._aliases.items():
            if canonical not in keys:
                continue
            owner, attr = self._owners[key]
            bound = self._tensors[canonical]
            now = getattr(owner, attr, None)
            if now is bound:
                continue
            if canonical in self._trainable_index:
                raise RuntimeError("%s was replaced by the user's code; the "
                                   "trainer updates parameters in place only"
                                   % key)
            shape, dtype = self._shapes[canonical]
            if (not torch.is_tensor(now) or tuple(now.shape) != shape
                    or now.dtype != dtype):
                raise RuntimeError(
                    "%s was replaced by %s; the blob %s holds %s %s"
                    % (key, "a %s %s tensor" % (_dtype_name(now.dtype),
                                                list(now.shape))
                       if torch.is_tensor(now) else repr(type(now).__name__),
                       self.blob(canonical), _dtype_name(dtype), list(shape)))
            bound.data.copy_(now.detach())
            if isinstance(bound, torch.nn.Parameter):
                owner._parameters[attr] = bound
            else:
                owner._buffers[attr] = bound

    def _backward_op(self, *inputs, rank, world, model, data, batch_size,
                     shuffle, seed):
        self._check_job(
            {"model": model, "data": data, "batch_size": batch_size,
             "shuffle": shuffle, "seed": seed},
            {"model": self._model_text, "data": self._data_text,
             "batch_size": self.batch_size, "shuffle": self.shuffle,
             "seed": self.seed})
        n = len(self.keys)
        module, (rng_t, rng_n, rng_p, sampler, acc) = inputs[:n], inputs[n:]
        with _lock, state.quiet_readonly():
            try:
                for key, array in zip(self.keys, module):
                    self._bind(key, array)
                pass_index, position = int(sampler[0]), int(sampler[1])
                shard = self._shard(rank, world, pass_index)
                if position * self.batch_size >= len(shard):
                    # A pass of fewer steps than the checkpoint's position
                    # (a batch size or node count changed and allowed):
                    # the next pass begins.
                    pass_index, position = pass_index + 1, 0
                    shard = self._shard(rank, world, pass_index)
                batch_index = shard[position * self.batch_size:
                                    (position + 1) * self.batch_size]
                batch = tuple(d[batch_index] for d in self._data)
                self._model.train()
                with state.NodeRandomState(rng_t, rng_n, rng_p):
                    loss = self.loss_fn(self._model, *batch)
                    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
                        raise TypeError("loss_fn must return a tensor of one "
                                        "element, got %r" % (loss,))
                    loss.backward()
                self._take_replaced(self.others)
                position += 1
                if position >= -(-len(shard) // self.batch_size):
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
                used = np.array([self._tensors[k].grad is not None
                                 for k in self.trainable], np.float32)
                if self.trainable and not used.any() and not self._warned:
                    self._warned = True
                    warnings.warn(
                        "no parameter of the trainer's module got a gradient "
                        "from loss_fn: does it use the module it is given "
                        "(its first argument), not the one given to the "
                        "Trainer?", stacklevel=1)
                others = [self._tensors[k].data for k in self.others]
                return tuple(others) + (rng_t, rng_n, rng_p, sampler,
                                        acc) + tuple(buckets) + (used,)
            finally:
                self._release_model()

    def _bind_state(self, state_arrays):
        entries = iter(state_arrays)
        for key in self.trainable:
            param = self._tensors[key]
            for entry in self.state_names[key]:
                array = next(entries)
                if _is_no_state(array):
                    continue  # the optimizer makes it
                kind = self._state_kinds[(key, entry)]
                self._optimizer.state[param][entry] = (
                    torch.from_numpy(array) if kind == "tensor"
                    else int(array) if kind == "int" else float(array))

    def _state_outputs(self):
        outputs = []
        for key in self.trainable:
            held = self._optimizer.state.get(self._tensors[key], {})
            for entry in self.state_names[key]:
                value = held.get(entry)
                if value is None:
                    outputs.append(_NO_STATE.copy())
                elif torch.is_tensor(value):
                    outputs.append(value)
                else:
                    outputs.append(np.array(
                        value, np.int64 if self._state_kinds[(key, entry)]
                        == "int" else np.float64))
        return outputs

    def _step_inputs(self, inputs):
        """The Step op's inputs by what they are (add_to's order)."""
        rest = iter(inputs)

        def take(count):
            return [next(rest) for _ in range(count)]

        hooked = self.before_step is not None
        params = take(len(self.trainable))
        others = take(len(self.others) if hooked else 0)
        state_arrays = take(len(self._state_blobs()))
        steps, groups = take(2)
        scheduler = take(1 if self._scheduler is not None
                         and self.scheduler_step == "step" else 0)
        rng = take(3 if hooked else 0)
        buckets = take(len(self._buckets))
        used, = take(1)
        return params, others, state_arrays, steps, groups, scheduler, rng, \
            buckets, used

    def _step_op(self, *inputs, **definition):
        self._check_job(definition, self._own_optimizer_args)
        (params, others, state_arrays, steps, groups, scheduler, rng, buckets,
         used) = self._step_inputs(inputs)
        with _lock, state.quiet_readonly():
            try:
                tensors = [self._bind(k, a) for k, a in zip(self.trainable,
                                                           params)]
                other_tensors = [self._bind(k, a)
                                 for k, a in zip(self.others, others)]
                for keys, bucket in zip(self._buckets, buckets):
                    flat = torch.from_numpy(bucket)
                    offset = 0
                    for key in keys:
                        shape = self._shapes[key][0]
                        count = math.prod(shape)
                        # A parameter no node used keeps no gradient.
                        self._tensors[key].grad = (
                            flat[offset:offset + count].view(shape)
                            if used[self._trainable_index[key]] > 0 else None)
                        offset += count
                settings, changed = self._groups_now(groups)
                self._apply_groups(settings)
                self._release_optimizer()
                self._bind_state(state_arrays)
                if self.before_step is not None:
                    with state.NodeRandomState(*rng):
                        self.before_step(self._model)
                    self._take_replaced(self.others)
                self._optimizer.step()
                outputs = (tensors + [t.data for t in other_tensors]
                           + self._state_outputs())
                steps[0] += 1
                outputs.append(steps)
                if scheduler:
                    self._load_scheduler(scheduler[0])
                    self._step_scheduler(None)
                    outputs += [self._saved_groups(), self._saved_scheduler()]
                else:  # rewritten only for a definition changed since
                    outputs.append(self._saved_groups() if changed else groups)
                return tuple(outputs + rng)
            finally:
                self._release_model()
                self._release_optimizer()

    def _step_scheduler(self, loss):
        with warnings.catch_warnings():
            # "lr_scheduler.step() before optimizer.step()": the optimizer
            # stepped, in another op.
            warnings.simplefilter("ignore", UserWarning)
            if self._plateau:
                self._scheduler.step(loss)
            else:
                self._scheduler.step()

    def _epoch_end_op(self, acc, *scheduler_state, **definition):
        self._check_job(definition, self._own_scheduler_args)
        loss = np.array(acc[0] / acc[1] if acc[1] else float("nan"))
        if not scheduler_state:
            return loss
        groups, scheduler = scheduler_state
        with _lock:
            self._apply_groups(self._groups_now(groups)[0])
            self._load_scheduler(scheduler)
            self._step_scheduler(float(loss))
            return loss, self._saved_groups(), self._saved_scheduler()
