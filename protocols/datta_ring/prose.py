"""The prose's reading (feature ``prose``) and the ablation ``no-detection``: named overrides of
the printed rules (client.py, common.py, loops.py, departure.py).

Each override takes the place of one printed rule (``over=``) and says which erratum entry of
docs/protocols/datta_ring.md it answers. Readiness is tied to a client (D9): StrongReady is the
set of (client, Score) pairs whose strong resource said Res1Ready, WeakReady the client whose
weak request is at the head, or None. ``build.py`` gives the initial values accordingly.
"""

from __future__ import annotations

from ..kernel import LOCAL, Ctx, Message
from ..kernel.rules import receive, rule
from .common import GRANT
from .loops import above, hk, prio, two_strong
from .state import CLIENT, RESOURCE, Resource, search, set_, tied

P = "prose"


def prose_readiness(s: Resource, c: str, was_head: bool) -> tuple:
    """(StrongReady, WeakReady) once ``c`` is gone: only ``c``'s own readiness goes (D9)."""
    return (frozenset(p for p in tied(s) if p[0] != c),
            None if s.WeakReady == c else s.WeakReady)


def grant_prose(cfg, r: str, s: Resource) -> bool:
    """D9: the head is a weak request, WeakReady names its client, and that client's strong
    resource said Res1Ready."""
    h = s.head
    return (h is not None and h.RqNo == 2 and s.WeakReady == h.ClId
            and any(c == h.ClId for c, _ in s.StrongReady))


class Prose:
    """Mixin of DattaRing: the rules the prose reads differently from the print."""

    # ---- Algorithm 1 (D20: a message that answers nothing is ignored) ------------------------
    @receive("resAllowed", feature=P, over="allowed", role=CLIENT, title="receive resAllowed",
             algorithm="1", lines=(13, 14), when=lambda cfg, c, s, m: s.phase == "waiting")
    def allowed_prose(self, ctx: Ctx, msg: Message) -> None:
        self.allowed(ctx, msg)

    @receive("resAllowed", feature=P, over="allowed_in_cs", role=CLIENT,
             title="resAllowed that answers no request (ignored)", algorithm="1", lines=(13,),
             when=lambda cfg, c, s, m: s.phase in ("idle", "cs", "finishing"),
             waits="not waiting for a grant")
    def allowed_unasked(self, ctx: Ctx, msg: Message) -> None:
        self._ignored(ctx, msg, (13,))

    @receive("EndACK", feature=P, over="end", role=CLIENT, title="receive EndACK",
             algorithm="1", lines=(22, 24), when=lambda cfg, c, s, m: s.phase == "finishing",
             waits=lambda cfg, c, s: "an EndACK message" if s.phase == "finishing"
             else "having sent Done")
    def end_prose(self, ctx: Ctx, msg: Message) -> None:
        self.end(ctx, msg)

    @receive("EndACK", feature=P, over="end_in_cs", role=CLIENT,
             title="EndACK that answers no Done (ignored)", algorithm="1", lines=(22,),
             when=lambda cfg, c, s, m: s.phase in ("idle", "waiting", "cs"),
             waits="not having sent Done")
    def end_unasked(self, ctx: Ctx, msg: Message) -> None:
        self._ignored(ctx, msg, (22,))

    # ---- Algorithm 2 --------------------------------------------------------------------------
    @receive("Token", feature=P, over="token", role=RESOURCE, algorithm="2", lines=(3, 10),
             waits="the Token from the predecessor")
    def token_prose(self, ctx: Ctx, msg: Message) -> None:
        """D7: Q_token is the strong requests present now, and a resource with nothing to
        flush passes the token on (as printed, only Done sets SendingToken)."""
        r = msg.dst
        s = ctx.get(r)
        copies = tuple(x for x in s.Q_strong if x.RqNo == 1)
        self._hold(ctx, r, s, copies, s.SendingToken or not copies, copies)

    @rule(LOCAL, feature=P, over="new_head", name="new-head", role=RESOURCE, title="NewHead",
          algorithm="2", lines=(36, 48), when=lambda cfg, r, s: s.NewHead,
          waits="a new head of Q_strong", label=lambda cfg, r, s: f"{r} handles its new head")
    def new_head_prose(self, ctx: Ctx, r: str, arg: str) -> None:
        """D9: WeakReady names the client whose weak request is the new head."""
        h = ctx.get(r).head
        self.new_head(ctx, r, arg)
        if h is not None and h.RqNo == 2:
            ctx.put(r, set_(ctx.get(r), WeakReady=h.ClId))

    @receive("NewStrong", feature=P, over="new_strong", role=RESOURCE, algorithm="2",
             lines=(50, 58))
    def new_strong_prose(self, ctx: Ctx, msg: Message) -> None:
        """An empty Q_strong has a new head only if a weak request moved into it (line 51
        sets NewHead even when search(Q_weak, c) = ⊥)."""
        r = msg.dst
        before = ctx.get(r)
        moved = search(before.Q_weak, msg.body[0]) is not None
        self.new_strong(ctx, msg)
        if not moved:
            ctx.put(r, set_(ctx.get(r), NewHead=before.NewHead))

    @receive("Res1Ready", feature=P, over="strong_ready", role=RESOURCE,
             title="receive Res1Ready (StrongReady)", algorithm="2", lines=(60, 62))
    def strong_ready_prose(self, ctx: Ctx, msg: Message) -> None:
        """D9: StrongReady records whose strong resource is ready, with its Score."""
        r = msg.dst
        c, score = msg.body
        ctx.put(r, set_(ctx.get(r), StrongReady=tied(ctx.get(r)) | {(c, score)}))
        if ctx.narrates:
            ctx.say(f"{r}: StrongReady for {c}", r, "2", (60, 61))

    @rule(LOCAL, **GRANT, feature=P, over="res_allowed", when=grant_prose,
          label=lambda cfg, r, s: f"{r} sends resAllowed to {s.head.ClId}")
    def res_allowed_prose(self, ctx: Ctx, r: str, _arg: str) -> None:
        """D9: resAllowed to the client both readinesses name; only its readiness is spent."""
        s = ctx.get(r)
        c = s.head.ClId
        ctx.put(r, set_(s, StrongReady=frozenset(p for p in tied(s) if p[0] != c),
                        WeakReady=None))
        self._grant(ctx, r, c)

    @receive("Done", feature=P, over="done", role=RESOURCE, algorithm="2", lines=(70, 84),
             when=lambda cfg, r, s, m: s.head is not None and s.head.ClId == m.body,
             waits="a Done of the head's client")
    def done_prose(self, ctx: Ctx, msg: Message) -> None:
        """D4: a weak request's Done goes to its own NextResId; D5: the served client's copy
        leaves Q_token; D6: only the token holder sets SendingToken; D9: its readiness goes."""
        r = msg.dst
        s = ctx.get(r)
        h = s.head
        q = s.Q_strong[1:]
        qt = s.Q_token
        if h.RqNo == 1:
            if s.HoldingToken:
                qt = tuple(x for x in qt if x.ClId != h.ClId)
            self._end_ack(ctx, r, h)
        else:
            self._pass_done(ctx, r, h, h.NextResId)
        ctx.put(r, set_(s, Q_strong=q, Q_token=qt, NewHead=bool(q),
                        StrongReady=frozenset(p for p in tied(s) if p[0] != h.ClId),
                        SendingToken=s.SendingToken or (s.HoldingToken and not qt)))

    @receive("Done", feature=P, over="done_empty", role=RESOURCE,
             title="receive Done of a request that left (ignored)", algorithm="2",
             lines=(70, 71), when=lambda cfg, r, s, m: s.head is None or s.head.ClId != m.body,
             waits="a Done of a client not at the head")
    def done_stale(self, ctx: Ctx, msg: Message) -> None:
        """A Done whose request already left Q_strong (its client departed) is stale."""
        self._stale_done(ctx, msg)

    # ---- Algorithm 3 --------------------------------------------------------------------------
    @receive("newStrongACK", feature=P, over="strong_ack", role=RESOURCE,
             title="receive newStrongACK → seekLoop", algorithm="3", lines=(85, 90))
    def strong_ack_prose(self, ctx: Ctx, msg: Message) -> None:
        """D8: r_min is computed for this detection (r's own priority), not read from a
        variable the last seekLoop overwrote; no detection once the head has changed."""
        r = msg.dst
        s = ctx.get(r)
        if not two_strong(s):
            if ctx.narrates:
                ctx.say(f"{r}: newStrongACK for {msg.body[0]}, no longer its head: no detection",
                        r, "3", (85,))
            return
        self._seek(ctx, r, s)

    def _seek(self, ctx: Ctx, r: str, s: Resource) -> None:
        """Lines 86–89 with r_min computed for this detection (prose fix)."""
        h = s.head
        p = prio(ctx.config, s, r)
        ctx.send(r, h.NextResId, "seekLoop", (p, r, None, None, (h.ClId, h.Score)))
        if ctx.narrates:
            ctx.say(f"{r} starts a deadlock detection for {h.ClId}: seekLoop(r_min={p}, {r}) to "
                    f"{h.NextResId}", r, "3", (85, 89))

    @receive("newStrongACK", feature="no-detection", over="strong_ack_prose", role=RESOURCE,
             title="receive newStrongACK → Res1Ready (no detection)", algorithm="3",
             lines=(113,))
    def strong_ack_naive(self, ctx: Ctx, msg: Message) -> None:
        """The ablation: answer as a NoLoop would (line 113), so a cycle deadlocks."""
        r = msg.dst
        s = ctx.get(r)
        if two_strong(s) and hk(s) == tuple(msg.body):
            h = s.head
            ctx.send(r, h.NextResId, "Res1Ready", (h.ClId, h.Score))
            if ctx.narrates:
                ctx.say(f"{r} (naive, no deadlock detection): Res1Ready for {h.ClId} to "
                        f"{h.NextResId}", r, "3", (113,))

    @receive("seekLoop", feature=P, over="seek_loop", role=RESOURCE, algorithm="3",
             lines=(92, 110))
    def seek_loop_prose(self, ctx: Ctx, msg: Message) -> None:
        """D8: lines 92–110 with r_min carried in the message only (no resource variable)."""
        r = msg.dst
        p, init, cand, origin, via = msg.body
        s = ctx.get(r)
        if r == init:
            self._loop_found(ctx, r, s, p)
            return
        h = s.head
        if h is None or h.NextResId is None or h.RqNo == 2:
            self._no_dependency(ctx, r, s, init, origin)
            return
        if not s.HoldingToken and above(ctx.config, p, r):
            p = r
        self._forward(ctx, r, s, (p, init, cand, origin, (h.ClId, h.Score)))

    @receive("KillLoop", feature=P, over="kill_loop", role=RESOURCE, algorithm="3",
             lines=(121, 126))
    def kill_loop_prose(self, ctx: Ctx, msg: Message) -> None:
        """D9: the client whose request goes back to Q_weak is no longer ready here."""
        r, c = msg.dst, msg.body[0]
        ready = frozenset(p for p in tied(ctx.get(r)) if p[0] != c)
        self.kill_loop(ctx, msg)
        ctx.put(r, set_(ctx.get(r), StrongReady=ready))

    # ---- Section IV ---------------------------------------------------------------------------
    @receive("Leave", feature=P, over="leave", role=RESOURCE,
             title="receive Leave (departure message)")
    def leave_prose(self, ctx: Ctx, msg: Message) -> None:
        self._forget(ctx, msg.dst, msg.body, "its departure message", prose_readiness)

    @receive("Departed", feature=P, over="departed", role=RESOURCE,
             title="receive Departed (participant detector)")
    def departed_prose(self, ctx: Ctx, msg: Message) -> None:
        self._forget(ctx, msg.dst, msg.body, "the participant detector", prose_readiness)
