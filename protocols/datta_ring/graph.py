"""The dependency graph of Definition 3.1 and its cycles.

r_i ↦ r_j iff the head of Strong(r_i) is the strong request of some client c whose weak request
is in Strong(r_j). Each resource has at most one head, so at most one outgoing dependency: the
graph is functional and its cycles are disjoint, which is why following Head(Q_strong).NextResId
(the seekLoop) is enough to find them.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from .state import Config, Resource, search


def _digraph() -> nx.DiGraph:
    """An empty ``nx.DiGraph``, made as ``nx.DiGraph()`` makes one without a backend
    configured (``object.__new__`` and ``__init__``), skipping networkx's backend dispatch
    on ``DiGraph.__new__``: that dispatch compiles a wrapper (``inspect.signature``,
    ``compile``) on its first call in a process, about 0.2 ms, which the explorer's first
    ``check`` of a small ring paid for the one wait-for graph its deadlock names."""
    g = object.__new__(nx.DiGraph)
    g.__init__()
    return g


def dependencies(cfg: Config, res: dict[str, Resource]) -> nx.DiGraph:
    """Nodes: the resources in ring order; edge u → v labelled with the client that causes it."""
    g = _digraph()
    g.add_nodes_from(cfg.ring)
    for r in cfg.ring:
        h = res[r].head
        if h is None or h.RqNo != 1 or h.NextResId is None:
            continue
        w = search(res[h.NextResId].Q_strong, h.ClId)
        if w is not None and w.RqNo == 2:
            g.add_edge(r, h.NextResId, client=h.ClId)
    return g


def cycles(cfg: Config, g: nx.DiGraph) -> list[list[str]]:
    """The dependency cycles, each starting at its smallest identifier, in ring order."""
    seen: set[str] = set()
    out = []
    for start in cfg.ring:
        path: list[str] = []
        on_path: dict[str, int] = {}
        v: Any = start
        while v is not None and v not in seen and v not in on_path:
            on_path[v] = len(path)
            path.append(v)
            nxt = list(g.successors(v))
            v = nxt[0] if nxt else None
        if v is not None and v in on_path:
            cyc = path[on_path[v]:]
            i = min(range(len(cyc)), key=lambda k: cfg.rank[cyc[k]])
            out.append(cyc[i:] + cyc[:i])
        seen.update(path)
    return out


def resources(sim: Any) -> dict[str, Resource]:
    cfg = sim.config
    return {r: sim.procs[sim.index[r]] for r in cfg.ring}
