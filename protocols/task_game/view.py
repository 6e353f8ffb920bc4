"""The ``game`` view (docs/protocols/task_game.md, "View data") and the wait-for edges.

Positions in a 1000 x 700 box: agents (nodes of the network) on an inner circle, each agent's
pools just outside it and its tasks further out, in the same angular sector.
"""

from __future__ import annotations

import math
from typing import Any

import networkx as nx

from . import conditions as C
from .data import (
    ACCESSING,
    ADMITTED,
    ADVANCING,
    LEFT,
    NEW,
    ORDERING,
    REGISTERING,
    RELEASING,
    TRYING,
    WINNING,
    Config,
    ManagerState,
)


def _queue_edges(cfg: Config, sim: Any, t: str, pool: str) -> list[tuple[str, str]]:
    """t -> u for the requests u ahead of t (or all, if t has none there) when t is blocked."""
    p: ManagerState = sim.proc(pool)
    units = len(cfg.units[pool])
    free = units - len(p.in_use)
    i = next((j for j, r in enumerate(p.requests) if r.task == t), None)
    ahead = [r.task for r in (p.requests if i is None else p.requests[:i]) if r.task != t]
    out = []
    if len(ahead) >= free:
        out += [(t, u) for u in ahead]
        if free <= 0:
            out += [(t, u) for _, u in p.in_use if u != t]
    return out


def wait_edges(sim: Any) -> list[tuple[str, str]]:
    cfg: Config = sim.config
    edges: list[tuple[str, str]] = []
    for t in cfg.task_order:
        if t in sim.crashed:
            continue
        s = sim.proc(t)
        if s.status == REGISTERING:
            edges += [(t, u) for a in s.about for u, _ in a.predecessors]
        elif s.status in (TRYING, ADVANCING, ORDERING, ADMITTED):
            for pool in cfg.tasks[t].interest:
                edges += _queue_edges(cfg, sim, t, pool)
        elif s.status == WINNING:
            for pool in cfg.tasks[t].interest:
                p = sim.proc(pool)
                if not any(u == t for _, u in p.in_use):
                    edges += [(t, u) for _, u in p.in_use]
    return sorted(set(e for e in edges if e[0] != e[1]))


def _positions(cfg: Config) -> dict[str, tuple[float, float]]:
    pos: dict[str, tuple[float, float]] = {}
    n = len(cfg.agents)
    sector = 2 * math.pi / n * 0.7

    def at(th: float, r: float, dth: float) -> tuple[float, float]:
        return (round(500 + r * math.cos(th + dth), 1),
                round(350 + 0.95 * r * math.sin(th + dth), 1))

    for i, a in enumerate(cfg.agents):
        th = 2 * math.pi * i / n - math.pi / 2

        pos[a] = at(th, 110 if n > 1 else 0, 0)
        mine = [p for p in cfg.pools if cfg.manager[p] == a]
        for j, p in enumerate(mine):
            pos[p] = at(th, 220, sector * ((j + 0.5) / len(mine) - 0.5))
        ts = [t for t in cfg.task_order if cfg.tasks[t].agent == a]
        for j, t in enumerate(ts):
            pos[t] = at(th, 320, sector * ((j + 0.5) / len(ts) - 0.5))
    return pos


def view(sim: Any) -> dict[str, Any]:
    cfg: Config = sim.config
    pos = _positions(cfg)
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    queues: list[dict[str, Any]] = []
    for a in cfg.agents:
        ag = sim.proc(a)
        x, y = pos[a]
        nodes.append({"id": a, "label": a, "kind": "agent", "x": x, "y": y,
                      "clock": ag.clock, "tickets": list(ag.distributed_tickets),
                      "controlled": list(ag.controlled), "crashed": a in sim.crashed,
                      "cs": False, "waiting": False, "badges": [f"clock {ag.clock}"]})
    for pool in cfg.pools:
        p: ManagerState = sim.proc(pool)
        x, y = pos[pool]
        users = dict(p.in_use)
        units = [{"id": u, "user": users.get(u)} for u in cfg.units[pool]]
        nodes.append({"id": pool, "label": pool, "kind": "pool", "x": x, "y": y,
                      "agent": cfg.manager[pool], "units": units,
                      "free": sum(1 for u in units if u["user"] is None),
                      "in_use": len(p.in_use), "applications": list(p.applications),
                      "admissions": [{"task": t, "ticket": n} for t, n in p.admissions],
                      "orders": [{"task": t, "ticket": n} for t, n in p.orders],
                      "crashed": pool in sim.crashed, "cs": False, "waiting": False,
                      "badges": [f"{len(units) - len(p.in_use)}/{len(units)} free"]})
        edges.append({"src": cfg.manager[pool], "dst": pool, "kind": "manages", "dashed": False})
        ordered = {t for t, _ in p.orders}
        queues.append({"node": pool, "name": f"Requests_{pool}",
                       "items": [f"{r.task}:{r.ticket}" for r in p.requests],
                       "tickets": [{"task": r.task, "ticket": r.ticket, "seq": r.seq,
                                    "order": r.task in ordered} for r in p.requests]})
    for t in cfg.task_order:
        s = sim.proc(t)
        x, y = pos[t]
        spec = cfg.tasks[t]
        badges = [s.status]
        if s.tickets_at:
            badges.append(f"ticket {s.tickets_at[0]}")
        if s.alarm_clock is not None:
            badges.append(f"alarm {s.alarm_clock}")
        nodes.append({"id": t, "label": t, "kind": "task", "x": x, "y": y, "agent": spec.agent,
                      "phase": s.status, "ticket": s.tickets_at[0] if s.tickets_at else None,
                      "interest": list(spec.interest), "alarm_clock": s.alarm_clock,
                      "clock": s.clock, "destinations": list(s.destinations),
                      "p_holds": (C.p_holds(cfg, t, s) if s.status not in (NEW, LEFT) else None),
                      "cs": t in sim.cs, "waiting": t in sim.waiting,
                      "crashed": t in sim.crashed, "badges": badges})
        edges.append({"src": spec.agent, "dst": t, "kind": "controls", "dashed": False})
        for pool in spec.interest:
            queued = any(r.task == t for r in sim.proc(pool).requests)
            edges.append({"src": t, "dst": pool, "kind": "interest",
                          "dashed": not queued, "requested": queued,
                          "using": s.status == ACCESSING})

    g = nx.DiGraph(wait_edges(sim))
    cycles = [list(c) for c in sorted(nx.simple_cycles(g), key=lambda c: (len(c), c))][:10]
    return {"layout": "game", "nodes": nodes, "edges": edges, "queues": queues,
            "cycles": cycles,
            "extra": {"gamma": cfg.gamma, "variant": cfg.variant,
                      "conflicts": [sorted(e) for e in sorted(cfg.conflict.edges())],
                      "wait_for": [list(e) for e in wait_edges(sim)],
                      "statuses": [REGISTERING, ADMITTED, TRYING, ADVANCING, ORDERING,
                                   WINNING, ACCESSING, RELEASING]}}
