"""Place a box on a table: 1,000 random starts projected onto the placement constraint in
one batched call (README example; tests/test_examples.py runs it)."""

import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402

import jaxwrap as jw  # noqa: E402

box = jw.load_urdf('<robot name="box"><link name="box"/></robot>', floating_base=True)
table = jw.ConvexShape([[-0.5, -0.4, 0.75], [0.5, -0.4, 0.75], [0.5, 0.4, 0.75], [-0.5, 0.4, 0.75]], body=0)
bottom = jw.ConvexShape(  # the box's bottom face, normal pointing down (out of the box)
    [[-0.05, 0.05, -0.05], [0.05, 0.05, -0.05], [0.05, -0.05, -0.05], [-0.05, -0.05, -0.05]],
    body=box.body_index("box"),
)
on_table = jw.ConvexShapeContact(box, floors=[table], objects=[bottom])

keys = jax.random.split(jax.random.PRNGKey(0), 1000)
starts = jax.vmap(jw.random_configuration, in_axes=(None, 0))(box, keys)
starts = starts.at[:, :3].set(starts[:, :3] * jnp.array([0.5, 0.4, 0.2]) + jnp.array([0.0, 0.0, 0.9]))

project = jax.jit(jax.vmap(jw.project, in_axes=(None, 0)))  # the constraint is an argument too
solution = jax.block_until_ready(project(on_table, starts))  # compile
start = time.perf_counter()
solution = jax.block_until_ready(project(on_table, starts))
elapsed = time.perf_counter() - start

heights = jax.vmap(lambda q: jw.forward_kinematics(box, q)[1].translation[2])(solution.q)
print(
    f"placed {int(solution.success.sum())}/1000 boxes, max residual {float(solution.residual.max()):.1e}, "
    f"median {float(jnp.median(solution.num_steps)):.0f} steps, {elapsed / 1000 * 1e6:.1f} us per start"
)
print(
    f"box centre heights on success: {float(heights[solution.success].min()):.6f} .. "
    f"{float(heights[solution.success].max()):.6f} m (table top 0.75 + half size 0.05 = 0.8)"
)
