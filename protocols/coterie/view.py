"""The ``quorum`` view: the sharing graph laid out by direct geometry (networkx's bipartite
layout needs numpy, which is not a dependency), plus every variable the browser draws.

Processes sit on an upper arc and resources on a lower row of the 1000 × 700 box, each in its
structure's order, so a layout never moves between steps. docs/protocols/coterie.md ("View
data") documents every field.
"""

from __future__ import annotations

import math
from typing import Any

from .config import Config
from .monitors import in_q_region


def positions(cfg: Config) -> dict[str, tuple[float, float]]:
    """Processes on an arc (y 120–260), resources evenly on a row at y = 560."""
    pos = {}
    U, R = cfg.S.U, cfg.S.R
    for i, u in enumerate(U):
        f = (i + 0.5) / len(U)
        pos[u] = (round(80 + 840 * f, 1), round(260 - 140 * math.sin(math.pi * f), 1))
    for j, r in enumerate(R):
        pos[r] = (round(80 + 840 * (j + 0.5) / len(R), 1), 560.0)
    return pos


def _stamp(t: Any) -> list[int] | None:
    return list(t) if t is not None else None


def build(sim: Any) -> dict[str, Any]:
    cfg: Config = sim.config
    pos = positions(cfg)
    procs = dict(zip(sim.pids, sim.procs, strict=True))
    holder = {r: u for u, res in sim.cs.items() for r in res}
    nodes: list[dict[str, Any]] = []
    for u in cfg.S.U:
        s = procs[u]
        r = s.req
        badges = [r.phase] if r.phase != "idle" else []
        if in_q_region(s):
            badges.append("Q-region")
        if s.mem.W is not None:
            badges.append(f"W={s.mem.W}")
        nodes.append({
            "id": u, "label": u, "kind": "process", "x": pos[u][0], "y": pos[u][1],
            "cs": u in sim.cs, "waiting": u in sim.waiting, "crashed": u in sim.crashed,
            "badges": badges,
            "alpha": list(cfg.S.alpha[u]), "quorums": [list(q) for q in cfg.Q[u]],
            "clock": s.C, "phase": r.phase, "k": r.k,
            "quorum": list(r.q) if r.phase != "idle" else None,
            "stamp": _stamp(r.ts) if r.phase != "idle" else None,
            "responses": [c[0] for c in r.copies],
            "A": list(r.A(cfg.S.alpha[u])) if r.phase == "query" else [],
            "G": list(r.G), "q_region": in_q_region(s),
            "requests_done": r.done, "requests_total": len(cfg.workload[u]),
            "D": [{"r": e[0], "holder": e[1], "t": e[2]} for e in s.mem.D],
            "W": s.mem.W, "T": _stamp(s.mem.T), "preempting": s.mem.preempting,
            "X": [{"proc": x, "stamp": list(t)} for t, x in s.mem.X],
        })
    for res in cfg.S.R:
        nodes.append({"id": res, "label": res, "kind": "resource", "x": pos[res][0],
                      "y": pos[res][1], "holder": holder.get(res), "users": list(cfg.S.N(res)),
                      "cs": res in holder, "waiting": False, "crashed": False, "badges": []})
    edges = [{"src": u, "dst": r, "kind": "alpha", "dashed": r not in holder,
              "in_use": holder.get(r) == u}
             for u in cfg.S.U for r in cfg.S.alpha[u]]
    for v in cfg.S.U:
        W = procs[v].mem.W
        if W is not None:
            edges.append({"src": v, "dst": W, "kind": "grant", "dashed": procs[v].mem.preempting})
    queues = [{"node": v, "name": f"X_{v}", "items": [f"{x}@{t[0]}.{t[1]}" for t, x in
                                                       procs[v].mem.X]} for v in cfg.S.U]
    cyc = sim.monitors.wait_cycle() if sim.waiting else []
    extra = {
        "variant": sim.variant, "coterie_kind": cfg.coterie_kind, "strategy": cfg.strategy,
        "quorums": {u: [list(q) for q in cfg.Q[u]] for u in cfg.S.U},
        "active_quorum": {u: list(procs[u].req.q) for u in cfg.S.U
                          if procs[u].req.phase != "idle"},
        "R_v": {v: list(cfg.R_of[v]) for v in cfg.S.U},
        "clocks": {u: procs[u].C for u in cfg.S.U},
        "W": {v: procs[v].mem.W for v in cfg.S.U},
        "q_region": [u for u in cfg.S.U if in_q_region(procs[u])],
        "allocation": {u: list(res) for u, res in sorted(sim.cs.items())},
    }
    return {"layout": "quorum", "nodes": nodes, "edges": edges, "queues": queues,
            "cycles": [cyc] if cyc else [], "extra": extra}
