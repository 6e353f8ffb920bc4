"""Algorithm 2 as printed (lines 1–84): the resources' common rules, one per guarded block.

Read it beside the paper: each rule names its lines, and its effect does what they print, also
where that is wrong (the erratum D4–D9 in docs/protocols/datta_ring.md). ``prose.py`` and
``repairs.py`` replace rules of this table for the other variants. Where the printed code reads
⊥ (Head of an empty queue) the rule says so in the narration and does nothing more.

Each narration is built only when the step narrates (``ctx.narrates``): the explorer runs these
handlers on contexts that drop it (a first-time step, ``kernel/alone.py``), and formatting the
text was a tenth of such a step.
"""

from __future__ import annotations

from typing import Any

from ..kernel import LOCAL, Ctx, Message
from ..kernel.rules import receive, rule
from .state import RESOURCE, Config, Request, Resource, epoch, search, set_, without


def _not_gone(cfg: Config, r: str, s: Resource, m: Message) -> bool:
    return m.body[0] not in s.Gone


# Lines 64–68, shared with the overrides (prose.py, repairs.py), which change only the guard.
GRANT: dict[str, Any] = dict(
    name="res-allowed", role=RESOURCE, title="StrongReady ∧ WeakReady", algorithm="2",
    lines=(64, 68), waits=lambda cfg, r, s: "Res1Ready from the strong resource" if s.WeakReady
    else "a weak request at the head of Q_strong")


class Algorithm2:
    """Mixin of DattaRing: the resource's common rules as printed."""

    # ---- lines 3–10 -------------------------------------------------------------------------
    @receive("Token", role=RESOURCE, algorithm="2", lines=(3, 10),
             waits="the Token from the predecessor")
    def token(self, ctx: Ctx, msg: Message) -> None:
        """Copy the strong requests of Q_strong into Q_token and hold the token."""
        r = msg.dst
        s = ctx.get(r)
        copies = tuple(x for x in s.Q_strong if x.RqNo == 1)
        self._hold(ctx, r, s, s.Q_token + copies, s.SendingToken, copies)

    def _hold(self, ctx: Ctx, r: str, s: Resource, qt: tuple, sending: bool,
              copies: tuple) -> None:
        ctx.put(r, set_(s, HoldingToken=True, Q_token=qt, SendingToken=sending))
        if ctx.narrates:
            who = ", ".join(x.ClId for x in copies) or "nothing"
            ctx.say(f"{r} receives the token; Q_token ← {who}" +
                    ("; nothing to flush, it will pass it on" if sending and not qt else ""),
                    r, "2", (3, 10))

    # ---- lines 12–16 ------------------------------------------------------------------------
    @rule(LOCAL, name="send-token", role=RESOURCE, title="SendingToken", algorithm="2",
          lines=(12, 16), progress=False, when=lambda cfg, r, s: s.SendingToken,
          waits=lambda cfg, r, s: "Q_token to empty" if s.HoldingToken else "holding the token",
          label=lambda cfg, r, s: f"{r} passes the token to {cfg.next_of(r)}")
    def send_token(self, ctx: Ctx, r: str, _arg: str) -> None:
        s = ctx.get(r)
        nxt = ctx.config.next_of(r)
        ctx.put(r, set_(s, HoldingToken=False, SendingToken=False))
        ctx.send(r, nxt, "Token")
        if ctx.narrates:
            ctx.say(f"{r} releases the token to Next({r}) = {nxt}", r, "2", (12, 16))

    # ---- lines 18–34 ------------------------------------------------------------------------
    @receive("NewRequest", role=RESOURCE, title="¬Lock: receive NewRequest", algorithm="2",
             lines=(18, 34), when=lambda cfg, r, s, m: not s.Lock and _not_gone(cfg, r, s, m),
             waits=lambda cfg, r, s: "Lock to be released (NewRequest stays buffered)" if s.Lock
             else "a NewRequest message")
    def new_request(self, ctx: Ctx, msg: Message) -> None:
        self._take_request(ctx, msg.dst, msg.body)

    @receive("NewRequest", role=RESOURCE, title="Lock: NewRequest waits in the receive buffer",
             algorithm="2", lines=(18,),
             when=lambda cfg, r, s, m: s.Lock and _not_gone(cfg, r, s, m),
             waits="an unloop holding Lock")
    def buffer_request(self, ctx: Ctx, msg: Message) -> None:
        """Line 18 receives NewRequest only while ¬Lock: until then it waits in the buffer."""
        r = msg.dst
        s = ctx.get(r)
        ctx.put(r, set_(s, Deferred=s.Deferred + (msg.body,)))
        if ctx.narrates:
            ctx.say(f"{r} is locked by an unloop: NewRequest of {msg.body[0]} stays in its buffer",
                    r, "2", (18,))

    @rule(LOCAL, name="receive-request", role=RESOURCE,
          title="¬Lock: take the oldest buffered request", algorithm="2", lines=(18, 34),
          when=lambda cfg, r, s: bool(s.Deferred) and not s.Lock,
          waits=lambda cfg, r, s: "Lock to be released" if s.Lock else "a buffered request",
          label=lambda cfg, r, s: f"{r} takes a buffered NewRequest")
    def receive_request(self, ctx: Ctx, r: str, _arg: str) -> None:
        """Lines 18–20 again, once Lock is released: the oldest buffered NewRequest."""
        s = ctx.get(r)
        body = s.Deferred[0]
        ctx.put(r, set_(s, Deferred=s.Deferred[1:]))
        self._take_request(ctx, r, body)

    def _take_request(self, ctx: Ctx, r: str, body: tuple) -> None:
        """Lines 22–32: a strong request joins Q_strong; a weak one joins Q_weak and is
        forwarded as a strong request to the other resource."""
        c, no, nxt = body[:3]
        tag = body[3:]          # the request number, where the client sends one (M7)
        s = ctx.get(r)
        if no == 1:
            new_head = s.head is None
            q = s.Q_strong + (Request(c, 1, nxt, epoch(tag, 1)),)
            ctx.put(r, set_(s, Q_strong=q, NewHead=s.NewHead or new_head))
            if ctx.narrates:
                ctx.say(f"{r} appends {c}'s strong request to Q_strong" +
                        (" (it is the new head)" if new_head else ""), r, "2", (22, 27))
        else:
            ctx.put(r, set_(s, Q_weak=s.Q_weak + (Request(c, 2, nxt, epoch(tag, 0)),)))
            ctx.send(r, nxt, "NewRequest", (c, 1, r) + tag)
            if ctx.narrates:
                ctx.say(f"{r} stores {c}'s weak request in Q_weak and forwards "
                        f"NewRequest({c}, 1, {r}) to {nxt}", r, "2", (28, 31))

    # ---- lines 36–48 ------------------------------------------------------------------------
    @rule(LOCAL, name="new-head", role=RESOURCE, title="NewHead", algorithm="2", lines=(36, 48),
          when=lambda cfg, r, s: s.NewHead, waits="a new head of Q_strong",
          label=lambda cfg, r, s: f"{r} handles its new head")
    def new_head(self, ctx: Ctx, r: str, _arg: str) -> None:
        s = ctx.get(r)
        h = s.head
        ctx.put(r, set_(s, NewHead=False))
        if h is None:
            if ctx.narrates:
                ctx.say(f"{r}: NewHead but Q_strong is empty: Head(Q_strong) = ⊥, nothing to do",
                        r, "2", (36, 37))
        elif h.RqNo == 1 and h.NextResId is None:
            ctx.send(r, h.ClId, "resAllowed")
            if ctx.narrates:
                ctx.say(f"{r}: new head {h.ClId} wants {r} alone: resAllowed", r, "2", (37, 39))
        elif h.RqNo == 1:
            # the Score rides along in every variant (the repairs read it, M2)
            ctx.send(r, h.NextResId, "NewStrong", (h.ClId, h.Score))
            if ctx.narrates:
                ctx.say(f"{r}: new head {h.ClId} also needs {h.NextResId}: NewStrong({h.ClId}) "
                        f"to {h.NextResId}", r, "2", (40, 42))
        else:
            ctx.put(r, set_(s, NewHead=False, WeakReady=True))
            if ctx.narrates:
                ctx.say(f"{r}: new head is {h.ClId}'s weak request: WeakReady", r, "2", (44, 45))

    # ---- lines 50–58 ------------------------------------------------------------------------
    @receive("NewStrong", role=RESOURCE, algorithm="2", lines=(50, 58))
    def new_strong(self, ctx: Ctx, msg: Message) -> None:
        """The weak request becomes strong: search(Q_weak, c) moves to the tail of Q_strong."""
        r = msg.dst
        c, score = msg.body
        s = ctx.get(r)
        x = search(s.Q_weak, c)
        q = s.Q_strong + ((x,) if x is not None else ())
        ctx.put(r, set_(s, Q_strong=q, Q_weak=without(s.Q_weak, x),
                        NewHead=s.NewHead or s.head is None))
        ctx.send(r, msg.src, "newStrongACK", (c, score))
        self._say_new_strong(ctx, r, msg, x)

    def _say_new_strong(self, ctx: Ctx, r: str, msg: Message, x: Request | None) -> None:
        c = msg.body[0]
        if x is None:
            if ctx.narrates:
                ctx.say(f"{r}: NewStrong({c}) but search(Q_weak, {c}) = ⊥: nothing moves; "
                        f"newStrongACK to {msg.src}", r, "2", (50, 57))
        else:
            if ctx.narrates:
                ctx.say(f"{r} moves {c}'s weak request from Q_weak to the tail of Q_strong and "
                        f"answers newStrongACK to {msg.src}", r, "2", (50, 57))

    # ---- lines 60–62 ------------------------------------------------------------------------
    @receive("Res1Ready", role=RESOURCE, title="receive Res1Ready (StrongReady)", algorithm="2",
             lines=(60, 62))
    def strong_ready(self, ctx: Ctx, msg: Message) -> None:
        """The printed receive names 'StrongReady'; the sender, line 113, sends 'Res1Ready':
        the same message (erratum D2)."""
        r = msg.dst
        ctx.put(r, set_(ctx.get(r), StrongReady=True))
        if ctx.narrates:
            ctx.say(f"{r}: StrongReady ← true", r, "2", (60, 61))

    # ---- lines 64–68 ------------------------------------------------------------------------
    @rule(LOCAL, **GRANT, when=lambda cfg, r, s: bool(s.StrongReady and s.WeakReady),
          label=lambda cfg, r, s: f"{r} sends resAllowed to {s.head.ClId if s.head else '⊥'}")
    def res_allowed(self, ctx: Ctx, r: str, _arg: str) -> None:
        """resAllowed to Head(Q_strong).ClId, whoever it is; both Booleans ← false."""
        s = ctx.get(r)
        ctx.put(r, set_(s, StrongReady=False, WeakReady=False))
        if s.head is None:
            if ctx.narrates:
                ctx.say(f"{r}: StrongReady ∧ WeakReady but Head(Q_strong) = ⊥: resAllowed goes "
                        "nowhere", r, "2", (64, 67))
            return
        self._grant(ctx, r, s.head.ClId)

    def _grant(self, ctx: Ctx, r: str, c: str) -> None:
        ctx.send(r, c, "resAllowed")
        if ctx.narrates:
            ctx.say(f"{r}: StrongReady ∧ WeakReady for {c}: resAllowed to {c}", r, "2", (64, 67))

    # ---- lines 70–84 ------------------------------------------------------------------------
    @receive("Done", role=RESOURCE, algorithm="2", lines=(70, 84),
             when=lambda cfg, r, s, m: s.head is not None,
             waits=lambda cfg, r, s: "a Done message" if s.head else "a non-empty Q_strong")
    def done(self, ctx: Ctx, msg: Message) -> None:
        """Pop the head; a strong one: pop Q_token too (if holding) and EndACK to the client;
        a weak one: Done to Head(Q_strong).NextResId, read after the pop (erratum D4).
        SendingToken ← (Q_token = ∅) whether or not r holds the token (erratum D6)."""
        r = msg.dst
        s = ctx.get(r)
        h = s.head
        q = s.Q_strong[1:]
        qt = s.Q_token
        if h.RqNo == 1:
            if s.HoldingToken:
                qt = qt[1:]
            self._end_ack(ctx, r, h)
            if s.HoldingToken and s.Q_token and s.Q_token[0].ClId != h.ClId:
                if ctx.narrates:
                    ctx.say(f"{r}: line 75 pops the oldest copy in Q_token, which is "
                            f"{s.Q_token[0].ClId}'s, not {h.ClId}'s (erratum D5)", r, "2", (75, 75))
        else:
            to = q[0].NextResId if q else None
            self._pass_done(ctx, r, h, to)
        ctx.put(r, set_(s, Q_strong=q, Q_token=qt, NewHead=bool(q), SendingToken=not qt))

    def _end_ack(self, ctx: Ctx, r: str, h: Request) -> None:
        ctx.send(r, h.ClId, "EndACK")
        if ctx.narrates:
            ctx.say(f"{r} pops {h.ClId}'s strong request and sends EndACK to {h.ClId}",
                    r, "2", (70, 77))

    def _pass_done(self, ctx: Ctx, r: str, h: Request, to: str | None) -> None:
        if to is not None:
            ctx.send(r, to, "Done", h.ClId)
        if not ctx.narrates:
            return
        if to is None:
            text = (f"{r} pops {h.ClId}'s weak request; line 80 sends Done to "
                    "Head(Q_strong).NextResId, which is ⊥ after the pop: the Done is lost")
        else:
            text = f"{r} pops {h.ClId}'s weak request and forwards Done to {to}"
            if to != h.NextResId:
                text += f" (Head(Q_strong) after the pop: not {h.ClId}'s {h.NextResId})"
        ctx.say(text, r, "2", (78, 80))

    @receive("Done", role=RESOURCE, title="receive Done with Q_strong = ∅", algorithm="2",
             lines=(70, 71), when=lambda cfg, r, s, m: s.head is None,
             waits="Q_strong = ∅")
    def done_empty(self, ctx: Ctx, msg: Message) -> None:
        """Line 71 reads Head(Q_strong).RqNo of an empty queue: nothing happens."""
        self._stale_done(ctx, msg)

    def _stale_done(self, ctx: Ctx, msg: Message) -> None:
        if ctx.narrates:
            ctx.say(f"{msg.dst} receives Done but {msg.body} is not at the head of Q_strong: "
                    "ignored", msg.dst, "2", (70, 71))
