"""The ``game`` view (docs/protocols/task_game.md, "View data") and the wait-for edges.

Positions in a 1000 x 700 box, laid out for a 1280 x 720 projector: a group per network node
(the agent between its pools, each pool's queue under it) in a row, and each agent's tasks in a
row above it (see ``_positions``).
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


# Sizes of what static/js/views/game.js draws, in screen pixels of the 1280 x 720 projector
# (where one unit of the 1000 x 700 box is about one pixel once the view is fitted).
R = 34.0            # node radius (common.js: 34 for a small view)
CHAR = 7.0          # px per character of the 11-12 px detail and queue text
GAP = 16.0          # between neighbours in a row
TASK_SLOT = 120.0   # a task and its three lines (phase, ticket, alarm) above it
ROWS = 190.0        # from the row of tasks to the row of network nodes
NEAR = 120.0        # no two nodes closer (common.js hides every badge under ~95 px)


def _pool_extent(cfg: Config, pool: str) -> tuple[float, float]:
    """(left, right) of a pool, its units, badge, order forms and queue row, from its centre."""
    m = min(8, max(1, sum(1 for t in cfg.task_order if pool in cfg.tasks[t].interest)))
    id_len = max([2] + [len(t) for t in cfg.task_order])
    chip = max(24.0, (id_len + 2) * CHAR + 8) + 3   # "T1:3"
    queue = max((len(pool) + 9) * CHAR, m * chip)
    orders = (7 + m * (id_len + 3)) * CHAR / 2   # "orders T1:3 T3:4"
    units = R + 5 + math.ceil(len(cfg.units[pool]) / 3) * 14
    return max(R, orders), max(units, orders, queue - R)


def _positions(cfg: Config) -> dict[str, tuple[float, float]]:
    """A group per network node, left to right in the agents' order: the agent with its pools
    on either side (the first on its right, then alternately left and right, each pool's queue
    row under it), and the agent's tasks in a row above it, ordered by where their pools are so
    that the interest edges cross less. Deterministic: only the configuration's order counts."""
    rel: dict[str, float] = {}           # x relative to the group's agent
    spans: list[tuple[str, float, float]] = []
    agent_half = max(R, 9 * CHAR / 2)
    for a in cfg.agents:
        mine = [p for p in cfg.pools if cfg.manager[p] == a]
        right = [mine[0]] + mine[2::2] if mine else []
        left = mine[1::2]
        lo, hi = -agent_half, agent_half
        rel[a] = 0.0
        cur = hi + GAP
        for p in right:
            lft, rgt = _pool_extent(cfg, p)
            rel[p] = max(cur + lft, hi + NEAR - agent_half if p == right[0] else 0.0)
            cur = rel[p] + rgt + GAP
            hi = rel[p] + rgt
        cur = lo - GAP
        for p in left:
            lft, rgt = _pool_extent(cfg, p)
            rel[p] = min(cur - rgt, -NEAR if p == left[0] else 0.0)
            cur = rel[p] - lft - GAP
            lo = rel[p] - lft
        nt = sum(1 for t in cfg.task_order if cfg.tasks[t].agent == a)
        lo, hi = min(lo, -nt * TASK_SLOT / 2), max(hi, nt * TASK_SLOT / 2)
        spans.append((a, lo, hi))

    xs: dict[str, float] = {}
    cur = 0.0
    for a, lo, hi in spans:
        off = cur - lo
        xs[a] = off
        for p in cfg.pools:
            if cfg.manager[p] == a:
                xs[p] = off + rel[p]
        cur = off + hi + 1.5 * GAP
    width = cur - 1.5 * GAP
    for a, _lo, _hi in spans:
        ts = [t for t in cfg.task_order if cfg.tasks[t].agent == a]
        bary = {t: sum(xs[p] for p in cfg.tasks[t].interest) / max(1, len(cfg.tasks[t].interest))
                for t in ts}
        ts.sort(key=lambda t: (bary[t], cfg.task_order.index(t)))
        for j, t in enumerate(ts):
            xs[t] = xs[a] + (j - (len(ts) - 1) / 2) * TASK_SLOT

    scale = min(1.0, 990.0 / width) if width > 0 else 1.0
    # vertically: the tasks' lines above them (80) and the pools' queues under them (101)
    top = 350 - (80 + ROWS + 101) / 2 + 80
    pos: dict[str, tuple[float, float]] = {}
    for v, x in xs.items():
        y = top if v in cfg.tasks else top + ROWS
        pos[v] = (round(500 + (x - width / 2) * scale, 1), round(y, 1))
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
