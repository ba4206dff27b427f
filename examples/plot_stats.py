#!/usr/bin/env python3
"""Plots an `epochrt run --stats-json FILE` file: epoch time and checkpoint
time per epoch, as a PNG, and below them each metric the lines carry
(`--metric`, Python's `train(..., metrics=[...])`: a loss), one curve per
task.

    python3 examples/plot_stats.py stats.jsonl stats.png

The checkpoint time of an epoch is its slowest node's save (snapshot, write,
fsync) plus the commit; a save that failed is left out. Needs matplotlib
(Debian: python3-matplotlib, installed by tools/install-deps.sh; when
another python3 without it comes first on PATH, the script runs itself
again under Debian's /usr/bin/python3); draws without a display (Agg).
"""

import json
import os
import sys


def read_epochs(path):
    """The `epoch` lines of a stats file, by epoch (the last line of an
    epoch wins: a job that recovered runs some epochs twice)."""
    epochs = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{number}: not JSON: {e}")
            if record.get("type") == "epoch":
                epochs[record["epoch"]] = record
    return [epochs[e] for e in sorted(epochs)]


def checkpoint_ms(record):
    if not record.get("committed") or not record.get("nodes"):
        return None
    slowest = max(node["save_us"] for node in record["nodes"])
    return (slowest + (record.get("commit_us") or 0)) / 1000.0


def metric_curves(records):
    """{blob: {task: [(epoch, value), ...]}} of the lines' metrics; a null
    value (NaN, infinity) is left out."""
    curves = {}
    for r in records:
        for blob, by_task in (r.get("metrics") or {}).items():
            for task, value in by_task.items():
                if value is not None:
                    curves.setdefault(blob, {}).setdefault(task, []).append(
                        (r["epoch"], value))
    return curves


def main(argv):
    if len(argv) != 3:
        print("usage: plot_stats.py STATS.jsonl OUT.png", file=sys.stderr)
        return 2
    records = read_epochs(argv[1])
    if not records:
        print(f"{argv[1]}: no epoch lines", file=sys.stderr)
        return 1

    try:
        import matplotlib
    except ImportError:
        # Another python3 first on PATH (pyenv, a venv) lacks Debian's
        # python3-matplotlib: run this under Debian's python3 instead.
        debian = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(debian) \
                and os.access(debian, os.X_OK):
            os.execv(debian, [debian] + argv)
        print("plot_stats.py needs matplotlib (Debian: apt-get install "
              "python3-matplotlib)", file=sys.stderr)
        return 1

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    epochs = [r["epoch"] for r in records]
    epoch_ms = [(r.get("epoch_us") or 0) / 1000.0 for r in records]
    ckpt = [(r["epoch"], checkpoint_ms(r)) for r in records]
    ckpt = [(e, ms) for e, ms in ckpt if ms is not None]

    metrics = metric_curves(records)
    fig, axes = plt.subplots(1 + len(metrics), 1, sharex=True, squeeze=False,
                             figsize=(8, 4.5 + 2.5 * len(metrics)))
    ax = axes[0][0]
    ax.plot(epochs, epoch_ms, marker="o", label="epoch time")
    if ckpt:
        ax.plot([e for e, _ in ckpt], [ms for _, ms in ckpt], marker="s",
                label="checkpoint time (slowest node's save + commit)")
    ax.set_ylabel("milliseconds")
    ax.set_title(f"epochrt: {argv[1]}")
    ax.grid(True, alpha=0.3)
    ax.legend()
    for row, (blob, curves) in enumerate(sorted(metrics.items()), 1):
        ax = axes[row][0]
        for task, points in sorted(curves.items()):
            ax.plot([e for e, _ in points], [v for _, v in points],
                    marker=".", label=task)
        ax.set_ylabel(blob)
        ax.grid(True, alpha=0.3)
        if len(curves) <= 8:
            ax.legend(fontsize="small")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("epoch")
    fig.tight_layout()
    fig.savefig(argv[2], format="png")
    print(f"wrote {argv[2]}: {len(records)} epochs"
          + "".join(f", {blob}" for blob in sorted(metrics)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
