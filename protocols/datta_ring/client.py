"""The client side: Variable 1 and Algorithm 1 (lines 1–25), plus departure (Section IV).

A client knows only its own id and the resources of its current request (the workload plays
the resource discover oracle). Each pseudocode block is one handler; the critical section,
which the paper runs inside the resAllowed block, ends by an environment event so that the
scheduler decides how long it lasts.
"""

from __future__ import annotations

from dataclasses import replace

from ..kernel import ENV, Action, Ctx, Guard, Message
from .state import Client, Config


class ClientSide:
    """Mixin of DattaRing: everything a client does."""

    def client_actions(self, cfg: Config, c: str, s: Client) -> list[Action]:
        acts = []
        if s.phase == "idle" and s.next < len(cfg.requests[c]):
            want = "+".join(cfg.requests[c][s.next])
            acts.append(Action(ENV, "request", f"{c} asks for {want}", False, "1", (3, 12)))
        if s.phase == "cs":
            acts.append(Action(ENV, "release", f"{c} ends its critical section", True,
                               "1", (15, 19)))
        if s.phase == "waiting" and c in cfg.leaves:
            how = "silently" if cfg.leaves[c] == "silent" else "with a departure message"
            acts.append(Action(ENV, "depart", f"{c} leaves the system {how}", False))
        return acts

    def client_guards(self, cfg: Config, c: str, s: Client) -> list[Guard]:
        left = len(cfg.requests[c]) - s.next
        return [
            Guard("getRequest (D = ⊥)", s.phase == "idle" and left > 0, "1", (3, 12),
                  "" if left else "the oracle has no more requests"),
            Guard("receive resAllowed", s.phase == "waiting", "1", (13, 14),
                  "a resAllowed message" if s.phase == "waiting" else "a pending request"),
            Guard("end critical section, send Done", s.phase == "cs", "1", (15, 19),
                  "being in the critical section"),
            Guard("receive EndACK", s.phase == "finishing", "1", (22, 24),
                  "an EndACK message" if s.phase == "finishing" else "having sent Done"),
            Guard("depart (Section IV)", s.phase == "waiting" and c in cfg.leaves, None, (),
                  "" if c in cfg.leaves else "this client stays"),
        ]

    # ---- Algorithm 1 --------------------------------------------------------------------
    def do_request(self, ctx: Ctx, c: str, _arg: str) -> None:
        """Lines 3–12: D ← getRequests(); NewRequest to the weak resource (two) or the one."""
        s = ctx.get(c)
        rq = ctx.config.requests[c][s.next]
        D = (rq[0], rq[1] if len(rq) == 2 else None)
        ctx.put(c, replace(s, D=D, phase="waiting", next=s.next + 1))
        ctx.request(c)
        # full (M7, ours): the request carries its number, the client's count of its own
        # requests, so that every message about it names this request and no earlier one.
        tag = (s.next + 1,) if ctx.config.repair else ()
        if D[1] is not None:
            ctx.send(c, D[1], "NewRequest", (c, 2, D[0]) + tag)
            ctx.say(f"{c} needs {D[0]} (strong) and {D[1]} (weak): NewRequest({c}, 2, {D[0]}) "
                    f"to the weak resource {D[1]}", c, "1", (5, 7))
        else:
            ctx.send(c, D[0], "NewRequest", (c, 1, None) + tag)
            ctx.say(f"{c} needs {D[0]} only: NewRequest({c}, 1, ⊥) to {D[0]}", c, "1", (8, 9))

    def on_resAllowed(self, ctx: Ctx, msg: Message) -> None:
        """Lines 13–14: enter the critical section on both resources of D."""
        c = msg.dst
        s = ctx.get(c)
        if s.phase != "waiting":
            if not (ctx.config.printed and self._printed_receive(ctx, msg, s)):
                ctx.say(f"{c} gets resAllowed from {msg.src} but is {s.phase}: ignored",
                        c, "1", (13,))
                return
            ctx.violation(f"{c} enters its critical section on a resAllowed that answers no "
                          f"pending request ({'D = ⊥' if s.phase == 'idle' else 'Done sent'}"
                          "): line 13 checks nothing")
        ctx.put(c, replace(s, phase="cs"))
        ctx.enter_cs(c, tuple(r for r in s.D if r is not None))
        ctx.say(f"{c} receives resAllowed from {msg.src} and enters its critical section on "
                f"{' and '.join(r for r in s.D if r)}", c, "1", (13, 14))

    def _printed_receive(self, ctx: Ctx, msg: Message, s: Client) -> bool:
        """as-printed only: Algorithm 1 receives resAllowed (line 13) and EndACK (line 22) in
        every pass of its loop, whatever D is. Returns whether the handler should go on as
        printed; a client inside its critical section (line 14) is not at a receive, so the
        message stays in the channel (sent again from the same sender, for the kernel)."""
        if s.phase == "gone":
            return False
        if s.phase == "cs":
            ctx.send(msg.src, msg.dst, msg.kind, msg.body)
            ctx.say(f"{msg.dst} is inside its critical section (line 14): {msg.kind} stays in "
                    "the channel", msg.dst, "1", (14,))
            return False
        return True

    def do_release(self, ctx: Ctx, c: str, _arg: str) -> None:
        """Lines 15–19: Done to D[2] for a two-resource request, else to D[1]."""
        s = ctx.get(c)
        ctx.exit_cs(c)
        ctx.put(c, replace(s, phase="finishing"))
        to = s.D[1] if s.D[1] is not None else s.D[0]
        if to is None:      # as printed, after a resAllowed with D = ⊥: line 18's D[1] is ⊥
            ctx.put(c, replace(s, phase="idle"))
            ctx.say(f"{c} leaves its critical section; D = ⊥, so the Done of line 18 goes "
                    "nowhere", c, "1", (15, 19))
            return
        ctx.send(c, to, "Done", c)
        ctx.say(f"{c} leaves its critical section and sends Done to {to}", c, "1", (15, 19))

    def on_EndACK(self, ctx: Ctx, msg: Message) -> None:
        """Lines 22–24: D ← ⊥, the client may ask the oracle again."""
        c = msg.dst
        s = ctx.get(c)
        if s.phase != "finishing":
            if not (ctx.config.printed and self._printed_receive(ctx, msg, s)):
                ctx.say(f"{c} gets EndACK but is {s.phase}: ignored", c, "1", (22,))
                return
            if s.phase == "waiting":
                # as printed, line 23 runs whatever the client is doing: it forgets the
                # request still queued at its resources and may ask the oracle again
                ctx.cancel(c)
                ctx.put(c, replace(s, D=(None, None), phase="idle"))
                ctx.say(f"{c} receives EndACK while it waits: D ← ⊥, its pending request is "
                        "forgotten (line 23 checks nothing)", c, "1", (22, 24))
                return
        ctx.put(c, replace(s, D=(None, None), phase="idle"))
        ctx.say(f"{c} receives EndACK from {msg.src}: D ← ⊥", c, "1", (22, 24))

    # ---- Section IV ---------------------------------------------------------------------
    def do_depart(self, ctx: Ctx, c: str, _arg: str) -> None:
        """A waiting client leaves. With a departure message it tells the resources of D; a
        silent one tells nobody, and the perfect participant detector eventually notifies each
        resource that may hold its requests (modelled as a message from the detector)."""
        s = ctx.get(c)
        ctx.put(c, replace(s, phase="gone"))
        ctx.cancel(c)
        silent = ctx.config.leaves[c] == "silent"
        for r in (x for x in s.D if x is not None):
            ctx.send(c, r, "Departed" if silent else "Leave", c)
        if silent:
            ctx.say(f"{c} leaves silently; the participant detector will tell "
                    f"{', '.join(x for x in s.D if x)}", c)
        else:
            ctx.say(f"{c} leaves and sends Leave to {', '.join(x for x in s.D if x)}", c)
