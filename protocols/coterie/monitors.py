"""Live checks of Section 2's conditions and Section 5's Lemma 1, and the wait-for graph. The
kernel already checks that no resource has two users (capacity 1)."""

from __future__ import annotations

from typing import Any

import networkx as nx

from ..kernel import Ctx
from .config import Config
from .state import Proc

ALG = "AllocResource"


def in_q_region(s: Proc) -> bool:
    """u has a D_v from every v ∈ q and has neither sent LOCK nor been preempted since (§5)."""
    return s.req.has_all()


def _lemma1_pairs(cfg: Config, members: list[str]) -> list[str]:
    out = []
    for i, u in enumerate(members):
        for v in members[i + 1:]:
            if cfg.S.share(u, v):
                out.append(f"Lemma 1: {u} and {v} share {', '.join(cfg.S.shared(u, v))} and are "
                           "both in their Q-regions")
    return out


def violations(sim: Any) -> list[str]:
    """Allocation validity (ρ_v ⊆ α(v)) and Lemma 1 (no two sharers in their Q-regions)."""
    cfg: Config = sim.config
    out = []
    if sim.cs:
        for u, res in sorted(sim.cs.items()):
            bad = [r for r in res if r not in cfg.S.alpha[u]]
            if bad:
                out.append(f"allocation validity: {u} accesses {', '.join(bad)} ∉ α({u})")
    inq = [u for u, s in zip(sim.pids, sim.procs, strict=True) if in_q_region(s)]
    if len(inq) > 1:            # a pair needs two (the explorer asks on every state)
        out.extend(_lemma1_pairs(cfg, inq))
    return out


def check_lemma1_on_entry(ctx: Ctx, u: str) -> None:
    """Lemma 1 at the instant u enters its Q-region: u may lock and leave it in the same step,
    which the after-step check would not see. It asks each sharer only whether it is in its
    Q-region (``ctx.peek``), so the explorer can still replay u's step from memory."""
    cfg: Config = ctx.config
    for v in cfg.S.U:       # the processes in the simulator's order
        if v != u and cfg.S.share(u, v) and ctx.peek(v, in_q_region):
            ctx.violation(f"Lemma 1: {u} enters its Q-region while {v}, which shares "
                          f"{', '.join(cfg.S.shared(u, v))}, is in its own")


def wait_for(sim: Any) -> nx.DiGraph:
    """u → x when the querying u waits for x: for the permission x holds at a member of u's
    quorum (W_v = x), for a member v that has not answered, or for the holder of a resource
    u needs; a member waiting for a reply to its PREEMPT waits for W_v."""
    cfg: Config = sim.config
    procs = dict(zip(sim.pids, sim.procs, strict=True))
    g = nx.DiGraph()
    for u, s in procs.items():
        if s.mem.preempting and s.mem.W is not None:
            g.add_edge(u, s.mem.W)
        if s.req.phase != "query":
            continue
        have = {c[0] for c in s.req.copies}
        missing = [v for v in s.req.q if v not in have]
        for v in missing:
            w = procs[v].mem.W
            target = w if w not in (None, u) else v
            if target != u:
                g.add_edge(u, target)
        if not missing and len(s.req.A(cfg.S.alpha[u])) < s.req.k:
            for _v, d in s.req.copies:
                for _r, holder, _t in d:
                    if holder is not None and holder != u:
                        g.add_edge(u, holder)
    return g
