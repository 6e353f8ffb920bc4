"""Process and message state of kout_tree, named after the paper's variables.

One dataclass serves the root (Algorithm 1) and the other processes (Algorithm 2): the root-only
counters ``SToken``, ``SPush``, ``SPrio`` and ``Reset`` simply stay at their defaults elsewhere.
The message fields ``C, R, PT, PPr`` of Algorithm 2 line 6 are not process variables here: they
only live in the ``ctrl`` message being handled (the printed code declares them as variables
because its ``receive`` binds them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

REQ, IN, OUT = "Req", "In", "Out"

# Message kinds (the paper's message types).
REST, PUSHT, PRIOT, CTRL = "ResT", "PushT", "PrioT", "ctrl"
KINDS = (REST, PUSHT, PRIOT, CTRL)


@dataclass(frozen=True, slots=True)
class Proc:
    """One process.  ``Prio`` is ``None`` for ⊥.  ``RSet`` is a multiset of channel labels kept
    as a sorted tuple, so equal multisets are equal values.  ``job`` is the application's
    cursor into its workload (which request comes next), not a protocol variable.  ``legit`` (the
    root's only) is a ghost: whether the run has passed a clean start with no fault since
    (legitimacy.py), kept in the state so that a search judges each explored state by its own
    history; it is left out of the canonical serialisation, so of ``state_hash``."""

    State: str = OUT
    Need: int = 0
    RSet: tuple[int, ...] = ()
    Prio: int | None = None
    myC: int = 0
    Succ: int = 0
    SToken: int = 0      # root only: resource tokens that started a new loop this traversal
    SPush: int = 0       # root only: pushers that did
    SPrio: int = 0       # root only: priority tokens that did
    Reset: bool = False  # root only: the current traversal erases every token
    Timer: int = 0       # root only: clock ticks since RestartTimer() (TimeOut() at the limit)
    job: int = 0
    legit: bool = field(default=False, metadata={"ghost": True})


@dataclass(frozen=True, slots=True)
class Ctrl:
    """The body of a controller message ⟨ctrl, C, R, PT, PPr⟩."""

    C: int
    R: bool
    PT: int
    PPr: int


def rset_add(rset: tuple[int, ...], q: int) -> tuple[int, ...]:
    """RSet ∪ {q} as a multiset."""
    return tuple(sorted((*rset, q)))


def count(rset: tuple[int, ...], q: int) -> int:
    """|RSet|_q: how many reserved tokens came from channel q."""
    return sum(1 for i in rset if i == q)


def ctrl_label(c: Ctrl) -> str:
    return f"ctrl({c.C},{'T' if c.R else 'F'},{c.PT},{c.PPr})"
