"""Partial-order reduction: expand one *persistent set* of events per state, not all of them.

Events of different processes commute when every handler touches only its own process: an
event at p changes p's state, takes the head of one channel into p and appends to channels out
of p. Exploring every interleaving of such events is what makes message-passing searches
explode. At a state s the reducer picks a set S of processes and expands only the enabled
events of S, when that is provably enough to find every violation and every deadlock:

1. **Persistence.** No event outside S can, before some event of S happens, create a new event
   of S: every process q outside S that could become active and may send to some r in S has a
   non-empty channel q→r already (FIFO: appending behind the head changes no enabled event of
   r). With unordered channels every such q must be in S.
2. **Deadlock.** S has an enabled progress event (it stays enabled along any path that avoids
   S, so a deadlock is reached only through S's events, which commute to the front). A state
   with no progress event enabled (only requests, say) is therefore always fully expanded.
3. **Visibility.** Every expanded event is invisible: it changes neither its process's safety
   signature (``protocol.por_signature``) nor who is in a critical section, so the violations
   of the state after it are those of the state before it.
4. **Cycles (the BFS proviso).** No expanded event leads to an already visited state of depth
   ≤ the current one, so every cycle of the reduced graph has a fully expanded state and no
   event is postponed forever.

If no set qualifies the state is fully expanded. The argument, step by step: docs/explorer.md.

What a protocol must declare (and the reducer checks on every transition it computes):
``por_senders(config) -> {pid: pids that may ever send to it}`` and
``por_signature(config, pid, state) -> hashable``, the part of one process's state that
``violations(sim)`` reads. A transition that changes another process, cs or waiting entry
than its own, takes a message it was not delivered or sends along an undeclared edge raises
``LocalityError``: a wrong declaration stops the search loudly instead of pruning silently.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from ..kernel import DELIVER, Event, Protocol, State


class LocalityError(RuntimeError):
    """A transition broke the locality the protocol declared for partial-order reduction."""


def supports(protocol: Protocol) -> bool:
    """Whether ``protocol`` declares the hooks partial-order reduction needs."""
    return callable(getattr(protocol, "por_senders", None)) and \
        callable(getattr(protocol, "por_signature", None))


class Reducer:
    """Chooses persistent sets for one exploration (processes, channels and hooks fixed)."""

    def __init__(self, protocol: Protocol, config: Any, pids: Sequence[str], fifo: bool) -> None:
        self.pids = tuple(pids)
        self.fifo = fifo
        self.config = config
        self._sig: Callable[[Any, str, Any], Hashable] = protocol.por_signature
        declared = protocol.por_senders(config)
        self.senders: dict[str, tuple[str, ...]] = {
            p: tuple(q for q in self.pids if q != p and q in set(declared.get(p, ())))
            for p in self.pids}
        self.index = {p: i for i, p in enumerate(self.pids)}
        # receivers of q: the processes q may send to (to spread "may become active")
        self.receivers: dict[str, tuple[str, ...]] = {
            q: tuple(p for p in self.pids if q in self.senders[p]) for q in self.pids}
        self._sets: dict[tuple, list[tuple[str, ...]]] = {}    # ``candidates``' closures
        self._sorted: dict[tuple, tuple[tuple[str, ...], ...]] = {}    # and their order

    # ---- persistent sets --------------------------------------------------------------------
    def candidates(self, st: State, events: Sequence[Event]) -> list[tuple[str, ...]]:
        """Process sets satisfying condition 1, smallest first, each the closure of one
        process with enabled events (deterministic: pids in scenario order)."""
        who = [e.pid for e in events]
        # the closures depend on who is busy and (FIFO) which channels are non-empty only:
        # worked out once per such pair; their order on how many events each set takes, so
        # the sorted list is kept per (events per process, channels)
        chans = frozenset([(m.src, m.dst) for m in st.messages]) if self.fifo else None
        counts = tuple([who.count(p) for p in self.pids])
        done = self._sorted.get((counts, chans))
        if done is not None:
            return list(done)
        busy = frozenset(who)
        sets = self._sets.get((busy, chans))
        if sets is None:
            sets = []
            for p in self.pids:
                if p not in busy:
                    continue
                S = self._closure(p, busy, chans or frozenset())
                if len(S) < len(busy) or not busy <= S:
                    key = tuple(q for q in self.pids if q in S)
                    if key not in sets:
                        sets.append(key)
            self._sets[(busy, chans)] = sets
        out = list(sets)
        out.sort(key=lambda S: (sum(e.pid in S for e in events), [self.index[p] for p in S]))
        self._sorted[(counts, chans)] = tuple(out)
        return out

    def _closure(self, p: str, busy: set[str], chans: set[tuple[str, str]]) -> set[str]:
        S = {p}
        while True:
            active = self._active(S, busy)
            need = {q for r in S for q in self.senders[r]
                    if q not in S and q in active and (not self.fifo or (q, r) not in chans)}
            if not need:
                return S
            S |= need

    def _active(self, S: set[str], busy: set[str]) -> set[str]:
        """Processes outside S that may act before S does: those with enabled events, and
        whoever they may send to, transitively, without passing through S."""
        active = {q for q in busy if q not in S}
        todo = list(active)
        while todo:
            q = todo.pop()
            for r in self.receivers[q]:
                if r not in S and r not in active:
                    active.add(r)
                    todo.append(r)
        return active

    # ---- checks on computed transitions -----------------------------------------------------
    def visible(self, parent: State, ev: Event, child: State) -> bool:
        """Condition 3: the event changes its process's signature or critical section."""
        p = ev.pid
        i = self.index[p]
        if dict(parent.cs).get(p) != dict(child.cs).get(p):
            return True
        return self._sig(self.config, p, parent.procs[i]) != \
            self._sig(self.config, p, child.procs[i])

    def check_local(self, parent: State, ev: Event, child: State) -> None:
        """Raise LocalityError unless the transition touched only ``ev.pid`` (see module doc)."""
        p = ev.pid
        i = self.index[p]
        for j, (a, b) in enumerate(zip(parent.procs, child.procs, strict=True)):
            if j != i and a is not b and a != b:
                self._fail(ev, f"it changed the state of {self.pids[j]}")
        for name, before, after in (("cs", parent.cs, child.cs),
                                    ("waiting", parent.waiting, child.waiting)):
            if [x for x in before if x[0] != p] != [x for x in after if x[0] != p]:
                self._fail(ev, f"it changed another process's {name} entry")
        if parent.crashed != child.crashed:
            self._fail(ev, "it crashed a process")
        old = {m.seq for m in parent.messages}
        gone = old - {m.seq for m in child.messages}
        taken = {ev.msg.seq} if ev.kind == DELIVER and ev.msg is not None else set()
        if gone != taken:
            self._fail(ev, "it removed a message other than the one it delivered")
        for m in child.messages:
            if m.seq not in old and (m.src != p or (m.dst != p and p not in self.senders[m.dst])):
                self._fail(ev, f"it sent {m.kind} {m.src}→{m.dst}, an edge por_senders does "
                               "not declare")

    def _fail(self, ev: Event, what: str) -> None:
        raise LocalityError(f"partial-order reduction: event {ev.id} at {ev.pid} is not local: "
                            f"{what}; the protocol's por_senders / locality declaration is wrong")


class PartialOrder(Reducer):
    """The reducer as the search engine's expansion plug-in (``SearchOptions.expansion``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # recorded local effect -> visible (``checked``), for the search's ``Transitions``
        self._seen: dict[Any, bool] = {}
        self._ts: Any = None

    def expand(self, search: Any, i: int, st: State, st_key: Any,
               events: list[Event]) -> list[Event]:
        """The events to expand at node i: the smallest persistent set that passes the
        conditions above, else all of ``events``. Transitions computed to judge a set are kept
        for the expansion (``Search.trial``), so none is applied twice."""
        depth = search.graph.depth[i]
        if search.ts is not self._ts:      # effect keys are numbered per ``Transitions``
            self._ts, self._seen = search.ts, {}
        # Deadlock condition: the set must hold an enabled progress event. With none enabled
        # (only requests, say) no set can, so the state is fully expanded: a deadlock reached
        # from it without the set's requests would keep them enabled, proving nothing.
        candidates = self.candidates(st, events) if any(e.progress for e in events) else []
        for S in candidates:
            T = [e for e in events if e.pid in S]
            if not any(e.progress for e in T):
                continue
            ok = True
            for ev in T:
                out, _k, j, _stuck, _goal = search.trial(st, st_key, ev)
                vis = self.checked(st, ev, out)
                if out.violations:        # a real one, whatever the set: report it
                    return [ev]
                if vis or (j is not None and search.graph.depth[j] <= depth):
                    ok = False
                    break
            if ok:
                search.reduced += len(T) < len(events)
                for e in events:
                    if e.pid not in S:
                        search.cache.pop(e.id, None)
                return T
        for ev in events:           # full expansion: check locality on the rest too
            self.checked(st, ev, search.trial(st, st_key, ev)[0])
        return events

    def checked(self, st: State, ev: Event, out: Any) -> bool:
        """``check_local`` on the transition, then whether it is ``visible``. A transition that
        replays a recorded local effect (``Outcome.local``, the kernel's key of that effect)
        changes exactly what the recorded one changed (its process, from the same state number
        to the same one, the same critical-section entry, the same sends): both answers are
        those of the first transition with that effect, so they are worked out once."""
        mk = out.local
        if mk is not None:
            vis = self._seen.get(mk)
            if vis is not None:
                return vis
        child = out.state
        self.check_local(st, ev, child)
        vis = self.visible(st, ev, child)
        if mk is not None:
            self._seen[mk] = vis
        return vis
