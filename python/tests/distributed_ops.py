"""The Python ops and the job the distributed tests run, shared by the
test process and its daemons (daemon_child.py), which must register the
same ops."""

import numpy

import epochrt


def python_ops():
    ops = epochrt.OpRegistry()
    # Not a NumPy one-liner: the result depends on every element, so that
    # a daemon that ran it on other bytes could not give the same answer.
    ops.register("Mix", lambda x, factor=1.0: numpy.cumsum(x) * factor + 1.0,
                 inputs=1, outputs=1, args={"factor": "number"})
    return ops


def mix_job(nodes, epochs=3):
    """Each node fills x, then Mix rewrites it every epoch."""
    job = epochrt.Job("mix")
    for i, node in enumerate(nodes):
        job.init_group.add_task(epochrt.Task(node, [
            epochrt.Op("GivenTensorFill", outputs=["x"],
                       values=[1.0 + i, 2.0, 3.0], dtype="f64")]))
        job.epoch_group.add_task(epochrt.Task(node, [
            epochrt.Op("Mix", ["x"], ["x"], factor=0.5)]))
    epochrt.epoch_limiter(job, epochs)
    return job
