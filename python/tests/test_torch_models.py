"""epochrt.torch.Trainer with the models, optimizers, schedulers and habits
of real PyTorch programs: each computes what the plain PyTorch loop
computes, bit for bit, or is refused with a message that says why."""

import collections
import json

import pytest

import epochrt

torch = pytest.importorskip("torch")
et = pytest.importorskip("epochrt.torch")
F = torch.nn.functional
lr_scheduler = torch.optim.lr_scheduler

ROWS = 96
BATCH = 16


def dataset():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(ROWS, 6, generator=g)
    return x, (x[:, 0] + x[:, 1] > 0).long()


class WithUnusedHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(6, 2)
        self.aux_head = torch.nn.Linear(6, 2)  # forward never uses it

    def forward(self, x):
        return self.body(x)


class Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(6, 6, bias=False)
        self.out = torch.nn.Linear(6, 2)
        self.back = torch.nn.Linear(6, 6, bias=False)
        self.back.weight = self.inp.weight  # tied

    def forward(self, x):
        return self.out(self.back(torch.relu(self.inp(x))))


class Float64(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(6, 2).double()

    def forward(self, x):
        return self.net(x.double())


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(),
                               torch.nn.Linear(8, 2))


class WithEmptyParameter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 2)
        self.empty = torch.nn.Parameter(torch.zeros(0))

    def forward(self, x):
        return self.fc(x) + self.empty.sum()


class ReplacesItsBuffers(torch.nn.Module):
    """Buffers that forward replaces instead of updating in place."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 2)
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))
        self.register_buffer("mean", torch.zeros(6))

    def forward(self, x):
        if self.training:
            self.count = self.count + 1
            self.mean = 0.9 * self.mean + 0.1 * x.mean(0)
        return self.fc(x - self.mean)


def with_batch_norm():
    return torch.nn.Sequential(torch.nn.Linear(6, 8),
                               torch.nn.BatchNorm1d(8), torch.nn.ReLU(),
                               torch.nn.Linear(8, 2))


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def objects(model=mlp, optimizer=None, scheduler=None):
    """A fresh (model, optimizer, scheduler), the same on every call."""
    torch.manual_seed(7)
    net = model()
    opt = (optimizer or (lambda p: torch.optim.SGD(p, lr=0.1)))(
        net.parameters())
    return net, opt, scheduler(opt) if scheduler else None


def plain_loop(made, epochs, before_step=None, plateau=False,
               at_epoch=None):
    """The loop a PyTorch user writes, DistributedSampler's order.
    `at_epoch(epoch, optimizer, scheduler)`, before each epoch, may return
    another (optimizer, scheduler) to go on with."""
    model, opt, sched = made
    x, y = dataset()
    data = torch.utils.data.TensorDataset(x, y)
    sampler = torch.utils.data.distributed.DistributedSampler(
        data, num_replicas=1, rank=0, shuffle=True, seed=0)
    loader = torch.utils.data.DataLoader(data, batch_size=BATCH,
                                         sampler=sampler,
                                         generator=torch.Generator())
    torch.manual_seed(0)
    for epoch in range(epochs):
        if at_epoch is not None:
            opt, sched = at_epoch(epoch, opt, sched) or (opt, sched)
        sampler.set_epoch(epoch)
        losses = []
        for xb, yb in loader:
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model, xb, yb)
            loss.backward()
            losses.append(float(loss))
            if before_step:
                before_step(model)
            opt.step()
        if sched is not None:
            sched.step(sum(losses) / len(losses)) if plateau else sched.step()
    return model


def trained(made, epochs, nodes=("n0",), directory=None,
            allow_job_change=False, **options):
    model, opt, sched = made
    trainer = et.Trainer(model, opt, loss_fn, dataset(), batch_size=BATCH,
                         scheduler=sched, **options)
    ops = epochrt.OpRegistry()
    trainer.register(ops)
    session = epochrt.LocalSession(ops=ops, worker_threads=1)
    manager = (epochrt.MultiNodeCheckpointManager(str(directory))
               if directory else None)
    epochrt.JobRunner(trainer.make_job(list(nodes), epochs),
                      checkpoint_manager=manager,
                      allow_job_change=allow_job_change).train(session)
    return trainer, session


def assert_same_module(got, expected):
    for key, tensor in expected.state_dict().items():
        assert torch.equal(got.state_dict()[key], tensor), key


CASES = {
    "batch norm": dict(model=with_batch_norm),
    "frozen layer": dict(model=lambda: _frozen_first()),
    "unused parameter, weight decay": dict(
        model=WithUnusedHead,
        optimizer=lambda p: torch.optim.SGD(p, lr=0.1, weight_decay=0.1)),
    "unused parameter, AdamW": dict(
        model=WithUnusedHead, optimizer=lambda p: torch.optim.AdamW(p)),
    "tied weights": dict(model=Tied),
    "buffers replaced in forward": dict(model=ReplacesItsBuffers),
    "zero-element parameter, Adam": dict(
        model=WithEmptyParameter, optimizer=lambda p: torch.optim.Adam(p)),
    "SequentialLR": dict(scheduler=lambda o: lr_scheduler.SequentialLR(
        o, [lr_scheduler.StepLR(o, 1, 0.5),
            lr_scheduler.ExponentialLR(o, 0.9)], milestones=[2])),
    "float64": dict(model=lambda: Float64()),
    "nesterov": dict(optimizer=lambda p: torch.optim.SGD(
        p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)),
    "Adagrad": dict(optimizer=lambda p: torch.optim.Adagrad(p, lr=0.1)),
    "RMSprop": dict(optimizer=lambda p: torch.optim.RMSprop(p, lr=0.01)),
    "Adadelta": dict(optimizer=lambda p: torch.optim.Adadelta(p)),
    "Rprop": dict(optimizer=lambda p: torch.optim.Rprop(p, lr=0.01)),
    "MultiStepLR": dict(scheduler=lambda o: lr_scheduler.MultiStepLR(
        o, milestones=[1, 2], gamma=0.1)),
    "LambdaLR": dict(scheduler=lambda o: lr_scheduler.LambdaLR(
        o, lambda e: 0.5 ** e)),
    "OneCycleLR": dict(scheduler=lambda o: lr_scheduler.OneCycleLR(
        o, max_lr=0.5, total_steps=8)),
    "CyclicLR": dict(scheduler=lambda o: lr_scheduler.CyclicLR(
        o, base_lr=0.01, max_lr=0.2, step_size_up=2, cycle_momentum=False)),
}


def _frozen_first():
    net = mlp()
    net[0].requires_grad_(False)
    return net


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_node_computes_what_the_plain_loop_computes(case):
    made = dict(CASES[case])
    epochs = 3
    if case in ("OneCycleLR", "CyclicLR"):
        # Schedulers of steps: 4 steps, within OneCycleLR's total_steps.
        trainer, session = trained(objects(**made), 1, scheduler_step="step",
                                   steps_per_epoch=4)
        model, opt, sched = objects(**made)
        x, y = dataset()
        order = torch.randperm(ROWS, generator=torch.Generator().manual_seed(0))
        torch.manual_seed(0)
        for step in range(4):
            rows = order[step * BATCH:(step + 1) * BATCH]
            opt.zero_grad(set_to_none=True)
            loss_fn(model, x[rows], y[rows]).backward()
            opt.step()
            sched.step()
    else:
        trainer, session = trained(objects(**made), epochs)
        model = plain_loop(objects(**made), epochs)
    assert_same_module(trainer.load_into_module(session, "n0"), model)


def test_reduce_lr_on_plateau_steps_on_the_epochs_mean_loss():
    made = dict(scheduler=lambda o: lr_scheduler.ReduceLROnPlateau(
        o, patience=0, factor=0.5))
    trainer, session = trained(objects(**made), 4)
    model = plain_loop(objects(**made), 4, plateau=True)
    assert_same_module(trainer.load_into_module(session, "n0"), model)


def test_before_step_sees_the_averaged_gradients_and_can_clip_them():
    def clip(model):
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.05)

    trainer, session = trained(objects(), 2, before_step=clip)
    model = plain_loop(objects(), 2, before_step=clip)
    assert_same_module(trainer.load_into_module(session, "n0"), model)


def test_an_optimizer_that_stepped_before_goes_on_from_its_state():
    def primed():
        model, opt, _ = objects(optimizer=lambda p: torch.optim.SGD(
            p, lr=0.1, momentum=0.9))
        x, y = dataset()
        loss_fn(model, x, y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return model, opt, None

    trainer, session = trained(primed(), 2)
    assert_same_module(trainer.load_into_module(session, "n0"),
                       plain_loop(primed(), 2))


def test_evaluating_the_module_from_on_epoch_does_not_change_training():
    def run(evaluate):
        model, opt, _ = objects(model=with_batch_norm)
        trainer = et.Trainer(model, opt, loss_fn, dataset(), batch_size=BATCH)
        ops = epochrt.OpRegistry()
        trainer.register(ops)
        session = epochrt.LocalSession(ops=ops)
        x, _ = dataset()

        def on_epoch(record):
            if evaluate and record["epoch"] > 0:
                trainer.load_into_module(session, "n0").eval()(x)
                trainer.model.train()

        epochrt.JobRunner(trainer.make_job(["n0", "n1"], 4)).train(
            session, on_epoch=on_epoch)
        return trainer.state_dict(session, "n0")

    quiet, watched = run(False), run(True)
    for key in quiet:
        assert torch.equal(quiet[key], watched[key]), key


def test_a_failed_load_leaves_the_module_as_it_was(tmp_path):
    trainer, _ = trained(objects(), 1, directory=tmp_path)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    with pytest.raises(epochrt.Error):
        trainer.load_into_module(str(tmp_path), "n0", epoch=9)
    for key, tensor in trainer.model.state_dict().items():
        assert torch.equal(tensor, before[key]), key


def test_a_learning_rate_changed_and_allowed_takes_effect(tmp_path):
    trained(objects(), 2, directory=tmp_path)
    made = objects(optimizer=lambda p: torch.optim.SGD(p, lr=0.01))
    with pytest.raises(epochrt.BadInput,
                       match=r'args.optimizer.0.lr: "0.1" -> "0.01"'):
        trained(made, 3, directory=tmp_path)
    trainer, session = trained(
        objects(optimizer=lambda p: torch.optim.SGD(p, lr=0.01)), 3,
        directory=tmp_path, allow_job_change=True)
    groups = json.loads(bytes(
        session.fetch("n0", "model/optimizer/param_groups")[0]))
    assert groups["current"][0]["lr"] == 0.01, groups


@pytest.mark.parametrize("change", ["forward", "lambda", "version"])
def test_a_change_of_code_is_a_changed_job(tmp_path, change):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(6, 2)

        def forward(self, x):
            return self.fc(x)

    class TanhNet(Net):
        def forward(self, x):
            return self.fc(torch.tanh(x))

    def made(second):
        net_class = TanhNet if second and change == "forward" else Net
        factor = 0.1 if second and change == "lambda" else 0.9
        return objects(model=net_class, scheduler=(
            (lambda o: lr_scheduler.LambdaLR(o, lambda e: 0.1 ** e))
            if factor == 0.1 else
            (lambda o: lr_scheduler.LambdaLR(o, lambda e: 0.9 ** e))))

    trained(made(False), 1, directory=tmp_path)
    with pytest.raises(epochrt.BadInput, match="job_changed|another definition"):
        trained(made(True), 2, directory=tmp_path,
                version="2" if change == "version" else None)


@pytest.mark.parametrize("dataset_given, problem", [
    ({"x": torch.zeros(4, 6)}, "a tuple of tensors"),
    ((torch.zeros(4, 6), torch.zeros(3)), "one, nonzero, first dimension"),
])
def test_a_dataset_of_another_form_is_refused_saying_what_is_expected(
        dataset_given, problem):
    model, opt, _ = objects()
    with pytest.raises((TypeError, ValueError), match=problem):
        et.Trainer(model, opt, loss_fn, dataset_given, batch_size=2)


def test_a_tensor_dataset_is_a_dataset():
    model, opt, _ = objects()
    trainer = et.Trainer(model, opt, loss_fn,
                         torch.utils.data.TensorDataset(*dataset()),
                         batch_size=BATCH)
    assert trainer.steps_per_pass(1) == ROWS // BATCH


def test_a_parameter_no_blob_can_hold_is_refused_naming_it():
    model, opt, _ = objects(model=lambda: mlp().to(torch.bfloat16))
    with pytest.raises(ValueError, match="0.weight is bfloat16"):
        et.Trainer(model, opt, loss_fn, dataset(), batch_size=BATCH)


def test_the_epochs_loss_is_the_mean_over_every_node():
    model, opt, _ = objects()
    trainer = et.Trainer(model, opt, loss_fn, dataset(), batch_size=BATCH)
    ops = epochrt.OpRegistry()
    trainer.register(ops)
    records = []
    epochrt.JobRunner(trainer.make_job(["a", "b", "c"], 2)).train(
        epochrt.LocalSession(ops=ops), on_epoch=records.append,
        metrics=trainer.metrics)
    for record in records[1:]:
        losses = set(record["metrics"][trainer.loss_blob].values())
        assert len(losses) == 1, losses
    assert sorted(records[1]["metrics"][trainer.loss_blob]) == [
        "model/a", "model/b", "model/c"]


@pytest.mark.parametrize("value", [
    collections.Counter({3: 1, 5: 2}),
    collections.OrderedDict([("b", 1), ("a", (1.5, None))]),
    {1: [0.1, float("inf")], "x": {"y": (True,)}},
    {"__epochrt__": 1},
])
def test_scheduler_state_reads_back_as_the_same_python_values(value):
    from epochrt import _torch_state as state
    back = state.decode(json.loads(json.dumps(state.encode(value, "v"))))
    assert back == value and type(back) is type(value)


def test_scheduler_state_that_json_cannot_hold_is_refused_naming_its_path():
    from epochrt import _torch_state as state
    with pytest.raises(TypeError, match=r"v.a\[1\] holds a set"):
        state.encode({"a": [1, {2}]}, "v")


def test_before_step_draws_from_the_nodes_generators_and_sees_the_module():
    def noisy(model):
        # Buffers and frozen parameters hold the node's values here.
        assert model[1].running_mean.shape == (8,)
        assert model[0].weight.shape == (8, 6)
        for p in model.parameters():
            if p.grad is not None:
                p.grad += 1e-2 * torch.randn_like(p.grad)

    def made():
        model, opt, sched = objects(model=with_batch_norm)
        model[0].requires_grad_(False)
        return model, opt, sched

    trainer, session = trained(made(), 2, before_step=noisy)
    model = plain_loop(made(), 2, before_step=noisy)
    assert_same_module(trainer.load_into_module(session, "n0"), model)


def test_a_cyclic_lr_trains_after_its_original_is_gone():
    import gc

    def made():
        return objects(scheduler=lambda o: lr_scheduler.CyclicLR(
            o, base_lr=0.01, max_lr=0.2, step_size_up=2,
            cycle_momentum=False))

    model, opt, sched = made()
    trainer = et.Trainer(model, opt, loss_fn, dataset(), batch_size=BATCH,
                         scheduler=sched, scheduler_step="step")
    del model, opt, sched
    gc.collect()
    ops = epochrt.OpRegistry()
    trainer.register(ops)
    session = epochrt.LocalSession(ops=ops, worker_threads=1)
    epochrt.JobRunner(trainer.make_job(["n0"], 2)).train(session)
    model, opt, sched = made()  # the plain loop, stepping it every step
    x, y = dataset()
    torch.manual_seed(0)
    for epoch in range(2):
        order = torch.randperm(
            ROWS, generator=torch.Generator().manual_seed(epoch))
        for step in range(ROWS // BATCH):
            rows = order[step * BATCH:(step + 1) * BATCH]
            opt.zero_grad(set_to_none=True)
            loss_fn(model, x[rows], y[rows]).backward()
            opt.step()
            sched.step()
    assert_same_module(trainer.load_into_module(session, "n0"), model)


def _switched_at_epoch_2(change):
    """(objects of the first 2 epochs, of the third, the plain loop's
    switch at epoch 2) for a change allowed on a resume."""
    sgd = dict(optimizer=lambda p: torch.optim.SGD(p, lr=0.1))
    if change == "momentum added":
        later = dict(optimizer=lambda p: torch.optim.SGD(p, lr=0.1,
                                                         momentum=0.9))

        def switch(epoch, opt, sched):
            if epoch == 2:
                opt.param_groups[0]["momentum"] = 0.9
    elif change == "scheduler added":
        later = dict(sgd, scheduler=lambda o: lr_scheduler.StepLR(o, 1, 0.5))

        def switch(epoch, opt, sched):
            if epoch == 2:
                return opt, lr_scheduler.StepLR(opt, 1, 0.5)
    else:  # "optimizer replaced"
        later = dict(optimizer=lambda p: torch.optim.Adam(p, lr=0.1))

        def switch(epoch, opt, sched):
            if epoch == 2:
                return torch.optim.Adam(
                    [p for g in opt.param_groups for p in g["params"]],
                    lr=0.1), sched
    return sgd, later, switch


@pytest.mark.parametrize("change", ["momentum added", "scheduler added",
                                    "optimizer replaced"])
def test_state_a_change_adds_starts_afresh_and_the_rest_goes_on(
        tmp_path, change):
    first, later, switch = _switched_at_epoch_2(change)
    trained(objects(**first), 2, directory=tmp_path)
    trainer, session = trained(objects(**later), 3, directory=tmp_path,
                               allow_job_change=True)
    model = plain_loop(objects(**first), 3, at_epoch=switch)
    assert_same_module(trainer.load_into_module(session, "n0"), model)


def test_a_change_in_one_chained_scheduler_leaves_the_others_state(tmp_path):
    def chained(gamma):
        return dict(scheduler=lambda o: lr_scheduler.SequentialLR(
            o, [lr_scheduler.StepLR(o, 1, 0.5),
                lr_scheduler.ExponentialLR(o, gamma)], milestones=[1]))

    def switch(epoch, opt, sched):
        if epoch == 3:
            sched._schedulers[1].gamma = 0.8

    trained(objects(**chained(0.9)), 3, directory=tmp_path)
    trainer, session = trained(objects(**chained(0.8)), 5,
                               directory=tmp_path, allow_job_change=True)
    model = plain_loop(objects(**chained(0.9)), 5, at_epoch=switch)
    assert_same_module(trainer.load_into_module(session, "n0"), model)


def test_a_module_of_sparse_gradients_is_refused_when_the_trainer_is_made():
    def sparse():
        return torch.nn.Sequential(torch.nn.Embedding(10, 6, sparse=True))

    model, opt, _ = objects(model=sparse)
    with pytest.raises(ValueError, match=r"0 \(Embedding\).*sparse=False"):
        et.Trainer(model, opt, loss_fn, dataset(), batch_size=BATCH)


def test_draws_under_global_generators_do_not_change_training():
    def run(draw):
        model, opt, _ = objects(model=lambda: torch.nn.Sequential(
            torch.nn.Linear(6, 32), torch.nn.Dropout(0.5),
            torch.nn.Linear(32, 2)))
        trainer = et.Trainer(model, opt, loss_fn, dataset(), batch_size=4)
        ops = epochrt.OpRegistry()
        trainer.register(ops)
        session = epochrt.LocalSession(ops=ops, worker_threads=2)

        def on_epoch(record):
            for _ in range(200 if draw else 0):
                with et.global_generators():
                    torch.randn(64)

        epochrt.JobRunner(trainer.make_job(["n0", "n1"], 3)).train(
            session, on_epoch=on_epoch)
        return trainer.state_dict(session, "n0")

    quiet, drawn = run(False), run(True)
    for key in quiet:
        assert torch.equal(quiet[key], drawn[key]), key


def test_buffers_replaced_in_forward_resume_bit_for_bit(tmp_path):
    made = dict(model=ReplacesItsBuffers)
    trained(objects(**made), 2, directory=tmp_path)
    resumed, session = trained(objects(**made), 4, directory=tmp_path)
    model = plain_loop(objects(**made), 4)
    assert_same_module(resumed.load_into_module(session, "n0"), model)
    assert int(model.count) == 4 * ROWS // BATCH


def test_a_process_whose_trainer_differs_from_the_jobs_fails_naming_it():
    # As a daemon started with other settings than its master's.
    model, opt, _ = objects()
    master = et.Trainer(model, opt, loss_fn, dataset(), batch_size=BATCH)
    model, opt, _ = objects()
    daemon = et.Trainer(model, opt, loss_fn, dataset(), batch_size=2 * BATCH)
    ops = epochrt.OpRegistry()
    daemon.register(ops)
    with pytest.raises(epochrt.JobFailed,
                       match="batch_size is 32 here, 16 in the job"):
        epochrt.JobRunner(master.make_job(["n0"], 1)).train(
            epochrt.LocalSession(ops=ops, worker_threads=1))


def test_a_pass_shorter_than_the_checkpoints_position_starts_the_next(
        tmp_path):
    # 6 steps a pass at batch 16, 4 an epoch: position 4 after epoch 1;
    # at batch 48 a pass is 2 steps.
    trained(objects(), 1, directory=tmp_path, steps_per_epoch=4)
    model, opt, _ = objects()
    trainer = et.Trainer(model, opt, loss_fn, dataset(), batch_size=48,
                         steps_per_epoch=4)
    ops = epochrt.OpRegistry()
    trainer.register(ops)
    session = epochrt.LocalSession(ops=ops, worker_threads=1)
    records = []
    epochrt.JobRunner(trainer.make_job(["n0"], 3),
                      checkpoint_manager=epochrt.MultiNodeCheckpointManager(
                          str(tmp_path)),
                      allow_job_change=True).train(
        session, on_epoch=records.append, metrics=trainer.metrics)
    losses = [r["metrics"][trainer.loss_blob]["model/n0"] for r in records
              if r["epoch"] > 1]
    assert len(losses) == 2 and all(v is not None for v in losses), records
    assert session.fetch("n0", "model/sampler")[1] < 2


def test_extra_state_is_refused_saying_what_to_do():
    class WithExtra(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(6, 2)

        def forward(self, x):
            return self.fc(x)

        def get_extra_state(self):
            return {"seen": 1}

        def set_extra_state(self, state):
            pass

    model, opt, _ = objects(model=WithExtra)
    with pytest.raises(ValueError, match="extra state.*keep it in a buffer"):
        et.Trainer(model, opt, loss_fn, dataset(), batch_size=BATCH)


def test_a_loss_that_never_reaches_the_module_warns():
    model, opt, _ = objects()

    def outer_loss(_, x, y):
        return F.cross_entropy(model(x), y)  # the template, not the copy

    trainer = et.Trainer(model, opt, outer_loss, dataset(), batch_size=BATCH)
    ops = epochrt.OpRegistry()
    trainer.register(ops)
    with pytest.warns(UserWarning, match="no parameter .* got a gradient"):
        epochrt.JobRunner(trainer.make_job(["n0"], 1)).train(
            epochrt.LocalSession(ops=ops, worker_threads=1))
