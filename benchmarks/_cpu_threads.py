"""How many threads XLA:CPU may use, chosen before the first computation.

Used by the cable benchmarks (`cable.py`, `cable_pin.py`): OpenSim/Simbody, their peer,
evaluates one path on one thread, and jaxwrap's batched cable solves run fastest on one
thread too: on the 2-core machine, XLA's thread pool cost up to 22 % of a cold pin sweep (its thunk
executor hands ready kernels to the pool, and jaxlib's batched LAPACK calls split their
matrices across it), and gains nothing back (docs/performance.md#one-xla-thread-on-cpu).
The kinematics and contact benchmarks keep XLA's pool: their few large kernels gain from it.

XLA:CPU sizes its pool from the ``PJRT_NPROC`` environment variable when its client is
created, that is at the first computation or device query, so ``use_cpu_threads`` must run
before anything touches a device.
"""

from __future__ import annotations

import argparse
import os

_ENV = "PJRT_NPROC"


def add_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cpu-threads",
        type=int,
        default=1,
        help="threads of XLA:CPU's pool (PJRT_NPROC); 0 leaves XLA's default, one per core (default: 1)",
    )


def use_cpu_threads(threads: int) -> str:
    """Set XLA:CPU's pool size for this process; returns a line saying what was chosen."""
    if threads < 0:
        raise ValueError(f"--cpu-threads must be >= 0, got {threads}")
    if threads == 0:
        os.environ.pop(_ENV, None)
        return "XLA:CPU threads: XLA's default (one per core)"
    os.environ[_ENV] = str(threads)
    return f"XLA:CPU threads: {threads} ({_ENV}={threads})"
