"""Every notebook in notebooks/ executes without error (its cells carry their own asserts)."""

from __future__ import annotations

import pathlib

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    manager = pytest.importorskip("jupyter_client.manager")
    notebook = nbformat.read(path, as_version=4)
    # The kernel talks over Unix sockets in this test's folder, not TCP ports: two workers
    # starting kernels at once can otherwise pick the same free port, and one kernel dies
    # with "Address already in use" (jupyter_client issue 487).
    km = manager.KernelManager(kernel_name="python3", transport="ipc", connection_file=str(tmp_path / "kernel.json"))
    nbclient.NotebookClient(notebook, km=km, timeout=600, resources={"metadata": {"path": str(path.parent)}}).execute()


def test_there_are_notebooks():
    assert NOTEBOOKS
