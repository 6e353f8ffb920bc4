"""The one place where the explorer touches the simulator's insides.

Exploring means: restore a stored global state, apply one enabled event, read what happened.
``Simulator.step`` is made for a timeline (it records the trace, narrations and snapshots, and
the monitors keep history across steps), which would grow without bound over millions of
unrelated states. So the driver applies events with ``_apply`` of a ``LeanSimulator`` (the
kernel's explorer-only twin, which also skips fingerprints, ``_since``, labels, narration and
metrics) and resets the monitors' per-run memory before each step: the protocol runs exactly as
under ``step``, with none of the history.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..kernel import FAULT, Event, Simulator, State
from ..kernel.lean import LeanSimulator, Working

_NONE: frozenset = frozenset()


@dataclass(slots=True)
class Outcome:
    """What one transition did. Nobody changes one once made; it is not declared frozen only
    because a frozen dataclass's ``__init__`` costs twice as much, and one is made per
    transition."""

    state: State
    violations: tuple[str, ...]   # safety findings reported during or after the step
    entered_cs: bool              # some process entered its critical section
    waiting: frozenset            # pids waiting afterwards
    # The successor's enabled actions per process index (fast driver only; None otherwise):
    # handed back to ``load`` when the search expands this state, so that restoring it need not
    # ask the protocol for every process's actions again. Not part of what a transition *is*.
    acts: dict[int, tuple[Event, ...]] | None = field(default=None, compare=False, repr=False)
    # Indices of the processes the step may have changed (fast driver only; None otherwise):
    # the others kept their states, which lets ``Keyer.key`` update the parent's key.
    touched: tuple[int, ...] | None = field(default=None, compare=False, repr=False)
    # The numbers of the touched processes' states (``LeanSimulator.numbers``, which the
    # ``Keyer`` shares: see ``Driver.numbers``), in the order of ``touched``.
    numbers: tuple[int, ...] | None = field(default=None, compare=False, repr=False)


class Driver:
    """Applies single events to restored states of one simulator.

    ``load(st)`` makes ``st`` current. With ``fast`` (the default) the driver works on a
    ``LeanSimulator`` twin of ``sim`` (the kernel's explorer-only simulator: no fingerprints,
    ``_since``, labels, narration or metrics), and restores cheaply: the search restores the
    same parent once per enabled event, so the driver keeps a copy of the working attributes of
    the last restored state and puts a fresh copy back instead of rebuilding them. Without
    ``fast`` it drives ``sim`` itself through ``Simulator.restore`` and the kernel's after-step:
    the reference the fast path is tested against.
    """

    def __init__(self, sim: Simulator, fast: bool = True) -> None:
        self.fast = fast
        self.sim = LeanSimulator.adopt(sim) if fast else sim
        mon = self.sim.monitors
        # The livelock fingerprint memory is a per-timeline heuristic; the explorer finds cycles
        # itself, so keep it empty (it would otherwise cost a dict insert per step).
        mon._seen.clear()
        if fast:
            # The kernel's after-step also judges deadlock (listing the enabled events and, on
            # a deadlock, building the wait-for graph) and fingerprints the state for its
            # livelock heuristic, on every transition; the search judges deadlock only on new
            # states and finds cycles itself. Keep just what protocols read (last_event) and
            # the safety predicates. An instance attribute: the kernel class is untouched.
            mon.after_step = self._after_step
        # The process-state numbering the lean simulator keeps while it steps (None without
        # ``fast``): hand it to ``Keyer`` so that keys reuse the numbers instead of hashing every
        # touched process state a second time.
        self.numbers: dict | None = self.sim.numbers if fast else None
        self._current: State | None = None
        self._base_of: State | None = None
        self._base: Working = ()

    def load(self, st: State, acts: dict[int, tuple[Event, ...]] | None = None) -> None:
        """Make ``st`` current; ``acts`` is ``Outcome.acts`` of the transition that reached
        ``st`` (its processes' enabled actions, which then need not be recomputed)."""
        if self._current is st:
            return
        sim = self.sim
        if self.fast and self._base_of is st:
            sim.resume(self._base)
        else:
            if self.fast and acts is not None:
                sim._load(st)
                sim._acts = dict(acts)
            else:
                sim.restore(st)
            if self.fast:
                self._base = sim.save()
                self._base_of = st
        self._current = st

    def enabled(self) -> list[Event]:
        return self.sim.enabled()

    def _after_step(self, ev: Event) -> None:
        mon = self.sim.monitors
        mon.last_event = ev
        if mon._checks:
            bad = self.sim.protocol.violations(self.sim)
            if bad:                     # rarely: skip the sort of an empty list otherwise
                for text in sorted(set(bad)):
                    mon.violation(text)

    def apply(self, ev: Event) -> Outcome:
        """Apply ``ev`` (enabled in the loaded state) and report the transition."""
        sim = self.sim
        mon = sim.monitors
        mon.findings.clear()
        mon._bad = _NONE                # so after_step reports every current violation as new
        mon._deadlocked = False
        entries = mon.cs_entries
        # Every transition starts from "step 0": history a protocol keys by step (kout_tree's
        # legitimacy track) then stays bounded and is read as if the parent were the start.
        sim.step_no = 0
        sim._apply(ev)
        mon._seen.clear()
        if len(mon.served) > 4096:      # metrics history, not needed here
            mon.forget_history()
        viol = tuple(sorted(f.text for f in mon.findings.values()
                            if f.kind == "violation")) if mon.findings else ()
        st = sim.state()
        self._current = st
        if self.fast:
            return Outcome(st, viol, mon.cs_entries != entries, frozenset(sim.waiting),
                           dict(sim._acts), sim.touched, sim.touched_numbers)
        return Outcome(st, viol, mon.cs_entries != entries, frozenset(sim.waiting))

    def stuck(self) -> bool:
        """Deadlock in the current state: someone waits and no progress event is enabled."""
        sim = self.sim
        if not sim.waiting:
            return False
        if self.fast:
            return not sim.can_progress()
        return not any(e.progress for e in sim.enabled())

    def root_violations(self) -> tuple[str, ...]:
        return tuple(sorted(self.sim.protocol.violations(self.sim)))


def label(ev: Event) -> tuple:
    """An event's identity independent of message numbering, for the fairness check: a delivery
    is named by its message's content, an action by its id."""
    if ev.msg is not None:
        m = ev.msg
        return ("m", m.src, m.dst, m.kind, m.body)
    return ("e", ev.id)


def is_fair_demand(ev: Event) -> bool:
    """Events that weak fairness forces to happen: progress events that are not faults.
    (A client need not request, a message need not be lost.)"""
    return ev.progress and ev.kind != FAULT
