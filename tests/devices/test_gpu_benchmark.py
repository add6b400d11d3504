"""benchmarks/gpu.py runs (on CPU, at a small batch) so that it cannot rot before a GPU
run: every requested row is measured, converged and finite, in the requested dtype."""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

pytestmark = pytest.mark.xdist_group("devices")

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import gpu  # noqa: E402


def test_gpu_benchmark_runs_on_cpu_at_a_small_batch(tmp_path, capsys):
    out = tmp_path / "rows.json"
    rows = gpu.main(["--log2-batches", "4", "--scenarios", "sphere", "--repeats", "1", "--json", str(out)])
    assert [(r["scenario"], r["dtype"], r["batch"]) for r in rows] == [
        ("sphere", "float32", 16),
        ("sphere", "float64", 16),
    ]
    for row in rows:
        assert "error" not in row, row
        assert row["converged"] == 1.0 and row["nan"] == 0 and row["paths_per_s"] > 0
        assert row["length_dtype"] == row["dtype"]
    assert json.loads(out.read_text()) == rows
    printed = capsys.readouterr().out
    assert "| sphere | float32 | 2^4 |" in printed and "paths/s" in printed
