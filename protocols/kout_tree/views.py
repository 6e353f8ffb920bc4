"""What the browser sees: the tree view and the wait-for graph (the inspector's guards come from
the rules tables)."""

from __future__ import annotations

from typing import Any

import networkx as nx

from .config import Config
from .legitimacy import counts, expected, legitimate
from .state import IN, REQ, Proc


def _holds(s: Proc) -> bool:
    return bool(s.RSet) or s.Prio is not None


def wait_for(sim: Any) -> nx.DiGraph:
    """p → q when p has an unsatisfied request and q is the nearest process before p on the
    virtual ring that keeps tokens (reserved ResT or the PrioT): tokens reach p only in ring
    order, so p waits for q to let them go.  In Fig. 2 this closes into a cycle."""
    cfg: Config = sim.config
    ring = cfg.tree.tour()
    g = nx.DiGraph()
    for p in sim.pids:
        s = sim.proc(p)
        if s.State != REQ or len(s.RSet) >= s.Need or p in sim.crashed:
            continue
        i = ring.index(p)
        for j in range(1, len(ring) + 1):
            q = ring[(i - j) % len(ring)]
            if q != p and _holds(sim.proc(q)):
                g.add_edge(p, q)
                break
    return g


def view(sim: Any) -> dict[str, Any]:
    cfg: Config = sim.config
    t = cfg.tree
    pos = t.positions()
    nodes = []
    for p in t.pids:
        s = sim.proc(p)
        nb = t.nbr[p]
        node = {"id": p, "label": p, "kind": "root" if p == t.root else "process",
                "x": pos[p][0], "y": pos[p][1],
                "cs": s.State == IN, "waiting": p in sim.waiting, "crashed": p in sim.crashed,
                "badges": ([f"{len(s.RSet)} ResT"] if s.RSet else [])
                + (["PrioT"] if s.Prio is not None else []),
                "State": s.State, "Need": s.Need,
                "RSet": list(s.RSet), "RSet_from": [nb[i] for i in s.RSet],
                "Prio": s.Prio, "Prio_from": None if s.Prio is None else nb[s.Prio],
                "channels": list(nb)}
        if cfg.feat.controller:
            node.update(myC=s.myC, Succ=s.Succ, Succ_to=nb[s.Succ])
            if p == t.root:
                node.update(SToken=s.SToken, SPush=s.SPush, SPrio=s.SPrio, Reset=s.Reset,
                            Timer=s.Timer, timeout=cfg.timeout)
        nodes.append(node)
    edges = [{"src": a, "dst": b, "kind": "tree", "dashed": False,
              "src_label": t.label[(a, b)], "dst_label": t.label[(b, a)]} for a, b in t.edges()]
    res, push, prio = counts(sim)
    try:
        cycle = [u for u, _v in nx.find_cycle(wait_for(sim))]
    except nx.NetworkXNoCycle:
        cycle = []
    return {"layout": "tree", "nodes": nodes, "edges": edges,
            "queues": [{"node": p, "name": "RSet", "items": [t.nbr[p][i] for i in sim.proc(p).RSet]}
                       for p in t.pids if sim.proc(p).RSet],
            "cycles": [cycle] if cycle else [],
            "extra": {"virtual_ring": t.tour(), "root": t.root, "ell": cfg.ell, "k": cfg.k,
                      "tokens": {"ResT": res, "PushT": push, "PrioT": prio},
                      "expected_tokens": dict(zip(("ResT", "PushT", "PrioT"), expected(cfg), strict=True)),
                      "legitimate": legitimate(sim),
                      "controller": cfg.feat.controller}}

