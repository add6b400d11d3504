"""`jw.sharded_vmap` over 4 host CPU devices (docs/performance.md#many-devices).

jax fixes its device count when it starts, so the check runs in a subprocess with
``--xla_force_host_platform_device_count=4`` (tests/devices/sharded_run.py) and its JSON
report is asserted here: sharded results equal the single-device ``vmap`` to 1e-12 (a
solve, an uneven batch, a reverse-mode gradient, a MuJoCo model's lengths and moment
arms), outputs stay split over the 4 devices, and the compiled programs hold no
all-gather or all-to-all (the batch axis is never gathered onto one device)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

import jaxwrap as jw

pytestmark = pytest.mark.xdist_group("devices")

HERE = pathlib.Path(__file__).parent


@pytest.fixture(scope="module")
def report():
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()
    env["JAX_PLATFORMS"] = "cpu"
    run = subprocess.run(
        [sys.executable, str(HERE / "sharded_run.py")], env=env, capture_output=True, text=True, timeout=1200
    )
    lines = [line for line in run.stdout.splitlines() if line.startswith("REPORT ")]
    assert run.returncode == 0 and lines, run.stderr[-4000:]
    return json.loads(lines[-1][len("REPORT ") :])


def test_sharded_results_equal_single_device(report):
    assert report["devices"] == 4
    for key in ("solve", "uneven", "cable_set"):
        assert report[key]["diff"] <= 1e-12, (key, report[key])
    assert report["solve"]["converged"] == 8
    assert report["uneven"]["rows"] == 7
    assert report["grad"]["diff"] <= 1e-12 * max(1.0, report["grad"]["scale"])
    assert report["cable_set"]["mujoco_length"] <= 1e-9


def test_batch_axis_stays_split_and_is_never_gathered(report):
    for key, rows in (("solve", 2), ("cable_set", 3)):
        assert report[key]["spec"] == report["batch_spec"], report[key]
        assert report[key]["devices"] == 4 and report[key]["shard_rows"] == [rows], report[key]
    for key in ("solve_collectives", "cable_set_collectives"):
        assert report[key]["all-gather"] == 0 and report[key]["all-to-all"] == 0, report[key]


def test_host_devices_of_one_process_warn(report):
    # Host devices share one XLA thread pool: slower than one device on a CPU, and XLA:CPU
    # can deadlock on them (docs/performance.md#host-devices-on-one-cpu-slower-and-they-can-hang).
    (message,) = report["host_device_warnings"]
    assert "4 CPU devices of this process" in message and "one process per core" in message


def test_one_device_does_not_warn():
    import warnings  # noqa: PLC0415

    import jax.numpy as jnp  # noqa: PLC0415

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = jw.sharded_vmap(lambda x: 2 * x)(jnp.arange(3.0))
    assert list(out) == [0.0, 2.0, 4.0]


def test_bad_arguments_raise_naming_the_problem():
    import jax.numpy as jnp

    mesh = jw.batch_mesh()
    with pytest.raises(ValueError, match="in_axes\\[0\\] = 1"):
        jw.sharded_vmap(lambda x: x, mesh, in_axes=1)(jnp.zeros((2, 3)))
    with pytest.raises(ValueError, match="leading batch size"):
        jw.sharded_vmap(lambda x, y: x + y, mesh)(jnp.zeros(2), jnp.zeros(3))
    with pytest.raises(ValueError, match="no argument is batched"):
        jw.sharded_vmap(lambda x: x, mesh, in_axes=None)(jnp.zeros(2))
    with pytest.raises(ValueError, match="not an axis"):
        jw.sharded_vmap(lambda x: x, mesh, axis_name="time")(jnp.zeros(2))
    with pytest.raises(ValueError, match="2 entries for 1 arguments"):
        jw.sharded_vmap(lambda x: x, mesh, in_axes=(0, None))(jnp.zeros(2))
