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
    """Called by the search with each new state; checks one in ``every``.

    ``ts``: the search's own ``Transitions``. Where it memoises (``Transitions.memo``), the
    successors compared go through its recorded local effects (``step_fast``) instead of the
    lean simulator: a replayed effect is the one the handler had on that very process state and
    event, so the comparison is the same, at a fraction of the cost (most of the audited
    states' successors are replays; the erased process states get numbers and their actions
    through ``Transitions.state_numbers``). Without it (or without the memo) the audit steps a
    ``Transitions`` of its own."""

    def __init__(self, fresh: Callable[[], Simulator], keyer: Keyer, every: int = 50,
                 ts: Transitions | None = None) -> None:
        self.memo = ts is not None and ts.memo
        self.ts = ts if self.memo else Transitions(fresh())
        self.keyer = keyer
        self.every = every
        self.seen = 0
        self.checked = 0
        # (a search from several starts) the start of the state being audited, in words
        self.where: Callable[[], str] | None = None

    def __call__(self, st: State, schedule: Callable[[], list[str]]) -> None:
        self.seen += 1
        if self.seen % self.every:
            return
        other = self.keyer.forgotten(st)
        if other.procs == st.procs and other.messages == st.messages:
            return
        self.checked += 1
        protocol = self.keyer.protocol
        judge = bool(getattr(protocol, "forget_keeps_violations", False))
        if self.memo:
            bad, mine = self._futures_fast(st, judge)
            bad_other, theirs = self._futures_fast(other, judge)
        else:
            bad, bad_other = (self._violations(st), self._violations(other)) if judge else \
                ((), ())
            mine, theirs = self._futures(st), self._futures(other)
        if bad != bad_other:
            raise ScenarioError(
                f"{protocol.id}.forget_keeps_violations is wrong: the state after "
                f"{' '.join(schedule()) or 'step 0'}{self._start()} and its forgotten version "
                "are judged differently")
        if mine != theirs:
            raise ScenarioError(
                f"{self.keyer.protocol.id}.forget erased a value a later step reads: the state "
                f"after {' '.join(schedule()) or 'step 0'}{self._start()} and its forgotten "
                "version have "
                "different successors")

    def _start(self) -> str:
        """Where the audited state's schedule begins, if there are several starts."""
        return f" from {self.where()}" if self.where is not None else ""

    def _violations(self, st: State) -> tuple[str, ...]:
        self.ts.load(st)
        bad = self.ts.violations()
        self.ts.forget()
        return bad

    def _futures(self, st: State) -> Counter:
        out: Counter = Counter()
        for ev, o in self.ts.successors(st):
            out[(ev.kind, ev.pid, self.keyer.key(o.state), bool(o.violations), o.entered_cs,
                 o.unfinished)] += 1
        self.ts.forget()
        return out

    def _futures_fast(self, st: State, judge: bool) -> tuple[tuple[str, ...], Counter]:
        """(the violations of ``st`` if ``judge``, ``_futures(st)``) on the search's memo."""
        ts = self.ts
        nums, cnums = ts.state_numbers(st)
        ts.load_nums(st, nums)
        unf = ts.unfinished()
        bad = ts.violations() if judge else ()
        key_of = self.keyer.key_of
        out: Counter = Counter()
        for ev in ts.events_at(st, nums, cnums):
            o = ts.step_fast(st, nums, cnums, unf, ev)
            out[(ev.kind, ev.pid, key_of(o), bool(ts.judge(o)), o.entered_cs,
                 o.unfinished)] += 1
        return bad, out
