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

from ..kernel import State
from .driver import Driver, is_fair_demand, label
from .keys import Key

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
                 max_seconds: float | None = None) -> None:
        self.driver = driver
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
            succ: list[int] = []
            codes: list[int] = []
            for ev in events:
                drv.load(st)
                out = drv.apply(ev)
                g.transitions += 1
                if out.violations:
                    return Stop("violation", -1, g.path(i) + [ev.id], "; ".join(out.violations))
                k = self.key(out.state, st_key, out.touched)
                j = self.seen.get(k)
                if j is None:
                    if len(g.parent) >= self.max_states:
                        return Stop("limit")
                    j = self._add(out.state, k, i, ev.id, out.waiting)
                    if drv.stuck():
                        return Stop("deadlock", j, g.path(j))
                    reps[j] = (out.state, out.acts, k)
                    queue.append(j)
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
