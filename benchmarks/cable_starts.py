"""Which cold-start candidates are needed (docs/cable.md#cold-start-candidates).

For random configurations of `cable_trust.py`'s class (uniformly random obstacle rotations,
random end points), every candidate start of one leg (first and further, see
`jaxwrap/_cable/_candidates.py`) is solved on its own, and the script prints, per start:
how often it ends on a genuine path, its corrections per solve (median, 90th percentile),
and how often it is the only start to reach the shortest genuine path of all of them; then,
for the start lists it is asked about, how many configurations each misses that shortest
path on, and on how many it leaves no genuine path at all; last, the rule the solver
follows (the lifted start alone, settling the leg where it stays on the straight line;
then the other first starts, and further ones only where two genuine candidates do not
agree on the shortest length; docs/cable.md#the-straight-line-certificate): its misses,
its corrections per configuration, and how often the straight line clears the obstacle.

    python benchmarks/cable_starts.py --kind torus --num 4096 [--seed 0]
    python benchmarks/cable_starts.py --kind chain --num 1024   # the sphere-cylinder leg
    python benchmarks/cable_starts.py --kind three --num 1024   # sphere, cylinder, ellipsoid

Tolerance 1e-9 and 100 corrections, as `cable_trust.py`'s check.
"""

from __future__ import annotations

import argparse
import functools
import time

import jax

jax.config.update("jax_enable_x64", True)

import cable_trust as ct  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jaxwrap._cable._candidates import (  # noqa: E402
    CANDIDATE_PATIENCE,
    _leg_starts,
    start_states,
    straight_lengths,
)
from jaxwrap._cable._faults import leg_scores  # noqa: E402
from jaxwrap._cable._solver import run_solver  # noqa: E402
from jaxwrap._cable._state import build_scene  # noqa: E402


def start_names(kind: str) -> tuple[list[str], int]:
    """Names of the first and further starts of leg 0, in `_leg_starts`' order, and the
    number of first starts."""
    if kind in ("chain", "three"):
        sides = ["sphere near", "cylinder near", "cylinder quarter", "cylinder three-quarter"]
        exact = ["sphere exact", "cylinder exact"]
        if kind == "chain":
            return ["lifted", "hints", *sides, *exact, "sphere far", "cylinder far"], 8
        # An ellipsoid in a leg of several obstacles: its near side first, its quarter
        # turns further, after the others' far sides (docs/cable.md#cold-start-candidates).
        further = ["sphere far", "cylinder far", "ellipsoid quarter", "ellipsoid three-quarter", "ellipsoid far"]
        return ["lifted", "hints", *sides, "ellipsoid near", *exact, *further], 9
    # An ellipsoid's three-quarter turn is a further start (docs/cable.md#cold-start-candidates).
    return ["lifted", "near", "quarter", "three-quarter", "hint", "far"], 3 if kind == "ellipsoid" else 4


def every_start(kind: str):
    """A jitted function of (cable, keys): per configuration of `cable_trust.py`'s class
    drawn from each key, the length of leg 0 from every start of `_leg_starts` (first
    starts, then further ones; inf where not genuine), its corrections, and the leg's
    straight-line length (the distance between its ends)."""

    @jax.jit
    @functools.partial(jax.vmap, in_axes=(None, 0))
    def run(c, key):
        poses, ends = ct.configuration(kind, key)
        c = ct._with_ends(c, ends)
        scene = build_scene(c, poses)
        first, further, _ = _leg_starts(c, scene, 0)
        states = start_states(c, scene, first + further)
        carries = jax.vmap(run_solver, in_axes=(None, None, 0))(c, scene, states)
        lengths, genuine = jax.vmap(lambda carry: leg_scores(c, scene, carry))(carries)
        straight = straight_lengths(scene)[0]
        return jnp.where(genuine, lengths, jnp.inf)[:, 0], carries.iterations[:, 0], straight

    return run


def configuration_keys(seed: int, offset: int, chunk: int):
    return jax.random.split(jax.random.PRNGKey(seed * 1_000_003 + offset), chunk)


def solve_every_start(kind: str, num: int, seed: int, chunk: int = 512):
    base = ct.cable(kind, smoothness_tolerance=1e-9, max_iterations=100)
    run = every_start(kind)
    out = [run(base, configuration_keys(seed, offset, chunk)) for offset in range(0, num, chunk)]
    return tuple(np.concatenate([np.asarray(o[k]) for o in out])[:num] for k in range(3))


def _settled(got: list[float], straight: float, rel: float) -> bool:
    """Whether the genuine lengths `got` settle a leg (`_candidates.settled`)."""
    return bool(got) and (np.sum(np.array(got) <= min(got) * (1 + rel)) >= 2 or min(got) <= straight * (1 + rel))


def as_solved(
    L: np.ndarray, it: np.ndarray, num_first: int, straight: np.ndarray, rel: float = 1e-9, patience: int | None = None
):
    """The solver's rule applied to every start's results: the first start (lifted)
    alone, then the other first starts, then rounds of ``num_first - 1`` further ones,
    a round solved only while the leg is not settled: fewer than two genuine candidates
    agree (to `rel`) on the shortest length, and none is as short as the `straight`
    line. With a `patience` (a leg of several obstacles, docs/cable.md#paused-starts)
    every start but the first that needs more corrections pauses after that many and
    counts as no candidate; the paused ones are finished only where the leg is still not
    settled after every round. Returns the kept length and the corrections summed over
    the starts solved (each solve counted as its corrections + 1 evaluation; a paused
    one as its `patience` corrections)."""
    size = num_first - 1
    rounds = [[0], list(range(1, num_first))]
    rounds += [list(range(r, min(r + size, L.shape[1]))) for r in range(num_first, L.shape[1], size)]
    kept, cost = np.full(len(L), np.inf), np.zeros(len(L))
    for n in range(len(L)):
        got: list[float] = []
        paused: list[int] = []
        for chunk in rounds:
            if _settled(got, straight[n], rel):
                break
            for k in chunk:
                if patience is not None and k > 0 and it[n, k] > patience:
                    cost[n] += patience
                    paused.append(k)
                    continue
                cost[n] += it[n, k] + 1
                if np.isfinite(L[n, k]):
                    got.append(L[n, k])
        if not _settled(got, straight[n], rel):
            for k in paused:
                cost[n] += it[n, k] + 1 - patience
                if np.isfinite(L[n, k]):
                    got.append(L[n, k])
        kept[n] = min(got, default=np.inf)
    return kept, cost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=("ellipsoid", "torus", "chain", "three"), default="torus")
    parser.add_argument("--num", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", help="write the lengths (inf: not genuine) and corrections to this .npz")
    args = parser.parse_args()
    names, num_first = start_names(args.kind)
    t0 = time.perf_counter()
    L, it, straight = solve_every_start(args.kind, args.num, args.seed)
    assert L.shape[1] == len(names), (L.shape, names)
    if args.save:
        np.savez(args.save, lengths=L, corrections=it, straight=straight, names=np.array(names))
    print(f"{args.kind}: {args.num} configurations (seed {args.seed}), {time.perf_counter() - t0:.0f} s")
    best = L.min(axis=1)
    for k, name in enumerate(names):
        others = np.delete(L, k, axis=1).min(axis=1)
        only = int(np.sum(L[:, k] < others * (1 - 1e-9)))
        print(
            f"  {name:24s} genuine {np.isfinite(L[:, k]).mean():7.2%}  corrections median "
            f"{np.median(it[:, k]):5.1f} p90 {np.percentile(it[:, k], 90):5.1f}  only shortest {only}"
        )

    def report(label, keep):
        b = L[:, keep].min(axis=1)
        missed = int(np.sum(b > best * (1 + 1e-9) + 1e-12))
        print(f"  {label:40s} misses the shortest on {missed}, no genuine path on {int(np.sum(~np.isfinite(b)))}")

    every = list(range(len(names)))
    report("all starts", every)
    report("first starts only", every[:num_first])
    for k in every:
        report(f"without {names[k]}", [j for j in every if j != k])
    # Only a leg of several obstacles (the chain's) pauses its starts.
    several = args.kind in ("chain", "three")
    kept, cost = as_solved(L, it, num_first, straight, patience=CANDIDATE_PATIENCE if several else None)
    clear = np.isfinite(L[:, 0]) & (L[:, 0] <= straight * (1 + 1e-9))
    missed = int(np.sum(kept > best * (1 + 1e-9) + 1e-12))
    print(
        f"  as solved (further starts only where not settled): misses the shortest on {missed}; "
        f"corrections per configuration {cost.mean():.1f} against {(it + 1).sum(axis=1).mean():.1f} for every start; "
        f"the straight line clears the obstacles on {clear.mean():.1%}"
    )
    if several:
        unpaused_kept, unpaused = as_solved(L, it, num_first, straight)
        missed = int(np.sum(unpaused_kept > best * (1 + 1e-9) + 1e-12))
        print(f"  the same without pausing: misses the shortest on {missed}; corrections {unpaused.mean():.1f}")


if __name__ == "__main__":
    main()
