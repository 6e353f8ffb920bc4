"""A running check of a protocol's ``forget`` hook: erased values must really be dead.

``forget`` is exact only if a state and its forgotten version have the same futures. The
explorer cannot prove that, but it can test it where it matters, on states deep in the search
(the erasures of coterie's clocks apply only once processes have finished): every
``every``-th new state whose forgotten version differs from it, it compares the keys of the
successors of both, with the violations and critical-section entries of each step (and,
where the protocol declares ``forget_keeps_violations``, the violations of both states). A
difference stops the search with an error naming the state's schedule, instead of pruning
behaviour silently.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from ..kernel import Simulator, State, Transitions
from ..scenario import ScenarioError
from .keys import Keyer


class ForgetAudit:
    """Called by the search with each new state; checks one in ``every``."""

    def __init__(self, fresh: Callable[[], Simulator], keyer: Keyer, every: int = 50) -> None:
        self.ts = Transitions(fresh())
        self.keyer = keyer
        self.every = every
        self.seen = 0
        self.checked = 0

    def __call__(self, st: State, schedule: Callable[[], list[str]]) -> None:
        self.seen += 1
        if self.seen % self.every:
            return
        other = self.keyer.forgotten(st)
        if other.procs == st.procs and other.messages == st.messages:
            return
        self.checked += 1
        protocol = self.keyer.protocol
        if getattr(protocol, "forget_keeps_violations", False):
            ts = self.ts
            ts.load(st)
            bad = ts.violations()
            ts.load(other)
            if bad != ts.violations():
                raise ScenarioError(
                    f"{protocol.id}.forget_keeps_violations is wrong: the state after "
                    f"{' '.join(schedule()) or 'step 0'} and its forgotten version are judged "
                    "differently")
            ts.forget()
        if self._futures(st) != self._futures(other):
            raise ScenarioError(
                f"{self.keyer.protocol.id}.forget erased a value a later step reads: the state "
                f"after {' '.join(schedule()) or 'step 0'} and its forgotten version have "
                "different successors")

    def _futures(self, st: State) -> Counter:
        out: Counter = Counter()
        for ev, o in self.ts.successors(st):
            out[(ev.kind, ev.pid, self.keyer.key(o.state), bool(o.violations), o.entered_cs,
                 o.unfinished)] += 1
        self.ts.forget()
        return out
