"""Schedulers choose the next event, and only ever among the enabled ones."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .events import FAULT, Event, SimError

if TYPE_CHECKING:  # pragma: no cover
    from .sim import Simulator

KINDS = ("manual", "random", "oldest", "round-robin", "scripted")


def _inline_draw_is_randrange() -> bool:
    """Whether drawing ``k = getrandbits(n.bit_length())`` until ``k < n`` (what
    ``Core.random_event`` does with ``bits``) gives exactly ``randrange(n)``'s draws on this
    Python, as CPython's ``Random._randbelow`` does; checked once, on a few hundred draws."""
    a, b = random.Random(7), random.Random(7)
    for n in (*range(1, 260), 1000, 4097, 10**6) * 2:
        width = n.bit_length()
        k = b.getrandbits(width)
        while k >= n:
            k = b.getrandbits(width)
        if a.randrange(n) != k:
            return False
    return True


INLINE_DRAW = _inline_draw_is_randrange()


class Scheduler:
    kind = ""

    def choose(self, sim: "Simulator") -> str | None:
        """The id of the next event, or None when this scheduler has nothing to pick."""
        raise NotImplementedError

    def choose_event(self, sim: "Simulator") -> Event | None:
        """The next event itself (for ``Core.take``: no id to look up again), or None."""
        eid = self.choose(sim)
        return None if eid is None else sim.event(eid)


class Manual(Scheduler):
    """The user picks (in the browser, by clicking); stepping asks for nothing."""

    kind = "manual"

    def choose(self, sim: "Simulator") -> str | None:
        return None


class Random(Scheduler):
    """Uniform among enabled non-fault events, from its own seeded generator; faults the
    scenario allows are taken with probability ``fault_rate``."""

    kind = "random"

    def __init__(self, seed: int = 0, fault_rate: float = 0.0) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.fault_rate = fault_rate
        # ``rng.randrange(n)`` for n > 0 is exactly ``rng._randbelow(n)`` (same draws), without
        # randrange's argument checks: one call per step.
        self._below = self.rng._randbelow
        # The same draw made inside ``Core.random_event`` (one call less per step), where it is
        # the same draw on this Python.
        self._bits = self.rng.getrandbits if INLINE_DRAW else None

    def choose(self, sim: "Simulator") -> str | None:
        ev = self.choose_event(sim)
        return None if ev is None else ev.id

    def choose_event(self, sim: "Simulator") -> Event | None:
        if sim._quick_pick:
            # The usual case on a headless core: ``Core.random_event``'s pick, inline (one
            # call less per step; keep the two the same). No faults allowed and no process
            # with two actions (``Core._quick_pick``), so the k-th event is found from the
            # core's counts.
            n_msgs = len(sim._heads)
            n = n_msgs + sim._n_acts
            if not n:
                return None
            bits = self._bits
            if bits is None:
                k = self._below(n)
            else:             # Random._randbelow's draw (INLINE_DRAW checks that it is)
                width = n.bit_length()
                k = bits(width)
                while k >= n:
                    k = bits(width)
            if k >= n_msgs:
                return sim._acts[sim._order[k - n_msgs]][0]
            if n_msgs == 1 and sim.fifo:
                for q in sim._chan.values():
                    return sim._msg_events[q[0]]
            return sim._deliveries()[k]
        if not sim._faulty:                         # no faults allowed
            return sim.random_event(self._below, self._bits)
        evs = sim.enabled()
        if not evs:
            return None
        if evs[-1].kind != FAULT:
            return evs[self._below(len(evs))]
        if self.fault_rate and self.rng.random() < self.fault_rate:
            faults = [e for e in evs if e.kind == FAULT]
            return faults[self.rng.randrange(len(faults))]
        normal = [e for e in evs if e.kind != FAULT]
        if not normal:
            return None
        return normal[self.rng.randrange(len(normal))]


class Oldest(Scheduler):
    """The event enabled for the longest time; ties in the order of ``enabled()``."""

    kind = "oldest"

    def choose(self, sim: "Simulator") -> str | None:
        best, best_since = None, None
        for e in sim.enabled():
            if e.kind == FAULT:
                continue
            s = sim.since(e.id)
            if best_since is None or s < best_since:
                best, best_since = e.id, s
        return best


class RoundRobin(Scheduler):
    """Takes turns among processes in their order: the next process after the last one served
    that has an enabled event (a delivery counts for its receiver); of that process's events,
    the one enabled longest."""

    kind = "round-robin"

    def __init__(self) -> None:
        self.last = -1

    def choose(self, sim: "Simulator") -> str | None:
        n = len(sim.pids)
        best, best_key = None, None
        for e in sim.enabled():
            if e.kind == FAULT:
                continue
            key = ((sim.index[e.pid] - self.last - 1) % n, sim.since(e.id))
            if best_key is None or key < best_key:
                best, best_key = e, key
        if best is None:
            return None
        self.last = sim.index[best.pid]
        return best.id


class Scripted(Scheduler):
    """Replays a recorded schedule by step number, then hands over to ``then`` (if any)."""

    kind = "scripted"

    def __init__(self, schedule: Sequence[str], then: Scheduler | None = None) -> None:
        self.schedule = list(schedule)
        self.then = then

    def choose(self, sim: "Simulator") -> str | None:
        k = sim.step_no
        if k < len(self.schedule):
            eid = self.schedule[k]
            if eid not in sim.enabled_ids() and not eid.startswith("f:"):
                raise SimError(f"schedule item {k} ({eid!r}) is not enabled at step {k}; "
                               f"enabled: {', '.join(sim.enabled_ids()[:12]) or 'none'}")
            return eid
        return self.then.choose(sim) if self.then is not None else None


def make(kind: str, seed: int = 0, schedule: Sequence[str] = (), then: str | None = None,
         fault_rate: float = 0.0) -> Scheduler:
    """Build a scheduler by name; a bad name is a SimError naming the choices."""
    if kind == "manual":
        return Manual()
    if kind == "random":
        return Random(seed, fault_rate)
    if kind == "oldest":
        return Oldest()
    if kind == "round-robin":
        return RoundRobin()
    if kind == "scripted":
        nxt = make(then, seed, fault_rate=fault_rate) if then and then != "scripted" else None
        return Scripted(schedule, nxt)
    raise SimError(f"unknown scheduler {kind!r}; choose one of {', '.join(KINDS)}")
