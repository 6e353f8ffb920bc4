"""Algorithm 1: the code of the root r, one function per receive block, plus its timeout.

While ``Reset`` holds the root swallows every ResT, PushT and PrioT it receives (lines 10, 20,
36): that is how a reset traversal empties the network.  Lines are the paper's.
"""

from __future__ import annotations

from dataclasses import replace

from ..kernel import Ctx
from .algorithm2 import pusher_releases
from .config import Config
from .interface import release_all, send_rest
from .state import CTRL, PRIOT, PUSHT, REQ, REST, Ctrl, count, ctrl_label, rset_add


def _swallowed(ctx: Ctx, pid: str, kind: str, lines: tuple[int, int]) -> bool:
    if ctx.get(pid).Reset:
        ctx.say(f"the root is resetting: the {kind} disappears", pid, algorithm="1", lines=lines)
        return True
    return False


def on_rest(ctx: Ctx, cfg: Config, pid: str, q: int) -> None:
    """Lines 10–19."""
    if _swallowed(ctx, pid, REST, (10, 10)):
        return
    s = ctx.get(pid)
    if s.State == REQ and len(s.RSet) < s.Need:
        s = replace(s, RSet=rset_add(s.RSet, q))
        ctx.put(pid, s)
        ctx.say(f"the root reserves the ResT from channel {q} ({len(s.RSet)} of {s.Need})", pid,
                algorithm="1", lines=(11, 12))
    else:
        ctx.put(pid, send_rest(ctx, cfg, pid, s, q))
        ctx.say(f"the root passes the ResT to {cfg.tree.next_of(pid, q)}", pid, algorithm="1",
                lines=(13, 18))


def on_pusht(ctx: Ctx, cfg: Config, pid: str, q: int) -> None:
    """Lines 20–35."""
    if _swallowed(ctx, pid, PUSHT, (20, 20)):
        return
    s = ctx.get(pid)
    if pusher_releases(cfg, s) and s.RSet:
        n = len(s.RSet)
        s = release_all(ctx, cfg, pid, s)
        ctx.say(f"the pusher makes the root release its {n} reserved token"
                f"{'s' if n != 1 else ''}", pid, algorithm="1", lines=(21, 29))
    if cfg.feat.controller and q == cfg.tree.degree(pid) - 1:
        s = replace(s, SPush=min(s.SPush + 1, 2))
    dst = cfg.tree.next_of(pid, q)
    ctx.send(pid, dst, PUSHT)
    ctx.put(pid, s)
    ctx.say(f"the root passes the pusher to {dst}", pid, algorithm="1", lines=(31, 34))


def on_priot(ctx: Ctx, cfg: Config, pid: str, q: int) -> None:
    """Lines 36–42.  A second priority token forwarded from the last channel starts a new loop
    and is counted in SPrio like any other (the printed line 40 does not count it: as-printed)."""
    if _swallowed(ctx, pid, PRIOT, (36, 36)):
        return
    s = ctx.get(pid)
    if s.Prio is None:
        ctx.put(pid, replace(s, Prio=q))
        ctx.say(f"the root takes the priority token (Prio ← {q})", pid, algorithm="1",
                lines=(37, 38))
        return
    if cfg.feat.controller and q == cfg.tree.degree(pid) - 1 and not cfg.feat.printed:
        s = replace(s, SPrio=min(s.SPrio + 1, 2))
    dst = cfg.tree.next_of(pid, q)
    ctx.send(pid, dst, PRIOT)
    ctx.put(pid, s)
    ctx.say(f"the root already holds a priority token and passes this one to {dst}", pid,
            algorithm="1", lines=(39, 40))


def on_ctrl(ctx: Ctx, cfg: Config, pid: str, q: int, m: Ctrl) -> None:
    """Lines 43–73, reconstructed from the prose (docs/protocols/kout_tree.md): a valid
    controller first counts the tokens it passes at the root (lines 66–69); when it comes back
    on the last channel its traversal is over (Succ wraps to 0): the root takes a new counter
    value, decides whether to reset (lines 48–53) or create the missing tokens (55–64), starts
    the counts of the next traversal from zero, and sends the controller on (70–71)."""
    s = ctx.get(pid)
    d = cfg.tree.degree(pid)
    if not (q == s.Succ and s.myC == m.C):
        ctx.say(f"the root ignores the invalid {ctrl_label(m)} from channel {q}", pid,
                algorithm="1", lines=(43, 44))
        return
    pt, ppr = m.PT, m.PPr
    if not cfg.feat.printed:                        # pass before judging the traversal
        pt = min(pt + count(s.RSet, q), cfg.ell + 1)
        ppr = min(ppr + 1, 2) if s.Prio == q else ppr
    s = replace(s, Succ=(s.Succ + 1) % d)
    if s.Succ == 0:
        res, push, prio = pt + s.SToken, s.SPush, ppr + s.SPrio
        reset = res > cfg.ell or prio > 1 or push > 1
        s = replace(s, myC=(s.myC + 1) % (cfg.top + 1), Reset=reset)
        first = cfg.tree.nbr[pid][0]
        if reset:
            s = replace(s, RSet=(), Prio=None)
            ctx.say(f"the controller is back: {res} ResT, {push} PushT, {prio} PrioT counted "
                    f"(bounded): too many, so the root starts a reset traversal", pid,
                    algorithm="1", lines=(46, 53))
        else:
            made = []
            if prio < 1:
                ctx.send(pid, first, PRIOT)
                made.append("1 PrioT")
            for _ in range(cfg.ell - res):
                ctx.send(pid, first, REST)
            if res < cfg.ell:
                made.append(f"{cfg.ell - res} ResT")
            if push < 1:
                ctx.send(pid, first, PUSHT)
                made.append("1 PushT")
            ctx.say(f"the controller is back: {res} ResT, {push} PushT, {prio} PrioT counted; "
                    + (f"the root creates {', '.join(made)}" if made else "nothing is missing"),
                    pid, algorithm="1", lines=(46, 64))
        s = replace(s, SToken=0, SPush=0, SPrio=0)
        pt = ppr = 0
    if cfg.feat.printed:                            # as printed: line 66 after the wrap
        pt = min(pt + count(s.RSet, q), cfg.ell + 1)
        ppr = min(ppr + 1, 2) if s.Prio == q else ppr
    out = Ctrl(s.myC, s.Reset, pt, ppr)
    dst = cfg.tree.nbr[pid][s.Succ]
    s = replace(s, Timer=0)                         # RestartTimer(), line 71
    ctx.put(pid, s)
    ctx.send(pid, dst, CTRL, out)
    ctx.say(f"the root sends {ctrl_label(out)} to {dst} and restarts its timer", pid,
            algorithm="1", lines=(66, 71))


def do_timeout(ctx: Ctx, cfg: Config, pid: str) -> None:
    """Lines 96–99.  Time is a scheduler event: each one is a tick of the root's clock, and
    the ``params.timeout``-th tick since RestartTimer() makes TimeOut() hold: the controller
    may be lost, so the root sends it again with empty counts and restarts the timer."""
    s = ctx.get(pid)
    if s.Timer + 1 < cfg.timeout:
        ctx.put(pid, replace(s, Timer=s.Timer + 1))
        ctx.say(f"time passes at the root (timer {s.Timer + 1} of {cfg.timeout})", pid,
                algorithm="1", lines=(96, 96))
        return
    out = Ctrl(s.myC, s.Reset, 0, 0)
    dst = cfg.tree.nbr[pid][s.Succ]
    ctx.put(pid, replace(s, Timer=0))
    ctx.send(pid, dst, CTRL, out)
    ctx.say(f"TimeOut(): the root sends {ctrl_label(out)} to {dst} again", pid, algorithm="1",
            lines=(96, 98))
