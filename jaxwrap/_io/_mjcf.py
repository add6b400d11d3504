"""MJCF (MuJoCo) models: kinematics and tendons, read from MuJoCo's compiled arrays.

The `mujoco` package compiles the file (defaults, includes, frames, angle units and
``ref`` all resolved by MuJoCo itself); this module only reads ``mjModel`` arrays, never
the XML. Design notes: docs/cable-sets.md#mjcf-import.

Kinematics. MuJoCo composes the joints of a body in its own frame, each about an anchor
``jnt_pos``: ``X ← X · T(p) · M(q − qpos0) · T(-p)``. jaxwrap gives every joint its own
body whose frame is the joint frame after motion, so a MuJoCo body with k joints becomes
k jaxwrap bodies (the first k - 1 massless, named ``"<body>/<joint>"``), the last named
as the MuJoCo body, and MuJoCo's body frame is that body's frame times ``T(-p_k)``
(the *offset* below; identity for fixed bodies and free joints). ``qpos0`` (the ``ref``
attribute) is folded into the joint placement. Bodies are added in MuJoCo's order (a
depth-first pre-order), which jaxwrap keeps, so ``q`` is ``qpos`` for hinge and slide
joints; ball and free joints store quaternions w-first in MuJoCo and w-last in jaxwrap
(`qpos_to_q`, `q_to_qpos`).

Tendons. A spatial tendon is cut at its pulleys into branches (each a `CableSpan` from
its first site to its last, middle sites as via points, wrap geoms as obstacles with
their side sites as `side`), each divided by the pulley's divisor; a fixed tendon is a
row of linear coefficients on ``q``.
"""

from __future__ import annotations

import os

import numpy as np

from .._cable import CableSet, CableSettings, CableSpan
from .._kinematics import RobotModel
from .._kinematics._spec import WORLD, ModelSpec
from .._spatial import Transform
from .._surfaces import Cylinder, Sphere

_EXTRA = "jw.load_mjcf needs the `mujoco` package: pip install 'jaxwrap[mujoco]'"


def _mujoco():
    try:
        import mujoco
    except ImportError as error:  # pragma: no cover - exercised only without the extra
        raise ImportError(_EXTRA) from error
    return mujoco


def _quat_wxyz_to_matrix(quat) -> np.ndarray:
    w, x, y, z = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _pose(rotation=None, translation=None) -> np.ndarray:
    X = np.eye(4)
    if rotation is not None:
        X[:3, :3] = rotation
    if translation is not None:
        X[:3, 3] = translation
    return X


def _axis_angle(axis, angle) -> np.ndarray:
    axis = np.asarray(axis, dtype=float)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * (K @ K)


_OBJECTS = {
    "body": "mjOBJ_BODY",
    "jnt": "mjOBJ_JOINT",
    "tendon": "mjOBJ_TENDON",
    "geom": "mjOBJ_GEOM",
    "site": "mjOBJ_SITE",
}


def _name(m, kind, index: int, fallback: str) -> str:
    mujoco = _mujoco()
    if kind == "model":
        name = bytes(m.names).split(b"\x00", 1)[0].decode()
    else:
        name = mujoco.mj_id2name(m, getattr(mujoco.mjtObj, _OBJECTS[kind]), index)
    return name or f"{fallback}{index}"


def _compile(source):
    mujoco = _mujoco()
    if isinstance(source, mujoco.MjModel):
        return source
    if isinstance(source, (str, os.PathLike)) and not str(source).lstrip().startswith("<"):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise FileNotFoundError(f"MJCF file not found: {path}")
        return mujoco.MjModel.from_xml_path(path)
    if isinstance(source, str):
        return mujoco.MjModel.from_xml_string(source)
    raise ValueError(f"load_mjcf takes a path, an XML string or a mujoco.MjModel, got {type(source).__name__}")


def _model_spec(m) -> tuple[ModelSpec, dict[int, tuple[str, np.ndarray]]]:
    """The kinematic tree, and for every MuJoCo body its jaxwrap body name and offset."""
    mujoco = _mujoco()
    spec = ModelSpec(name=_name(m, "model", 0, "mjcf"))
    frame: dict[int, tuple[str, np.ndarray]] = {0: (WORLD, np.eye(4))}
    kinds = {
        int(mujoco.mjtJoint.mjJNT_HINGE): "revolute",
        int(mujoco.mjtJoint.mjJNT_SLIDE): "prismatic",
        int(mujoco.mjtJoint.mjJNT_BALL): "spherical",
        int(mujoco.mjtJoint.mjJNT_FREE): "floating",
    }
    for b in range(1, m.nbody):
        body = _name(m, "body", b, "body")
        parent_name, parent_offset = frame[int(m.body_parentid[b])]
        X_PB = parent_offset @ _pose(_quat_wxyz_to_matrix(m.body_quat[b]), m.body_pos[b])
        if m.body_mocapid[b] >= 0:
            raise ValueError(f"body {body!r} is a mocap body; jaxwrap has no mocap bodies (make it a fixed body)")
        joints = range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b])
        current_parent, placement, offset = parent_name, X_PB, np.eye(4)
        mass = _mass_properties(m, b, joints)
        if len(joints) == 0:
            spec = spec.add_body(body, **mass)
            spec = spec.add_joint(f"{body}/fixed", "fixed", current_parent, body, placement=placement)
            current_parent = body
        for k, j in enumerate(joints):
            joint = _name(m, "jnt", j, "joint")
            kind = kinds.get(int(m.jnt_type[j]))
            if kind is None:  # pragma: no cover - MuJoCo has exactly these four
                raise ValueError(f"joint {joint!r}: unsupported MuJoCo joint type {int(m.jnt_type[j])}")
            child = body if k == len(joints) - 1 else f"{body}/{joint}"
            p = np.asarray(m.jnt_pos[j], dtype=float)
            axis = np.asarray(m.jnt_axis[j], dtype=float)
            ref = float(m.qpos0[m.jnt_qposadr[j]])
            lower = upper = None
            if kind == "floating":
                if m.body_parentid[b] != 0 or len(joints) != 1:
                    raise ValueError(f"joint {joint!r}: a free joint must be the only joint of a child of the world")
                placement, offset = np.eye(4), np.eye(4)
            elif kind == "spherical":
                placement = placement @ _pose(translation=p)
                offset = _pose(translation=-p)
            else:
                if kind == "revolute":
                    placement = placement @ _pose(translation=p) @ _pose(_axis_angle(axis, -ref))
                else:
                    placement = placement @ _pose(translation=p - axis * ref)
                offset = _pose(translation=-p)
                if m.jnt_limited[j]:  # in qpos units, as q
                    lower, upper = float(m.jnt_range[j][0]), float(m.jnt_range[j][1])
            spec = spec.add_body(child, **(mass if child == body else {}))
            spec = spec.add_joint(
                joint,
                kind,
                current_parent,
                child,
                placement=placement,
                axis=axis if kind in ("revolute", "prismatic") else (1.0, 0.0, 0.0),
                lower=lower,
                upper=upper,
            )
            current_parent, placement = child, offset
        frame[b] = (current_parent, offset)
    return spec, frame


def _mass_properties(m, b: int, joints) -> dict:
    """Mass, centre of mass and inertia of MuJoCo body ``b`` in the frame of its last
    jaxwrap body (MuJoCo's frame moved by ``T(p)`` of its last joint's anchor)."""
    mujoco = _mujoco()
    shift = np.zeros(3)
    if len(joints) and m.jnt_type[joints[-1]] != mujoco.mjtJoint.mjJNT_FREE:
        shift = -np.asarray(m.jnt_pos[joints[-1]], dtype=float)
    R = _quat_wxyz_to_matrix(m.body_iquat[b])
    inertia = R @ np.diag(m.body_inertia[b]) @ R.T
    return dict(mass=float(m.body_mass[b]), com=m.body_ipos[b] + shift, inertia=0.5 * (inertia + inertia.T))


def _check_order(m, model: RobotModel, frame) -> None:
    """jaxwrap's q layout must be MuJoCo's qpos layout (same joints, same offsets)."""
    for j in range(m.njnt):
        b = int(m.jnt_bodyid[j])
        name = frame[b][0]
        joint = _name(m, "jnt", j, "joint")
        body = model.body_index(name if j == m.body_jntadr[b] + m.body_jntnum[b] - 1 else f"{name}/{joint}")
        if model.body_q_starts[body] != m.jnt_qposadr[j]:  # pragma: no cover - guarded by construction
            raise ValueError(
                f"joint {joint!r}: q offset {model.body_q_starts[body]} differs from MuJoCo's {m.jnt_qposadr[j]}"
            )


def _tendons(m, model: RobotModel, frame, settings: CableSettings | None, wrap: str) -> CableSet:
    mujoco = _mujoco()
    WRAP = mujoco.mjtWrap

    def body_of(mj_body: int) -> tuple[int, np.ndarray]:
        name, offset = frame[mj_body]
        return model.body_index(name), offset

    def site(s: int) -> tuple[int, np.ndarray]:
        body, offset = body_of(int(m.site_bodyid[s]))
        return body, offset[:3, :3] @ m.site_pos[s] + offset[:3, 3]

    names, branches, divisors = [], [], []
    coefficients = np.zeros((m.ntendon, model.nq))
    for t in range(m.ntendon):
        tendon = _name(m, "tendon", t, "tendon")
        names.append(tendon)
        adr, num = int(m.tendon_adr[t]), int(m.tendon_num[t])
        types = [int(x) for x in m.wrap_type[adr : adr + num]]
        ids = [int(x) for x in m.wrap_objid[adr : adr + num]]
        prms = [float(x) for x in m.wrap_prm[adr : adr + num]]
        if types and types[0] == int(WRAP.mjWRAP_JOINT):
            for j, coef in zip(ids, prms):
                if int(m.jnt_type[j]) not in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
                    raise ValueError(f"tendon {tendon!r}: fixed tendons need hinge or slide joints")
                coefficients[t, m.jnt_qposadr[j]] += coef
            branches.append(())
            divisors.append(np.zeros(0))
            continue
        spans, divs, divisor, current = [], [], 1.0, []
        for kind, obj, prm in zip([*types, int(WRAP.mjWRAP_PULLEY)], [*ids, -1], [*prms, 1.0]):
            if kind == int(WRAP.mjWRAP_PULLEY):
                if current:
                    spans.append(_branch(m, tendon, current, site, body_of, settings, wrap))
                    divs.append(divisor)
                divisor, current = prm, []
            elif kind in (WRAP.mjWRAP_SITE, int(WRAP.mjWRAP_SPHERE), int(WRAP.mjWRAP_CYLINDER)):
                current.append((int(kind), obj, prm))
            else:  # pragma: no cover - MuJoCo has no other wrap types in spatial tendons
                raise ValueError(f"tendon {tendon!r}: unsupported wrap element type {int(kind)}")
        branches.append(tuple(spans))
        divisors.append(np.asarray(divs))
    linear = coefficients if np.any(coefficients) else None
    return CableSet(names, branches, divisors, linear)


def _branch(m, tendon, elements, site, body_of, settings, wrap) -> CableSpan:
    mujoco = _mujoco()
    WRAP = mujoco.mjtWrap
    if elements[0][0] != int(WRAP.mjWRAP_SITE) or elements[-1][0] != int(WRAP.mjWRAP_SITE) or len(elements) < 2:
        raise ValueError(f"tendon {tendon!r}: every branch must start and end with a site")
    origin_body, origin = site(elements[0][1])
    end_body, end = site(elements[-1][1])
    cable = CableSpan(origin_body, origin, end_body, end, settings=settings)
    for kind, obj, prm in elements[1:-1]:
        if kind == int(WRAP.mjWRAP_SITE):
            cable = cable.add_via_point(*site(obj))
            continue
        geom = _name(m, "geom", obj, "geom")
        body, offset = body_of(int(m.geom_bodyid[obj]))
        X_BS = offset @ _pose(_quat_wxyz_to_matrix(m.geom_quat[obj]), m.geom_pos[obj])
        radius = float(m.geom_size[obj][0])
        surface = Sphere(radius) if kind == int(WRAP.mjWRAP_SPHERE) else Cylinder(radius)
        side = None
        side_id = int(round(prm))
        if side_id >= 0:
            side_body, side_point = site(side_id)
            side_name = _name(m, "site", side_id, "site")
            if side_body != body:
                raise ValueError(
                    f"tendon {tendon!r}: side site {side_name!r} of geom {geom!r} moves relative to the geom "
                    "(another body); jaxwrap's side is a point fixed in the obstacle frame"
                )
            side = X_BS[:3, :3].T @ (side_point - X_BS[:3, 3])
        # MuJoCo's rule: a side site closer than the radius to the geom centre (3-D distance,
        # also for cylinders) makes the inside wrap.
        if side is not None and bool(np.linalg.norm(side) < radius):
            rule, side = "inside", None
        else:
            rule = "mujoco" if wrap == "mujoco" else "shortest"
        cable = cable.add_obstacle(body, Transform.from_matrix(X_BS), surface, side=side, wrap=rule)
    return cable


def load_mjcf(source, settings: CableSettings | None = None, wrap: str = "mujoco") -> tuple[RobotModel, CableSet]:
    """Load the kinematic tree and tendons of a MuJoCo model.

    **Arguments:**

    - `source`: a path to an MJCF file, its XML text, or a compiled ``mujoco.MjModel``.
      MuJoCo compiles it (an optional dependency: ``pip install 'jaxwrap[mujoco]'``).
    - `settings`: `CableSettings` for every tendon branch (default `CableSettings()`).
    - `wrap`: ``"mujoco"`` (default) wraps each sphere and cylinder geom by MuJoCo's own
      closed-form rule, so lengths and moment arms are MuJoCo's; ``"shortest"`` solves
      the shortest path on the side site's side with the general solver, where MuJoCo's
      rule and the shortest path differ and an end point inside a geom is a failure
      (docs/cable-sets.md#mujoco-rule). Side sites inside the geom are MuJoCo's inside
      wrap either way.

    **Returns:** ``(model, cables)``: a `RobotModel` whose ``q`` is MuJoCo's ``qpos``
    for hinge and slide joints (ball and free joints: see `qpos_to_q`), and a `CableSet`
    with one cable per tendon in MuJoCo's order: spatial tendons as branches between
    pulleys (sites as end and via points, sphere and cylinder geoms as obstacles, side
    sites as wrap sides), fixed tendons as linear terms. Body indices are the model's.

    **Raises:** `ImportError` without `mujoco`; `ValueError` naming the body, joint or
    tendon for what jaxwrap cannot represent (mocap bodies, a side site on another body
    than its geom).
    """
    m = _compile(source)
    spec, frame = _model_spec(m)
    model = RobotModel.from_spec(spec)
    _check_order(m, model, frame)
    if wrap not in ("mujoco", "shortest"):
        raise ValueError(f"wrap must be 'mujoco' or 'shortest', got {wrap!r}")
    return model, _tendons(m, model, frame, settings, wrap)


def _quaternion_slots(model: RobotModel) -> list[int]:
    return [
        start + (3 if kind == "floating" else 0)
        for kind, start in zip(model.body_joint_kinds, model.body_q_starts)
        if kind in ("floating", "spherical")
    ]


def _floating_linear_slots(model: RobotModel) -> list[tuple[int, int]]:
    """(quaternion slot in q, linear-velocity slot in v) of every free joint."""
    return [
        (q_start + 3, v_start)
        for kind, q_start, v_start in zip(model.body_joint_kinds, model.body_q_starts, model.body_v_starts)
        if kind == "floating"
    ]


def _rotate_free_velocities(model: RobotModel, q, vel, to_body: bool):
    import jax.numpy as jnp

    from .._spatial import quaternion_to_rotation

    q, vel = jnp.asarray(q), jnp.asarray(vel)
    if q.shape[-1] != model.nq or vel.shape[-1] != model.nv:
        raise ValueError(
            f"expected q (..., {model.nq}) and velocities (..., {model.nv}), got {q.shape} and {vel.shape}"
        )
    for quat, lin in _floating_linear_slots(model):
        R = jnp.vectorize(quaternion_to_rotation, signature="(4)->(3,3)")(q[..., quat : quat + 4])
        R = jnp.swapaxes(R, -1, -2) if to_body else R
        part = jnp.einsum("...ij,...j->...i", R, vel[..., lin : lin + 3])
        vel = vel.at[..., lin : lin + 3].set(part)
    return vel


def qvel_to_v(model: RobotModel, q, qvel):
    """MuJoCo ``qvel`` to jaxwrap ``v`` at configuration ``q`` (jaxwrap's, w-last).

    Hinge, slide and ball joints use the same numbers (a ball joint's angular velocity is
    local in both). A free joint's linear velocity is in the world frame in MuJoCo and in
    the body frame in jaxwrap (pinocchio's convention), so it is rotated by ``R(q)ᵀ``; its
    angular velocity is local in both. Linear in ``qvel``, differentiable, batched over
    leading axes. MuJoCo's tendon Jacobian is then ``ten_J = -moment_arms @ dv/dqvel``
    (docs/cable-sets.md#mjcf-import)."""
    return _rotate_free_velocities(model, q, qvel, to_body=True)


def v_to_qvel(model: RobotModel, q, v):
    """jaxwrap ``v`` to MuJoCo ``qvel`` at configuration ``q`` (the inverse of `qvel_to_v`)."""
    return _rotate_free_velocities(model, q, v, to_body=False)


def qpos_to_q(model: RobotModel, qpos):
    """MuJoCo ``qpos`` (quaternions w-first) to jaxwrap ``q`` (w-last); the identity for
    hinge and slide joints. Works on batches (last axis nq)."""
    import jax.numpy as jnp

    qpos = jnp.asarray(qpos)
    perm = np.arange(model.nq)
    for s in _quaternion_slots(model):
        perm[s : s + 4] = [s + 1, s + 2, s + 3, s]
    return qpos[..., perm]


def q_to_qpos(model: RobotModel, q):
    """jaxwrap ``q`` (quaternions w-last) to MuJoCo ``qpos`` (w-first)."""
    import jax.numpy as jnp

    q = jnp.asarray(q)
    perm = np.arange(model.nq)
    for s in _quaternion_slots(model):
        perm[s : s + 4] = [s + 3, s, s + 1, s + 2]
    return q[..., perm]
