"""What no future step of AllocResource can read, erased for the explorer's state keys.

Lamport times make every interleaving look different: two runs that differ only in when a
LOCK reached a member end with different clocks, although nothing will ever tell them apart.
``forget`` maps a global state to one the protocol cannot distinguish from it, so the explorer
(``Protocol.forget``, docs/explorer.md) merges the two. Each erasure and why it is exact:

1. **The times in D_v** (``(r, holder, t)`` rows, their copies at requesters and in RESPONSEs)
   are written and copied but never read: A_u looks only at holders. Set to 0.
2. **A finished process's clock.** u with no request left and none in progress (idle,
   ``done`` = its workload) never stamps a QUERY or sends a LOCK/UNLOCK again; its clock C_u
   is only ever raised by max(·) on receipt, and flows nowhere. So C_u and the times of the
   LOCK/UNLOCK messages on their way to u (read only into C_u and D_u) are set to 0.
3. **Once every request has been made**, no new stamp will ever be created, so every clock
   and LOCK/UNLOCK time is dead (clocks only matter through future stamps), and the existing
   stamps are only compared with each other (order, equality). Their times are renumbered
   0, 1, 2, … in increasing order: an order-preserving renaming changes no comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

from ..kernel import Message
from .config import Config
from .state import Member, Proc, Requester, Stamp

_STAMPED = ("QUERY", "PREEMPT", "RETURN")     # bodies that are a stamp (or None, as printed)


def _rows(d: tuple) -> tuple:
    return tuple((r, h, 0) for r, h, _t in d)


def forget(cfg: Config, pids: Sequence[str], procs: tuple[Proc, ...],
           messages: tuple[Message, ...]) -> tuple[tuple[Proc, ...], tuple[Message, ...]]:
    """``(procs, messages)`` with the values no future step reads erased (module doc)."""
    ctx = context(cfg, pids, procs, messages)
    out_procs = tuple(forget_proc(cfg, u, s, ctx) for u, s in zip(pids, procs, strict=True))
    out_msgs = []
    for m in messages:
        body = _body(m.kind, m.body, ctx[0] or m.dst in ctx[1], ctx[2])
        out_msgs.append(m if body is m.body else m._replace(body=body))
    return out_procs, tuple(out_msgs)


# ``forget`` in three parts, for the explorer's keys (``Protocol.forget_parts``): what the
# erasure of one process state or one message reads of the rest of the global state is
# ``context`` — whether every request has been made, who is dead, the stamps' ranks — so
# the explorer erases each process state and message content once per context, by number.

def context(cfg: Config, pids: Sequence[str], procs: tuple[Proc, ...],
            messages: tuple[Message, ...]) -> tuple:
    """(every request made, the dead processes, rule 3's ranks): all ``forget`` reads of the
    global state besides the process state or message it erases."""
    parts = tuple(context_proc(cfg, u, s) for u, s in zip(pids, procs, strict=True))
    times = frozenset(t for m in messages if (t := _time(m.kind, m.body)) is not None)
    return context_of(cfg, pids, parts, times)


# ``context`` from parts (``Protocol.forget_context_parts``): what it reads of one process
# state, what it reads of one message content (a stamp's time, or None), and how the parts
# combine. The ranks depend on the *set* of the messages' times, so the explorer numbers each
# process state's part and each content's part once and works a context out once per
# combination of those numbers.

def context_proc(cfg: Config, u: str, s: Proc) -> tuple[bool, bool, tuple[int, ...]]:
    """(u has made every request, u is dead (rule 2), the times of the stamps u holds)."""
    req, mem = s.req, s.mem
    made = req.done == len(cfg.workload[u])
    times = {t[0] for t in (req.ts, mem.T, *(t for t, _w in mem.X)) if t is not None}
    return made, made and req.phase == "idle", tuple(sorted(times))


def context_content(cfg: Config, content: tuple) -> int | None:
    """The time of the stamp a message content carries (None: it carries none)."""
    return _time(content[2], content[3])


def _time(kind: str, body) -> int | None:
    t = body[1] if kind == "RESPONSE" else body if kind in _STAMPED else None
    return None if t is None else t[0]


def context_reads_contents(cfg: Config, pids: Sequence[str], parts: Sequence[tuple]) -> bool:
    """Whether ``context_of`` reads the messages' times, given the processes' parts: only once
    every request has been made (the ranks); before that the context is the processes' alone,
    and the explorer looks it up without going through the messages."""
    return all(p[0] for p in parts)


def context_of(cfg: Config, pids: Sequence[str], parts: Sequence[tuple],
               times: frozenset[int]) -> tuple:
    """``context`` from each process's ``context_proc`` and the set of the times the messages'
    stamps carry (``context_content``)."""
    all_made = all(p[0] for p in parts)
    dead = tuple(u for u, p in zip(pids, parts, strict=True) if p[1])
    if not all_made:
        return False, dead, ()
    every = set(times)
    for p in parts:
        every.update(p[2])
    return True, dead, tuple((t, i) for i, t in enumerate(sorted(every)))


def forget_proc(cfg: Config, u: str, s: Proc, ctx: tuple) -> Proc:
    """Process u's state erased in context ``ctx``."""
    return _proc(s, ctx[0] or u in ctx[1], ctx[2])


def forget_content(cfg: Config, content: tuple, ctx: tuple) -> tuple:
    """A message's (src, dst, kind, body) erased in context ``ctx``."""
    src, dst, kind, body = content
    new = _body(kind, body, ctx[0] or dst in ctx[1], ctx[2])
    return content if new is body else (src, dst, kind, new)


# The explorer keys millions of global states made of far fewer process states and messages:
# both erasures are pure functions of hashable arguments, so they are cached (bounded).
@lru_cache(maxsize=1 << 16)
def _proc(s: Proc, clock_dead: bool, rank: tuple[tuple[int, int], ...]) -> Proc:
    ranks = dict(rank)
    req: Requester = s.req
    mem: Member = s.mem
    return Proc(C=0 if clock_dead else s.C,
                req=replace(req, ts=_stamp(req.ts, ranks),
                            copies=tuple((v, _rows(d)) for v, d in req.copies)),
                mem=replace(mem, D=_rows(mem.D), T=_stamp(mem.T, ranks),
                            X=tuple((_stamp(t, ranks), w) for t, w in mem.X)))


@lru_cache(maxsize=1 << 16)
def _body(kind: str, body, to_dead: bool, rank: tuple[tuple[int, int], ...]):
    ranks = dict(rank)
    if kind == "RESPONSE":
        return (_rows(body[0]), _stamp(body[1], ranks))
    if kind in ("LOCK", "UNLOCK") and to_dead:
        return (0, body[1])
    if kind in _STAMPED:
        return _stamp(body, ranks)
    return body


def _stamp(t: Stamp | None, ranks: dict[int, int]) -> Stamp | None:
    """Rule 3's renumbering (no-op before every request has been made: ``ranks`` empty)."""
    return (ranks[t[0]], t[1]) if ranks and t is not None else t
