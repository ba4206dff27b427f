#!/usr/bin/env python3
"""A data-parallel job over N node daemons, as N grows (issue 41).

    python3 bench/scale_bench.py --epochrt build/bin/epochrt
    make bench-scale           # the same, after building

The job: every node all-reduces (mean) a 4,096-float gradient and applies
it with SGDUpdate; --epochs epochs, --checkpoint-dir, --max-failures 0.
For each N of --nodes it starts N fresh `epochrt node` daemons on
127.0.0.1, one process each with --worker-threads 1, runs the job on them
(without copies, then with --replicas 1) and, as the baseline, the same
job with its N nodes in one process. Prints one line per N and mode, each
figure the median of --runs runs:

- epoch_ms, commit_ms: per epoch, from --stats-json, the first --warmup
  epochs (1) left out: the daemons open their connections to each other
  in them, at most 4 at a time each, so that over 64 daemons and more
  data goes through the master for a few epochs; --epochs 20 --warmup 8
  gives the steady state;
- master_cpu_ms: the master's (`epochrt run`) user+system CPU per epoch;
- master_segs, master_kib: TCP data segments and KiB the master sends per
  epoch over all its connections (from `ss`; with TCP_NODELAY, one small
  message is one segment, and a burst may share one);
- daemon_rss_mib: the median daemon's resident memory at the end;
  daemon_links: the median daemon's TCP connections to other daemons at
  the end (the master's gone with its run);
- vs_inprocess: epoch_ms over the in-process epoch of the same N nodes;
- recovery_ms (mode recovery): N daemons and one spare, --max-failures 1;
  once epoch 3 is committed, one daemon is killed (SIGKILL) and its node
  moves to the spare: the time from the loss to the job going on (the
  `recovered` line of --stats-json: cancels, the move to the spare,
  every node's load of the last committed epoch), with
  --reconnect-timeout-ms 0 (by default the lost daemon's address is
  retried for 30 s first), and epoch_ms of the run around it.

Then, per figure, its growth exponent across N: the slope of log(figure)
over log(N), 1.0 for linear growth. The master figures are sampled when an
epoch's stats line appears, so one epoch's figure is blurred by the
sampling delay; their sum over the epochs is not.

Figures from a loaded machine are indicative only.
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def job_json(n, epochs):
    init, epoch = [], []
    for i in range(n):
        node = f"n{i:03d}"
        init.append({"name": f"init_{node}", "node": node, "ops": [
            {"type": "ConstantFill", "outputs": ["w"],
             "args": {"shape": [4096], "value": 0.0}},
            {"type": "ConstantFill", "outputs": ["g"],
             "args": {"shape": [4096], "value": float(i + 1)}}]})
        epoch.append({"name": f"train_{node}", "node": node, "ops": [
            {"type": "Allreduce", "inputs": ["g"], "outputs": ["gsum"],
             "args": {"collective": "grad", "op": "mean"}},
            {"type": "SGDUpdate", "inputs": ["w", "gsum"], "outputs": ["w"],
             "args": {"lr": 0.01}}]})
    return {"name": f"scale{n}", "init": init, "epoch": epoch,
            "epoch_limit": epochs}


def cpu_seconds(pid):
    """User + system CPU of process `pid` so far, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


SOCKET_OWNER = re.compile(r"pid=(\d+),")


def tcp_connections(pids):
    """The open TCP connections of the processes `pids`: (pid, local
    address, remote address) -> [data segments sent, bytes sent]."""
    out = subprocess.run(["ss", "-tinpH", "state", "established"],
                         capture_output=True, text=True).stdout
    found = {}
    key = None
    for line in out.splitlines():
        if not line.startswith((" ", "\t")):
            m = SOCKET_OWNER.search(line)
            fields = line.split()
            key = None
            if m and int(m.group(1)) in pids and len(fields) >= 4:
                key = (int(m.group(1)), fields[2], fields[3])
                found[key] = [0, 0]
            continue
        if key is None:
            continue
        segs = re.search(r"\bdata_segs_out:(\d+)", line)
        sent = re.search(r"\bbytes_sent:(\d+)", line)
        found[key][0] = int(segs.group(1)) if segs else 0
        found[key][1] = int(sent.group(1)) if sent else 0
    return found


class SentCounter:
    """What a process has sent over TCP so far, connections closed since
    counted at their last sighting."""

    def __init__(self, pid):
        self.pid = pid
        self.seen = {}

    def totals(self):
        self.seen.update(tcp_connections({self.pid}))
        return (sum(x[0] for x in self.seen.values()),
                sum(x[1] for x in self.seen.values()))


def all_lines(path):
    try:
        with open(path) as f:
            return [json.loads(x) for x in f if x.strip()]
    except (OSError, ValueError):
        return []


def epoch_lines(path):
    return [x for x in all_lines(path) if x.get("type") == "epoch"]


class Daemons:
    """N `epochrt node` processes on 127.0.0.1, killed on exit."""

    def __init__(self, epochrt, n, root):
        self.procs = []
        self.addresses = []
        for i in range(n):
            d = os.path.join(root, f"d{i}")
            os.makedirs(d)
            self.procs.append(subprocess.Popen(
                [epochrt, "node", "--listen", "127.0.0.1:0",
                 "--worker-threads", "1", "--checkpoint-root", d],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                text=True))
        try:
            for p in self.procs:
                line = p.stdout.readline()
                if not line.startswith("listening on "):
                    raise RuntimeError(f"a daemon did not start: {line!r}")
                self.addresses.append(line.split()[2])
        except BaseException:
            self.__exit__()
            raise

    def pids(self):
        return [p.pid for p in self.procs]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def sample_master(master, stats, samples, remote, timeout, n, kill=None):
    """Until `master` exits: its CPU and TCP sends when an epoch's stats
    line appears (for a run over daemons), into `samples` by epoch. With
    `kill` (epoch, process): kills that process once that epoch is in."""
    sent_by_master = SentCounter(master.pid)
    deadline = time.monotonic() + timeout
    while master.poll() is None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{n} nodes: the run took over {timeout} s")
        done = [x["epoch"] for x in epoch_lines(stats)]
        if kill and done and done[-1] >= kill[0] and kill[1].poll() is None:
            kill[1].kill()
        if done and done[-1] not in samples and remote:
            cpu = cpu_seconds(master.pid)
            sent = sent_by_master.totals()
            if cpu is not None:
                samples[done[-1]] = (cpu, sent[0], sent[1])
        time.sleep(0.005)


def run_job(epochrt, n, epochs, root, addresses, replicas, timeout,
            spare=None, kill=None, warmup=1):
    """One run: its per-epoch figures, or raises with the master's error.
    With `spare` and `kill` (see sample_master), the run survives one lost
    node and its recovery_ms is among the figures."""
    job = os.path.join(root, "job.json")
    with open(job, "w") as f:
        json.dump(job_json(n, epochs), f)
    stats = os.path.join(root, "stats.json")
    ckpt = os.path.join(root, "ckpt")
    argv = [epochrt, "run", job, "--checkpoint-dir", ckpt, "--stats-json",
            stats, "--max-failures", "1" if spare else "0"]
    if spare:
        # The spare at once: by default a lost daemon's address is retried
        # for 30 s first (a restarted daemon comes back there), which would
        # be all this figure measured.
        argv += ["--spare", spare, "--reconnect-timeout-ms", "0"]
    for i, a in enumerate(addresses):
        argv += ["--node", f"n{i:03d}={a}"]
    if replicas:
        argv += ["--replicas", str(replicas)]
    samples = {}  # epoch -> (cpu s, segments, bytes)
    with open(os.path.join(root, "run.err"), "w+") as err:
        master = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        try:
            sample_master(master, stats, samples, bool(addresses), timeout, n,
                          kill)
        finally:
            if master.poll() is None:
                master.kill()
                master.wait()
        if master.returncode != 0:
            err.seek(0)
            raise RuntimeError(
                f"{n} nodes: the run failed: {err.read()[-2000:]}")
    recovered = [x for x in all_lines(stats) if x.get("type") == "recovered"]
    # Epochs a recovery cut short have lines without figures.
    lines = [x for x in epoch_lines(stats)[warmup:]
             if x.get("epoch_us") is not None
             and x.get("commit_us") is not None]
    figures = {
        "epoch_ms": statistics.median(x["epoch_us"] for x in lines) / 1e3,
        "commit_ms": statistics.median(x["commit_us"] for x in lines) / 1e3,
    }
    if kill:
        if not recovered:
            raise RuntimeError(f"{n} nodes: no recovery after the kill")
        figures["recovery_ms"] = recovered[0]["recovery_us"] / 1e3
        return figures  # the master's figures straddle the recovery
    # From the end of the warm-up to the end of the epoch before last: the
    # last epoch's line comes as the master closes its connections.
    kept = sorted(samples)[:-1]
    kept = [e for e in kept if kept and e >= kept[0] + warmup - 1]
    if len(kept) >= 2:
        first, last = kept[0], kept[-1]
        a, b = samples[first], samples[last]
        k = last - first
        figures["master_cpu_ms"] = (b[0] - a[0]) / k * 1e3
        figures["master_segs"] = (b[1] - a[1]) / k
        figures["master_kib"] = (b[2] - a[2]) / k / 1024
    return figures


def daemon_figures(daemons):
    pids = daemons.pids()
    conns = {p: 0 for p in pids}
    for pid, _, _ in tcp_connections(set(pids)):
        conns[pid] += 1
    return {
        "daemon_rss_mib": statistics.median(rss_mib(p) for p in pids),
        "daemon_links": statistics.median(conns.values()),
    }


def growth(ns, values):
    """The least-squares slope of log(value) over log(n)."""
    pts = [(math.log(n), math.log(v)) for n, v in zip(ns, values) if v > 0]
    if len(pts) < 2:
        return float("nan")
    mx = statistics.mean(x for x, _ in pts)
    my = statistics.mean(y for _, y in pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else 0.0


def median_of(runs):
    keys = set().union(*runs)
    return {k: statistics.median(r[k] for r in runs if k in r)
            for k in keys}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_bin = os.path.join(here, "..", "build", "bin", "epochrt")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochrt", default=default_bin)
    ap.add_argument("--nodes", default="4,16,64,128")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--warmup", type=int, default=1,
                    help="epochs left out at the start (links open in them)")
    args = ap.parse_args()
    if shutil.which("ss") is None:
        sys.exit("scale_bench: needs `ss` (Debian's iproute2)")
    ns = [int(x) for x in args.nodes.split(",")]
    table = {}
    for n in ns:
        for mode, replicas in (("daemons", 0), ("replicas1", 1)):
            runs, daemon_runs = [], []
            for _ in range(args.runs):
                with tempfile.TemporaryDirectory(prefix="scale_bench") as root:
                    with Daemons(args.epochrt, n, root) as daemons:
                        runs.append(run_job(args.epochrt, n, args.epochs,
                                            root, daemons.addresses,
                                            replicas, args.timeout,
                                            warmup=args.warmup))
                        daemon_runs.append(daemon_figures(daemons))
            table[(n, mode)] = {**median_of(runs), **median_of(daemon_runs)}
        runs = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="scale_bench") as root:
                with Daemons(args.epochrt, n + 1, root) as daemons:
                    runs.append(run_job(
                        args.epochrt, n, args.epochs, root,
                        daemons.addresses[:n], 0, args.timeout,
                        spare=daemons.addresses[n],
                        kill=(3, daemons.procs[n // 2])))
        table[(n, "recovery")] = median_of(runs)
        inproc = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="scale_bench") as root:
                inproc.append(run_job(args.epochrt, n, args.epochs, root, [],
                                      0, args.timeout))
        base = median_of(inproc)
        table[(n, "inprocess")] = base
        for mode in ("daemons", "replicas1"):
            row = table[(n, mode)]
            row["vs_inprocess"] = row["epoch_ms"] / base["epoch_ms"]
        for mode in ("inprocess", "daemons", "replicas1", "recovery"):
            row = table[(n, mode)]
            print(f"nodes={n} mode={mode} "
                  + " ".join(f"{k}={row[k]:.3g}" for k in sorted(row)),
                  flush=True)
    for mode in ("inprocess", "daemons", "replicas1", "recovery"):
        keys = sorted(table[(ns[0], mode)])
        print(f"growth mode={mode} "
              + " ".join(f"{k}={growth(ns, [table[(n, mode)].get(k, 0) for n in ns]):.2f}"
                         for k in keys if k != "vs_inprocess"))


if __name__ == "__main__":
    main()
