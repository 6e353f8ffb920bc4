"""Exhaustive search of small datta_ring instances for the tests, on the explorer's engine.

It walks every reachable global state of a small scenario, checks safety after every step (no
resource used by two clients, the protocol's own predicates) and finds deadlocks (someone has
not finished, no progress event is enabled). When the walk is complete it also checks that
from every reachable state an all-served state is still reachable (``SearchOptions.can_finish``),
which rules out livelocks as well as deadlocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from protocols.explorer import SearchOptions, search
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


def explore(sim: Simulator, max_states: int = 50_000, stop_at_first: bool = True) -> Exploration:
    res = search(sim, SearchOptions(max_states=max_states, stop_at_first=stop_at_first,
                                    can_finish=True))
    found = res.findings
    return Exploration(states=res.states, complete=res.complete,
                       violation=found.get("violation"),
                       deadlock=found["deadlock"][1] if "deadlock" in found else None,
                       stuck=res.cannot_finish, done_states=res.done_states)
