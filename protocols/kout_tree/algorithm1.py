"""Algorithm 1: the code of the root r, as a rules table (kernel.rules).

Each ``if (receive(X) from q) ∧ ¬Reset`` block is split into one receive rule per branch of its
body, in the printed order; the first rule whose guard holds is the branch taken.  While
``Reset`` holds the root swallows every ResT, PushT and PrioT it receives (lines 10, 20, 36):
that is how a reset traversal empties the network.  Every rule is one pass of the loop; its
effect ends with the loop's priority release (interface.tail, lines 89–95).  Lines are the
paper's.
"""

from __future__ import annotations

from dataclasses import replace

from ..kernel import TIMEOUT, Ctx, Message
from ..kernel.rules import receive, rule
from .algorithm2 import (
    CONTROLLER,
    PRIO,
    PROSE,
    PUSHER,
    PUSHER_PROSE,
    _pushed,
    _pushed_prose,
    _pushed_prose_waits,
    _pushed_waits,
)
from .config import Config
from .interface import channel, keep_waits, release_all, send_rest, tail, take_waits, unsatisfied
from .state import CTRL, PRIOT, PUSHT, REST, Ctrl, Proc, count, ctrl_label, rset_add

ALG = "1"
ROLE = "root"


def _resetting(cfg: Config, pid: str, s: Proc, _msg: Message | None = None) -> bool:
    return s.Reset


def _valid_ctrl(cfg: Config, pid: str, s: Proc, msg: Message) -> bool:
    """Line 44: (q = Succ) ∧ (myC = C)."""
    return channel(cfg, pid, msg) == s.Succ and s.myC == msg.body.C


def _valid_ctrl_waits(cfg: Config, pid: str, s: Proc) -> str:
    return f"a ctrl from channel {s.Succ} with C = {s.myC}"


def _swallow(ctx: Ctx, msg: Message, lines: tuple[int, int]) -> None:
    pid = msg.dst
    ctx.say(f"the root is resetting: the {msg.kind} disappears", pid, algorithm=ALG, lines=lines)
    tail(ctx, ctx.config, pid)


class Root:
    """Mixin: the rules of the root (Algorithm 1)."""

    # ---- lines 10–19: a resource token ----------------------------------------------------------
    @receive(REST, title="swallow the ResT (Reset)", algorithm=ALG, lines=(10, 10), role=ROLE,
             only=CONTROLLER, when=_resetting, waits="a reset traversal (Reset)")
    def root_swallow_rest(self, ctx: Ctx, msg: Message) -> None:
        _swallow(ctx, msg, (10, 10))

    @receive(REST, title="keep the ResT (RSet ∪ {q})", algorithm=ALG, lines=(11, 12), role=ROLE,
             when=lambda cfg, pid, s, msg: unsatisfied(s), waits=keep_waits)
    def root_keep_rest(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid, q = ctx.config, msg.dst, channel(ctx.config, msg.dst, msg)
        s = replace(ctx.get(pid), RSet=rset_add(ctx.get(pid).RSet, q))
        ctx.put(pid, s)
        ctx.say(f"the root reserves the ResT from channel {q} ({len(s.RSet)} of {s.Need})", pid,
                algorithm=ALG, lines=(11, 12))
        tail(ctx, cfg, pid)

    @receive(REST, title="pass the ResT on to q + 1", algorithm=ALG, lines=(13, 18), role=ROLE,
             waits="a ResT it does not need")
    def root_pass_rest(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid, q = ctx.config, msg.dst, channel(ctx.config, msg.dst, msg)
        ctx.put(pid, send_rest(ctx, cfg, pid, ctx.get(pid), q))
        ctx.say(f"the root passes the ResT to {cfg.tree.next_of(pid, q)}", pid, algorithm=ALG,
                lines=(13, 18))
        tail(ctx, cfg, pid)

    # ---- lines 20–35: the pusher ----------------------------------------------------------------
    @receive(PUSHT, title="swallow the PushT (Reset)", algorithm=ALG, lines=(20, 20), role=ROLE,
             only=lambda cfg: cfg.feat.pusher and cfg.feat.controller, when=_resetting,
             waits="a reset traversal (Reset)")
    def root_swallow_pusht(self, ctx: Ctx, msg: Message) -> None:
        _swallow(ctx, msg, (20, 20))

    @receive(PUSHT, title="release RSet on PushT, pass it on", algorithm=ALG, lines=(21, 34),
             role=ROLE, only=PUSHER, when=_pushed, waits=_pushed_waits)
    def root_release_on_pusht(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid = ctx.config, msg.dst
        s = ctx.get(pid)
        n = len(s.RSet)
        s = release_all(ctx, cfg, pid, s)
        ctx.say(f"the pusher makes the root release its {n} reserved token"
                f"{'s' if n != 1 else ''}", pid, algorithm=ALG, lines=(21, 29))
        self._root_pass_pusht(ctx, cfg, pid, channel(cfg, pid, msg), s)

    @receive(PUSHT, title="release RSet on PushT (no PrioT), pass it on", algorithm=ALG,
             lines=(21, 34), role=ROLE, only=PUSHER, feature=PUSHER_PROSE,
             over="root_release_on_pusht", when=_pushed_prose, waits=_pushed_prose_waits)
    def root_release_on_pusht_prose(self, ctx: Ctx, msg: Message) -> None:
        """pusher-prose (erratum K1): lines 21–22 read ``Prio = ⊥``, as the prose means."""
        self.root_release_on_pusht(ctx, msg)

    @receive(PUSHT, title="pass the PushT on to q + 1", algorithm=ALG, lines=(31, 34),
             role=ROLE, only=PUSHER, waits="a PushT that releases nothing")
    def root_pass_pusht(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid = ctx.config, msg.dst
        self._root_pass_pusht(ctx, cfg, pid, channel(cfg, pid, msg), ctx.get(pid))

    def _root_pass_pusht(self, ctx: Ctx, cfg: Config, pid: str, q: int, s: Proc) -> None:
        if cfg.feat.controller and q == cfg.tree.degree(pid) - 1:     # lines 31–33
            s = replace(s, SPush=min(s.SPush + 1, 2))
        dst = cfg.tree.next_of(pid, q)
        ctx.send(pid, dst, PUSHT)
        ctx.put(pid, s)
        ctx.say(f"the root passes the pusher to {dst}", pid, algorithm=ALG, lines=(31, 34))
        tail(ctx, cfg, pid)

    # ---- lines 36–42: the priority token ----------------------------------------------------------
    @receive(PRIOT, title="swallow the PrioT (Reset)", algorithm=ALG, lines=(36, 36), role=ROLE,
             only=lambda cfg: cfg.feat.prio and cfg.feat.controller, when=_resetting,
             waits="a reset traversal (Reset)")
    def root_swallow_priot(self, ctx: Ctx, msg: Message) -> None:
        _swallow(ctx, msg, (36, 36))

    @receive(PRIOT, title="take the PrioT (Prio ← q)", algorithm=ALG, lines=(37, 38), role=ROLE,
             only=PRIO, when=lambda cfg, pid, s, msg: s.Prio is None,
             waits=take_waits)
    def root_take_priot(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid, q = ctx.config, msg.dst, channel(ctx.config, msg.dst, msg)
        ctx.put(pid, replace(ctx.get(pid), Prio=q))
        ctx.say(f"the root takes the priority token (Prio ← {q})", pid, algorithm=ALG,
                lines=(37, 38))
        tail(ctx, cfg, pid)

    @receive(PRIOT, title="pass a second PrioT on", algorithm=ALG, lines=(39, 40), role=ROLE,
             only=PRIO,
             waits="a PrioT while it holds one")
    def root_pass_priot(self, ctx: Ctx, msg: Message) -> None:
        """As printed: line 40 sends it on and counts nothing (erratum K9)."""
        cfg, pid, q = ctx.config, msg.dst, channel(ctx.config, msg.dst, msg)
        dst = cfg.tree.next_of(pid, q)
        ctx.send(pid, dst, PRIOT)
        ctx.put(pid, ctx.get(pid))
        ctx.say(f"the root already holds a priority token and passes this one to {dst}", pid,
                algorithm=ALG, lines=(39, 40))
        tail(ctx, cfg, pid)

    @receive(PRIOT, title="pass a second PrioT on (counted in SPrio)", algorithm=ALG,
             lines=(39, 40), role=ROLE, only=PRIO, feature=PROSE, over="root_pass_priot",
             waits="a PrioT while it holds one")
    def root_pass_priot_counted(self, ctx: Ctx, msg: Message) -> None:
        """prose-guards (erratum K9): a second priority token forwarded from the last channel
        starts a new loop and is counted in SPrio like any other (lines 31–33 do it for the
        pusher)."""
        cfg, pid, q = ctx.config, msg.dst, channel(ctx.config, msg.dst, msg)
        s = ctx.get(pid)
        if cfg.feat.controller and q == cfg.tree.degree(pid) - 1:
            s = replace(s, SPrio=min(s.SPrio + 1, 2))
        dst = cfg.tree.next_of(pid, q)
        ctx.send(pid, dst, PRIOT)
        ctx.put(pid, s)
        ctx.say(f"the root already holds a priority token and passes this one to {dst}", pid,
                algorithm=ALG, lines=(39, 40))
        tail(ctx, cfg, pid)

    # ---- lines 43–73: the controller ------------------------------------------------------------
    @receive(CTRL, title="accept ctrl from Succ with C = myC", algorithm=ALG, lines=(44, 71),
             role=ROLE, only=CONTROLLER,
             when=_valid_ctrl, waits=_valid_ctrl_waits)
    def root_accept_ctrl(self, ctx: Ctx, msg: Message) -> None:
        """As printed, with the nesting the prose gives (docs/protocols/kout_tree.md): Succ ←
        Succ + 1 (45); when it wraps to 0 the traversal is over (46–64); then the tokens from q
        are counted (66–69), after the wrap (erratum K8); send (70), RestartTimer() (71)."""
        cfg, pid, m = ctx.config, msg.dst, msg.body
        q = channel(cfg, pid, msg)
        s = ctx.get(pid)
        pt, ppr = m.PT, m.PPr
        s = replace(s, Succ=(s.Succ + 1) % cfg.tree.degree(pid))
        if s.Succ == 0:
            s = self._root_judge(ctx, cfg, pid, s, pt, ppr)
            pt = ppr = 0
        pt = min(pt + count(s.RSet, q), cfg.ell + 1)
        ppr = min(ppr + 1, 2) if s.Prio == q else ppr
        self._root_send_ctrl(ctx, cfg, pid, s, pt, ppr)

    @receive(CTRL, title="accept ctrl from Succ with C = myC (count, then judge)",
             algorithm=ALG, lines=(44, 71), role=ROLE,
             only=CONTROLLER, feature=PROSE, over="root_accept_ctrl",
             when=_valid_ctrl, waits=_valid_ctrl_waits)
    def root_accept_ctrl_counted(self, ctx: Ctx, msg: Message) -> None:
        """prose-guards, from the prose (erratum K8): a valid controller first
        counts the tokens it passes at the root (lines 66–69); when it comes back on the last
        channel its traversal is over (Succ wraps to 0): the root takes a new counter value,
        decides whether to reset (lines 48–53) or create the missing tokens (55–64), starts the
        counts of the next traversal from zero, and sends the controller on (70–71)."""
        cfg, pid, m = ctx.config, msg.dst, msg.body
        q = channel(cfg, pid, msg)
        s = ctx.get(pid)
        pt = min(m.PT + count(s.RSet, q), cfg.ell + 1)
        ppr = min(m.PPr + 1, 2) if s.Prio == q else m.PPr
        s = replace(s, Succ=(s.Succ + 1) % cfg.tree.degree(pid))
        if s.Succ == 0:
            s = self._root_judge(ctx, cfg, pid, s, pt, ppr)
            pt = ppr = 0
        self._root_send_ctrl(ctx, cfg, pid, s, pt, ppr)

    def _root_send_ctrl(self, ctx: Ctx, cfg: Config, pid: str, s: Proc, pt: int,
                        ppr: int) -> None:
        """Lines 70–71: send(ctrl, myC, Reset, PT, PPr) to Succ; RestartTimer()."""
        out = Ctrl(s.myC, s.Reset, pt, ppr)
        dst = cfg.tree.nbr[pid][s.Succ]
        s = replace(s, Timer=0)
        ctx.put(pid, s)
        ctx.send(pid, dst, CTRL, out)
        ctx.say(f"the root sends {ctrl_label(out)} to {dst} and restarts its timer", pid,
                algorithm=ALG, lines=(66, 71))
        tail(ctx, cfg, pid)

    def _root_judge(self, ctx: Ctx, cfg: Config, pid: str, s: Proc, pt: int, ppr: int) -> Proc:
        """Lines 46–64: the traversal is over; reset, or create the missing tokens."""
        res, push, prio = pt + s.SToken, s.SPush, ppr + s.SPrio
        reset = res > cfg.ell or prio > 1 or push > 1
        s = replace(s, myC=(s.myC + 1) % (cfg.top + 1), Reset=reset)
        first = cfg.tree.nbr[pid][0]
        if reset:
            s = replace(s, RSet=(), Prio=None)
            ctx.say(f"the controller is back: {res} ResT, {push} PushT, {prio} PrioT counted "
                    f"(bounded): too many, so the root starts a reset traversal", pid,
                    algorithm=ALG, lines=(46, 53))
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
                    pid, algorithm=ALG, lines=(46, 64))
        return replace(s, SToken=0, SPush=0, SPrio=0)

    @receive(CTRL, title="ignore an invalid ctrl", algorithm=ALG, lines=(43, 44), role=ROLE,
             only=CONTROLLER, waits="a ctrl not from Succ or with C ≠ myC")
    def root_ignore_ctrl(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid = ctx.config, msg.dst
        ctx.say(f"the root ignores the invalid {ctrl_label(msg.body)} from channel "
                f"{channel(cfg, pid, msg)}", pid, algorithm=ALG, lines=(43, 44))
        tail(ctx, cfg, pid)

    # ---- lines 96–99: the timer -------------------------------------------------------------
    @rule(TIMEOUT, name="TimeOut", title="TimeOut(), or a tick of the root's clock",
          algorithm=ALG, lines=(96, 99), role=ROLE, only=CONTROLLER,
          waits="nothing: the root's clock always ticks",
          label=lambda cfg, pid, s: "TimeOut(): the root resends the controller"
          if s.Timer + 1 >= cfg.timeout
          else f"the root's clock ticks ({s.Timer + 1}/{cfg.timeout})")
    def root_timeout(self, ctx: Ctx, pid: str, _arg: str) -> None:
        """Time is a scheduler event: each one is a tick of the root's clock, and the
        ``params.timeout``-th tick since RestartTimer() makes TimeOut() hold: the controller
        may be lost, so the root sends it again with empty counts and restarts the timer."""
        cfg = ctx.config
        s = ctx.get(pid)
        if s.Timer + 1 < cfg.timeout:
            ctx.put(pid, replace(s, Timer=s.Timer + 1))
            ctx.say(f"time passes at the root (timer {s.Timer + 1} of {cfg.timeout})", pid,
                    algorithm=ALG, lines=(96, 96))
            return
        out = Ctrl(s.myC, s.Reset, 0, 0)
        dst = cfg.tree.nbr[pid][s.Succ]
        ctx.put(pid, replace(s, Timer=0))
        ctx.send(pid, dst, CTRL, out)
        ctx.say(f"TimeOut(): the root sends {ctrl_label(out)} to {dst} again", pid,
                algorithm=ALG, lines=(96, 98))
