"""A check that a declared symmetry really is one, on the first states of the search.

Symmetry reduction is exact only if renaming commutes with the protocol: for every state s and
renaming m, the successors of m(s) are exactly the renamings of the successors of s (and the
checked predicates — safety, waiting, critical sections — are renamed along). A scenario that
declares, say, two ring neighbours interchangeable would silently prune real behaviour, so
before a reduced search the explorer compares both sides on the first ``sample`` states of an
unreduced breadth-first search, and rejects the declaration if they differ.
"""

from __future__ import annotations

from collections import Counter, deque

from ..kernel import State, Transitions
from ..scenario import ScenarioError
from .keys import Keyer, plain_key


def _successors(ts: Transitions, st: State) -> list[tuple[State, bool, bool]]:
    """Each successor of ``st`` with whether the step violated safety / entered a CS."""
    return [(o.state, bool(o.violations), o.entered_cs) for _ev, o in ts.successors(st)]


def verify(ts: Transitions, keyer: Keyer, sample: int = 200, budget: int = 2000) -> None:
    """Raise ScenarioError naming the renaming that does not commute with the protocol.
    Checks the first ``sample`` states, fewer for large groups (states x renamings <= budget)."""
    if not keyer.group:
        return
    sample = max(10, min(sample, budget // len(keyer.group)))
    fifo = keyer.fifo
    root = ts.initial
    seen = {plain_key(root, fifo)}
    queue = deque([root])
    checked = 0
    while queue and checked < sample:
        st = queue.popleft()
        checked += 1
        succ = _successors(ts, st)
        for m in keyer.group:
            mine = Counter((plain_key(keyer.rename(s, m), fifo), v, c) for s, v, c in succ)
            theirs = Counter((plain_key(s, fifo), v, c)
                             for s, v, c in _successors(ts, keyer.rename(st, m)))
            if mine != theirs:
                swap = ", ".join(f"{a}→{b}" for a, b in m.items() if a != b)
                raise ScenarioError(
                    f"scenario.symmetry: the renaming {swap} does not commute with "
                    f"{keyer.protocol.id}'s behaviour (checked on reachable state {checked}): "
                    "these processes are not interchangeable")
        for s, _v, _c in succ:
            k = plain_key(s, fifo)
            if k not in seen:
                seen.add(k)
                queue.append(s)
    ts.forget()
