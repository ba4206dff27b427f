"""A node daemon for the tests: `serve_node` in a process of its own,
serving the builtin ops plus the Python ops of distributed_ops.py.

    python3 daemon_child.py ROOT [--secret-file FILE] [--builtins-only]

Prints "listening on HOST:PORT" once it serves, then serves until its
stdin closes (the test ends or dies), and stops."""

import argparse
import sys

import epochrt

from distributed_ops import python_ops


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--secret-file")
    parser.add_argument("--builtins-only", action="store_true")
    args = parser.parse_args()
    ops = None if args.builtins_only else python_ops()
    with epochrt.serve_node("127.0.0.1:0", checkpoint_root=args.root,
                            ops=ops, secret_file=args.secret_file,
                            worker_threads=2) as server:
        print("listening on", server.address, flush=True)
        sys.stdin.read()  # waits without the GIL: the daemon serves on
    return 0


if __name__ == "__main__":
    sys.exit(main())
