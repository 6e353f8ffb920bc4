"""The kernel's public transition system: apply one event to one stored global state.

A search (the explorer, its reductions and audits, the tests' and benchmarks' searches) needs
only this: a ``State``, the events enabled in it, and what applying one of them does. It needs
none of the timeline (trace, narration, snapshots, metrics, the livelock heuristic), so
``Transitions`` drives the kernel's explorer-only ``LeanSimulator`` and gives back an
``Outcome`` per transition. Nothing outside the kernel touches a simulator's insides to search.

    ts = Transitions(sim)                 # sim: a Simulator at step 0 (its protocol, config)
    root = ts.initial
    for ev, out in ts.successors(root):
        out.state, out.violations, out.entered_cs, out.unfinished

Every transition starts from "step 0": history a protocol keys by step (kout_tree's legitimacy
track) stays bounded and is read as if the parent were the start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .events import Event
from .lean import LeanSimulator, Working
from .sim import Simulator, State


@dataclass(slots=True)
class Outcome:
    """What one transition did. Nobody changes one once made; it is not declared frozen only
    because a frozen dataclass's ``__init__`` costs twice as much, and one is made per
    transition."""

    state: State
    violations: tuple[str, ...]   # safety findings reported during or after the step
    entered_cs: bool              # some process entered its critical section
    unfinished: frozenset         # pids that have not finished afterwards (Simulator.unfinished)
    # The successor's enabled actions per process index (fast mode only; None otherwise):
    # handed back to ``load`` when the search expands this state, so that restoring it need not
    # ask the protocol for every process's actions again. Not part of what a transition *is*.
    acts: dict[int, tuple[Event, ...]] | None = field(default=None, compare=False, repr=False)
    # Indices of the processes the step may have changed (fast mode only; None otherwise):
    # the others kept their states, which lets a key function update the parent's key.
    touched: tuple[int, ...] | None = field(default=None, compare=False, repr=False)
    # The numbers of the touched processes' states (``Transitions.numbers``), in the order of
    # ``touched``.
    numbers: tuple[int, ...] | None = field(default=None, compare=False, repr=False)

    @property
    def waiting(self) -> frozenset:
        """Alias of ``unfinished`` (the name before the ``unfinished`` hook)."""
        return self.unfinished


class Transitions:
    """Applies single events to stored states of one scenario.

    ``load(st)`` makes ``st`` current; ``enabled()`` and ``apply(ev)`` then work on it. With
    ``fast`` (the default) it works on a ``LeanSimulator`` twin of ``sim`` (no fingerprints,
    ``_since``, labels, narration or metrics), and restores cheaply: a search restores the
    same parent once per enabled event, so it keeps a copy of the working attributes of the
    last restored state and puts a fresh copy back instead of rebuilding them. Without
    ``fast`` it drives ``sim`` itself through ``Simulator.restore`` and the kernel's full
    after-step: the reference the fast path is tested against.
    """

    def __init__(self, sim: Simulator, fast: bool = True) -> None:
        self.fast = fast
        self._sim = LeanSimulator.adopt(sim) if fast else sim
        self._sim.monitors.lean = fast
        self._sim.monitors.clear_history()
        self.initial: State = self._sim.state()
        self._current: State | None = self.initial
        self._base_of: State | None = None
        self._base: Working = ()

    # ---------------------------------------------------------------- what the search reads
    @property
    def protocol(self) -> Any:
        return self._sim.protocol

    @property
    def config(self) -> Any:
        return self._sim.config

    @property
    def pids(self) -> tuple[str, ...]:
        return self._sim.pids

    @property
    def fifo(self) -> bool:
        return self._sim.fifo

    @property
    def faults(self) -> Any:
        return self._sim.faults

    @property
    def variant(self) -> str:
        return self._sim.variant

    @property
    def numbers(self) -> dict | None:
        """The process-state numbering the lean simulator keeps as it steps (None without
        ``fast``): a key function may share it instead of hashing every touched state again."""
        return self._sim.numbers if self.fast else None

    @property
    def view(self) -> Simulator:
        """The simulator holding the loaded state, for protocol hooks that take ``sim``
        (``violations``, ``wait_for``, ``served_all``, ...). Read it; do not step it."""
        return self._sim

    # ---------------------------------------------------------------- one state
    def load(self, st: State, acts: dict[int, tuple[Event, ...]] | None = None) -> None:
        """Make ``st`` current; ``acts`` is ``Outcome.acts`` of the transition that reached
        ``st`` (its processes' enabled actions, which then need not be recomputed)."""
        if self._current is st:
            return
        sim = self._sim
        if self.fast and self._base_of is st:
            sim.resume(self._base)
        else:
            if self.fast and acts is not None:
                sim.load_with_actions(st, acts)
            else:
                sim.restore(st)
            if self.fast:
                self._base = sim.save()
                self._base_of = st
        self._current = st

    def forget(self) -> None:
        """Forget which state is loaded (the next ``load`` restores, even the same object)."""
        self._current = None

    def enabled(self) -> list[Event]:
        """The events enabled in the loaded state, in the kernel's stable order."""
        return self._sim.enabled()

    def enabled_in(self, st: State) -> list[Event]:
        self.load(st)
        return list(self._sim.enabled())

    def apply(self, ev: Event) -> Outcome:
        """Apply ``ev`` (enabled in the loaded state) and report the transition; the resulting
        state is loaded afterwards."""
        sim = self._sim
        mon = sim.monitors
        entries = mon.begin_transition()
        sim.step_no = 0
        sim._apply(ev)
        viol = mon.transition_violations()
        st = sim.state()
        self._current = st
        if sim.cs or sim._unfinished_hook is not None:
            unfinished = frozenset(sim.unfinished())
        else:
            unfinished = frozenset(sim.waiting)
        if self.fast:
            return Outcome(st, viol, mon.cs_entries != entries, unfinished,
                           dict(sim._acts), sim.touched, sim.touched_numbers)
        return Outcome(st, viol, mon.cs_entries != entries, unfinished)

    def step(self, st: State, ev: Event) -> Outcome:
        """``load(st)`` then ``apply(ev)``."""
        self.load(st)
        return self.apply(ev)

    def successors(self, st: State) -> list[tuple[Event, Outcome]]:
        """Every enabled event of ``st`` with its outcome, in the kernel's order."""
        self.load(st)
        out = []
        for ev in list(self._sim.enabled()):
            self.load(st)
            out.append((ev, self.apply(ev)))
        return out

    def unfinished(self) -> frozenset:
        """``Simulator.unfinished`` of the loaded state."""
        return frozenset(self._sim.unfinished())

    def stuck(self) -> bool:
        """Deadlock in the loaded state: someone has not finished and no progress event is
        enabled."""
        sim = self._sim
        if not sim.waiting and not sim.cs and sim._unfinished_hook is None:
            return False
        if not sim.unfinished():
            return False
        if self.fast:
            return not sim.can_progress()
        return not any(e.progress for e in sim.enabled())

    def violations(self) -> tuple[str, ...]:
        """The protocol's own safety predicates on the loaded state (sorted)."""
        return tuple(sorted(self._sim.protocol.violations(self._sim)))
