#!/usr/bin/env python3
"""What the Python module costs beside the C++ it wraps (issue 22).

    PYTHONPATH=build/python nice -n 19 /usr/bin/python3 bench/python_bench.py
    make bench-python          # the same, after building the module

Prints name=value lines, each the median of --runs runs:

- op_call: the per-call cost of an op that does nothing, written in Python
  (`lambda ms=0: None`, no inputs, no outputs) and in C++ (the builtin
  Sleep with ms=0, the same signature), each called --calls times in one
  step of one task (Step num_iter), so that the job's own cost is spread
  over the calls. python_op_extra_us is the difference per call; the
  target is <= 20 us.
- op_copy: the same for an op that returns its one-element input (Python)
  beside the builtin Copy: inputs as NumPy views and the output converted
  back.
- fetch: LocalSession.fetch of a --mib MiB float64 blob into a NumPy
  array, beside numpy.copyto of the same bytes into a buffer written
  before (a memcpy); the ratio is memcpy time / fetch time, the target
  >= 0.5. Also beside a copy into a new array (numpy.array(copy=True):
  allocation and first-touch page faults, the least any fetch into a new
  array pays), fetch_vs_new_copy_ratio. fetch_into: fetch(out=...) into
  an array written before, as a loop that fetches every epoch does (one
  memcpy from the blob); fetch_shared: fetch(copy=False), a read-only
  array that shares the blob (no copy); each with its ratio to memcpy.

Figures from a loaded machine are indicative only.
"""

import argparse
import statistics
import time

import numpy

import epochrt


def time_train(job, session):
    start = time.perf_counter()
    epochrt.JobRunner(job).train(session)
    return time.perf_counter() - start


def step_job(name, op, calls, init_ops=()):
    job = epochrt.Job(name)
    if init_ops:
        job.init_group.add_task(epochrt.Task("n", list(init_ops)))
    job.epoch_group.add_task(epochrt.Task(
        "n", steps=[epochrt.Step([op], num_iter=calls)]))
    epochrt.epoch_limiter(job, 1)
    return job


def per_call_us(job, session, calls, runs):
    times = [time_train(job, session) for _ in range(runs)]
    return statistics.median(times) / calls * 1e6


def bench_ops(args, ops, session):
    one = [epochrt.Op("GivenTensorFill", outputs=["x"], values=[1.0])]
    pairs = {
        "op_call": (epochrt.Op("PyNop", ms=0), epochrt.Op("Sleep", ms=0), ()),
        "op_copy": (epochrt.Op("PyCopy", ["x"], ["y"]),
                    epochrt.Op("Copy", ["x"], ["y"]), one),
    }
    for name, (py_op, cpp_op, init) in pairs.items():
        py = per_call_us(step_job(name + "_py", py_op, args.calls, init),
                         session, args.calls, args.runs)
        cpp = per_call_us(step_job(name + "_cpp", cpp_op, args.calls, init),
                          session, args.calls, args.runs)
        print("%s_python_us=%.2f" % (name, py))
        print("%s_cpp_us=%.2f" % (name, cpp))
        print("%s_python_extra_us=%.2f" % (name, py - cpp))
        print("%s_ratio=%.2f" % (name, py / cpp if cpp > 0 else float("inf")))
    print("op_target_extra_us=20")


def bench_fetch(args, session):
    count = args.mib * (1 << 20) // 8
    job = epochrt.Job("fetch")
    job.init_group.add_task(epochrt.Task("n", [
        epochrt.Op("ConstantFill", outputs=["big"], shape=[count], value=1.5,
                   dtype="f64")]))
    epochrt.epoch_limiter(job, 1)
    epochrt.JobRunner(job).train(session)
    fetches, copies, new_copies, intos, shares = [], [], [], [], []
    source = numpy.full(count, 1.5)
    target = numpy.empty_like(source)
    numpy.copyto(target, source)  # pages touched before timing
    into = numpy.empty_like(source)
    numpy.copyto(into, source)
    for _ in range(args.runs):
        start = time.perf_counter()
        session.fetch("n", "big", out=into)
        intos.append(time.perf_counter() - start)
        assert into[-1] == 1.5
        start = time.perf_counter()
        shared = session.fetch("n", "big", copy=False)
        shares.append(time.perf_counter() - start)
        assert shared[-1] == 1.5
        del shared
        start = time.perf_counter()
        value = session.fetch("n", "big")
        fetches.append(time.perf_counter() - start)
        assert value.shape == (count,) and value[-1] == 1.5
        del value
        start = time.perf_counter()
        numpy.copyto(target, source)
        copies.append(time.perf_counter() - start)
        start = time.perf_counter()
        fresh = numpy.array(source, copy=True)
        new_copies.append(time.perf_counter() - start)
        del fresh
    fetch_s = statistics.median(fetches)
    copy_s = statistics.median(copies)
    new_copy_s = statistics.median(new_copies)
    mib = args.mib
    print("fetch_mib=%d" % mib)
    print("fetch_ms=%.1f" % (fetch_s * 1e3))
    print("memcpy_ms=%.1f" % (copy_s * 1e3))
    print("fetch_mib_per_s=%.0f" % (mib / fetch_s))
    print("memcpy_mib_per_s=%.0f" % (mib / copy_s))
    print("new_copy_ms=%.1f" % (new_copy_s * 1e3))
    print("fetch_vs_memcpy_ratio=%.2f" % (copy_s / fetch_s))
    print("fetch_vs_new_copy_ratio=%.2f" % (new_copy_s / fetch_s))
    into_s = statistics.median(intos)
    shared_s = statistics.median(shares)
    print("fetch_into_ms=%.1f" % (into_s * 1e3))
    print("fetch_into_vs_memcpy_ratio=%.2f" % (copy_s / into_s))
    print("fetch_shared_ms=%.3f" % (shared_s * 1e3))
    print("fetch_shared_vs_memcpy_ratio=%.0f" % (copy_s / shared_s))
    print("fetch_target_ratio=0.5")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--mib", type=int, default=256)
    args = parser.parse_args()
    ops = epochrt.OpRegistry()
    ops.register("PyNop", lambda ms=0: None, inputs=0, outputs=0,
                 args={"ms": "integer"})
    ops.register("PyCopy", lambda x: x, inputs=1, outputs=1)
    session = epochrt.LocalSession(ops=ops)
    print("runs=%d" % args.runs)
    print("calls=%d" % args.calls)
    bench_ops(args, ops, session)
    bench_fetch(args, session)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
