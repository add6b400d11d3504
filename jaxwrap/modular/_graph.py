"""The module graph: prototype DAG -> instantiated tree -> rigid bodies, serial chains, end points.

All of this is structure, worked out once in Python when a configuration is built (as MJX
bookkeeps its model), and kept as static fields; nothing here touches a number. The
recipe (docs/modular.md#graph):

1. **Prototype DAG.** Modules joined by attachments (parent connector -> child connector).
   A prototype with k incoming attachments is instantiated k times, with the whole
   subgraph below it (Darwin2K's rule); copies keep their prototype's parameters, so they
   are literally the same array leaves and gradients from every copy add up.
2. **Bodies.** The instances split into rigid groups at joint outputs: the base group,
   then one body per joint module (its output and everything rigidly attached beyond it).
   A joint's housing belongs to its parent's body.
3. **Body order** is depth-first from the world with siblings ordered by joint name, the
   order URDF readers (urdfdom, pinocchio, `RobotModel.from_urdf`) give the exported file,
   so ``q`` arrays move unchanged between the configuration and any URDF tool.
4. **Serial chains** (Darwin2K ``serialChain``): maximal runs of joint bodies without
   branching; a chain's children branch from its last body. Their DOFs are contiguous.
5. **End points**: one per tool module, on the chain of the tool's body (-1 on the base).
"""

from __future__ import annotations

import dataclasses

from ._module import AbstractModule


@dataclasses.dataclass(frozen=True)
class Attachment:
    """An edge of the prototype graph: ``child``'s connector ``child_connector`` is
    attached to ``parent``'s connector ``parent_connector`` (Darwin2K ``attachment``).
    Its twist about the connection axis is a parameter of the configuration."""

    parent: str
    parent_connector: int
    child: str
    child_connector: int = 0


@dataclasses.dataclass(frozen=True)
class Instance:
    """One module of the instantiated tree."""

    name: str
    prototype: int  # index into the configuration's prototypes
    parent: int  # parent instance (-1 for the base)
    attachment: int  # the attachment it hangs from (-1 for the base)
    body: int  # the rigid body holding the module frame (for joints: the housing's)
    output_body: int  # joints: the body of the output; others: same as `body`


@dataclasses.dataclass(frozen=True)
class Chain:
    """A serial chain: joint bodies in order, its parent chain (-1: the base), children."""

    bodies: tuple[int, ...]
    joints: tuple[int, ...]  # joint indices (positions in `Structure.joints`)
    parent: int
    children: tuple[int, ...]
    end_points: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class Structure:
    """Everything static about an instantiated configuration."""

    instances: tuple[Instance, ...]  # in instantiation order (parents first)
    body_owner: tuple[int, ...]  # per body (0 = world: -1): the base or joint instance
    body_parent: tuple[int, ...]  # per body: parent body (world: -1)
    joints: tuple[int, ...]  # joint-module instances, in q order
    chains: tuple[Chain, ...]
    body_chain: tuple[int, ...]  # per body: its chain (-1: world or base)
    end_points: tuple[int, ...]  # tool instances, in instantiation order
    end_point_chain: tuple[int, ...]

    @property
    def num_bodies(self) -> int:
        return len(self.body_owner)

    def body_ancestors(self, body: int) -> tuple[int, ...]:
        """Bodies from ``body`` up to (excluding) the world, child first."""
        out = []
        while body > 0:
            out.append(body)
            body = self.body_parent[body]
        return tuple(out)

    def subtree(self, instance: int) -> tuple[int, ...]:
        """Instances at or below ``instance`` in the module tree."""
        below = {instance}
        for i, inst in enumerate(self.instances):
            if inst.parent in below:
                below.add(i)
        return tuple(sorted(below))


def _ordered_attachments(attachments: tuple[Attachment, ...], parent: str) -> list[int]:
    """Indices of ``parent``'s outgoing attachments, sorted by connector (Darwin2K keeps
    each module's attachments sorted by connector ID)."""
    out = [i for i, a in enumerate(attachments) if a.parent == parent]
    return sorted(out, key=lambda i: (attachments[i].parent_connector, i))


def validate_graph(
    prototypes: tuple[tuple[str, AbstractModule], ...], attachments: tuple[Attachment, ...]
) -> tuple[str, dict[str, int]]:
    """Check the prototype graph; return the base's name and each prototype's number of
    incoming attachments. Raises `ValueError` naming the module or attachment at fault."""
    modules = dict(prototypes)
    if len(modules) != len(prototypes):
        names = [n for n, _ in prototypes]
        raise ValueError(f"module names must be unique; repeated: {sorted({n for n in names if names.count(n) > 1})}")
    bases = [n for n, m in prototypes if m.kind == "base"]
    if len(bases) != 1:
        raise ValueError(f"a configuration needs exactly one base module, got {bases or 'none'}")
    incoming = {n: 0 for n in modules}
    used: dict[tuple[str, int], int] = {}
    for k, a in enumerate(attachments):
        where = f"attachment {k} ({a.parent}[{a.parent_connector}] -> {a.child}[{a.child_connector}])"
        for role, name in (("parent", a.parent), ("child", a.child)):
            if name not in modules:
                raise ValueError(f"{where}: {role} module {name!r} does not exist")
        for role, name, c in (("parent", a.parent, a.parent_connector), ("child", a.child, a.child_connector)):
            n = modules[name].num_connectors
            if not isinstance(c, int) or not 0 <= c < n:
                raise ValueError(
                    f"{where}: {role} module {name!r} ({modules[name].type_name}) has connectors 0..{n - 1}, not {c!r}"
                )
        if modules[a.child].kind == "base":
            raise ValueError(f"{where}: the base {a.child!r} cannot be attached to another module")
        if modules[a.child].kind == "joint" and a.child_connector != 0:
            raise ValueError(f"{where}: joint module {a.child!r} must be attached by its housing connector 0")
        if modules[a.parent].kind == "joint" and a.parent_connector == 0:
            raise ValueError(f"{where}: connector 0 of joint module {a.parent!r} is its housing's; attach to 1")
        if (a.parent, a.parent_connector) in used:
            raise ValueError(
                f"{where}: connector {a.parent_connector} of {a.parent!r} is already used by attachment "
                f"{used[(a.parent, a.parent_connector)]}"
            )
        used[(a.parent, a.parent_connector)] = k
        incoming[a.child] += 1
    for a in attachments:
        if (a.child, a.child_connector) in used:
            raise ValueError(
                f"module {a.child!r}: connector {a.child_connector} both attaches it to {a.parent!r} and carries "
                f"attachment {used[(a.child, a.child_connector)]}"
            )

    # Cycles: depth-first search with colours over the prototype DAG.
    colour = {n: 0 for n in modules}

    def visit(name: str, path: list[str]) -> None:
        colour[name] = 1
        for k in _ordered_attachments(attachments, name):
            child = attachments[k].child
            if colour[child] == 1:
                cycle = path[path.index(child) :] + [child] if child in path else [name, child]
                raise ValueError(f"the prototype graph has a cycle through modules {cycle}")
            if colour[child] == 0:
                visit(child, path + [child])
        colour[name] = 2

    for name in modules:
        if colour[name] == 0:
            visit(name, [name])
    base = bases[0]
    reached = {base}
    frontier = [base]
    while frontier:
        name = frontier.pop()
        for k in _ordered_attachments(attachments, name):
            if attachments[k].child not in reached:
                reached.add(attachments[k].child)
                frontier.append(attachments[k].child)
    unreached = [n for n in modules if n not in reached]
    if unreached:
        raise ValueError(f"modules {unreached} are not connected to the base {base!r}")
    return base, incoming


def instantiate(prototypes: tuple[tuple[str, AbstractModule], ...], attachments: tuple[Attachment, ...]) -> Structure:
    """Expand the prototype DAG into the module tree and work out bodies, chains and end
    points (see the module docstring)."""
    base, incoming = validate_graph(prototypes, attachments)
    index = {name: i for i, (name, _) in enumerate(prototypes)}
    modules = dict(prototypes)

    # 1. Depth-first expansion; every copy of a prototype is a new instance.
    raw: list[tuple[str, int, int]] = []  # (prototype name, parent instance, attachment)
    stack = [(base, -1, -1)]
    while stack:
        name, parent, att = stack.pop()
        raw.append((name, parent, att))
        me = len(raw) - 1
        for k in reversed(_ordered_attachments(attachments, name)):
            stack.append((attachments[k].child, me, k))
    copies = {n: sum(1 for r in raw if r[0] == n) for n in modules}
    seen = {n: 0 for n in modules}
    names = []
    for proto, _, _ in raw:
        names.append(proto if copies[proto] == 1 else f"{proto}_{seen[proto]}")
        seen[proto] += 1
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise ValueError(f"instance names {clash} collide with another module's name; rename that module")

    # 2. Rigid bodies: the base, then one per joint output, in instantiation order.
    owner = [-1, 0]
    body_of: list[int] = []
    output_of: list[int] = []
    for i, (proto, parent, _) in enumerate(raw):
        module = modules[proto]
        if parent < 0:
            body_of.append(1)
            output_of.append(1)
            continue
        # A child of a joint hangs from its output; of anything else, from its body.
        body = output_of[parent]
        body_of.append(body)
        if module.kind == "joint":
            owner.append(i)
            output_of.append(len(owner) - 1)
        else:
            output_of.append(body)
    provisional_parent = [-1, 0] + [body_of[owner[b]] for b in range(2, len(owner))]

    # 3. Reorder bodies depth-first, siblings by joint name (the URDF readers' order).
    children: dict[int, list[int]] = {}
    for b in range(1, len(owner)):
        children.setdefault(provisional_parent[b], []).append(b)
    order = [0]
    stack = [1]
    while stack:
        b = stack.pop()
        order.append(b)
        kids = sorted(children.get(b, []), key=lambda c: names[owner[c]])
        stack.extend(reversed(kids))
    new = {old: k for k, old in enumerate(order)}
    body_owner = tuple(owner[old] for old in order)
    body_parent = tuple(-1 if old == 0 else new[provisional_parent[old]] for old in order)
    instances = tuple(
        Instance(names[i], index[proto], parent, att, new[body_of[i]], new[output_of[i]])
        for i, (proto, parent, att) in enumerate(raw)
    )
    joints = tuple(body_owner[b] for b in range(2, len(body_owner)))  # bodies 2.. are joint outputs

    # 4. Serial chains over the joint bodies.
    kids_of = {b: [c for c in range(2, len(body_owner)) if body_parent[c] == b] for b in range(len(body_owner))}
    chains: list[list] = []  # [bodies, parent chain]
    body_chain = [-1] * len(body_owner)

    def grow(start: int, parent_chain: int) -> None:
        run = [start]
        while len(kids_of[run[-1]]) == 1:
            run.append(kids_of[run[-1]][0])
        chains.append([run, parent_chain])
        me = len(chains) - 1
        for b in run:
            body_chain[b] = me
        for c in kids_of[run[-1]]:
            grow(c, me)

    for c in kids_of[1]:
        grow(c, -1)
    end_points = tuple(i for i, (proto, _, _) in enumerate(raw) if modules[proto].kind == "tool")
    end_point_chain = tuple(body_chain[instances[i].body] for i in end_points)
    chain_records = tuple(
        Chain(
            bodies=tuple(run),
            joints=tuple(b - 2 for b in run),
            parent=parent,
            children=tuple(k for k, (_, p) in enumerate(chains) if p == me),
            end_points=tuple(e for e, c in enumerate(end_point_chain) if c == me),
        )
        for me, (run, parent) in enumerate(chains)
    )
    return Structure(
        instances=instances,
        body_owner=body_owner,
        body_parent=body_parent,
        joints=joints,
        chains=chain_records,
        body_chain=tuple(body_chain),
        end_points=end_points,
        end_point_chain=end_point_chain,
    )
