"""A small breadth-first reachability check, independent of protocols/explorer, to cross-check
it (tests/test_datta_ring.py) and to time plain searches (benchmarks/datta_ring.py).

It walks every reachable global state of a small scenario (deduplicated by ``State.key()``),
checks safety after every step (no resource used by two clients, the protocol's own predicates)
and finds deadlocks (someone waits, no progress event is enabled). When the walk is complete it
also checks that from every reachable state an all-served state is still reachable, which rules
out livelocks as well as deadlocks.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from protocols.kernel import Simulator


@dataclass
class Exploration:
    states: int = 0
    complete: bool = False
    violation: tuple[str, list[str]] | None = None      # (text, schedule)
    deadlock: list[str] | None = None                   # schedule reaching one
    stuck: list[str] | None = None                      # schedule to a state that cannot finish
    done_states: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def _path(parent: dict, k: Any) -> list[str]:
    out = []
    while parent[k] is not None:
        k, eid = parent[k]
        out.append(eid)
    return out[::-1]


def _unsafe(sim: Simulator) -> str | None:
    for r, users in sim.usage.items():
        if len(users) > sim.capacity.get(r, 1):
            return f"{r} used by {', '.join(users)}"
    bad = sim.protocol.violations(sim)
    return bad[0] if bad else None


def explore(sim: Simulator, max_states: int = 50_000, stop_at_first: bool = True) -> Exploration:
    proto = sim.protocol
    res = Exploration()
    start = sim.state()
    parent: dict[Any, Any] = {start.key(): None}
    succ: dict[Any, list[Any]] = {}
    done: list[Any] = []
    queue = deque([start])
    while queue:
        st = queue.popleft()
        k = st.key()
        sim.restore(st)
        if proto.served_all(sim) and not sim.cs:
            done.append(k)
        evs = [e for e in sim.enabled()]
        if sim.waiting and not any(e.progress for e in evs) and res.deadlock is None:
            res.deadlock = _path(parent, k)
            if stop_at_first:
                break
        nxt = []
        for e in evs:
            sim.restore(st)
            sim.step_no = 0
            del sim.trace[:]
            del sim.narrations[:]
            sim.step(e.id)
            bad = _unsafe(sim)
            s2 = sim.state()
            k2 = s2.key()
            if k2 not in parent:
                parent[k2] = (k, e.id)
                if bad and res.violation is None:
                    res.violation = (bad, _path(parent, k2))
                queue.append(s2)
            nxt.append(k2)
        succ[k] = nxt
        if res.violation and stop_at_first:
            break
        if len(parent) > max_states:
            break
    else:
        res.complete = True
    res.states = len(parent)
    res.done_states = len(done)
    if res.complete:
        pred: dict[Any, list[Any]] = {}
        for u, vs in succ.items():
            for v in vs:
                pred.setdefault(v, []).append(u)
        good = set(done)
        work = list(done)
        while work:
            v = work.pop()
            for u in pred.get(v, ()):
                if u not in good:
                    good.add(u)
                    work.append(u)
        for k in parent:
            if k not in good:
                res.stuck = _path(parent, k)
                break
    return res
