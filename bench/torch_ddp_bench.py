"""examples/python/torch_digits.py's model trained by epochrt (3 nodes in
one process, checkpoints on; and on 3 local daemons) beside the same model,
data and schedule under torch DDP over gloo (3 processes, torch.save after
every epoch: examples/python/torch_digits_ddp.py), in the same run.

    torch_ddp_bench.py [--epochs N] [--runs R] [--no-daemons]

Prints, as medians over the runs of each run's median epoch (the first
two epochs of a run left out as warm-up):

    epochrt_epoch_ms, ddp_epoch_ms, epoch_vs_ddp (epochrt / DDP: lower
    is better; the target is at most 1.0), the same over daemons
    (daemons_epoch_ms, daemons_vs_ddp), and checkpoint_ms for both
    (epochrt: the slowest node's save plus the commit, written while the
    next epoch runs; DDP: torch.save of every rank, which the epoch waits
    for).

An epochrt epoch is the epoch's time plus the snapshot it waits for; a
DDP epoch is its loop plus its torch.save. Run it on a quiet machine:
the processes share its cores.
"""

import argparse
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
EXAMPLES = HERE.parent / "examples" / "python"
sys.path.insert(0, str(EXAMPLES))

import epochrt  # noqa: E402
import torch_digits  # noqa: E402

WARMUP = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def epochrt_run(epochs, daemons):
    """(median epoch ms, median checkpoint ms, accuracy) of one run."""
    trainer, ops, (test_x, test_y) = torch_digits.make_trainer()
    with tempfile.TemporaryDirectory() as root:
        children = []
        if daemons:
            children, addresses = torch_digits.start_daemons(root)
            session = epochrt.DistributedSession(addresses, ops=ops)
        else:  # as the example makes it
            session = epochrt.LocalSession(ops=ops, worker_threads=1)
        manager = epochrt.MultiNodeCheckpointManager(root + "/ckpt")
        runner = epochrt.JobRunner(
            trainer.make_job(torch_digits.NODES, epochs, "digits"),
            checkpoint_manager=manager)
        lines = []
        runner.train(session, on_epoch=lines.append)
        model = trainer.load_into_module(session, torch_digits.NODES[0])
        accuracy = (model.eval()(test_x).argmax(1) == test_y).float().mean()
        del session
        for child in children:
            child.stdin.close()
            child.wait(timeout=60)
    lines = [line for line in lines if line["epoch"] > WARMUP]
    epoch_ms = [(line["epoch_us"] + line["snapshot_us"]) / 1e3
                for line in lines]
    checkpoint_ms = [(max(n["save_us"] for n in line["nodes"])
                      + line["commit_us"]) / 1e3 for line in lines]
    return (statistics.median(epoch_ms), statistics.median(checkpoint_ms),
            float(accuracy))


def ddp_run(epochs):
    with tempfile.TemporaryDirectory() as root:
        out = subprocess.run(
            [sys.executable, str(EXAMPLES / "torch_digits_ddp.py"),
             "--checkpoint-dir", root, "--epochs", str(epochs),
             "--port", str(free_port())],
            check=True, capture_output=True, text=True, timeout=600).stdout
    values = dict(line.split("=", 1) for line in out.splitlines()
                  if "=" in line)
    epoch_ms = [float(v) for v in values["epoch_ms"].split(",")][WARMUP:]
    save_ms = [float(v) for v in values["save_ms"].split(",")][WARMUP:]
    return (statistics.median(epoch_ms), statistics.median(save_ms),
            float(values["accuracy"]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-daemons", action="store_true")
    args = parser.parse_args()
    if args.epochs <= WARMUP:
        parser.error("--epochs must be more than %d" % WARMUP)
    results = {"epochrt": [], "daemons": [], "ddp": []}
    for run in range(args.runs):
        results["epochrt"].append(epochrt_run(args.epochs, False))
        if not args.no_daemons:
            results["daemons"].append(epochrt_run(args.epochs, True))
        results["ddp"].append(ddp_run(args.epochs))
        print("run %d: %s" % (run + 1, " ".join(
            "%s=%.1f/%.1f ms" % (k, v[-1][0], v[-1][1])
            for k, v in results.items() if v)), flush=True)

    def median(kind, index):
        return statistics.median(r[index] for r in results[kind])

    print("epochs=%d runs=%d nodes=3 batch=32 rows=1500" % (args.epochs,
                                                           args.runs))
    print("epochrt_epoch_ms=%.2f" % median("epochrt", 0))
    print("ddp_epoch_ms=%.2f" % median("ddp", 0))
    print("epoch_vs_ddp=%.2f" % (median("epochrt", 0) / median("ddp", 0)))
    if results["daemons"]:
        print("daemons_epoch_ms=%.2f" % median("daemons", 0))
        print("daemons_vs_ddp=%.2f" % (median("daemons", 0)
                                        / median("ddp", 0)))
    print("epochrt_checkpoint_ms=%.2f" % median("epochrt", 1))
    print("ddp_checkpoint_ms=%.2f" % median("ddp", 1))
    print("accuracy epochrt=%.4f ddp=%.4f" % (median("epochrt", 2),
                                              median("ddp", 2)))


if __name__ == "__main__":
    main()
