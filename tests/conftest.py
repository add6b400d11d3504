"""Test-wide settings: the suite runs in float64 (the library itself never flips this flag)."""

import jax

jax.config.update("jax_enable_x64", True)
