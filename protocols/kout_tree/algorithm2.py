"""Algorithm 2: the code of a non-root process p, one function per receive block.

Each handler is one pass of the loop that receives one message from channel ``q`` (a label);
the caller then runs the loop's priority release (interface.tail).  Lines are the paper's.
"""

from __future__ import annotations

from dataclasses import replace

from ..kernel import Ctx
from .config import Config
from .interface import release_all, send_rest
from .state import CTRL, IN, PRIOT, PUSHT, REQ, Ctrl, Proc, count, ctrl_label, rset_add


def on_rest(ctx: Ctx, cfg: Config, pid: str, q: int) -> None:
    """Lines 9–15: keep the token while the request is unsatisfied, else pass it on."""
    s = ctx.get(pid)
    if s.State == REQ and len(s.RSet) < s.Need:
        s = replace(s, RSet=rset_add(s.RSet, q))
        ctx.put(pid, s)
        ctx.say(f"{pid} reserves the ResT from channel {q} ({len(s.RSet)} of {s.Need})", pid,
                algorithm="2", lines=(10, 11))
    else:
        ctx.put(pid, send_rest(ctx, cfg, pid, s, q))
        ctx.say(f"{pid} does not need the ResT and passes it to "
                f"{cfg.tree.next_of(pid, q)}", pid, algorithm="2", lines=(12, 13))


def pusher_releases(cfg: Config, s: Proc) -> bool:
    """Lines 17–18 (and Algorithm 1 lines 21–22).  The prose: a process releases its reserved
    tokens unless it is in its critical section, or may enter it, or holds the priority token.
    The printed guard reads ``Prio ≠ ⊥`` where the prose says ``Prio = ⊥`` (as-printed keeps it)."""
    prio_ok = s.Prio is not None if cfg.feat.printed else s.Prio is None
    return prio_ok and (s.State != REQ or len(s.RSet) < s.Need) and s.State != IN


def on_pusht(ctx: Ctx, cfg: Config, pid: str, q: int) -> None:
    """Lines 16–25."""
    s = ctx.get(pid)
    dst = cfg.tree.next_of(pid, q)
    if pusher_releases(cfg, s) and s.RSet:
        n = len(s.RSet)
        s = release_all(ctx, cfg, pid, s)
        ctx.say(f"the pusher makes {pid} release its {n} reserved token{'s' if n != 1 else ''}",
                pid, algorithm="2", lines=(17, 23))
    ctx.send(pid, dst, PUSHT)
    ctx.put(pid, s)
    ctx.say(f"{pid} passes the pusher to {dst}", pid, algorithm="2", lines=(24, 24))


def on_priot(ctx: Ctx, cfg: Config, pid: str, q: int) -> None:
    """Lines 26–32: take the priority token if free (the loop's end passes it on again at once
    unless the request is unsatisfied)."""
    s = ctx.get(pid)
    if s.Prio is None:
        ctx.put(pid, replace(s, Prio=q))
        ctx.say(f"{pid} takes the priority token (Prio ← {q})", pid, algorithm="2",
                lines=(27, 28))
    else:
        dst = cfg.tree.next_of(pid, q)
        ctx.send(pid, dst, PRIOT)
        ctx.say(f"{pid} already holds a priority token and passes this one to {dst}", pid,
                algorithm="2", lines=(29, 30))


def on_ctrl(ctx: Ctx, cfg: Config, pid: str, q: int, m: Ctrl) -> None:
    """Lines 33–60, reconstructed from the prose on counter flushing (the printed nesting is
    broken and ``myC ← C`` is missing; docs/protocols/kout_tree.md).  Valid: case (1) from the
    parent with a new counter value, case (2) back from ``Succ`` with the current one."""
    s = ctx.get(pid)
    d = cfg.tree.degree(pid)
    printed = cfg.feat.printed
    if q == 0 and s.myC != m.C:                                   # case (1), lines 43–52
        s = replace(s, myC=m.C, Succ=min(1, d - 1))
        if m.R:
            s = replace(s, RSet=(), Prio=None)
        why, lines = "a new traversal arrives from the parent", (43, 52)
    elif q == s.Succ and s.myC == m.C and s.Succ != 0:            # case (2), lines 35–41
        s = replace(s, Succ=(s.Succ + 1) % d)
        if m.R:
            s = replace(s, RSet=()) if printed else replace(s, RSet=(), Prio=None)
        why, lines = f"the traversal returns from channel {q}", (35, 41)
    elif q == 0 and not printed:                                  # invalid from the parent
        dst = cfg.tree.nbr[pid][s.Succ]
        ctx.send(pid, dst, CTRL, m)
        ctx.say(f"{pid} has already seen counter {m.C}: it forwards the duplicate "
                f"{ctrl_label(m)} unchanged to {dst} and does not count it", pid,
                algorithm="2", lines=(43, 45))
        return
    elif q == 0:                                                  # as printed: line 43 is Ok
        why, lines = "line 43 accepts any message from the parent", (43, 44)
    else:
        ctx.say(f"{pid} ignores the invalid {ctrl_label(m)} from channel {q}", pid,
                algorithm="2", lines=(33, 35))
        return
    pt = min(m.PT + count(s.RSet, q), cfg.ell + 1)                # lines 53–58
    ppr = min(m.PPr + 1, 2) if s.Prio == q else m.PPr
    out = Ctrl(s.myC, m.R, pt, ppr)
    dst = cfg.tree.nbr[pid][s.Succ]
    ctx.put(pid, s)
    ctx.send(pid, dst, CTRL, out)
    erased = " and erases its tokens (reset)" if m.R else ""
    ctx.say(f"{pid}: {why}{erased}; it sends {ctrl_label(out)} to {dst}", pid,
            algorithm="2", lines=(lines[0], 58))
