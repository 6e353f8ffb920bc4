"""Monitors that run after every step, in two parts (issue 15):

- ``Checks``: what one step's resulting state is judged on — the protocol's own safety
  predicates, a critical section entered twice or a resource over its capacity, and the onset
  of a deadlock (someone has not finished and no progress event is enabled). They read what the
  protocol declares (who requested, who is in its critical section with which resources, its
  safety predicates and wait-for graph) and keep only what makes a finding fire once (the
  violations of the previous step, whether it was stuck).
- ``History``: what the timeline remembers of the run — the metrics (messages sent and when,
  deliveries, requests, served requests), the findings by step for the timeline's markers, and
  the livelock memory (fingerprints of the states since the last critical-section entry).
  History is not state: it is saved with each snapshot and restored on time travel, never
  hashed.

``Monitors`` is both, as a simulator's timeline runs them; a search (``Transitions``) runs only
the safety checks (``lean``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import networkx as nx

from .events import Event, Message

if TYPE_CHECKING:  # pragma: no cover
    from .sim import Simulator

LIVELOCK_WINDOW = 200_000   # states remembered since the last critical-section entry
_MASK = (1 << 64) - 1


def first_cycle(g: nx.DiGraph) -> list:
    """The nodes of the cycle ``nx.find_cycle(g)`` reports, in its order ([] if ``g`` has
    none): a depth-first search from each node in insertion order, following successors in
    insertion order, stopped by the first edge back to a node on the current path.

    Why not ``find_cycle`` itself: its first call in a process compiles networkx's dispatch
    wrappers (about 1.2 M instructions), which a cold ``check`` pays for one counterexample's
    replay, more than the whole search of a small instance's last hundred states. A graph
    that is not a plain ``DiGraph`` (a multigraph, an undirected one) still goes to networkx.
    """
    if type(g) is not nx.DiGraph:
        try:
            return [u for u, _v, *_ in nx.find_cycle(g)]
        except nx.NetworkXNoCycle:
            return []
    succ = g.succ
    done: set = set()        # nodes whose every path was followed: no cycle through them
    for start in g:
        if start in done:
            continue
        path = [start]
        on_path = {start}
        todo = [iter(succ[start])]      # per node of ``path``, its successors still to follow
        while todo:
            for v in todo[-1]:
                if v in on_path:
                    return path[path.index(v):]
                if v not in done:
                    path.append(v)
                    on_path.add(v)
                    todo.append(iter(succ[v]))
                    break
            else:
                todo.pop()
                u = path.pop()
                on_path.discard(u)
                done.add(u)
    return []


@dataclass
class Finding:
    step: int
    kind: str               # "violation" | "deadlock" | "livelock"
    text: str
    cycle: list = field(default_factory=list)
    period: int = 0

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"step": self.step, "kind": self.kind, "text": self.text}
        if self.kind == "deadlock":
            d["cycle"] = self.cycle
        if self.kind == "livelock":
            d["period"] = self.period
        return d


class _Findings:
    """Reading the findings recorded so far (``findings``), up to the current step."""

    findings: dict[tuple[int, str], Finding]
    sim: Any

    def first(self, kind: str) -> Finding | None:
        found = [f for f in self.findings.values() if f.kind == kind and f.step <= self.sim.step_no]
        return min(found, key=lambda f: f.step) if found else None

    def violations(self) -> list[Finding]:
        return sorted((f for f in self.findings.values()
                       if f.kind == "violation" and f.step <= self.sim.step_no),
                      key=lambda f: (f.step, f.text))

    def timeline(self) -> list[dict[str, Any]]:
        """Every finding recorded, for the timeline's markers."""
        return [f.as_dict() for f in sorted(self.findings.values(), key=lambda f: (f.step, f.kind))]


class History(_Findings):
    """The run's metrics, findings by step and livelock memory (see the module docstring)."""

    def __init__(self, sim: "Simulator") -> None:
        self.sim = sim
        self.sent: dict[str, int] = {}
        self.sent_at: dict[int, int] = {}       # message seq -> step at which it was sent
        self.delivered = 0
        self.cs_entries = 0
        self.requests = 0
        self.served: list[tuple[str, int, int, int]] = []   # (pid, request step, response, waiting)
        # Every served request along the recorded timeline, also those after the current step,
        # so that a jump forward to a later snapshot finds the ones in between (``served`` is
        # always the prefix of this up to the current step).
        self._timeline_served: list[tuple[str, int, int, int]] = []
        self.findings: dict[tuple[int, str], Finding] = {}
        self._seen: dict[int, int] = {}
        # Opt-in (Protocol.livelock_bypass): a repeated state is a livelock when one requester
        # has waited through the whole period, even if others entered meanwhile (kout_tree Fig. 3).
        self._bypass = bool(getattr(sim.protocol, "livelock_bypass", False))

    # ---------------------------------------------------------------- what happened
    def on_send(self, m: Message) -> None:
        self.sent[m.kind] = self.sent.get(m.kind, 0) + 1
        self.sent_at[m.seq] = self.sim.step_no

    def on_deliver(self, m: Message) -> None:
        self.delivered += 1

    def on_request(self, pid: str) -> None:
        """``pid`` started waiting (the simulator recorded it in ``waiting``)."""
        self.requests += 1

    def on_served(self, pid: str, served: tuple[int, int] | None) -> None:
        """``pid`` entered its critical section, ending the waiting entry ``served`` (if any)."""
        if served is not None:
            rec = (pid, served[0], self.sim.step_no - served[0], self.cs_entries - served[1])
            i = len(self.served)
            if i < len(self._timeline_served):
                self._timeline_served[i] = rec      # replaying the recorded timeline
            else:
                self._timeline_served.append(rec)
            self.served.append(rec)
        self.cs_entries += 1
        if not self._bypass:
            self._seen.clear()

    def on_exit(self, pid: str) -> None:
        """``pid`` left its critical section (nothing to count)."""

    def violation(self, text: str) -> None:
        """Record a safety violation at the current step."""
        key = (self.sim.step_no, "violation:" + text)
        self.findings[key] = Finding(self.sim.step_no, "violation", text)

    # ---------------------------------------------------------------- livelock memory
    def clear_history(self) -> None:
        """Empty the livelock fingerprint memory (a per-timeline heuristic)."""
        self._seen.clear()

    def note_state(self, ev: Event) -> None:
        """Remember the current state's fingerprint; a state that repeats one since the last
        critical-section entry, with every progress event enabled since, is a livelock."""
        sim = self.sim
        step = sim.step_no
        fp = (sim._proc_fp + sim._chan_sum + sim._crash_h) & _MASK     # sim.fingerprint()
        seen = self._seen
        t0 = seen.get(fp)
        starved = t0 is not None and self._bypass and sorted(
            p for p, w in sim.waiting.items() if w[0] <= t0)
        if t0 is not None and (starved or not self._bypass) \
                and all(sim.since(e.id) > t0 for e in sim.enabled() if e.progress) \
                and self._repeats(t0):
            period = step - t0
            if self._bypass:
                text = (f"livelock: the global state of step {t0} repeats at step {step} while "
                        f"{', '.join(starved)} wait{'s' if len(starved) == 1 else ''} "
                        f"throughout the period")
            else:
                text = (f"livelock: the global state of step {t0} repeats at step {step} while "
                        f"{_who(sim.unfinished(), sim.waiting, plural=True)} and nobody entered a "
                        "critical section")
            self.findings[(step, "livelock")] = Finding(step, "livelock", text, period=period)
        if len(seen) >= LIVELOCK_WINDOW:
            seen.clear()
        seen[fp] = step

    def _repeats(self, t0: int) -> bool:
        """Confirm exactly that the state of step t0 equals the current one: the fingerprint is
        a 64-bit sum, and two different states can share it (seen once in datta_ring)."""
        try:
            then = self.sim.state_at(t0)
        except Exception:             # noqa: BLE001 - no timeline to rebuild from (explorer)
            return True
        return self.sim.repetition_key(then) == self.sim.repetition_key(self.sim.state())

    # ---------------------------------------------------------------- reading
    def metrics(self) -> dict[str, Any]:
        rts = [s[2] for s in self.served]
        wts = [s[3] for s in self.served]
        return {
            "messages_by_type": dict(sorted(self.sent.items())),
            "messages": sum(self.sent.values()),
            "delivered": self.delivered,
            "cs_entries": self.cs_entries,
            "requests": self.requests,
            "served": len(self.served),
            "response_time": _summary(rts),
            "waiting_time": _summary(wts),
            "per_request": [{"proc": p, "requested_at": t, "response": r, "waiting": w}
                            for p, t, r, w in self.served[-200:]],
        }

    # ---------------------------------------------------------------- time travel
    def save_history(self) -> tuple:
        return (dict(self.sent), self.delivered, self.cs_entries, self.requests, len(self.served))

    def load_history(self, saved: tuple) -> None:
        """Restore the counters of a snapshot (earlier or later than the current step) on the
        recorded timeline; what lies beyond it stays recorded for later jumps."""
        sent, self.delivered, self.cs_entries, self.requests, n = saved
        self.sent = dict(sent)
        if len(self._timeline_served) < len(self.served):      # history was forgotten
            self._timeline_served = list(self.served)
        self.served = self._timeline_served[:n]
        self._seen.clear()

    def truncate(self, k: int) -> None:
        """A different event is taken at step k: forget the recorded future after it."""
        for key in [key for key, f in self.findings.items() if f.step > k]:
            del self.findings[key]
        del self._timeline_served[len(self.served):]
        while self.sent_at:                      # sends are recorded in step order
            seq = next(reversed(self.sent_at))
            if self.sent_at[seq] <= k:
                break
            del self.sent_at[seq]

    def forget_history(self) -> None:
        """Drop the served-request history (the explorer, which has no timeline, calls this)."""
        del self.served[:]
        del self._timeline_served[:]


# What ``Checks.check_step`` found about the state a step produced.
IDLE = 0      # nobody has anything unfinished
STUCK = 1     # someone has, and no progress event is enabled
MOVING = 2    # someone has, and some progress event is enabled


class Checks:
    """The per-step checks (see the module docstring); findings go to ``violation`` and
    ``findings``, which ``History`` keeps."""

    findings: dict[tuple[int, str], Finding]

    def __init__(self, sim: "Simulator") -> None:
        self.sim = sim
        self.last_event: Event | None = None    # the event being checked (protocols may read it)
        # Only call the protocol's own safety predicates if it has any (a step is a hot path).
        proto_cls = type(sim.protocol)
        self._checks = proto_cls.violations is not _base_violations(proto_cls)
        self._deadlocked = False
        self._bad: frozenset[str] = frozenset()
        self.lean = False           # set by Transitions (see begin_transition)

    def violation(self, text: str) -> None:      # pragma: no cover - History's
        raise NotImplementedError

    def check_enter(self, pid: str, again: bool, over: list[str]) -> None:
        """``pid`` entered its critical section: twice is a violation, and so is a resource
        used beyond its capacity (``over``)."""
        sim = self.sim
        texts = [f"{pid} enters its critical section while already in it"] if again else []
        texts += [f"resource {r} is used by {', '.join(sim.usage[r])} at once "
                  f"(capacity {sim.capacity.get(r, 1)})" for r in over]
        for text in texts:
            # a self-stabilising protocol judges these as it judges its own predicates
            if not sim.protocol.transient(sim, text):
                self.violation(text)

    def check_step(self, ev: Event) -> int:
        """Judge the state ``ev`` produced: new safety violations, a deadlock's onset. Returns
        IDLE, STUCK or MOVING (what the livelock memory needs to know)."""
        sim = self.sim
        self.last_event = ev        # e.g. kout_tree: a fault ends legitimacy, a protocol step not
        if self._checks:
            bad = frozenset(sim.protocol.violations(sim))
            for text in sorted(bad - self._bad):
                self.violation(text)
            self._bad = bad
        # The cheap answers first (someone waits; some progress action is enabled) without a
        # call: this runs after every step.
        if not sim.waiting and not sim.has_unfinished():
            self._deadlocked = False
            return IDLE
        stuck = not sim._n_progress and not sim.can_progress()
        if stuck and not self._deadlocked:
            step = sim.step_no
            cycle = self.wait_cycle()
            text = "deadlock: " + _who(sim.unfinished(), sim.waiting) + _what_is_left(sim.enabled())
            if cycle:
                text += "; wait-for cycle " + " → ".join(map(str, cycle + cycle[:1]))
            self.findings[(step, "deadlock")] = Finding(step, "deadlock", text, cycle)
        self._deadlocked = stuck
        return STUCK if stuck else MOVING

    def wait_cycle(self) -> list:
        """The first cycle of the protocol's wait-for graph (``first_cycle``), [] if none."""
        return first_cycle(self.sim.protocol.wait_for(self.sim))

    def save_checks(self) -> tuple:
        return (self._deadlocked, self._bad)

    def load_checks(self, saved: tuple) -> None:
        self._deadlocked, self._bad = saved


class Monitors(Checks, History):
    """Findings and metrics of one simulator: the per-step checks and the history."""

    def __init__(self, sim: "Simulator") -> None:
        History.__init__(self, sim)
        Checks.__init__(self, sim)

    violation = History.violation

    def on_enter(self, pid: str, resources: tuple[str, ...], served: tuple[int, int] | None,
                 again: bool, over: list[str]) -> None:
        """``pid`` entered its critical section (the simulator updated ``cs`` and ``usage``):
        ``served`` is the waiting entry it ended, ``again`` whether it was in it already,
        ``over`` the resources now used beyond their capacity."""
        if again or over:
            self.check_enter(pid, again, over)
        self.on_served(pid, served)

    def after_step(self, ev: Event) -> None:
        """The checks of the step's state, then (on a timeline) the livelock memory."""
        if self.lean:
            self._after_step_lean(ev)
            return
        moving = self.check_step(ev)
        if moving == MOVING:
            self.note_state(ev)
        elif moving == IDLE:
            self._seen.clear()

    def save(self) -> tuple:
        return self.save_history() + self.save_checks()

    def load(self, saved: tuple) -> None:
        self.load_history(saved[:5])
        self.load_checks(saved[5:])

    # ---------------------------------------------------------------- transitions of a search
    # ``Transitions`` (the kernel's search API) sets ``lean``: after a step only what protocols
    # read (``last_event``) and the safety predicates are kept; the search judges deadlock on
    # new states itself and finds cycles in its graph, so the per-timeline work (the enabled
    # events, the wait-for graph, the livelock fingerprints) would be wasted on every transition.
    def begin_transition(self) -> int:
        """Forget the findings of the previous transition; returns the CS entries so far."""
        self.findings.clear()
        self._bad = frozenset()     # so the step reports every current violation as new
        self._deadlocked = False
        return self.cs_entries

    def transition_violations(self) -> tuple[str, ...]:
        """The violations the transition just applied reported (sorted), and bounded history."""
        self._seen.clear()
        if len(self.served) > 4096:      # metrics history, not needed by a search
            self.forget_history()
        if not self.findings:
            return ()
        return tuple(sorted(f.text for f in self.findings.values() if f.kind == "violation"))

    def _after_step_lean(self, ev: Event) -> None:
        self.last_event = ev
        if self._checks:
            bad = self.sim.protocol.violations(self.sim)
            if bad:                     # rarely: skip the sort of an empty list otherwise
                for text in sorted(set(bad)):
                    self.violation(text)


class Headless(Checks, _Findings):
    """The monitors of a headless ``Core``: the per-step checks and their findings, plus the
    count of critical-section entries (a waiting entry records it); no metrics, no livelock
    memory (a timeline's)."""

    def __init__(self, sim: Any) -> None:
        Checks.__init__(self, sim)
        self.findings: dict[tuple[int, str], Finding] = {}
        self.cs_entries = 0

    def violation(self, text: str) -> None:
        """Record a safety violation at the current step."""
        step = self.sim.step_no
        self.findings[(step, "violation:" + text)] = Finding(step, "violation", text)

    def on_enter(self, pid: str, resources: tuple[str, ...], served: tuple[int, int] | None,
                 again: bool, over: list[str]) -> None:
        """``pid`` entered its critical section (see ``Monitors.on_enter``)."""
        if again or over:
            self.check_enter(pid, again, over)
        self.cs_entries += 1

    # The checks of the step's state are all there is after a step (no livelock memory).
    after_step = Checks.check_step


def _who(unfinished: list[str], waiting: Any, plural: bool = False) -> str:
    """"C1, C2 wait" when only waiting processes are unfinished (the wording before the
    ``unfinished`` hook), else "C1 has not finished" / "C1, C3 have not finished"."""
    if all(p in waiting for p in unfinished):
        one = len(unfinished) == 1 and not plural
        return f"{', '.join(unfinished)} wait{'s' if one else ''}"
    return (f"{', '.join(unfinished)} "
            f"{'has' if len(unfinished) == 1 else 'have'} not finished")


def _what_is_left(enabled: list[Event]) -> str:
    """How a deadlock's text ends: "nothing can move" only when no event at all is enabled;
    else what still can happen and cannot help (token-ring-lossy's banner said "nothing can
    move" beside three enabled requests)."""
    if not enabled:
        return " and nothing can move"
    # name what is still enabled (its labels, e.g. "p1 requests the critical section"), so the
    # sentence never lists kinds of event the protocol does not have
    shown = "; ".join(e.label for e in enabled[:3])
    more = f"; and {len(enabled) - 3} more" if len(enabled) > 3 else ""
    return f" and no enabled event can serve them (still enabled, serving no one: {shown}{more})"


def _base_violations(cls: type) -> Any:
    from .protocol import Protocol
    return Protocol.violations


def _summary(xs: list[int]) -> dict[str, Any]:
    if not xs:
        return {"count": 0, "max": None, "mean": None}
    return {"count": len(xs), "max": max(xs), "mean": round(sum(xs) / len(xs), 3)}
