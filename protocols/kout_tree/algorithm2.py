"""Algorithm 2: the code of a non-root process p, as a rules table (kernel.rules).

Each ``if (receive(X) from q)`` block of the loop is split into one receive rule per branch of
its body, in the printed order, so the first rule whose guard holds is the branch taken.  Every
rule is one pass of the loop that receives one message from channel ``q`` (a label); its effect
ends with the loop's priority release (interface.tail, lines 73–76).  Lines are the paper's.
"""

from __future__ import annotations

from dataclasses import replace

from ..kernel import Ctx, Message
from ..kernel.rules import receive
from .config import Config
from .interface import channel, keep_waits, release_all, send_rest, tail, take_waits, unsatisfied
from .state import CTRL, IN, PRIOT, PUSHT, REQ, REST, Ctrl, Proc, count, ctrl_label, rset_add

ALG = "2"
ROLE = "process"
PROSE = "prose-guards"     # the named feature (config.VARIANT_TABLE) of the prose's reading
PUSHER_PROSE = "pusher-prose"   # its reading of the pusher's guard (K1), a feature of its own


def _releasable(s: Proc) -> bool:
    """(State ≠ Req ∨ |RSet| < Need) ∧ (State ≠ In), with reserved tokens to release."""
    return (s.State != REQ or len(s.RSet) < s.Need) and s.State != IN and bool(s.RSet)


def _pushed(cfg: Config, pid: str, s: Proc, _msg: Message | None = None) -> bool:
    """Lines 17–18 (Algorithm 1 lines 21–22) as printed: ``Prio ≠ ⊥``."""
    return s.Prio is not None and _releasable(s)


def _pushed_prose(cfg: Config, pid: str, s: Proc, _msg: Message | None = None) -> bool:
    """The prose (erratum K1): a process releases its reserved tokens unless it is in its
    critical section, or may enter it, or holds the priority token: ``Prio = ⊥``."""
    return s.Prio is None and _releasable(s)


def _pushed_waits(cfg: Config, pid: str, s: Proc) -> str:
    return "reserved tokens, a PrioT, and neither In nor ready to enter; then a PushT"


def _pushed_prose_waits(cfg: Config, pid: str, s: Proc) -> str:
    return "reserved tokens, no PrioT, and neither In nor ready to enter; then a PushT"


def _valid_return(cfg: Config, pid: str, s: Proc, msg: Message) -> bool:
    """Line 35: the traversal comes back from Succ with the current counter value."""
    q = channel(cfg, pid, msg)
    return q == s.Succ and s.myC == msg.body.C and s.Succ != 0


def _valid_return_waits(cfg: Config, pid: str, s: Proc) -> str:
    return (f"a ctrl from channel {s.Succ} with C = {s.myC}" if s.Succ != 0
            else "Succ ≠ 0 (the traversal is below it)")


def _new_traversal(cfg: Config, pid: str, s: Proc, msg: Message) -> bool:
    """Lines 43 and 45: from the parent with a new counter value."""
    return channel(cfg, pid, msg) == 0 and s.myC != msg.body.C


def _from_parent(cfg: Config, pid: str, s: Proc, msg: Message) -> bool:
    return channel(cfg, pid, msg) == 0


def _has_feature(name: str):
    return lambda cfg: getattr(cfg.feat, name)


PUSHER, PRIO, CONTROLLER = _has_feature("pusher"), _has_feature("prio"), _has_feature("controller")


class Process:
    """Mixin: the rules of a non-root process (Algorithm 2)."""

    # ---- lines 9–15: a resource token ---------------------------------------------------------
    @receive(REST, title="keep the ResT (RSet ∪ {q})", algorithm=ALG, lines=(10, 11), role=ROLE,
             when=lambda cfg, pid, s, msg: unsatisfied(s), waits=keep_waits)
    def p_keep_rest(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid, q = ctx.config, msg.dst, channel(ctx.config, msg.dst, msg)
        s = replace(ctx.get(pid), RSet=rset_add(ctx.get(pid).RSet, q))
        ctx.put(pid, s)
        ctx.say(f"{pid} reserves the ResT from channel {q} ({len(s.RSet)} of {s.Need})", pid,
                algorithm=ALG, lines=(10, 11))
        tail(ctx, cfg, pid)

    @receive(REST, title="pass the ResT on to q + 1", algorithm=ALG, lines=(12, 13), role=ROLE,
             waits="a ResT it does not need")
    def p_pass_rest(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid, q = ctx.config, msg.dst, channel(ctx.config, msg.dst, msg)
        ctx.put(pid, send_rest(ctx, cfg, pid, ctx.get(pid), q))
        ctx.say(f"{pid} does not need the ResT and passes it to "
                f"{cfg.tree.next_of(pid, q)}", pid, algorithm=ALG, lines=(12, 13))
        tail(ctx, cfg, pid)

    # ---- lines 16–25: the pusher ----------------------------------------------------------------
    @receive(PUSHT, title="release RSet on PushT, pass it on", algorithm=ALG, lines=(17, 24),
             role=ROLE, only=PUSHER, when=_pushed, waits=_pushed_waits)
    def p_release_on_pusht(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid, q = ctx.config, msg.dst, channel(ctx.config, msg.dst, msg)
        s = ctx.get(pid)
        n = len(s.RSet)
        s = release_all(ctx, cfg, pid, s)
        ctx.say(f"the pusher makes {pid} release its {n} reserved token{'s' if n != 1 else ''}",
                pid, algorithm=ALG, lines=(17, 23))
        self._p_pass_pusht(ctx, cfg, pid, q, s)

    @receive(PUSHT, title="release RSet on PushT (no PrioT), pass it on", algorithm=ALG,
             lines=(17, 24), role=ROLE, only=PUSHER, feature=PUSHER_PROSE,
             over="p_release_on_pusht", when=_pushed_prose, waits=_pushed_prose_waits)
    def p_release_on_pusht_prose(self, ctx: Ctx, msg: Message) -> None:
        """pusher-prose (erratum K1): lines 17–18 read ``Prio = ⊥``, as the prose means."""
        self.p_release_on_pusht(ctx, msg)

    @receive(PUSHT, title="pass the PushT on to q + 1", algorithm=ALG, lines=(24, 24),
             role=ROLE, only=PUSHER, waits="a PushT that releases nothing")
    def p_pass_pusht(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid = ctx.config, msg.dst
        self._p_pass_pusht(ctx, cfg, pid, channel(cfg, pid, msg), ctx.get(pid))

    def _p_pass_pusht(self, ctx: Ctx, cfg: Config, pid: str, q: int, s: Proc) -> None:
        dst = cfg.tree.next_of(pid, q)
        ctx.send(pid, dst, PUSHT)
        ctx.put(pid, s)
        ctx.say(f"{pid} passes the pusher to {dst}", pid, algorithm=ALG, lines=(24, 24))
        tail(ctx, cfg, pid)

    # ---- lines 26–32: the priority token ----------------------------------------------------------
    @receive(PRIOT, title="take the PrioT (Prio ← q)", algorithm=ALG, lines=(27, 28), role=ROLE,
             only=PRIO, when=lambda cfg, pid, s, msg: s.Prio is None,
             waits=take_waits)
    def p_take_priot(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid, q = ctx.config, msg.dst, channel(ctx.config, msg.dst, msg)
        ctx.put(pid, replace(ctx.get(pid), Prio=q))
        ctx.say(f"{pid} takes the priority token (Prio ← {q})", pid, algorithm=ALG,
                lines=(27, 28))
        tail(ctx, cfg, pid)     # passed on again at once unless the request is unsatisfied

    @receive(PRIOT, title="pass a second PrioT on", algorithm=ALG, lines=(29, 30), role=ROLE,
             only=PRIO, waits="a PrioT while it holds one")
    def p_pass_priot(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid, q = ctx.config, msg.dst, channel(ctx.config, msg.dst, msg)
        dst = cfg.tree.next_of(pid, q)
        ctx.send(pid, dst, PRIOT)
        ctx.say(f"{pid} already holds a priority token and passes this one to {dst}", pid,
                algorithm=ALG, lines=(29, 30))
        tail(ctx, cfg, pid)

    # ---- lines 33–60: the controller, reconstructed from the prose on counter flushing (the
    # printed nesting is broken and ``myC ← C`` is missing; docs/protocols/kout_tree.md) --------
    @receive(CTRL, title="ctrl returns from Succ with C = myC", algorithm=ALG, lines=(35, 41),
             role=ROLE, only=CONTROLLER,
             when=_valid_return, waits=_valid_return_waits)
    def p_ctrl_returns(self, ctx: Ctx, msg: Message) -> None:
        """As printed: Succ ← Succ + 1 (36); if R, RSet ← ∅ (38–40) and Prio stays (erratum
        K5); then Ok (53–58)."""
        cfg, pid, q, m = ctx.config, msg.dst, channel(ctx.config, msg.dst, msg), msg.body
        s = ctx.get(pid)
        s = replace(s, Succ=(s.Succ + 1) % cfg.tree.degree(pid))
        if m.R:
            s = replace(s, RSet=())
        self._p_forward(ctx, cfg, pid, q, m, s, f"the traversal returns from channel {q}",
                        (35, 41), erased=" and erases RSet (reset; as printed, Prio stays)")

    @receive(CTRL, title="ctrl returns from Succ with C = myC (a reset erases Prio too)",
             algorithm=ALG, lines=(35, 41), role=ROLE,
             only=CONTROLLER, feature=PROSE, over="p_ctrl_returns",
             when=_valid_return, waits=_valid_return_waits)
    def p_ctrl_returns_erasing(self, ctx: Ctx, msg: Message) -> None:
        """prose-guards (erratum K5): a reset traversal erases every token a process holds
        (Lemma 2's proof, lines 47–49), so line 39 erases Prio as well as RSet."""
        cfg, pid, q, m = ctx.config, msg.dst, channel(ctx.config, msg.dst, msg), msg.body
        s = ctx.get(pid)
        s = replace(s, Succ=(s.Succ + 1) % cfg.tree.degree(pid))
        if m.R:
            s = replace(s, RSet=(), Prio=None)
        self._p_forward(ctx, cfg, pid, q, m, s, f"the traversal returns from channel {q}",
                        (35, 41))

    @receive(CTRL, title="ctrl from the parent with C ≠ myC", algorithm=ALG, lines=(43, 52),
             role=ROLE, only=CONTROLLER, when=_new_traversal,
             waits=lambda cfg, pid, s: f"a ctrl from the parent with C ≠ {s.myC}")
    def p_ctrl_new(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid, m = ctx.config, msg.dst, msg.body
        s = replace(ctx.get(pid), myC=m.C, Succ=min(1, cfg.tree.degree(pid) - 1))
        if m.R:
            s = replace(s, RSet=(), Prio=None)
        self._p_forward(ctx, cfg, pid, 0, m, s, "a new traversal arrives from the parent",
                        (43, 52))

    # as printed, line 43 makes any ctrl from the parent Ok (erratum K4); prose-guards forwards
    # a duplicate unchanged instead, and does not count it
    @receive(CTRL, title="as printed: line 43 accepts any ctrl from the parent", algorithm=ALG,
             lines=(43, 44), role=ROLE, only=CONTROLLER,
             when=_from_parent, waits="a ctrl from the parent")
    def p_ctrl_printed_parent(self, ctx: Ctx, msg: Message) -> None:
        self._p_forward(ctx, ctx.config, msg.dst, 0, msg.body, ctx.get(msg.dst),
                        "line 43 accepts any message from the parent", (43, 44))

    @receive(CTRL, title="forward a duplicate ctrl from the parent", algorithm=ALG,
             lines=(43, 45), role=ROLE,
             only=CONTROLLER, feature=PROSE, over="p_ctrl_printed_parent",
             when=_from_parent, waits="a ctrl from the parent it has seen")
    def p_ctrl_duplicate(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid, m = ctx.config, msg.dst, msg.body
        dst = cfg.tree.nbr[pid][ctx.get(pid).Succ]
        ctx.send(pid, dst, CTRL, m)
        ctx.say(f"{pid} has already seen counter {m.C}: it forwards the duplicate "
                f"{ctrl_label(m)} unchanged to {dst} and does not count it", pid,
                algorithm=ALG, lines=(43, 45))
        tail(ctx, cfg, pid)

    @receive(CTRL, title="ignore an invalid ctrl", algorithm=ALG, lines=(33, 35), role=ROLE,
             only=CONTROLLER, waits="a ctrl from neither the parent nor Succ")
    def p_ctrl_ignore(self, ctx: Ctx, msg: Message) -> None:
        cfg, pid = ctx.config, msg.dst
        ctx.say(f"{pid} ignores the invalid {ctrl_label(msg.body)} from channel "
                f"{channel(cfg, pid, msg)}", pid, algorithm=ALG, lines=(33, 35))
        tail(ctx, cfg, pid)

    def _p_forward(self, ctx: Ctx, cfg: Config, pid: str, q: int, m: Ctrl, s: Proc, why: str,
                   lines: tuple[int, int],
                   erased: str = " and erases its tokens (reset)") -> None:
        """Lines 53–58 (Ok): count the tokens from q the controller passes, send it to Succ;
        ``erased`` is what a reset visit erased here, for the narration."""
        pt = min(m.PT + count(s.RSet, q), cfg.ell + 1)
        ppr = min(m.PPr + 1, 2) if s.Prio == q else m.PPr
        out = Ctrl(s.myC, m.R, pt, ppr)
        dst = cfg.tree.nbr[pid][s.Succ]
        ctx.put(pid, s)
        ctx.send(pid, dst, CTRL, out)
        ctx.say(f"{pid}: {why}{erased if m.R else ''}; it sends {ctrl_label(out)} to {dst}", pid,
                algorithm=ALG, lines=(lines[0], 58))
        tail(ctx, cfg, pid)
