#!/usr/bin/env python3
"""What the rules for Python ops' arrays cost (docs/python.md): a 256 MiB
float32 blob, checkpointed every epoch, through a Python op that

- updates it in place through torch and returns it (`inplace`), as
  optimizer.step() does: the blob changes every epoch, each checkpoint
  writes it, and the first update after a checkpoint copies it while the
  background write still holds it;
- only reads it (`read`): the blob never changes, and each checkpoint
  hashes it to find it unchanged (it was handed to code that could have
  written it) instead of writing it.

Beside them, in the same run: a plain write+fsync of the same bytes to a
file in the same directory (`file_write_fsync_ms`), the disk alone.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_inplace_bench.py

Prints name=value lines, medians of --runs runs; the machine is shared,
so figures are indicative.
"""

import argparse
import json
import os
import statistics
import tempfile
import time
import warnings

import numpy

import epochrt

try:
    import torch
except ImportError:  # the read variant needs no torch
    torch = None


def job_of(ops, op, mib, epochs):
    count = mib * (1 << 20) // 4
    spec = {"name": "inplace", "epoch_limit": epochs,
            "init": [{"node": "n", "ops": [
                {"type": "ConstantFill", "outputs": ["w"],
                 "args": {"shape": [count], "value": 1.0}}]}],
            "epoch": [{"node": "n", "ops": [
                {"type": op, "inputs": ["w"],
                 "outputs": ["w"] if op == "Step" else []}]}]}
    return epochrt.Job.from_json(json.dumps(spec), ops=ops)


def registry():
    ops = epochrt.OpRegistry()

    def step(w):
        torch.from_numpy(w).sub_(0.001)
        return w

    if torch is not None:
        ops.register("Step", step, inputs=1, outputs=1)
    ops.register("Read", lambda w: None, inputs=1, outputs=0)
    return ops


def run_once(op, mib, epochs, directory):
    ops = registry()
    job = job_of(ops, op, mib, epochs)
    manager = epochrt.MultiNodeCheckpointManager(directory)
    runner = epochrt.JobRunner(job, checkpoint_manager=manager)
    session = epochrt.LocalSession(worker_threads=2, ops=ops)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        start = time.perf_counter()
        runner.train(session)
        total = time.perf_counter() - start
    # Init and its save are in the total too: per epoch, over epochs + 1.
    return total * 1000.0 / (epochs + 1)


def file_write_fsync_ms(mib, directory):
    data = numpy.ones(mib * (1 << 20) // 4, dtype=numpy.float32)
    path = os.path.join(directory, "baseline.bin")
    start = time.perf_counter()
    with open(path, "wb") as f:
        f.write(memoryview(data))
        f.flush()
        os.fsync(f.fileno())
    elapsed = (time.perf_counter() - start) * 1000.0
    os.unlink(path)
    return elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    variants = ["Read"] + (["Step"] if torch is not None else [])
    figures = {v: [] for v in variants}
    baseline = []
    for _ in range(args.runs):
        for variant in variants:
            with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) \
                    as directory:
                figures[variant].append(
                    run_once(variant, args.mib, args.epochs, directory))
                baseline.append(file_write_fsync_ms(args.mib, directory))
    disk = statistics.median(baseline)
    print("mib=%d" % args.mib)
    print("file_write_fsync_ms=%.1f" % disk)
    for variant, name in (("Step", "inplace"), ("Read", "read")):
        if variant not in figures:
            continue
        ms = statistics.median(figures[variant])
        print("%s_epoch_ms=%.1f" % (name, ms))
        print("%s_epoch_vs_file_write_fsync=%.2f x" % (name, ms / disk))


if __name__ == "__main__":
    main()
