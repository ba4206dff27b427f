"""Trains a linear model with epochrt from Python: a gradient step written
in NumPy as an op, run epoch by epoch with a checkpoint after each.

    linear.py train CKPT_DIR [--epochs N] [--pace SECONDS]
    linear.py show CKPT_DIR [--epoch E]

`train` resumes from the last committed epoch of CKPT_DIR when it has one.
Ctrl-C (SIGINT) or SIGTERM stops it after the running epoch, which is
saved; the next `train` goes on from there and ends with the model of an
uninterrupted run. `show` reads the model from a checkpoint (the last
committed one, or epoch E) without running the job. See README.md.
"""

import argparse
import signal
import sys
import threading
import time

import numpy as np

import epochrt

NODE = "trainer"
TRUE_W = np.array([2.0, -3.0, 0.5])
TRUE_B = 1.0


def make_data():
    """256 rows of y = x @ TRUE_W + TRUE_B + noise, the same every run."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 3))
    y = x @ TRUE_W + TRUE_B + 0.05 * rng.normal(size=256)
    return x, y


def ops_for(pace):
    """The builtin ops plus MakeData and SgdStep, written in Python."""
    ops = epochrt.OpRegistry()
    ops.register("MakeData", make_data, inputs=0, outputs=2,
                 doc="The training set: x [256, 3] and y [256].")

    def sgd_step(w, b, x, y, epoch, lr=0.1):
        # The inputs are read-only views of the blobs: compute new arrays.
        err = x @ w + b - y
        loss = float(np.mean(err * err))
        print("epoch %d: loss %.6f" % (epoch + 1, loss), flush=True)
        time.sleep(pace)  # a slower model, to have time to interrupt it
        return (w - lr * x.T @ err / len(y), b - lr * err.mean(),
                epoch + 1)

    ops.register("SgdStep", sgd_step, inputs=5, outputs=3,
                 args={"lr": "number"},
                 doc="One full-batch gradient step of the squared error.")
    return ops


def build_job(epochs):
    job = epochrt.Job("linear")
    job.init_group.add_task(epochrt.Task(NODE, [
        epochrt.Op("MakeData", outputs=["x", "y"]),
        epochrt.Op("ConstantFill", outputs=["w"], shape=[3], dtype="f64"),
        epochrt.Op("ConstantFill", outputs=["b"], dtype="f64"),
        epochrt.Op("ConstantFill", outputs=["epoch"], dtype="i64")]))
    job.epoch_group.add_task(epochrt.Task(NODE, [
        epochrt.Op("SgdStep", ["w", "b", "x", "y", "epoch"],
                   ["w", "b", "epoch"], lr=0.1)]))
    epochrt.epoch_limiter(job, epochs)
    return job


def train(args):
    ops = ops_for(args.pace)
    session = epochrt.LocalSession(ops=ops)
    manager = epochrt.MultiNodeCheckpointManager(args.ckpt_dir)
    resume = manager.get_resume_from_epoch_id()
    if resume is not None:
        print("resuming from epoch %d" % resume, flush=True)
    runner = epochrt.JobRunner(build_job(args.epochs),
                               checkpoint_manager=manager)

    # train blocks in epochrt without the GIL; Python runs signal handlers
    # in the main thread only, so the job trains in another thread and the
    # main one waits, ready to ask it to stop.
    def stop(signum, frame):
        print("stopping after this epoch", flush=True)
        runner.request_stop()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    outcome = {}

    def run():
        try:
            outcome["epochs"] = runner.train(session)
        except epochrt.Error as e:
            outcome["error"] = e

    trainer = threading.Thread(target=run)
    trainer.start()
    while trainer.is_alive():
        trainer.join(0.1)
    if isinstance(outcome.get("error"), epochrt.Stopped):
        print("stopped at epoch %d; run again to resume"
              % manager.get_resume_from_epoch_id())
        return 3
    if "error" in outcome:
        print("failed: %s" % outcome["error"], file=sys.stderr)
        return 1
    print("trained %d epochs: w=%s b=%.4f" % (
        outcome["epochs"], np.array2string(session.fetch(NODE, "w"),
                                            precision=4),
        session.fetch(NODE, "b")))
    return 0


def show(args):
    manager = epochrt.MultiNodeCheckpointManager(args.ckpt_dir)
    epoch = manager.get_resume_from_epoch_id(args.epoch)
    if epoch is None:
        print("no checkpoint in %s" % args.ckpt_dir, file=sys.stderr)
        return 1
    session = epochrt.LocalSession(ops=ops_for(0))
    runner = epochrt.JobRunner(build_job(1), checkpoint_manager=manager)
    runner.load_blobs_from_checkpoints(["w", "b"], epoch, session)
    print("epoch %d: w=%s b=%.4f" % (
        epoch, np.array2string(session.fetch(NODE, "w"), precision=4),
        session.fetch(NODE, "b")))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("train")
    p.add_argument("ckpt_dir")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--pace", type=float, default=0.0,
                   help="seconds each epoch sleeps")
    p = sub.add_parser("show")
    p.add_argument("ckpt_dir")
    p.add_argument("--epoch", type=int)
    args = parser.parse_args()
    return train(args) if args.command == "train" else show(args)


if __name__ == "__main__":
    sys.exit(main())
