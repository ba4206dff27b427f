"""An MLP on sklearn's digits, trained data-parallel on 3 nodes by epochrt.

    torch_digits.py [--checkpoint-dir DIR] [--epochs N] [--daemons]
                    [--stats-json FILE]

Each node trains on its shard; gradients are averaged every step. With
--checkpoint-dir, each epoch is checkpointed and a rerun on the same
directory (after Ctrl-C, or a kill at any moment) resumes from the last
committed epoch and ends with the same weights. --daemons runs the nodes
on three local daemons (this script, started with --serve).
--stats-json writes each epoch's times and loss for examples/plot_stats.py.
The last lines are `accuracy=<test accuracy>` and `weights_digest=<hex>`.
"""

import argparse
import signal
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits

import epochrt
import epochrt.torch

NODES = ["trainer:0", "trainer:1", "trainer:2"]


def make_trainer():
    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16
    y = torch.tensor(digits.target)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                torch.nn.Dropout(0.1), torch.nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10, gamma=0.5)

    def loss_fn(model, x, y):
        return F.cross_entropy(model(x), y)

    trainer = epochrt.torch.Trainer(model, optimizer, loss_fn,
                                    (x[:1500], y[:1500]), batch_size=32,
                                    scheduler=scheduler)
    ops = epochrt.OpRegistry()
    trainer.register(ops)
    return trainer, ops, (x[1500:], y[1500:])


def start_daemons(root):
    """Three daemons (this script, --serve) with roots under `root`; each
    ends when this process does (its stdin closes)."""
    daemons = [subprocess.Popen(
        [sys.executable, __file__, "--serve", "%s/daemon-%d" % (root, i)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for i in range(len(NODES))]
    lines = [d.stdout.readline() for d in daemons]
    if not all(line.startswith("listening on ") for line in lines):
        sys.exit("a daemon did not start: %r" % lines)
    return daemons, {node: line.split()[-1] for node, line in zip(NODES, lines)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint-dir")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--daemons", action="store_true")
    parser.add_argument("--stats-json", help="epoch lines for plot_stats.py")
    parser.add_argument("--serve", metavar="ROOT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    trainer, ops, (test_x, test_y) = make_trainer()
    if args.serve:  # a daemon: serves until the script that started it ends
        # Ctrl-C reaches the terminal's whole process group: the script
        # stops the job after the running epoch; its daemons end with it.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with epochrt.serve_node(checkpoint_root=args.serve, ops=ops) as server:
            print("listening on", server.address, flush=True)
            sys.stdin.read()
        return
    if args.daemons:
        _, addresses = start_daemons(args.checkpoint_dir or tempfile.mkdtemp())
        session = epochrt.DistributedSession(addresses, ops=ops)
    else:  # one worker: the nodes' Python steps share the GIL anyway
        session = epochrt.LocalSession(ops=ops, worker_threads=1)
    manager = (epochrt.MultiNodeCheckpointManager(args.checkpoint_dir + "/ckpt")
               if args.checkpoint_dir else None)
    runner = epochrt.JobRunner(trainer.make_job(NODES, args.epochs, "digits"),
                               checkpoint_manager=manager)
    runner.train(session, metrics=trainer.metrics, stats_json=args.stats_json,
                 on_epoch=lambda r: r["epoch"] and print("epoch %d: loss %.4f" % (
                     r["epoch"], r["metrics"]["model/loss"]["model/trainer:0"]),
                     flush=True))
    model = trainer.load_into_module(session, NODES[0]).eval()
    accuracy = (model(test_x).argmax(1) == test_y).float().mean().item()
    print("accuracy=%.4f" % accuracy)
    print("weights_digest=%s" % trainer.weights_digest())


if __name__ == "__main__":
    main()
