"""kout_tree families: every rooted tree of a few processes, ℓ, k and the requests.

Trees are unordered rooted trees up to isomorphism, listed with each node's children in a
canonical order (sorted by their subtrees' canonical strings); the root is ``r`` and the others
``p1``, ``p2``, ... in preorder. Mirror-image child orders are taken as one instance: they
change the virtual ring's direction, not the tree (an assumption of the family, said in
docs/explorer.md). A workload gives each process a sequence of requests (Need values 1..k); two
instances that differ by an automorphism of the tree moving workloads along are one instance.
``chaos`` starts from the arbitrary configurations of ``protocols/kout_tree/chaos.py`` (its seeds
draw spurious or missing tokens of each kind, stale controllers, counters and flags).

The root's clock is part of every instance (``CLOCK``): ``timeout`` 1 (each tick is a
``TimeOut()``: every timeout has the same reachable configurations up to the clock's own value,
docs/explorer.md) and ``congestion`` 2 (the search explores ``TimeOut`` only while fewer than two
ctrl messages are in flight: at most one duplicate controller at a time, the paper's footnote 4
made concrete). Without a congestion bound the root may send unboundedly many duplicates while
the controller is in flight and no instance with a controller can be exhausted.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from functools import cache
from typing import Any

from . import Family, Instance


@cache
def rooted_trees(n: int) -> tuple[str, ...]:
    """Canonical strings of the unordered rooted trees with n nodes: "(" + children + ")"."""
    if n == 1:
        return ("()",)
    out: set[str] = set()
    for parts in _partitions(n - 1):
        for kids in itertools.product(*[rooted_trees(p) for p in parts]):
            out.add("(" + "".join(sorted(kids)) + ")")
    return tuple(sorted(out))


def _partitions(n: int, top: int | None = None) -> Iterator[tuple[int, ...]]:
    top = n if top is None else top
    if n == 0:
        yield ()
        return
    for k in range(min(n, top), 0, -1):
        for rest in _partitions(n - k, k):
            yield (k, *rest)


def _parse(s: str) -> list[list]:
    """A canonical string as nested child lists."""
    stack: list[list] = [[]]
    for ch in s:
        if ch == "(":
            stack.append([])
        else:
            node = stack.pop()
            stack[-1].append(node)
    return stack[0][0]


def _label(tree: list, work: dict[int, tuple[int, ...]]) -> tuple[dict[str, list[str]], list]:
    """Name nodes r, p1, p2 ... in preorder; return children lists and preorder nodes."""
    order: list = []

    def walk(node: list) -> None:
        order.append(node)
        for c in node:
            walk(c)
    walk(tree)
    names = {id(nd): ("r" if i == 0 else f"p{i}") for i, nd in enumerate(order)}
    children = {names[id(nd)]: [names[id(c)] for c in nd] for nd in order if nd}
    return children, [names[id(nd)] for nd in order]


def _canon(tree: list, work: tuple, pos: list[int]) -> str:
    """Canonical string of a tree whose preorder node i carries work[i]."""
    i = pos[0]
    pos[0] += 1
    kids = sorted(_canon(c, work, pos) for c in tree)
    return f"{work[i]}(" + "".join(kids) + ")"


# The root's clock in every instance: the adversary the exhaustive search is run against.
CLOCK = {"timeout": 1, "congestion": 2}


# No duplicate controller at all: TimeOut explored only while no ctrl is in flight, which from
# a clean start without faults is never (the timeout outlasts every controller round trip).
QUIET = {"timeout": 1, "congestion": 1}


def trees(ns: range, ells: range, asks: range, clean: bool = True, chaos_seeds: int = 0,
          quick: Any = None, clock: dict[str, int] = CLOCK) -> Iterator[Instance]:
    for n in ns:
        for ts in rooted_trees(n):
            tree = _parse(ts)
            children, pids = _label(tree, {})
            for ell in ells:
                for k in range(1, ell + 1):
                    reqs = [s for a in asks for s in itertools.product(range(1, k + 1), repeat=a)]
                    seen: set[str] = set()
                    for work in itertools.product(reqs, repeat=n):
                        c = _canon(tree, work, [0])
                        if c in seen:
                            continue
                        seen.add(c)
                        for seed in (range(chaos_seeds) if not clean else [None]):
                            yield _instance(ts, children, pids, ell, k, work, seed, quick,
                                            clock)


def _instance(ts: str, children: dict[str, list[str]], pids: list[str], ell: int, k: int,
              work: tuple, seed: int | None, quick: Any,
              clock: dict[str, int] = CLOCK) -> Instance:
    params: dict[str, Any] = {"ell": ell, "k": k, **clock}
    if seed is not None:
        params["chaos"] = {"seed": seed}
    sc = {"protocol": "kout_tree", "params": params,
          "topology": {"root": "r", "children": children or {"r": []}},
          "workload": {p: list(w) for p, w in zip(pids, work, strict=True)},
          "channels": "fifo", "steps": 3000}
    name = (f"n{len(pids)} {ts} ℓ={ell} k={k} " + " ".join(
        f"{p}:{','.join(map(str, w))}" for p, w in zip(pids, work, strict=True))
        + (f" chaos#{seed}" if seed is not None else ""))
    return Instance(name, sc, bool(quick and quick(len(pids), ell, k, work, seed)))


def shape(sc: dict[str, Any]) -> str:
    """An instance's class for ``verify --sample``: processes, ℓ, k and the most requests one
    process makes (the tree's shape and the Need values vary inside a class)."""
    w = sc["workload"]
    return (f"n{len(w)} ℓ={sc['params']['ell']} k={sc['params']['k']} "
            f"asks<={max(len(r) for r in w.values())}")


FAMILIES = [
    Family("kout_tree", "small",
           "every rooted tree of 2-3 processes; ℓ ≤ 2, k ≤ ℓ; each process requests once "
           "(Need 1..k); clean start; timeout 1, TimeOut explored while < 2 ctrl in flight",
           lambda: trees(range(2, 4), range(1, 3), range(1, 2),
                         quick=lambda n, ell, k, w, s: n == 2 and ell == 1),
           shape=shape, max_states=50_000, worst="waiting_time"),
    Family("kout_tree", "small-quiet",
           "the instances of small with no duplicate controller: TimeOut explored only while no "
           "ctrl is in flight (congestion 1), i.e. never from these fault-free clean starts - "
           "the timeout outlasts every controller round trip",
           lambda: trees(range(2, 4), range(1, 3), range(1, 2), clock=QUIET,
                         quick=lambda n, ell, k, w, s: n == 2 and ell == 1),
           shape=shape, max_states=50_000, worst="waiting_time"),
    Family("kout_tree", "issue",
           "the issue's family: every rooted tree of 2-5 processes; ℓ ≤ 3, k ≤ ℓ; each process "
           "requests 1-2 times (Need 1..k each); clean start; timeout 1, TimeOut explored while "
           "< 2 ctrl in flight (cluster-sized: 1,501,188 instances)",
           lambda: trees(range(2, 6), range(1, 4), range(1, 3)),
           shape=shape, max_states=200_000, worst="waiting_time", ci=False),
    Family("kout_tree", "chaos",
           "every rooted tree of 2-3 processes; ℓ ≤ 2, k ≤ ℓ; each process requests once; "
           "arbitrary starts: chaos seeds 0-9; timeout 1, TimeOut explored while < 2 ctrl in "
           "flight; random runs add drop / duplicate / corrupt faults",
           lambda: trees(range(2, 4), range(1, 3), range(1, 2), clean=False, chaos_seeds=10,
                         quick=lambda n, ell, k, w, s: n == 2 and ell == 1 and s < 2),
           shape=shape, max_states=50_000, faults={"drop": True, "duplicate": True, "corrupt": True,
                                      "rate": 0.02},
           judge_faults="stabilise"),
]
