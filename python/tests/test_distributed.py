"""Distributed from Python: node daemons started with serve_node (in this
process, or in processes of their own running daemon_child.py) or with
`epochrt node`, and DistributedSession. Every daemon listens on 127.0.0.1
and every wait is bounded."""

import gc
import os
import pathlib
import selectors
import subprocess
import sys
import threading
import time

import numpy
import pytest

import epochrt
from conftest import SOURCE_DIR
from distributed_ops import mix_job, python_ops

HERE = pathlib.Path(__file__).resolve().parent
WAIT = 60  # seconds any one wait may take on a busy machine


def read_address(child):
    """The address of the "listening on ..." line `child` prints, waiting
    at most WAIT seconds."""
    with selectors.DefaultSelector() as sel:
        sel.register(child.stdout, selectors.EVENT_READ)
        if not sel.select(timeout=WAIT):
            child.kill()
            pytest.fail("the daemon printed nothing in %d s" % WAIT)
    line = child.stdout.readline()
    assert line.startswith("listening on "), line
    return line.split()[-1]


class Daemons:
    """Daemon processes started by a test, ended with it."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path
        self.children = []

    def python(self, name, *args):
        """A process running serve_node (daemon_child.py)."""
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(HERE), os.environ.get("PYTHONPATH", "")]))
        child = subprocess.Popen(
            [sys.executable, str(HERE / "daemon_child.py"),
             str(self.tmp_path / name), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.children.append(child)
        return read_address(child)

    def cli(self, cli, name):
        """A process running `epochrt node`."""
        child = subprocess.Popen(
            [cli, "node", "--listen", "127.0.0.1:0", "--checkpoint-root",
             str(self.tmp_path / name), "--worker-threads", "2"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        self.children.append(child)
        return read_address(child)

    def end(self):
        for child in self.children:
            if child.stdin:
                child.stdin.close()  # daemon_child.py stops
            else:
                child.terminate()  # epochrt node stops on SIGTERM
        for child in self.children:
            try:
                assert child.wait(timeout=WAIT) == 0
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(timeout=WAIT)
                raise
            finally:
                child.stdout.close()


@pytest.fixture
def daemons(tmp_path):
    procs = Daemons(tmp_path)
    try:
        yield procs
    finally:
        procs.end()


def train_locally(job, ops, nodes):
    session = epochrt.LocalSession(ops=ops)
    last = epochrt.JobRunner(job).train(session)
    return last, {node: session.fetch(node, "x") for node in nodes}


def test_a_python_op_across_two_daemons_gives_what_one_process_gives(
        daemons, tmp_path):
    ops = python_ops()
    nodes = ["a", "b"]
    job = mix_job(nodes)
    expected_last, expected = train_locally(job, ops, nodes)
    remote = {"a": daemons.python("a"), "b": daemons.python("b")}
    session = epochrt.DistributedSession(remote, ops=ops)
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path / "ckpt"))
    runner = epochrt.JobRunner(job, checkpoint_manager=manager)
    assert runner.train(session) == expected_last == 3
    for node in nodes:
        got = session.fetch(node, "x")
        assert got.dtype == numpy.float64
        numpy.testing.assert_array_equal(got, expected[node])
    # The checkpoints are the daemons': under their roots.
    assert manager.get_resume_from_epoch_id() == 3
    assert any((tmp_path / "a").rglob("*"))


def test_the_node_command_and_a_python_daemon_serve_one_session(
        daemons, cli, pipeline_path):
    job = epochrt.Job.load(pipeline_path)
    remote = {"trainer_0": daemons.cli(cli, "cli")}
    session = epochrt.DistributedSession(remote)
    assert epochrt.JobRunner(job).train(session) == 4
    assert session.fetch("trainer_0", "total").tolist() == [145]
    assert session.address_of("trainer_0") == remote["trainer_0"]


def test_a_daemon_in_this_process_serves_without_holding_the_gil(tmp_path):
    ops = python_ops()
    calls = []
    job = mix_job(["a"], epochs=2)
    with epochrt.serve_node(checkpoint_root=str(tmp_path / "a"),
                            ops=ops) as server:
        assert server.serving
        session = epochrt.DistributedSession({"a": server.address}, ops=ops)
        # train in another Python thread; this one runs Python meanwhile,
        # which it could not if serving held the GIL.
        result = {}
        worker = threading.Thread(
            target=lambda: result.update(
                last=epochrt.JobRunner(job).train(session)))
        worker.start()
        while worker.is_alive() and len(calls) < 10 ** 6:
            calls.append(1)
        worker.join(timeout=WAIT)
        assert not worker.is_alive()
        assert result["last"] == 2
        assert len(calls) > 0
        del session
    assert not server.serving


def test_a_daemon_that_lacks_an_op_refuses_the_job_before_anything_runs(
        daemons, tmp_path):
    ops = python_ops()
    remote = {"a": daemons.python("a"),
              "b": daemons.python("b", "--builtins-only")}
    session = epochrt.DistributedSession(remote, ops=ops)
    with pytest.raises(epochrt.BadInput) as caught:
        epochrt.JobRunner(mix_job(["a", "b"])).train(session)
    assert caught.value.code == "unknown_op"
    assert "node b has no op 'Mix' where it runs" in str(caught.value)
    # Not even the init group ran: node a never got its x.
    with pytest.raises(epochrt.BadInput, match="has no blob 'x'"):
        session.fetch("a", "x")


def test_stop_closes_the_port_and_is_idempotent(tmp_path):
    server = epochrt.serve_node(checkpoint_root=str(tmp_path / "a"))
    address = server.address
    server.stop()
    server.stop()
    assert not server.serving
    with pytest.raises(epochrt.NodeLost) as caught:
        epochrt.DistributedSession({"a": address}, handshake_timeout=5.0)
    assert caught.value.code == "unreachable"


def write_secret(path, text):
    path.write_text(text)
    path.chmod(0o600)
    return str(path)


def test_a_session_without_the_daemons_secret_is_refused_when_made(
        daemons, tmp_path):
    secret = write_secret(tmp_path / "secret", "s" * 32)
    other = write_secret(tmp_path / "other", "o" * 32)
    address = daemons.python("a", "--secret-file", secret)
    with pytest.raises(epochrt.Error) as caught:
        epochrt.DistributedSession({"a": address}, secret_file=other)
    assert caught.value.code == "auth_failed"
    session = epochrt.DistributedSession({"a": address}, secret_file=secret)
    session.put("a", "y", numpy.arange(3))
    assert session.fetch("a", "y").tolist() == [0, 1, 2]


def test_a_second_daemon_on_a_locked_root_is_bad_input(tmp_path):
    with epochrt.serve_node(checkpoint_root=str(tmp_path / "a")):
        with pytest.raises(epochrt.BadInput) as caught:
            epochrt.serve_node(checkpoint_root=str(tmp_path / "a"))
        assert caught.value.code == "locked"


def test_a_daemon_on_an_open_address_needs_a_secret_or_tls(tmp_path):
    with pytest.raises(epochrt.BadInput):
        epochrt.serve_node("0.0.0.0:0", checkpoint_root=str(tmp_path / "a"))


@pytest.mark.parametrize("given", [
    {"tls_certificate": "c.pem"},
    {"tls_certificate": "c.pem", "tls_key": "k.pem"},
])
def test_tls_needs_its_three_files(tmp_path, given):
    with pytest.raises(epochrt.BadInput, match="tls_ca"):
        epochrt.serve_node(checkpoint_root=str(tmp_path / "a"), **given)
    with pytest.raises(epochrt.BadInput, match="tls_ca"):
        epochrt.DistributedSession({"a": "127.0.0.1:1"}, **given)


def test_tls_files_that_do_not_exist_are_bad_input(tmp_path):
    files = {key: str(tmp_path / key)
             for key in ("tls_certificate", "tls_key", "tls_ca")}
    with pytest.raises(epochrt.BadInput):
        epochrt.serve_node(checkpoint_root=str(tmp_path / "a"), **files)


def test_a_bad_node_address_is_bad_input():
    with pytest.raises(epochrt.BadInput, match="node 'a'"):
        epochrt.DistributedSession({"a": "127.0.0.1"})


def test_a_manager_made_before_the_session_shares_its_runtime(tmp_path):
    ops = python_ops()
    manager = epochrt.MultiNodeCheckpointManager(str(tmp_path / "ckpt"))
    with epochrt.serve_node(checkpoint_root=str(tmp_path / "a"),
                            ops=ops) as server:
        session = epochrt.DistributedSession({"a": server.address}, ops=ops)
        runner = epochrt.JobRunner(mix_job(["a"], epochs=2),
                                   checkpoint_manager=manager)
        assert runner.train(session) == 2
        assert manager.get_resume_from_epoch_id() == 2
        del session


def test_other_network_options_than_the_live_runtimes_are_bad_input(
        tmp_path):
    # Earlier tests' sessions may still be held by reference cycles (a
    # caught exception's traceback), keeping their runtime alive.
    gc.collect()
    with epochrt.serve_node(checkpoint_root=str(tmp_path / "a")) as server:
        local = epochrt.LocalSession()  # the runtime, default options
        with pytest.raises(epochrt.BadInput, match="other network options"):
            epochrt.DistributedSession({"a": server.address},
                                       connection_timeout=7.0)
        del local
        # Once no object holds it, a runtime with these options is made.
        session = epochrt.DistributedSession({"a": server.address},
                                             connection_timeout=7.0)
        session.put("a", "y", numpy.ones(2))
        assert session.fetch("a", "y").tolist() == [1.0, 1.0]
        del session


@pytest.mark.parametrize("seconds", [0.1, 7200.0])
def test_a_connection_timeout_the_command_refuses_is_bad_input(
        tmp_path, seconds):
    with pytest.raises(epochrt.BadInput, match="connection_timeout"):
        epochrt.serve_node(checkpoint_root=str(tmp_path / "a"),
                           connection_timeout=seconds)


def test_fetch_from_a_daemon_fills_out_or_gives_a_read_only_array(tmp_path):
    with epochrt.serve_node(checkpoint_root=str(tmp_path / "a")) as server:
        session = epochrt.DistributedSession({"a": server.address})
        session.put("a", "w", numpy.arange(4.0))
        out = numpy.zeros(4)
        assert session.fetch("a", "w", out=out) is out
        numpy.testing.assert_array_equal(out, [0.0, 1.0, 2.0, 3.0])
        shared = session.fetch("a", "w", copy=False)
        numpy.testing.assert_array_equal(shared, [0.0, 1.0, 2.0, 3.0])
        assert not shared.flags.writeable
        copied = session.fetch("a", "w")
        assert copied.flags.writeable
        with pytest.raises(ValueError, match="shape"):
            session.fetch("a", "w", out=numpy.zeros(3))
        del session


def test_a_lost_daemon_is_named_first_and_as_the_errors_node(
        daemons, cli, tmp_path):
    remote = {"trainer_0": daemons.cli(cli, "d0"),
              "trainer_1": daemons.cli(cli, "d1")}
    job = epochrt.Job("lost")
    for node in remote:
        job.init_group.add_task(epochrt.Task(node, [
            epochrt.Op("ConstantFill", outputs=["x"], shape=[4], value=1.0)]))
        job.epoch_group.add_task(epochrt.Task(node, [
            epochrt.Op("Sleep", ms=100),
            epochrt.Op("Allreduce", ["x"], ["y"], collective="g")]))
    epochrt.epoch_limiter(job, 1000)
    session = epochrt.DistributedSession(remote)
    victim = daemons.children[1]
    timer = threading.Timer(1.5, victim.kill)
    timer.start()
    with pytest.raises(epochrt.NodeLost) as caught:
        epochrt.JobRunner(job).train(session)
    timer.join()
    assert caught.value.node == "trainer_1"
    assert str(caught.value).startswith("node_lost: node trainer_1 ")
    # The daemon is gone: the fixture must not wait for its clean exit.
    daemons.children.remove(victim)
    victim.wait(timeout=WAIT)
    victim.stdout.close()
