"""The resources' common features: Algorithm 2 (lines 1–84), one handler per pseudocode block.

Variants differ only where the printed code is broken or where ``full`` adds a check; each such
place says which variant does what and why (the list is in docs/protocols/datta_ring.md).
"""

from __future__ import annotations

from ..kernel import LOCAL, Action, Ctx, Guard, Message
from .state import Config, Request, Resource, epoch, search, set_, tied, without


def _key(x: Request | None) -> tuple | None:
    """A request's identity in ``full``: (client, Score); Score counts the unloops it suffered."""
    return (x.ClId, x.Score) if x is not None else None


def grantable(cfg: Config, s: Resource) -> str | None:
    """Lines 64–68's guard: the client to send resAllowed to, or None.

    as-printed: both Booleans. Otherwise readiness is tied to the client at the head (prose
    fix), and ``full`` also matches the epoch, so a Res1Ready from before an unloop is void."""
    h = s.head
    if cfg.printed:
        return (h.ClId if h else "⊥") if (s.StrongReady and s.WeakReady) else None
    if h is None or s.WeakReady != h.ClId or h.RqNo != 2:
        return None
    ok = (h.ClId, h.Score) in s.StrongReady if cfg.repair else \
        any(c == h.ClId for c, _ in s.StrongReady)
    return h.ClId if ok else None


class ResourceCommon:
    """Mixin of DattaRing: Algorithm 2."""

    def resource_actions(self, cfg: Config, r: str, s: Resource) -> list[Action]:
        acts = []
        if s.SendingToken:
            acts.append(Action(LOCAL, "send-token", f"{r} passes the token to {cfg.next_of(r)}",
                               False, "2", (12, 16)))
        if s.Deferred and not s.Lock:
            acts.append(Action(LOCAL, "receive-request", f"{r} takes a buffered NewRequest",
                               True, "2", (18, 34)))
        if s.NewHead:
            acts.append(Action(LOCAL, "new-head", f"{r} handles its new head", True, "2", (36, 48)))
        c = grantable(cfg, s)
        if c is not None:
            acts.append(Action(LOCAL, "res-allowed", f"{r} sends resAllowed to {c}", True,
                               "2", (64, 68)))
        return acts

    def resource_guards(self, cfg: Config, r: str, s: Resource) -> list[Guard]:
        g = grantable(cfg, s)
        return [
            Guard("receive Token", not s.HoldingToken, "2", (3, 10),
                  "the Token from the predecessor" if not s.HoldingToken else "already holding it"),
            Guard("SendingToken", s.SendingToken, "2", (12, 16),
                  "Q_token to empty" if s.HoldingToken else "holding the token"),
            Guard("¬Lock: receive NewRequest", not s.Lock, "2", (18, 34),
                  "Lock to be released (NewRequest stays buffered)" if s.Lock else "a NewRequest"),
            # the same block for a request buffered while Lock was set (local action
            # receive-request); named without the message kind, so it is not a receive guard
            Guard("¬Lock: take the oldest buffered request", bool(s.Deferred) and not s.Lock,
                  "2", (18, 34), "Lock to be released" if s.Lock else "a buffered request"),
            Guard("NewHead", s.NewHead, "2", (36, 48), "a new head of Q_strong"),
            Guard("receive NewStrong", True, "2", (50, 58), "a NewStrong message"),
            Guard("receive Res1Ready (StrongReady)", True, "2", (60, 62), "a Res1Ready message"),
            Guard("StrongReady ∧ WeakReady", g is not None, "2", (64, 68),
                  "Res1Ready from the strong resource" if s.WeakReady else
                  "a weak request at the head of Q_strong"),
            Guard("receive Done", True, "2", (70, 84), "a Done message"),
        ]

    # ---- lines 3–16: the token ----------------------------------------------------------
    def on_Token(self, ctx: Ctx, msg: Message) -> None:
        """Lines 3–10: copy the strong requests into Q_token and hold the token."""
        r, cfg = msg.dst, ctx.config
        s = ctx.get(r)
        copies = tuple(x for x in s.Q_strong if x.RqNo == 1)
        qt = s.Q_token + copies if cfg.printed else copies
        # prose fix: a resource with nothing to flush passes the token on (the printed code only
        # sets SendingToken in the Done block, so an idle resource would keep it forever).
        sending = s.SendingToken or (not cfg.printed and not qt)
        ctx.put(r, set_(s, HoldingToken=True, Q_token=qt, SendingToken=sending))
        who = ", ".join(x.ClId for x in copies) or "nothing"
        ctx.say(f"{r} receives the token; Q_token ← {who}" +
                ("; nothing to flush, it will pass it on" if sending and not qt else ""),
                r, "2", (3, 10))

    def do_send_token(self, ctx: Ctx, r: str, _arg: str) -> None:
        """Lines 12–16."""
        s = ctx.get(r)
        nxt = ctx.config.next_of(r)
        ctx.put(r, set_(s, HoldingToken=False, SendingToken=False))
        ctx.send(r, nxt, "Token")
        ctx.say(f"{r} releases the token to Next({r}) = {nxt}", r, "2", (12, 16))

    # ---- lines 18–34: new requests ------------------------------------------------------
    def on_NewRequest(self, ctx: Ctx, msg: Message) -> None:
        """Lines 18–20: received only while ¬Lock; otherwise it waits in the buffer."""
        r = msg.dst
        s = ctx.get(r)
        c = msg.body[0]
        if c in s.Gone:
            ctx.say(f"{r} drops NewRequest of {c}, which has left (Section IV)", r)
            return
        if s.Lock and ctx.config.detect:
            ctx.put(r, set_(s, Deferred=s.Deferred + (msg.body,)))
            ctx.say(f"{r} is locked by an unloop: NewRequest of {c} stays in its buffer",
                    r, "2", (18,))
            return
        self._take_request(ctx, r, msg.body)

    def do_receive_request(self, ctx: Ctx, r: str, _arg: str) -> None:
        """Lines 18–20 again, once Lock is released: the oldest buffered NewRequest."""
        s = ctx.get(r)
        body = s.Deferred[0]
        ctx.put(r, set_(s, Deferred=s.Deferred[1:]))
        self._take_request(ctx, r, body)

    def _take_request(self, ctx: Ctx, r: str, body: tuple) -> None:
        """Lines 22–32: a strong request joins Q_strong; a weak one joins Q_weak and is
        forwarded as a strong request to the other resource."""
        c, no, nxt = body[:3]
        tag = body[3:]          # full (M7): the request number
        s = ctx.get(r)
        if no == 1:
            new_head = s.head is None
            q = s.Q_strong + (Request(c, 1, nxt, epoch(tag, 1)),)
            ctx.put(r, set_(s, Q_strong=q, NewHead=s.NewHead or new_head))
            ctx.say(f"{r} appends {c}'s strong request to Q_strong" +
                    (" (it is the new head)" if new_head else ""), r, "2", (22, 27))
        else:
            ctx.put(r, set_(s, Q_weak=s.Q_weak + (Request(c, 2, nxt, epoch(tag, 0)),)))
            ctx.send(r, nxt, "NewRequest", (c, 1, r) + tag)
            ctx.say(f"{r} stores {c}'s weak request in Q_weak and forwards "
                    f"NewRequest({c}, 1, {r}) to {nxt}", r, "2", (28, 31))

    # ---- lines 36–48: a new head --------------------------------------------------------
    def do_new_head(self, ctx: Ctx, r: str, _arg: str) -> None:
        cfg = ctx.config
        s = ctx.get(r)
        h = s.head
        extra = dict(Seeking=None, Ready=None) if cfg.repair else {}
        if h is None:
            ctx.put(r, set_(s, NewHead=False, **extra))
            ctx.say(f"{r}: NewHead but Q_strong is empty: Head(Q_strong) = ⊥, nothing to do",
                    r, "2", (36, 37))
            return
        if h.RqNo == 1 and h.NextResId is None:
            ctx.put(r, set_(s, NewHead=False, **extra))
            ctx.send(r, h.ClId, "resAllowed")
            ctx.say(f"{r}: new head {h.ClId} wants {r} alone: resAllowed", r, "2", (37, 39))
        elif h.RqNo == 1:
            ctx.put(r, set_(s, NewHead=False, **extra))
            ctx.send(r, h.NextResId, "NewStrong", (h.ClId, h.Score))
            ctx.say(f"{r}: new head {h.ClId} also needs {h.NextResId}: NewStrong({h.ClId}) "
                    f"to {h.NextResId}", r, "2", (40, 42))
        else:
            ready = True if cfg.printed else h.ClId
            ctx.put(r, set_(s, NewHead=False, WeakReady=ready, **extra))
            ctx.say(f"{r}: new head is {h.ClId}'s weak request: WeakReady", r, "2", (44, 45))

    # ---- lines 50–58: the weak request becomes strong ------------------------------------
    def on_NewStrong(self, ctx: Ctx, msg: Message) -> None:
        r, cfg = msg.dst, ctx.config
        c, score = msg.body
        s = ctx.get(r)
        x = search(s.Q_weak, c)
        new_head = s.head is None and (x is not None or cfg.printed)
        q = s.Q_strong
        if x is not None:
            q = q + ((Request(c, 2, x.NextResId, score) if cfg.repair else x),)
        ctx.put(r, set_(s, Q_strong=q, Q_weak=without(s.Q_weak, x),
                        NewHead=s.NewHead or new_head))
        ctx.send(r, msg.src, "newStrongACK", (c, score))
        if x is None:
            ctx.say(f"{r}: NewStrong({c}) but search(Q_weak, {c}) = ⊥: nothing moves; "
                    f"newStrongACK to {msg.src}", r, "2", (50, 57))
        else:
            ctx.say(f"{r} moves {c}'s weak request from Q_weak to the tail of Q_strong and "
                    f"answers newStrongACK to {msg.src}", r, "2", (50, 57))

    # ---- lines 60–68: readiness and the grant ---------------------------------------------
    def on_Res1Ready(self, ctx: Ctx, msg: Message) -> None:
        """Lines 60–62 (the printed handler receives 'StrongReady'; the sender, line 113, sends
        'Res1Ready': the same message, see the docs)."""
        r, cfg = msg.dst, ctx.config
        c, score = msg.body
        s = ctx.get(r)
        if cfg.printed:
            ctx.put(r, set_(s, StrongReady=True))
            ctx.say(f"{r}: StrongReady ← true", r, "2", (60, 61))
            return
        if cfg.repair:
            x = search(s.Q_strong, c)
            if x is None or x.RqNo != 2 or x.Score != score:
                ctx.say(f"{r} drops a stale Res1Ready for {c} (its weak request is no longer "
                        "in Q_strong with that Score)", r, "2", (60,))
                return
        ctx.put(r, set_(s, StrongReady=tied(s) | {(c, score)}))
        ctx.say(f"{r}: StrongReady for {c}", r, "2", (60, 61))

    def do_res_allowed(self, ctx: Ctx, r: str, _arg: str) -> None:
        cfg = ctx.config
        s = ctx.get(r)
        c = grantable(cfg, s)
        if cfg.printed:
            ctx.put(r, set_(s, StrongReady=False, WeakReady=False))
            if s.head is None:
                ctx.say(f"{r}: StrongReady ∧ WeakReady but Head(Q_strong) = ⊥: resAllowed goes "
                        "nowhere", r, "2", (64, 67))
                return
        else:
            ctx.put(r, set_(s, StrongReady=frozenset(p for p in tied(s) if p[0] != c),
                            WeakReady=None))
        ctx.send(r, c, "resAllowed")
        ctx.say(f"{r}: StrongReady ∧ WeakReady for {c}: resAllowed to {c}", r, "2", (64, 67))

    # ---- lines 70–84: Done ----------------------------------------------------------------
    def on_Done(self, ctx: Ctx, msg: Message) -> None:
        r, cfg = msg.dst, ctx.config
        s = ctx.get(r)
        c = msg.body
        h = s.head
        if h is None or (not cfg.printed and h.ClId != c):
            # prose/full: a Done whose request already left (the client departed) is stale
            ctx.say(f"{r} receives Done but {c} is not at the head of Q_strong: ignored",
                    r, "2", (70, 71))
            if cfg.repair and h is not None and search(s.Q_strong, c) is not None:
                ctx.violation(f"{r}: Done for {c}, which is in Q_strong but not at its head")
            return
        q = s.Q_strong[1:]
        qt = s.Q_token
        ready = frozenset(p for p in tied(s) if p[0] != h.ClId) if not cfg.printed else \
            s.StrongReady
        if h.RqNo == 1:
            if s.HoldingToken:
                # as printed: pop the head of Q_token; prose: drop the served client's copy
                qt = qt[1:] if cfg.printed else tuple(x for x in qt if x.ClId != h.ClId)
            ctx.send(r, h.ClId, "EndACK")
            text = f"{r} pops {h.ClId}'s strong request and sends EndACK to {h.ClId}"
            lines: tuple[int, ...] = (70, 77)
        else:
            to = (q[0].NextResId if q else None) if cfg.printed else h.NextResId
            if to is None:
                text = (f"{r} pops {h.ClId}'s weak request; line 80 sends Done to "
                        "Head(Q_strong).NextResId, which is ⊥ after the pop: the Done is lost")
            else:
                ctx.send(r, to, "Done", h.ClId)
                text = f"{r} pops {h.ClId}'s weak request and forwards Done to {to}"
                if cfg.printed and to != h.NextResId:
                    text += f" (Head(Q_strong) after the pop: not {h.ClId}'s {h.NextResId})"
            lines = (78, 80)
        # as printed: SendingToken ← (Q_token = ∅) even without the token (line 83);
        # prose: only the holder sends it, so there is at most one token.
        sending = (not qt) if cfg.printed else (s.HoldingToken and not qt)
        ctx.put(r, set_(s, Q_strong=q, Q_token=qt, NewHead=bool(q), StrongReady=ready,
                        SendingToken=sending if cfg.printed else (s.SendingToken or sending)))
        ctx.say(text, r, "2", lines)
