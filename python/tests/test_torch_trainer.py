"""epochrt.torch.Trainer: a PyTorch module, its optimizer, scheduler, data
position and random state as blobs. What it computes is what the plain
PyTorch loop computes, bit for bit; a resumed run is an uninterrupted one,
bit for bit, with dropout and shuffling on; a changed model or optimizer
is a changed job."""

import json

import numpy as np
import pytest

import epochrt

torch = pytest.importorskip("torch")
et = pytest.importorskip("epochrt.torch")
F = torch.nn.functional

ROWS = 120


def dataset():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(ROWS, 8, generator=g)
    y = (x[:, 0] - x[:, 1] > 0).long() + (x[:, 2] > 1).long()
    return x, y


def make_model(hidden=16, dropout=0.0):
    torch.manual_seed(11)
    layers = [torch.nn.Linear(8, hidden), torch.nn.ReLU()]
    if dropout:
        layers.append(torch.nn.Dropout(dropout))
    layers.append(torch.nn.Linear(hidden, 3))
    return torch.nn.Sequential(*layers)


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def make_trainer(optimizer="sgd", lr=0.05, dropout=0.0, hidden=16,
                 scheduler=True, **options):
    model = make_model(hidden, dropout)
    if optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = (torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
             if scheduler else None)
    options.setdefault("batch_size", 16)
    return et.Trainer(model, opt, loss_fn, dataset(), scheduler=sched,
                      **options)


def train(trainer, nodes, epochs, directory=None, **runner_args):
    ops = epochrt.OpRegistry()
    trainer.register(ops)
    session = epochrt.LocalSession(ops=ops, worker_threads=2)
    manager = (epochrt.MultiNodeCheckpointManager(str(directory))
               if directory is not None else None)
    runner = epochrt.JobRunner(trainer.make_job(nodes, epochs),
                               checkpoint_manager=manager, **runner_args)
    runner.train(session)
    return session


def blobs_of(session, trainer, node):
    """Every blob of the trainer on `node` but the gradient scratch."""
    names = [b for b in trainer.blob_names() if "/grad/" not in b]
    return {b: session.fetch(node, b) for b in names}


def assert_same_blobs(got, expected):
    assert sorted(got) == sorted(expected)
    for name in expected:
        g, e = got[name], expected[name]
        assert g.dtype == e.dtype and g.shape == e.shape, name
        assert np.array_equal(g, e), name


def plain_torch_loop(optimizer, epochs, dropout=0.0, seed=0):
    """The loop a PyTorch user writes for one process, with the data order
    of DistributedSampler over one replica."""
    x, y = dataset()
    model = make_model(dropout=dropout)
    if optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    data = torch.utils.data.TensorDataset(x, y)
    sampler = torch.utils.data.distributed.DistributedSampler(
        data, num_replicas=1, rank=0, shuffle=True, seed=seed)
    loader = torch.utils.data.DataLoader(data, batch_size=16, sampler=sampler,
                                         generator=torch.Generator())
    torch.manual_seed(seed)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(model, xb, yb).backward()
            opt.step()
        sched.step()
    return model, opt


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_one_node_computes_what_the_plain_torch_loop_computes_bit_for_bit(
        optimizer):
    trainer = make_trainer(optimizer, dropout=0.25)
    session = train(trainer, ["n0"], 4)
    model, opt = plain_torch_loop(optimizer, 4, dropout=0.25)
    trained = trainer.load_into_module(session, "n0")
    for key, tensor in model.state_dict().items():
        assert torch.equal(trained.state_dict()[key], tensor), key
    state = opt.state_dict()["state"]
    for index, key in enumerate(trainer.trainable):
        for entry in trainer.state_names[key]:
            blob = session.fetch("n0", "model/optimizer/%s/%s" % (key, entry))
            assert np.array_equal(blob, state[index][entry].numpy()), (
                key, entry)
    groups = session.fetch("n0", "model/optimizer/param_groups")
    assert b'"lr": 0.0125' in bytes(groups[0])


def test_three_nodes_step_on_the_mean_of_their_shards_gradients():
    trainer = make_trainer(scheduler=False, shuffle=False, batch_size=8)
    session = train(trainer, ["a", "b", "c"], 1)

    # One process: the shards' gradients summed in node order, then divided.
    x, y = dataset()
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    shards = [torch.arange(ROWS)[k::3] for k in range(3)]
    for step in range(-(-ROWS // 3 // 8)):
        total = None
        for shard in shards:
            rows = shard[step * 8:(step + 1) * 8]
            model.zero_grad()
            loss_fn(model, x[rows], y[rows]).backward()
            grads = [p.grad.clone() for p in model.parameters()]
            total = grads if total is None else [
                t + g for t, g in zip(total, grads)]
        for p, g in zip(model.parameters(), total):
            p.grad = g / 3
        opt.step()
    expected = model.state_dict()
    for node in ("a", "b", "c"):
        got = trainer.state_dict(session, node)
        for key in expected:
            assert torch.equal(got[key], expected[key]), (node, key)


def test_init_puts_the_modules_weights_on_every_node():
    trainer = make_trainer()
    ops = epochrt.OpRegistry()
    trainer.register(ops)
    session = epochrt.LocalSession(ops=ops)
    session.run(trainer.make_job(["a", "b"], 1).init_group)
    initial = make_model().state_dict()
    for node in ("a", "b"):
        for key, tensor in trainer.state_dict(session, node).items():
            assert torch.equal(tensor, initial[key]), (node, key)


@pytest.mark.parametrize("stop_after", [1, 2, 3])
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_a_run_resumed_after_any_epoch_equals_an_uninterrupted_one(
        tmp_path, optimizer, stop_after):
    # Dropout, shuffling, a scheduler, and epochs that end mid-pass.
    options = dict(optimizer=optimizer, dropout=0.3, steps_per_epoch=3,
                   seed=5)
    nodes = ["n0", "n1", "n2"]
    whole = train(make_trainer(**options), nodes, 5, tmp_path / "whole")

    part = tmp_path / "part"
    train(make_trainer(**options), nodes, stop_after, part)
    resumed_trainer = make_trainer(**options)
    resumed = train(resumed_trainer, nodes, 5, part)
    for node in nodes:
        assert_same_blobs(blobs_of(resumed, resumed_trainer, node),
                          blobs_of(whole, resumed_trainer, node))


def test_a_scheduler_stepped_every_step_resumes_where_it_was(tmp_path):
    options = dict(scheduler_step="step", steps_per_epoch=2)
    nodes = ["n0", "n1"]
    whole = train(make_trainer(**options), nodes, 4, tmp_path / "whole")
    train(make_trainer(**options), nodes, 1, tmp_path / "part")
    trainer = make_trainer(**options)
    resumed = train(trainer, nodes, 4, tmp_path / "part")
    for node in nodes:
        assert_same_blobs(blobs_of(resumed, trainer, node),
                          blobs_of(whole, trainer, node))
    # StepLR(step_size=2) over 8 steps: 0.05 halved four times.
    groups = bytes(resumed.fetch("n0", "model/optimizer/param_groups")[0])
    assert b'"lr": 0.003125' in groups


def test_each_nodes_random_state_is_its_own_and_the_process_keeps_its():
    trainer = make_trainer(dropout=0.5)
    torch.manual_seed(1234)
    before = torch.get_rng_state()
    session = train(trainer, ["n0", "n1"], 1)
    assert torch.equal(torch.get_rng_state(), before)
    assert not np.array_equal(session.fetch("n0", "model/rng/torch"),
                              session.fetch("n1", "model/rng/torch"))


def test_the_epochs_mean_loss_is_each_epoch_tasks_output():
    trainer = make_trainer()
    ops = epochrt.OpRegistry()
    trainer.register(ops)
    losses = {}

    def record(line):
        for task, outputs in line["outputs"].items():
            if trainer.loss_blob in outputs:
                losses.setdefault(task, []).append(
                    float(outputs[trainer.loss_blob]))

    epochrt.JobRunner(trainer.make_job(["n0", "n1"], 6)).train(
        epochrt.LocalSession(ops=ops), on_epoch=record)
    assert sorted(losses) == ["model/n0", "model/n1"]
    for history in losses.values():
        assert len(history) == 6
        assert history[-1] < history[0]


def test_the_loss_is_a_metric_of_the_stats_lines(tmp_path):
    trainer = make_trainer()
    ops = epochrt.OpRegistry()
    trainer.register(ops)
    stats = tmp_path / "stats.jsonl"
    epochrt.JobRunner(trainer.make_job(["n0", "n1"], 3)).train(
        epochrt.LocalSession(ops=ops), stats_json=stats,
        metrics=trainer.metrics)
    lines = [json.loads(line) for line in stats.read_text().splitlines()]
    assert "metrics" not in lines[0]
    for line in lines[1:]:
        losses = line["metrics"]["model/loss"]
        assert sorted(losses) == ["model/n0", "model/n1"]
        assert all(0 < loss < 5 for loss in losses.values())


def test_a_changed_learning_rate_is_a_changed_job(tmp_path):
    train(make_trainer(lr=0.05), ["n0"], 2, tmp_path)
    with pytest.raises(epochrt.BadInput, match="args.optimizer"):
        train(make_trainer(lr=0.01), ["n0"], 4, tmp_path)


def test_a_changed_layer_is_refused_naming_the_key(tmp_path):
    train(make_trainer(hidden=16), ["n0"], 2, tmp_path)
    with pytest.raises(epochrt.BadInput, match="args.model"):
        train(make_trainer(hidden=12), ["n0"], 4, tmp_path)
    # Resumed anyway, the blobs cannot be the module's.
    with pytest.raises(epochrt.Error, match="size mismatch for 0.weight"):
        train(make_trainer(hidden=12), ["n0"], 4, tmp_path,
              allow_job_change=True)


def test_a_checkpoint_loads_into_the_module_with_load_state_dicts_checks(
        tmp_path):
    trainer = make_trainer()
    session = train(trainer, ["n0"], 3, tmp_path)
    from_session = {k: v.clone() for k, v in
                    trainer.load_into_module(session, "n0")
                    .state_dict().items()}
    trainer.load_into_module(str(tmp_path), "n0", epoch=3)
    for key, tensor in trainer.model.state_dict().items():
        assert torch.equal(tensor, from_session[key]), key
    other = make_trainer(hidden=12)
    with pytest.raises(RuntimeError, match="size mismatch for 0.weight"):
        other.load_into_module(str(tmp_path), "n0", epoch=3)


def test_the_given_module_keeps_its_weights_and_the_copies_hold_no_blob():
    trainer = make_trainer()
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    train(trainer, ["n0"], 1)
    for key, tensor in trainer.model.state_dict().items():
        assert torch.equal(tensor, before[key]), key
    assert all(p.numel() == 0 for p in trainer._model.parameters())
    assert not trainer.optimizer.state


def test_a_loss_that_is_not_a_scalar_fails_the_job_naming_it():
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    trainer = et.Trainer(model, opt,
                         lambda m, x, y: F.cross_entropy(m(x), y,
                                                         reduction="none"),
                         dataset(), batch_size=8)
    with pytest.raises(epochrt.JobFailed, match="loss_fn must return"):
        train(trainer, ["n0"], 1)
