"""Algorithm 1 as printed (lines 1–25): the client's rules, one per guarded block.

A client knows only its own id and the resources of its current request (the workload plays
the resource discover oracle). The critical section, which the paper runs inside the resAllowed
block (line 14), ends by an environment event so that the scheduler decides how long it lasts.
The printed loop receives resAllowed (line 13) and EndACK (line 22) in every pass, whatever D
is: these rules do the same, and ``prose.py`` narrows them (erratum D20).
"""

from __future__ import annotations

from typing import Any

from ..kernel import ENV, Ctx, Message
from ..kernel.rules import receive, rule
from .state import CLIENT, Client, Config, set_


def _request_waits(cfg: Config, c: str, s: Client) -> str:
    if s.next >= len(cfg.requests[c]):
        return "the oracle has no more requests"
    return "D = ⊥ (the current request to end)"


# Lines 3–12, shared with the repairs' numbered request (repairs.py).
REQUEST: dict[str, Any] = dict(
    name="request", role=CLIENT, title="getRequest (D = ⊥)", algorithm="1", lines=(3, 12),
    progress=False, when=lambda cfg, c, s: s.phase == "idle" and s.next < len(cfg.requests[c]),
    waits=_request_waits, label=lambda cfg, c, s: f"{c} asks for {'+'.join(cfg.requests[c][s.next])}")


class Algorithm1:
    """Mixin of DattaRing: the client's rules as printed."""

    # ---- lines 3–12 -----------------------------------------------------------------------
    @rule(ENV, **REQUEST)
    def request(self, ctx: Ctx, c: str, _arg: str) -> None:
        """D ← getRequests(); NewRequest to the weak resource (two) or to the one."""
        self._ask(ctx, c, ())

    def _ask(self, ctx: Ctx, c: str, tag: tuple) -> None:
        s = ctx.get(c)
        rq = ctx.config.requests[c][s.next]
        D = (rq[0], rq[1] if len(rq) == 2 else None)
        ctx.put(c, set_(s, D=D, phase="waiting", next=s.next + 1))
        ctx.request(c)
        if D[1] is not None:
            ctx.send(c, D[1], "NewRequest", (c, 2, D[0]) + tag)
            if ctx.narrates:
                ctx.say(f"{c} needs {D[0]} (strong) and {D[1]} (weak): NewRequest({c}, 2, {D[0]}) "
                        f"to the weak resource {D[1]}", c, "1", (5, 7))
        else:
            ctx.send(c, D[0], "NewRequest", (c, 1, None) + tag)
            if ctx.narrates:
                ctx.say(f"{c} needs {D[0]} only: NewRequest({c}, 1, ⊥) to {D[0]}", c, "1", (8, 9))

    # ---- lines 13–14 ------------------------------------------------------------------------
    @receive("resAllowed", role=CLIENT, title="receive resAllowed", algorithm="1", lines=(13, 14),
             when=lambda cfg, c, s, m: s.phase in ("idle", "waiting", "finishing"))
    def allowed(self, ctx: Ctx, msg: Message) -> None:
        """Enter the critical section on the resources of D; line 13 checks nothing, so a
        resAllowed that answers no pending request enters too (reported as a violation)."""
        c = msg.dst
        s = ctx.get(c)
        if s.phase != "waiting":
            ctx.violation(f"{c} enters its critical section on a resAllowed that answers no "
                          f"pending request ({'D = ⊥' if s.phase == 'idle' else 'Done sent'}"
                          "): line 13 checks nothing")
        ctx.put(c, set_(s, phase="cs"))
        ctx.enter_cs(c, tuple(r for r in s.D if r is not None))
        if ctx.narrates:
            ctx.say(f"{c} receives resAllowed from {msg.src} and enters its critical section on "
                    f"{' and '.join(r for r in s.D if r)}", c, "1", (13, 14))

    @receive("resAllowed", role=CLIENT, title="resAllowed during the critical section",
             algorithm="1", lines=(14,), when=lambda cfg, c, s, m: s.phase == "cs",
             waits="being in its critical section")
    def allowed_in_cs(self, ctx: Ctx, msg: Message) -> None:
        self._not_at_a_receive(ctx, msg)

    def _not_at_a_receive(self, ctx: Ctx, msg: Message) -> None:
        """A client inside its critical section (line 14) is not at a receive: the message
        stays in the channel (sent again from the same sender, for the kernel)."""
        ctx.send(msg.src, msg.dst, msg.kind, msg.body)
        if ctx.narrates:
            ctx.say(f"{msg.dst} is inside its critical section (line 14): {msg.kind} stays in "
                    "the channel", msg.dst, "1", (14,))

    # ---- lines 15–19 ----------------------------------------------------------------------
    @rule(ENV, name="release", role=CLIENT, title="end critical section, send Done",
          algorithm="1", lines=(15, 19), when=lambda cfg, c, s: s.phase == "cs",
          waits="being in the critical section",
          label=lambda cfg, c, s: f"{c} ends its critical section")
    def release(self, ctx: Ctx, c: str, _arg: str) -> None:
        """Done to D[2] for a two-resource request, else to D[1]."""
        s = ctx.get(c)
        ctx.exit_cs(c)
        ctx.put(c, set_(s, phase="finishing"))
        to = s.D[1] if s.D[1] is not None else s.D[0]
        if to is None:      # after a resAllowed with D = ⊥ (line 13): line 18's D[1] is ⊥
            ctx.put(c, set_(s, phase="idle"))
            if ctx.narrates:
                ctx.say(f"{c} leaves its critical section; D = ⊥, so the Done of line 18 goes "
                        "nowhere", c, "1", (15, 19))
            return
        ctx.send(c, to, "Done", c)
        if ctx.narrates:
            ctx.say(f"{c} leaves its critical section and sends Done to {to}", c, "1", (15, 19))

    # ---- lines 22–24 ------------------------------------------------------------------------
    @receive("EndACK", role=CLIENT, title="receive EndACK", algorithm="1", lines=(22, 24),
             when=lambda cfg, c, s, m: s.phase in ("idle", "waiting", "finishing"))
    def end(self, ctx: Ctx, msg: Message) -> None:
        """D ← ⊥: the client may ask the oracle again. Line 23 checks nothing: a waiting
        client forgets the request still queued at its resources."""
        c = msg.dst
        s = ctx.get(c)
        ctx.put(c, set_(s, D=(None, None), phase="idle"))
        if s.phase == "waiting":
            ctx.cancel(c)
            if ctx.narrates:
                ctx.say(f"{c} receives EndACK while it waits: D ← ⊥, its pending request is "
                        "forgotten (line 23 checks nothing)", c, "1", (22, 24))
            return
        if ctx.narrates:
            ctx.say(f"{c} receives EndACK from {msg.src}: D ← ⊥", c, "1", (22, 24))

    @receive("EndACK", role=CLIENT, title="EndACK during the critical section", algorithm="1",
             lines=(14,), when=lambda cfg, c, s, m: s.phase == "cs",
             waits="being in its critical section")
    def end_in_cs(self, ctx: Ctx, msg: Message) -> None:
        self._not_at_a_receive(ctx, msg)
