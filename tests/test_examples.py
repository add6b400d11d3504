"""The README's examples run and print what the README quotes."""

from __future__ import annotations

import pathlib
import runpy

import pytest

EXAMPLES = pathlib.Path(__file__).parents[1] / "examples"


def test_tour(capsys):
    runpy.run_path(str(EXAMPLES / "tour.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "length 0.252331 m, in contact [True, True], converged True" in out
    assert "moment arm -22.000 mm" in out
    assert "moment arms [mm]: -23.53 -22.00 -22.00 -22.00 -22.00 -22.00 -22.00" in out
    assert "dL/d(radius) = 1.0034" in out


def test_placement(capsys):
    runpy.run_path(str(EXAMPLES / "placement.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "placed 1000/1000 boxes" in out
    assert "0.800000 .. 0.800000 m" in out


@pytest.mark.parametrize("which", ["cable", "arm"])
def test_cli_demo(which, tmp_path, capsys):
    from jaxwrap.cli import main

    assert main(["demo", which, "--num", "4", "--plot", str(tmp_path / "demo.png")]) == 0
    out = capsys.readouterr().out
    assert "compile + run" in out
    if which == "cable":
        assert "NO" not in out.split("angle [deg]")[1]
        assert (tmp_path / "demo.png").exists()


def test_cli_cable_demo_in_float32_converges_over_the_whole_range(capsys):
    """The elbow (a 2-3 cm ellipsoid and cylinder) at all 13 angles up to 1.8 rad in
    float32 (docs/performance.md#float32), equal to float64 to float32 accuracy."""
    from jaxwrap.cli import main

    tables = {}
    for precision in ("float32", "float64"):
        assert main(["--precision", precision, "demo", "cable", "--plot", ""]) == 0
        rows = capsys.readouterr().out.split("angle [deg]")[1].split("compile + run")[0].strip().splitlines()[1:]
        tables[precision] = [row.split() for row in rows if row.strip()]
    assert len(tables["float32"]) == 13 and all(row[-1] == "yes" for row in tables["float32"])
    lengths = {p: [float(row[1]) for row in t] for p, t in tables.items()}
    arms = {p: [float(row[2]) for row in t] for p, t in tables.items()}
    assert max(abs(a - b) for a, b in zip(lengths["float32"], lengths["float64"], strict=True)) <= 2e-3  # mm
    assert max(abs(a - b) for a, b in zip(arms["float32"], arms["float64"], strict=True)) <= 2e-3  # mm


def test_cli_design_demo(tmp_path, capsys):
    from jaxwrap.cli import main

    assert main(["demo", "design", "--steps", "200", "--plot", str(tmp_path / "design.png")]) == 0
    out = capsys.readouterr().out
    assert "compile + run" in out and "best start" in out
    assert (tmp_path / "design.png").exists()
