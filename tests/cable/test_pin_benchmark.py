"""benchmarks/cable_pin.py runs at a tiny size, so that the script behind the README's
pin-joint figures cannot rot: one sphere sweep, both timing modes, and (when OpenSim is
installed) its lengths equal OpenSim's wherever both converged."""

from __future__ import annotations

import math
import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import cable_pin  # noqa: E402


def test_pin_benchmark_runs_at_a_tiny_size():
    printed = []
    rows = cable_pin.run(
        ["sphere"],
        batch=8,
        trajectories=2,
        steps=2,
        step=0.01,
        repeats=1,
        opensim_evals=4,
        opensim_trajectories=1,
        max_sweeps=1,
        modes=("simbody",),
        report=printed.append,
    )
    assert printed == rows and len(rows) == 1
    (row,) = rows
    assert row["kind"] == "sphere" and row["mode"] == "simbody" and row["sweeps"] == 1
    assert row["cold"] > 0 and row["warm"] > 0 and row["step"] >= 0
    assert 0.5 <= row["conv_cold"] <= 1 and 0.5 <= row["conv_warm"] <= 1
    assert all(math.isfinite(x) for x in (*row["iters"], *row["compile"]))
    if row["agree"] is not None:  # OpenSim installed: every angle both converged agrees
        same, both = row["agree"]
        assert both > 0 and same == both
        assert row["os_cold"] > 0 and row["os_warm"] > 0 and row["os_step"] > 0


def test_default_mode_is_jaxwraps_defaults_and_simbody_mode_is_opensims():
    # The sweeps' cables start from OpenSim's settings, so "default" must name jaxwrap's
    # defaults explicitly (it once ran the Simbody mode twice under another name).
    import jaxwrap as jw  # noqa: PLC0415

    sweep = next(s for s in cable_pin.sweeps_mod.load(cable_pin.sweeps_mod.FIXTURE) if s["kind"] == "ellipsoid")
    defaults = jw.CableSettings()
    default = cable_pin.sweeps_mod.cable_from(sweep, **cable_pin.MODES["default"]).settings
    simbody = cable_pin.sweeps_mod.cable_from(sweep, **cable_pin.MODES["simbody"]).settings
    assert (default.algorithm, default.cold_start) == (defaults.algorithm, defaults.cold_start)
    assert default.gauss_newton_below == defaults.gauss_newton_below
    assert (simbody.algorithm, simbody.cold_start) == ("scholz2015", "hints")


def test_cpu_threads_option_sets_xlas_pool_size(monkeypatch):
    # The per-path benchmarks run XLA:CPU on one thread, like their single-threaded peers;
    # `--cpu-threads 0` gives XLA's default pool back (docs/performance.md#one-xla-thread-on-cpu).
    import argparse  # noqa: PLC0415

    import _cpu_threads  # noqa: PLC0415

    parser = argparse.ArgumentParser()
    _cpu_threads.add_argument(parser)
    assert parser.parse_args([]).cpu_threads == 1
    monkeypatch.delenv("PJRT_NPROC", raising=False)
    assert "PJRT_NPROC=1" in _cpu_threads.use_cpu_threads(1)
    assert os.environ["PJRT_NPROC"] == "1"
    assert "default" in _cpu_threads.use_cpu_threads(0)
    assert "PJRT_NPROC" not in os.environ
    with pytest.raises(ValueError, match="--cpu-threads"):
        _cpu_threads.use_cpu_threads(-1)
