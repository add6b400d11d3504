"""Compiler options for the few run-bound tests.

The suite compiles with XLA:CPU's optimisation level 0 and without its new fusion
emitters (tests/conftest.py): most tests compile far more than they run. The sweeps that
run a compiled program over thousands of paths are the other way round (the chain's 1,000
random configurations ran in 300 s so compiled, 60 s with the defaults, whose compile
took 45 s instead of 28 s). They compile with XLA's defaults through
``jax.jit(..., compiler_options=RUN_BOUND)``.
"""

RUN_BOUND = {"xla_cpu_use_fusion_emitters": True, "xla_backend_optimization_level": 3}
