"""Independent shortest-path references, with no jaxwrap code involved: the closed-form
shortest wrap over a sphere or a cylinder, and the shortest polyline outside any obstacle
found by scipy (the surfaces' implicit functions are written again here in numpy).

The path from ``a`` to ``b`` is a polyline of ``n`` interior vertices that must lie outside
the obstacle. Minimising the energy ``sum |x_{i+1} - x_i|^2`` (rather than the length)
makes the vertices equally spaced at the optimum, where the energy is ``L^2 / (n + 1)``, so
its minimiser is the shortest equally spaced polyline. With its vertices on the surface
the polyline's chords cut through the curved part, which makes it shorter than the smooth
path by ``~ L_arc kappa^2 h^2 / 24`` (spacing ``h``); the reference is the Richardson
extrapolation ``(4 L_2n - L_n) / 3`` of two refinements, which removes that term. The
closed-form sphere wrap checks the reference itself (tests/cable/test_polyline_reference.py).

Local minima are a concern on a torus (through the hole or over the rim): the coarse
problem is solved from several bent starts on both sides of the straight line, and the
shortest result is refined.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize


def _circle_wrap(a, b, r):
    """Shortest path in the plane between points a and b outside the circle |x| = r."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = b - a
    t = np.clip(-a @ d / (d @ d), 0, 1) if d @ d > 0 else 0.0
    if np.linalg.norm(a + t * d) >= r:
        return np.linalg.norm(d)
    la, lb = np.linalg.norm(a), np.linalg.norm(b)
    angle = np.arccos(np.clip(a @ b / (la * lb), -1, 1))
    wrap = angle - np.arccos(r / la) - np.arccos(r / lb)
    return np.sqrt(la**2 - r**2) + np.sqrt(lb**2 - r**2) + r * wrap


def sphere_shortest(a, b, r):
    """Shortest path between a and b around a sphere at the origin: in the plane of a, b
    and the centre it is the circle problem (either side gives the same length)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    e1 = a / np.linalg.norm(a)
    w = b - (b @ e1) * e1
    e2 = w / np.linalg.norm(w) if np.linalg.norm(w) > 0 else np.array([0.0, 0.0, 1.0])
    return _circle_wrap([a @ e1, a @ e2], [b @ e1, b @ e2], r)


def cylinder_shortest(a, b, r):
    """Around an infinite cylinder along z: develop the wrap onto the plane, where the
    path is straight in (length across the axis, z)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.hypot(_circle_wrap(a[:2], b[:2], r), b[2] - a[2])


def outside_ellipsoid(radii):
    """(g, dg/dx) with g >= 0 outside the ellipsoid sum (x_k / r_k)^2 = 1."""
    r2 = np.asarray(radii, float) ** 2

    def g(x):
        return np.sum(x**2 / r2, axis=-1) - 1.0, 2 * x / r2

    return g


def outside_torus(R, a):
    """(g, dg/dx) with g >= 0 outside the tube of radius a about the circle of radius R
    in the xy-plane."""

    def g(x):
        rho = np.sqrt(x[..., 0] ** 2 + x[..., 1] ** 2)
        safe = np.where(rho > 0, rho, 1.0)
        d = rho - R
        grad = np.stack([2 * d * x[..., 0] / safe, 2 * d * x[..., 1] / safe, 2 * x[..., 2]], axis=-1)
        return d**2 + x[..., 2] ** 2 - a**2, grad

    return g


def outside_sphere(r):
    return outside_ellipsoid([r, r, r])


def _solve(a, b, g, x0):
    n = len(x0)

    def energy(v):
        x = np.concatenate([a[None], v.reshape(n, 3), b[None]])
        d = np.diff(x, axis=0)
        grad = 2 * (d[:-1] - d[1:])
        return np.sum(d**2), grad.ravel()

    def constraint(v):
        return g(v.reshape(n, 3))[0]

    def constraint_jac(v):
        grad = g(v.reshape(n, 3))[1]
        jac = np.zeros((n, n, 3))
        jac[np.arange(n), np.arange(n)] = grad
        return jac.reshape(n, 3 * n)

    res = minimize(
        energy,
        np.asarray(x0, float).ravel(),
        jac=True,
        method="SLSQP",
        constraints=[{"type": "ineq", "fun": constraint, "jac": constraint_jac}],
        options={"maxiter": 1000, "ftol": 1e-15},
    )
    x = res.x.reshape(n, 3)
    feasible = bool(np.all(g(x)[0] >= -1e-9))
    return x, feasible


def _length(a, b, x):
    return float(np.sum(np.linalg.norm(np.diff(np.concatenate([a[None], x, b[None]]), axis=0), axis=1)))


def _refine(a, b, x, g, scale):
    """2n + 1 interior vertices from n: the old ones and the midpoints, pushed out of the
    obstacle along the constraint gradient."""
    full = np.concatenate([a[None], x, b[None]])
    mid = 0.5 * (full[1:] + full[:-1])
    inside = g(mid)[0] < 0
    grad = g(mid)[1]
    push = grad / np.linalg.norm(grad, axis=-1, keepdims=True) * scale
    mid = np.where(inside[:, None], mid + push, mid)
    out = np.empty((len(full) + len(mid), 3))
    out[0::2], out[1::2] = full, mid
    return out[1:-1]


def shortest_polyline_length(a, b, g, size: float, n: int = 64, starts: int = 6) -> dict:
    """Shortest path length from ``a`` to ``b`` outside the obstacle ``g`` (centred near the
    origin, of about ``size``): Richardson extrapolation of the shortest equally spaced
    polylines with ``n`` and ``2 n + 1`` interior vertices.

    Returns ``length`` (the extrapolation), ``coarse`` and ``fine`` (the two polylines'
    lengths), ``feasible`` and the fine vertices ``points``."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = b - a
    e = d / np.linalg.norm(d)
    helper = np.eye(3)[np.argmin(np.abs(e))]
    u = np.cross(e, helper)
    u /= np.linalg.norm(u)
    w = np.cross(e, u)
    t = np.linspace(0, 1, n + 2)[1:-1, None]
    best = None
    coarse_n = 24
    tc = np.linspace(0, 1, coarse_n + 2)[1:-1, None]
    for k in range(starts):
        phi = 2 * np.pi * k / starts
        bend = (np.cos(phi) * u + np.sin(phi) * w) * 2.5 * size
        x0 = a + tc * d + np.sin(np.pi * tc) * bend
        x, feasible = _solve(a, b, g, x0)
        if feasible and (best is None or _length(a, b, x) < best[0]):
            best = (_length(a, b, x), x)
    if best is None:
        return dict(length=np.nan, coarse=np.nan, fine=np.nan, feasible=False, points=None)
    # Resample the best coarse path to n interior vertices at equal spacing, then refine.
    coarse_pts = np.concatenate([a[None], best[1], b[None]])
    s = np.concatenate([[0], np.cumsum(np.linalg.norm(np.diff(coarse_pts, axis=0), axis=1))])
    target = t[:, 0] * s[-1]
    x0 = np.stack([np.interp(target, s, coarse_pts[:, k]) for k in range(3)], axis=1)
    x_n, ok_n = _solve(a, b, g, x0)
    x_2n, ok_2n = _solve(a, b, g, _refine(a, b, x_n, g, 1e-3 * size))
    L_n, L_2n = _length(a, b, x_n), _length(a, b, x_2n)
    # Spacings h and h (n + 1) / (2 n + 2) = h / 2: the h^2 term goes.
    return dict(length=(4 * L_2n - L_n) / 3, coarse=L_n, fine=L_2n, feasible=ok_n and ok_2n, points=x_2n)
