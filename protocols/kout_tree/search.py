"""What the explorer may merge or leave out on kout_tree, and why each is exact
(docs/explorer.md, "kout_tree: counter rotation and the congestion bound").

*Counter rotation.* The controller's counters (every ``myC`` and the ``C`` of every ctrl in
flight) are only ever compared for equality and incremented modulo ``top + 1`` (Algorithm 1
lines 44, 47; Algorithm 2 lines 35, 43–45; ``legitimacy.clean_start``); nothing else reads
them. Adding the same d (mod top + 1) to all of them therefore maps every step onto a step,
keeps every guard, violation and critical-section entry, and keeps legitimacy. The key takes
the configuration with every counter rotated so that the root's ``myC`` is 0: a configuration
and its rotations are one state. The rotation renames message contents, so the event labels
of the weak-fairness livelock search are not invariant under it; with it the explorer checks
instead that every reachable state can still serve everyone (``can_finish``, which needs no
fairness and is exact on the quotient: served-ness does not read counters).

*The congestion bound* (``params.congestion`` = M): the paper assumes a timeout "sufficiently
large to prevent congestion" (footnote 4); in an asynchronous search every clock tick may be
scheduled while the controller is still in flight, so the root can send unboundedly many
duplicates and the reachable space is infinite. With M the search explores ``TimeOut`` only
while fewer than M ctrl messages are in flight: a restriction of the adversary, declared by the
scenario (the families state it), never a reduction. Random runs are not bounded by it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..kernel import TIMEOUT, Event, Message
from .config import Config
from .state import CTRL, Ctrl, Proc


def context(cfg: Config, pids: Sequence[str], procs: tuple[Proc, ...],
            messages: tuple[Message, ...]) -> int:
    """The rotation that brings the root's counter to 0 (0: nothing to rotate)."""
    if not cfg.feat.controller:
        return 0
    return procs[pids.index(cfg.root)].myC


def context_part(cfg: Config, pid: str, s: Proc) -> int | None:
    """What ``context`` reads of one process state: the root's ``myC`` (nothing elsewhere)."""
    return s.myC if pid == cfg.tree.root and cfg.feat.controller else None


def content_part(cfg: Config, content: tuple) -> None:
    """``context`` reads no message."""
    return None


def combine(cfg: Config, pids: Sequence[str], parts: tuple, _contents: frozenset) -> int:
    """``context`` from the processes' parts (``context_part``)."""
    if not cfg.feat.controller:
        return 0
    return parts[pids.index(cfg.tree.root)]


def reads_contents(cfg: Config, pids: Sequence[str], parts: tuple) -> bool:
    """``combine`` never reads the messages' parts: the explorer looks the context up by the
    processes' parts alone."""
    return False


def forget_proc(cfg: Config, pid: str, s: Proc, d: int) -> Proc:
    """``s`` with its counter rotated by -d."""
    if not d:
        return s
    return Proc(s.State, s.Need, s.RSet, s.Prio, (s.myC - d) % (cfg.top + 1), s.Succ, s.SToken,
                s.SPush, s.SPrio, s.Reset, s.Timer, s.job, s.legit)


def forget_content(cfg: Config, content: tuple, d: int) -> tuple:
    """A message content ``(src, dst, kind, body)`` with a ctrl's counter rotated by -d."""
    if not d or content[2] != CTRL:
        return content
    b: Ctrl = content[3]
    return (*content[:3], Ctrl((b.C - d) % (cfg.top + 1), b.R, b.PT, b.PPr))


def forget(cfg: Config, pids: Sequence[str], procs: tuple[Proc, ...],
           messages: tuple[Message, ...]) -> tuple[tuple[Proc, ...], tuple[Message, ...]]:
    """The configuration with every counter rotated so that the root's ``myC`` is 0."""
    d = context(cfg, pids, procs, messages)
    if not d:
        return procs, messages
    out = tuple(forget_proc(cfg, p, s, d) for p, s in zip(pids, procs, strict=True))
    msgs = tuple(m if m.kind != CTRL else m._replace(body=forget_content(
        cfg, (m.src, m.dst, m.kind, m.body), d)[3]) for m in messages)
    return out, msgs


def events(cfg: Config) -> Callable[[Any, Event], bool] | None:
    """The congestion bound as the search's event filter (None: every event)."""
    bound = cfg.congestion
    if bound is None or not cfg.feat.controller:
        return None

    def accept(sim: Any, ev: Event) -> bool:
        if ev.kind != TIMEOUT:
            return True
        n = 0
        for m in sim.inflight.values():
            if m.kind == CTRL:
                n += 1
                if n >= bound:
                    return False
        return True
    return accept
