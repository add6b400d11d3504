"""Place a box on a table: 1,000 random starts projected onto the placement constraint in
one batched call (README example; tests/test_examples.py runs it)."""

import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402

import jaxwrap as jw  # noqa: E402

box = jw.RobotModel.from_urdf('<robot name="box"><link name="box"/></robot>', floating_base=True)
table = jw.ConvexShape([[-0.5, -0.4, 0.75], [0.5, -0.4, 0.75], [0.5, 0.4, 0.75], [-0.5, 0.4, 0.75]], body=0)
bottom = jw.ConvexShape(  # the box's bottom face, normal pointing down (out of the box)
    [[-0.05, 0.05, -0.05], [0.05, 0.05, -0.05], [0.05, -0.05, -0.05], [-0.05, -0.05, -0.05]],
    body=box.body_index("box"),
)
on_table = jw.ConvexShapeContact(box, floors=[table], objects=[bottom])

keys = jax.random.split(jax.random.PRNGKey(0), 1000)
starts = jax.vmap(box.random_configuration)(keys)
starts = starts.at[:, :3].set(starts[:, :3] * jnp.array([0.5, 0.4, 0.2]) + jnp.array([0.0, 0.0, 0.9]))

project = jax.jit(jax.vmap(lambda q: jw.project(on_table, q)))
solution = jax.block_until_ready(project(starts))  # compile
start = time.perf_counter()
solution = jax.block_until_ready(project(starts))
elapsed = time.perf_counter() - start

heights = jax.vmap(lambda q: box.forward_kinematics(q)[1].translation[2])(solution.q)
print(f"placed {int(solution.success.sum())}/1000 boxes, max residual {float(solution.residual.max()):.1e}, "
      f"median {float(jnp.median(solution.num_steps)):.0f} steps, {elapsed / 1000 * 1e6:.1f} us per start")
print(f"box centre heights on success: {float(heights[solution.success].min()):.6f} .. "
      f"{float(heights[solution.success].max()):.6f} m (table top 0.75 + half size 0.05 = 0.8)")
