"""What the browser and the inspector see: the tree view, the wait-for graph and the guards."""

from __future__ import annotations

from typing import Any

import networkx as nx

from ..kernel import Guard
from .algorithm2 import pusher_releases
from .config import Config
from .legitimacy import counts, expected, track
from .state import IN, OUT, REQ, Proc


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
    tr = track(sim)
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
                      "legitimate": tr.legit(sim.step_no),
                      "controller": cfg.feat.controller}}


def guards(cfg: Config, pid: str, s: Proc) -> list[Guard]:
    root = pid == cfg.root
    a = "1" if root else "2"
    L = (lambda r, n: r) if root else (lambda r, n: n)   # root lines, non-root lines
    short = len(s.RSet) < s.Need
    more = f"{s.Need - len(s.RSet)} more ResT" if s.State == REQ else "a request (State = Req)"
    left = cfg.repeat[pid] or s.job < len(cfg.needs[pid])
    out = [
        Guard("request (application: Out → Req)", s.State == OUT and bool(cfg.needs[pid]) and left,
              None, (), "" if s.State == OUT else f"State = Out (it is {s.State})"),
        Guard("keep the next ResT", s.State == REQ and short, a, L((11, 12), (10, 11)),
              "an unsatisfied request"),
        Guard("EnterCS", s.State == REQ and not short, a, L((75, 78), (62, 65)), more),
        Guard("ReleaseCS", s.State == IN, a, L((79, 88), (66, 72)), "being in the critical section"),
    ]
    if cfg.feat.pusher:
        out.append(Guard("release RSet on PushT", pusher_releases(cfg, s) and bool(s.RSet), a,
                         L((21, 29), (17, 23)),
                         "reserved tokens, no PrioT, and neither In nor ready to enter"))
    if cfg.feat.prio:
        out.append(Guard("take a PrioT", s.Prio is None, a, L((37, 38), (27, 28)),
                         "giving its PrioT away first"))
        out.append(Guard("pass the PrioT on", s.Prio is not None and not (s.State == REQ and short),
                         a, L((89, 95), (73, 76)),
                         "holding a PrioT" if s.Prio is None else more))
    if cfg.feat.controller:
        if root:
            out.append(Guard("accept ctrl", True, a, (44, 44),
                             f"(a ctrl from channel {s.Succ} with C = {s.myC})"))
            out.append(Guard(f"TimeOut() (timer {s.Timer} of {cfg.timeout})", True, a, (96, 99)))
        else:
            out.append(Guard(f"accept ctrl from the parent with C ≠ {s.myC}", True, a, (43, 52)))
            out.append(Guard(f"accept ctrl from channel {s.Succ} with C = {s.myC}", s.Succ != 0,
                             a, (35, 41), "Succ ≠ 0 (the traversal is below it)"))
    return out
