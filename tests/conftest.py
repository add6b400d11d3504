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

The suite is dominated by XLA compilation, not by running the programs. The CPU compiler
runs here with its optimisation level 0 and without the new fusion emitters
(``_TEST_XLA_FLAGS``): measured on the gradient test's two scenes, a cable ``grad``
compiles in 3.4 s instead of 12.1 s (analytic surfaces) and 6.5 s instead of 12.9 s
(diffrax geodesics). Single solves run up to 30 % slower and large batches about twice
as slow, which even the suite's longest sweeps more than win back in compile time
(docs/cable.md#compile-time-and-xla-flags). The flags change how XLA generates code,
not what it computes (no fast math). They are set here, before JAX starts its backend, and
are inherited by the workers and by the example, notebook and demo subprocesses.
"""

import os
import shutil
import tempfile

_TEST_XLA_FLAGS = "--xla_cpu_use_fusion_emitters=false --xla_backend_optimization_level=0"
if "--xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_TEST_XLA_FLAGS}".strip()

import jax  # noqa: E402
import jaxtyping  # noqa: E402
import pytest  # noqa: E402

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


# With JAXWRAP_COMPILE_REPORT=<file>, every test's XLA compile and tracing seconds are
# appended to that file (one line per test: total, compile, trace, node id), to tell
# compile-bound tests from run-bound ones.
_REPORT = os.environ.get("JAXWRAP_COMPILE_REPORT")
if _REPORT:
    import time

    import jax.monitoring

    _seconds = {"compile": 0.0, "trace": 0.0}

    def _listen(event, duration, **_):
        if event == "/jax/core/compile/backend_compile_duration":
            _seconds["compile"] += duration
        elif event == "/jax/core/compile/jaxpr_trace_duration":
            _seconds["trace"] += duration

    jax.monitoring.register_event_duration_secs_listener(_listen)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        _seconds.update(compile=0.0, trace=0.0)
        start = time.perf_counter()
        yield
        total = time.perf_counter() - start
        with open(_REPORT, "a") as report:
            report.write(f"{total:8.1f} {_seconds['compile']:8.1f} {_seconds['trace']:8.1f} {item.nodeid}\n")
