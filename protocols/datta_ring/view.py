"""What the browser draws for datta_ring (layout "ring"); field names are listed in the
"View data" section of docs/protocols/datta_ring.md.

Resources sit on a circle (the rooted ring, root at the top, clockwise in ring order); clients
on an outer circle, each next to the resources it asks for.
"""

from __future__ import annotations

import math
from typing import Any

from .graph import cycles, dependencies, resources
from .state import Request

CX, CY, R_RING, R_CLIENTS = 500.0, 350.0, 200.0, 320.0


def _angle(i: int, n: int) -> float:
    return 2 * math.pi * i / n - math.pi / 2


def _entry(x: Request) -> dict[str, Any]:
    return {"client": x.ClId, "RqNo": x.RqNo, "NextResId": x.NextResId, "Score": x.Score}


def _seek_paths(sim: Any, res: dict) -> list[dict[str, Any]]:
    """Each seekLoop in flight, with the dependency path it has followed so far (rebuilt by
    walking Head(Q_strong).NextResId from its initiator to where it is going)."""
    out = []
    for m in sim.inflight.values():
        if m.kind != "seekLoop":
            continue
        rmin, init = m.body[0], m.body[1]
        path, v = [init], init
        for _ in range(len(res)):
            h = res[v].head
            if v == m.src or h is None or h.NextResId is None:
                break
            v = h.NextResId
            path.append(v)
        if path[-1] != m.src:
            path = [init, m.src]
        out.append({"message": m.id, "init": init, "r_min": rmin, "at": m.src, "to": m.dst,
                    "path": path + [m.dst]})
    return out


def view(sim: Any) -> dict[str, Any]:
    cfg = sim.config
    res = resources(sim)
    n = len(cfg.ring)
    rot = cfg.ring.index(cfg.root)
    pos: dict[str, tuple[float, float]] = {}
    angle: dict[str, float] = {}
    for i, r in enumerate(cfg.ring):
        a = _angle((i - rot) % n, n)
        angle[r] = a
        pos[r] = (CX + R_RING * math.cos(a), CY + R_RING * math.sin(a))
    token_msgs = [m for m in sim.inflight.values() if m.kind == "Token"]
    holder = [r for r in cfg.ring if res[r].HoldingToken]
    nodes, edges, queues = [], [], []
    for r in cfg.ring:
        s = res[r]
        x, y = pos[r]
        badges = [b for b, on in (("root", r == cfg.root), ("token", s.HoldingToken),
                                  ("Lock", s.Lock), ("NewHead", s.NewHead)) if on]
        nodes.append({
            "id": r, "label": r, "kind": "resource", "x": round(x, 1), "y": round(y, 1),
            "root": r == cfg.root, "token": s.HoldingToken, "SendingToken": s.SendingToken,
            "Lock": s.Lock, "NewHead": s.NewHead,
            "StrongReady": s.StrongReady if isinstance(s.StrongReady, bool)
            else sorted(c for c, _ in s.StrongReady),
            "WeakReady": s.WeakReady, "r_min": s.r_min,
            "head": s.head.ClId if s.head else None,
            "in_use_by": sorted(p for p, rs in sim.cs.items() if r in rs),
            "deferred": [b[0] for b in s.Deferred], "gone": sorted(s.Gone),
            "seeking": s.Seeking[0] if s.Seeking else None,
            "ready": s.Ready[0] if s.Ready else None,
            "unlooping": s.Unlooping[0] if s.Unlooping else None,
            "cs": False, "waiting": False, "crashed": r in sim.crashed, "badges": badges})
        edges.append({"src": r, "dst": cfg.next_of(r), "kind": "ring", "dashed": False})
        for name, q in (("Q_strong", s.Q_strong), ("Q_weak", s.Q_weak), ("Q_token", s.Q_token)):
            queues.append({"node": r, "name": name, "items": [e.ClId for e in q],
                           "entries": [_entry(e) for e in q]})
    clients = list(cfg.clients)
    # clients sorted around the outer circle by the angle of their first strong resource
    def first_angle(c: str) -> float:
        rq = cfg.requests[c]
        return angle[rq[0][0]] if rq else 0.0
    order = sorted(range(len(clients)), key=lambda i: (first_angle(clients[i]), i))
    m = max(len(clients), 1)
    for k, i in enumerate(order):
        c = clients[i]
        s = sim.procs[sim.index[c]]
        a = _angle(k, m) + (math.pi / m if m > 1 else 0.0)
        nodes.append({"id": c, "label": c, "kind": "client",
                      "x": round(CX + R_CLIENTS * math.cos(a), 1),
                      "y": round(CY + R_CLIENTS * math.sin(a), 1),
                      "phase": s.phase, "D": list(s.D), "requests_left":
                      len(cfg.requests[c]) - s.next, "cs": c in sim.cs,
                      "waiting": c in sim.waiting, "gone": s.phase == "gone",
                      "crashed": c in sim.crashed, "badges": ["CS"] if c in sim.cs else []})
        if s.phase in ("waiting", "cs", "finishing"):
            if s.D[0]:
                edges.append({"src": c, "dst": s.D[0], "kind": "strong-request", "dashed": False})
            if s.D[1]:
                edges.append({"src": c, "dst": s.D[1], "kind": "weak-request", "dashed": True})
    g = dependencies(cfg, res)
    for u, v, d in g.edges(data=True):
        edges.append({"src": u, "dst": v, "kind": "dependency", "client": d["client"],
                      "dashed": False})
    return {"layout": "ring", "nodes": nodes, "edges": edges, "queues": queues,
            "cycles": cycles(cfg, g),
            "extra": {"root": cfg.root, "ring": list(cfg.ring),
                      "token_holder": holder[0] if len(holder) == 1 else holder or None,
                      "token_in_flight": [{"message": t.id, "src": t.src, "dst": t.dst}
                                          for t in token_msgs],
                      "seekLoops": _seek_paths(sim, res), "variant": sim.variant}}
