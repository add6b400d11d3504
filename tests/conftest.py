"""Test-wide settings: the suite runs in float64 (the library itself never flips this flag),
with every jaxtyping annotation of jaxwrap checked at run time (pyproject's
``--jaxtyping-packages``).

Two things keep a long run on two workers healthy:

- every compiled XLA:CPU program holds on to about 1,500 memory mappings (a cable solve;
  measured with /proc/self/maps), and a worker that compiles a few hundred of them reaches
  Linux's default ``vm.max_map_count`` of 65,530, where the next compile segfaults. The
  compiled programs of a test module are dropped after it (`jax.clear_caches`), and after
  any test that leaves the process near the limit;
- programs compiled once are shared through a persistent compilation cache in a fresh
  temporary folder for the run (both workers, and the example, notebook and demo
  subprocesses, which compile the same cable programs), so nothing carries over from one
  run to the next.
"""

import os
import shutil
import tempfile

import jax
import jaxtyping
import pytest

jax.config.update("jax_enable_x64", True)

_MAP_LIMIT = 40_000  # of the kernel's 65,530


def _num_mappings() -> int:
    try:
        with open(f"/proc/{os.getpid()}/maps") as maps:
            return sum(1 for _ in maps)
    except OSError:  # not Linux
        return 0


def pytest_configure(config):
    # In the controller (or a run without workers) only: the workers and subprocesses
    # inherit the variable, and JAX reads it when it is imported there.
    if hasattr(config, "workerinput") or "JAX_COMPILATION_CACHE_DIR" in os.environ:
        return
    folder = tempfile.mkdtemp(prefix="jaxwrap-tests-xla-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = folder
    config._jaxwrap_cache_folder = folder
    jax.config.update("jax_compilation_cache_dir", folder)


def pytest_unconfigure(config):
    folder = getattr(config, "_jaxwrap_cache_folder", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True, scope="module")
def _drop_compiled_programs_after_each_module():
    yield
    jax.clear_caches()


@pytest.fixture(autouse=True)
def _stay_below_the_mapping_limit():
    yield
    if _num_mappings() > _MAP_LIMIT:
        jax.clear_caches()


@pytest.fixture
def library_checks_only():
    """Switch the runtime type checker off for one test: tests that pass arguments of the
    wrong *type* on purpose check jaxwrap's own error messages, which the checker would
    otherwise preempt with its generic one."""
    jaxtyping.config.update("jaxtyping_disable", True)
    try:
        yield
    finally:
        jaxtyping.config.update("jaxtyping_disable", False)
