"""Breadth-first exploration of every schedule of a scenario.

The search starts at the scenario's initial state and tries every enabled event (faults only as
the scenario's ``faults`` allow: the kernel lists them in ``enabled()`` only then). States are
deduplicated by the canonical key of ``keys.py``. Because the search is breadth-first, the
first violation or deadlock it meets is at the smallest possible depth, so its schedule is a
shortest one. Livelocks are looked for afterwards in the explored graph (``livelock.py``).

For each state the search keeps its parent and the id of the event that led to it, as numbered
in the parent's stored representative; the representative of a state is the concrete state
first reached, so following parents from the root gives a schedule that ``Simulator.step``
replays from step 0.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..kernel import Event, State
from .driver import Driver, Outcome, is_fair_demand, label
from .keys import Key
from .por import Reducer

Progress = Callable[[dict[str, Any]], None]


@dataclass
class Graph:
    """The explored state graph. Node i was reached from ``parent[i]`` by event ``via[i]``."""

    parent: list[int] = field(default_factory=list)
    via: list[str] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    waiting: list[frozenset] = field(default_factory=list)
    # Per expanded node: successor indices and, in step, an edge code
    # (label number * 4 + 2 if weak fairness demands the event + 1 if it entered a CS).
    succ: dict[int, tuple[int, ...]] = field(default_factory=dict)
    codes: dict[int, tuple[int, ...]] = field(default_factory=dict)
    labels: dict[tuple, int] = field(default_factory=dict)
    transitions: int = 0

    def path(self, i: int) -> list[str]:
        """The schedule from the root to node i."""
        out = []
        while i > 0:
            out.append(self.via[i])
            i = self.parent[i]
        out.reverse()
        return out


@dataclass
class Stop:
    """Why the search stopped early, and where."""

    kind: str                 # violation | deadlock | limit | cancelled | timeout
    node: int = -1            # the state reached (violation / deadlock)
    schedule: list[str] = field(default_factory=list)
    text: str = ""


class Search:
    """One breadth-first exploration; ``run()`` fills ``graph`` and returns a Stop or None."""

    def __init__(self, driver: Driver, key: Callable[..., Key], max_states: int,
                 keep_edges: bool = True, progress: Progress | None = None,
                 progress_every: int = 10_000, should_stop: Callable[[], bool] | None = None,
                 max_seconds: float | None = None, reducer: Reducer | None = None,
                 audit: Callable[[State, Callable[[], list[str]]], None] | None = None) -> None:
        self.driver = driver
        self.reducer = reducer
        self.audit = audit        # called with each new state (keys.py's forget check)
        self.reduced = 0          # states expanded with a persistent set smaller than enabled()
        self.key = key
        self.max_states = max_states
        self.keep_edges = keep_edges
        self.progress = progress
        self.progress_every = max(1, progress_every)
        self.should_stop = should_stop
        self.max_seconds = max_seconds
        self.graph = Graph()
        self.seen: dict[Key, int] = {}
        self.started = time.perf_counter()
        self.max_depth = 0
        self._sets: dict[frozenset, frozenset] = {}
        self._computed: dict[str, tuple[Outcome, Key, int | None, bool]] = {}

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def _add(self, st: State, key: Key, parent: int, via: str, waiting: frozenset) -> int:
        g = self.graph
        i = len(g.parent)
        self.seen[key] = i
        g.parent.append(parent)
        g.via.append(sys.intern(via))   # ids repeat across states: store each string once
        d = g.depth[parent] + 1 if parent >= 0 else 0
        g.depth.append(d)
        g.waiting.append(self._sets.setdefault(waiting, waiting))
        self.max_depth = max(self.max_depth, d)
        return i

    def _successor(self, st: State, st_key: Key, ev: Event
                   ) -> tuple[Outcome, Key, int | None, bool]:
        """Apply ``ev`` to ``st``: the outcome, its key, its node if already seen, and whether
        it is a deadlock (judged while the driver still holds it)."""
        cached = self._computed.pop(ev.id, None) if self._computed else None
        if cached is not None:
            return cached
        drv = self.driver
        drv.load(st)
        out = drv.apply(ev)
        self.graph.transitions += 1
        k = self.key(out.state, st_key, out.touched, out.numbers)
        j = self.seen.get(k)
        return out, k, j, j is None and not out.violations and drv.stuck()

    def _persistent(self, i: int, st: State, st_key: Key, events: list[Event]) -> list[Event]:
        """The events to expand at node i: the smallest persistent set that passes the
        reducer's conditions (por.py), else all of ``events``. Transitions computed to judge a
        set are kept for the expansion, so none is applied twice."""
        red = self.reducer
        assert red is not None
        self._computed = {}
        depth = self.graph.depth[i]
        # Deadlock condition: the set must hold an enabled progress event. With none enabled
        # (only requests, say) no set can, so the state is fully expanded: a deadlock reached
        # from it without the set's requests would keep them enabled, proving nothing.
        candidates = red.candidates(st, events) if any(e.progress for e in events) else []
        for S in candidates:
            T = [e for e in events if e.pid in S]
            if not any(e.progress for e in T):
                continue
            ok = True
            for ev in T:
                res = self._computed.get(ev.id)
                if res is None:
                    res = self._computed[ev.id] = self._successor(st, st_key, ev)
                out, _k, j, _stuck = res
                red.check_local(st, ev, out.state)
                if out.violations:        # a real one, whatever the set: report it
                    return [ev]
                if red.visible(st, ev, out.state) or (j is not None and
                                                      self.graph.depth[j] <= depth):
                    ok = False
                    break
            if ok:
                self.reduced += len(T) < len(events)
                for e in events:
                    if e.pid not in S:
                        self._computed.pop(e.id, None)
                return T
        for ev in events:           # full expansion: check locality on the rest too
            res = self._computed.get(ev.id)
            if res is None:
                res = self._computed[ev.id] = self._successor(st, st_key, ev)
            red.check_local(st, ev, res[0].state)
        return events

    def _report(self, frontier: int) -> None:
        if self.progress is not None:
            self.progress({"states": len(self.graph.parent), "transitions": self.graph.transitions,
                           "depth": self.max_depth, "frontier": frontier,
                           "seconds": round(self.elapsed(), 3)})

    def run(self) -> Stop | None:
        drv = self.driver
        g = self.graph
        root = drv.sim.state()
        drv._current = root
        root_key = self.key(root)
        self._add(root, root_key, -1, "", frozenset(drv.sim.waiting))
        bad = drv.root_violations()
        if bad:
            return Stop("violation", 0, [], "; ".join(bad))
        if drv.stuck():
            return Stop("deadlock", 0, [], "deadlock in the initial state")
        # The frontier: each state waiting for expansion, with its enabled actions (see
        # ``Outcome.acts``) so that restoring it is cheaper, and its key (its successors' keys
        # are updated from it, see ``Keyer.key``).
        reps: dict[int, tuple[State, Any, Key]] = {0: (root, None, root_key)}
        queue: deque[int] = deque([0])
        labels = g.labels
        next_report = self.progress_every
        next_poll = 4 * self.progress_every
        while queue:
            i = queue.popleft()
            st, acts, st_key = reps.pop(i)
            drv.load(st, acts)
            events = list(drv.enabled())
            if self.reducer is not None:
                events = self._persistent(i, st, st_key, events)
            succ: list[int] = []
            codes: list[int] = []
            for ev in events:
                out, k, j, stuck = self._successor(st, st_key, ev)
                if j is None:          # judged before this expansion added states: look again
                    j = self.seen.get(k)
                if out.violations:
                    return Stop("violation", -1, g.path(i) + [ev.id], "; ".join(out.violations))
                if j is None:
                    if len(g.parent) >= self.max_states:
                        return Stop("limit")
                    j = self._add(out.state, k, i, ev.id, out.waiting)
                    if stuck:
                        return Stop("deadlock", j, g.path(j))
                    reps[j] = (out.state, out.acts, k)
                    queue.append(j)
                    if self.audit is not None:
                        self.audit(out.state, lambda j=j: g.path(j))
                if self.keep_edges:
                    lab = label(ev)
                    n = labels.get(lab)
                    if n is None:
                        n = labels[lab] = len(labels)
                    succ.append(j)
                    codes.append(n * 4 + 2 * is_fair_demand(ev) + out.entered_cs)
            if self.keep_edges:
                g.succ[i] = tuple(succ)
                g.codes[i] = tuple(codes)
            if len(g.parent) >= next_report:
                next_report += self.progress_every
                self._report(len(queue))
                poll = True
            else:   # also poll now and then when few new states appear (a deep, narrow search)
                poll = g.transitions >= next_poll
            if poll:
                next_poll = g.transitions + 4 * self.progress_every
                if self.should_stop is not None and self.should_stop():
                    return Stop("cancelled")
                if self.max_seconds is not None and self.elapsed() > self.max_seconds:
                    return Stop("timeout")
        self._report(0)
        return None
