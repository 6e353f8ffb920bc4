"""Our repairs M1–M7 (feature ``repairs``, variant ``full``): overrides of the prose's rules and
the two messages we add (KillLoopNACK, UnloopDone). docs/protocols/datta_ring.md says why each
mechanism is there; the exhaustive checks behind them are in benchmarks/README.md.

- M2/M7 epochs: a request is known by (client, Score), Score being (request number, unloops);
  every verdict names the epoch it is about, and a stale one is dropped.
- M3: the resource remembers whose verdict it awaits (Seeking), for whom it said Res1Ready
  (Ready) and which unloop it runs (Unlooping).
- M4: a seekLoop checks, where it arrives, that the dependency it followed is real.
- M1/M5/M6: a remote unloop is answered (UnloopDone), refused when out of date (KillLoopNACK),
  and the token holder is never unlooped.
"""

from __future__ import annotations

from ..kernel import ENV, LOCAL, Ctx, Message
from ..kernel.rules import receive, rule
from .client import REQUEST
from .common import GRANT
from .loops import INF, above, hk, prio, two_strong
from .state import RESOURCE, Request, Resource, search, set_

F = "repairs"


def grant_full(cfg, r: str, s: Resource) -> bool:
    """The prose's grant, and the Res1Ready was about this very request (its Score)."""
    h = s.head
    return (h is not None and h.RqNo == 2 and s.WeakReady == h.ClId
            and (h.ClId, h.Score) in s.StrongReady)


def _stale_ready(s: Resource, c: str, score) -> bool:
    x = search(s.Q_strong, c)
    return x is None or x.RqNo != 2 or x.Score != score


class Repairs:
    """Mixin of DattaRing: the ``full`` variant's rules."""

    # ---- Algorithm 1 ----------------------------------------------------------------------------
    @rule(ENV, **REQUEST, feature=F, over="request")
    def request_numbered(self, ctx: Ctx, c: str, _arg: str) -> None:
        """M7: the request carries its number, the client's count of its own requests, so that
        every message about it names this request and no earlier one."""
        self._ask(ctx, c, (ctx.get(c).next + 1,))

    # ---- Algorithm 2 ----------------------------------------------------------------------------
    @rule(LOCAL, feature=F, over="new_head_prose", name="new-head", role=RESOURCE,
          title="NewHead", algorithm="2", lines=(36, 48), when=lambda cfg, r, s: s.NewHead,
          waits="a new head of Q_strong", label=lambda cfg, r, s: f"{r} handles its new head")
    def new_head_full(self, ctx: Ctx, r: str, arg: str) -> None:
        """M3: the verdicts awaited or given for the old head are void."""
        self.new_head_prose(ctx, r, arg)
        ctx.put(r, set_(ctx.get(r), Seeking=None, Ready=None))

    @receive("NewStrong", feature=F, over="new_strong_prose", role=RESOURCE, algorithm="2",
             lines=(50, 58))
    def new_strong_full(self, ctx: Ctx, msg: Message) -> None:
        """M2: the promoted weak request takes the strong request's Score as its epoch."""
        r = msg.dst
        c, score = msg.body
        x = search(ctx.get(r).Q_weak, c)
        self.new_strong_prose(ctx, msg)
        if x is not None:
            s = ctx.get(r)
            ctx.put(r, set_(s, Q_strong=s.Q_strong[:-1] + (Request(c, 2, x.NextResId, score),)))

    @receive("Res1Ready", feature=F, over="strong_ready_prose", role=RESOURCE,
             title="receive Res1Ready (StrongReady)", algorithm="2", lines=(60, 62))
    def strong_ready_full(self, ctx: Ctx, msg: Message) -> None:
        """M2: a Res1Ready for a weak request no longer in Q_strong with that Score is stale."""
        r = msg.dst
        c, score = msg.body
        if _stale_ready(ctx.get(r), c, score):
            if ctx.narrates:
                ctx.say(f"{r} drops a stale Res1Ready for {c} (its weak request is no longer "
                        "in Q_strong with that Score)", r, "2", (60,))
            return
        self.strong_ready_prose(ctx, msg)

    @rule(LOCAL, **GRANT, feature=F, over="res_allowed_prose", when=grant_full,
          label=lambda cfg, r, s: f"{r} sends resAllowed to {s.head.ClId}")
    def res_allowed_full(self, ctx: Ctx, r: str, arg: str) -> None:
        self.res_allowed_prose(ctx, r, arg)

    @receive("Done", feature=F, over="done_stale", role=RESOURCE,
             title="receive Done of a request that left (ignored)", algorithm="2",
             lines=(70, 71), when=lambda cfg, r, s, m: s.head is None or s.head.ClId != m.body,
             waits="a Done of a client not at the head")
    def done_stale_full(self, ctx: Ctx, msg: Message) -> None:
        """A Done for a client queued behind another head means a grant went wrong."""
        self._stale_done(ctx, msg)
        r, c = msg.dst, msg.body
        s = ctx.get(r)
        if s.head is not None and search(s.Q_strong, c) is not None:
            ctx.violation(f"{r}: Done for {c}, which is in Q_strong but not at its head")

    # ---- Algorithm 3 ----------------------------------------------------------------------------
    @receive("newStrongACK", feature=F, over="strong_ack_prose", role=RESOURCE,
             title="receive newStrongACK → seekLoop", algorithm="3", lines=(85, 90))
    def strong_ack_full(self, ctx: Ctx, msg: Message) -> None:
        """M2: detect only for the head the newStrongACK is about."""
        r = msg.dst
        s = ctx.get(r)
        if not two_strong(s) or hk(s) != tuple(msg.body):
            if ctx.narrates:
                ctx.say(f"{r}: newStrongACK for {msg.body[0]}, no longer its head: no detection",
                        r, "3", (85,))
            return
        self._seek_full(ctx, r, s)

    def _seek_full(self, ctx: Ctx, r: str, s: Resource) -> None:
        """Lines 86–89 carrying the ≺-candidate and the head it is about (M3, M6)."""
        h = s.head
        p = prio(ctx.config, s, r)
        origin = (h.ClId, h.Score)
        cand = (r, h.ClId, h.Score) if p != INF else None
        ctx.put(r, set_(s, Seeking=origin))
        ctx.send(r, h.NextResId, "seekLoop", (p, r, cand, origin, origin))
        if ctx.narrates:
            ctx.say(f"{r} starts a deadlock detection for {h.ClId}: seekLoop(r_min={p}, {r}) to "
                    f"{h.NextResId}", r, "3", (85, 89))

    @receive("seekLoop", feature=F, over="seek_loop_prose", role=RESOURCE, algorithm="3",
             lines=(92, 110))
    def seek_loop_full(self, ctx: Ctx, msg: Message) -> None:
        """M4: the dependency the seekLoop just followed must really exist: the client it came
        through has its weak request (same Score) in this Q_strong. Otherwise (its NewStrong
        is still in flight, or it was served meanwhile) there is no cycle through it now."""
        r = msg.dst
        p, init, cand, origin, via = msg.body
        s = ctx.get(r)
        w = search(s.Q_strong, via[0])
        real = w is not None and w.RqNo == 2 and w.Score == via[1]
        if r == init:
            if real:
                self._loop_found_full(ctx, r, s, cand, origin)
            else:
                self._no_loop_full(ctx, r, s, origin)
            return
        h = s.head
        if h is None or h.NextResId is None or h.RqNo == 2 or not real:
            self._no_dependency(ctx, r, s, init, origin)
            return
        if not s.HoldingToken and above(ctx.config, p, r):
            p, cand = r, (r, h.ClId, h.Score)
        self._forward(ctx, r, s, (p, init, cand, origin, (h.ClId, h.Score)))

    def _loop_found_full(self, ctx: Ctx, r: str, s: Resource, cand, origin) -> None:
        """Lines 93–99 for the head the detection started for, unlooped by the ≺-minimum."""
        if hk(s) != origin or s.Seeking != origin or not two_strong(s):
            if ctx.narrates:
                ctx.say(f"{r}: its seekLoop came back, but its head changed since: stale, "
                        "dropped", r, "3", (93,))
            return
        target = cand[0] if cand else r
        if target != r:
            ctx.send(r, target, "RemoteKillLoop", (r, origin, cand[1], cand[2]))
            if ctx.narrates:
                ctx.say(f"{r} found a dependency cycle; its ≺-minimum is {target}: "
                        f"RemoteKillLoop to {target}", r, "3", (94, 95))
            return
        if s.Unlooping is not None:
            if ctx.narrates:
                ctx.say(f"{r} found a cycle but is already unlooping: dropped", r, "3", (96,))
            return
        if s.HoldingToken:
            # M6: the token holder is ≺-maximal and is never unlooped; the priorities seen on
            # the way are out of date (the token moved): detect again.
            if ctx.narrates:
                ctx.say(f"{r} found a cycle but every member looked like the token holder: "
                        "detect again", r, "3", (94,))
            self._seek_full(ctx, r, s)
            return
        self._start_unloop(ctx, r, s, r, origin, (97, 98))

    def _start_unloop(self, ctx: Ctx, r: str, s: Resource, init: str, origin, lines) -> None:
        """M3: lock and remember which head is being unlooped and for whom."""
        h = s.head
        ctx.put(r, set_(s, Lock=True, Unlooping=(h.ClId, h.Score, init, origin)))
        ctx.send(r, h.NextResId, "KillLoop", (h.ClId, h.Score))
        if ctx.narrates:
            ctx.say(f"{r} locks and starts the unloop of {h.ClId}: KillLoop({h.ClId}) to "
                    f"{h.NextResId}", r, "3", lines)

    @receive("NoLoop", feature=F, over="no_loop", role=RESOURCE,
             title="receive NoLoop → Res1Ready", algorithm="3", lines=(112, 114))
    def no_loop_full(self, ctx: Ctx, msg: Message) -> None:
        self._no_loop_full(ctx, msg.dst, ctx.get(msg.dst), msg.body)

    def _no_loop_full(self, ctx: Ctx, r: str, s: Resource, origin) -> None:
        """M2/M3: a NoLoop about another head, or during an unloop, is stale."""
        if (hk(s) != origin or s.Seeking != origin or s.Unlooping is not None
                or not two_strong(s)):
            if ctx.narrates:
                ctx.say(f"{r}: NoLoop for a head it no longer waits on: stale, dropped",
                        r, "3", (112,))
            return
        ctx.put(r, set_(s, Seeking=None, Ready=hk(s)))
        self._ready(ctx, r, s.head)

    @receive("RemoteKillLoop", feature=F, over="remote_kill_loop", role=RESOURCE,
             algorithm="3", lines=(116, 119))
    def remote_kill_loop_full(self, ctx: Ctx, msg: Message) -> None:
        """M1/M6: refuse when the head changed, an unloop runs here already, or this resource
        got the token since it was seen (≺ of Definition 3.2 is evaluated now)."""
        r = msg.dst
        s = ctx.get(r)
        init, origin, c, score = msg.body
        if (s.Unlooping is not None or hk(s) != (c, score) or not two_strong(s)
                or s.HoldingToken):
            ctx.send(r, init, "UnloopDone", origin)
            if ctx.narrates:
                ctx.say(f"{r}: RemoteKillLoop for {c}, which is no longer its waiting head (or an "
                        f"unloop is running): refused, UnloopDone to {init}", r, "3", (116,))
            return
        self._start_unloop(ctx, r, s, init, origin, (116, 118))

    @receive("KillLoop", feature=F, over="kill_loop_prose", role=RESOURCE, algorithm="3",
             lines=(121, 126))
    def kill_loop_full(self, ctx: Ctx, msg: Message) -> None:
        """M5: only a weak request that is in Q_strong and not at its head can go back: at the
        head it may already be granted, and then this edge is on no cycle. And when this
        resource is itself breaking the same cycle, one unloop is enough."""
        r = msg.dst
        c, score = msg.body
        s = ctx.get(r)
        x = search(s.Q_strong, c)
        if (x is None or x.RqNo != 2 or x.Score != score or x is s.head
                or s.Unlooping is not None):
            ctx.send(r, msg.src, "KillLoopNACK", (c, score))
            if ctx.narrates:
                ctx.say(f"{r}: KillLoop({c}) but {c}'s weak request is not waiting behind another "
                        "head here: KillLoopNACK", r, "3", (121,))
            return
        self.kill_loop_prose(ctx, msg)

    @receive("KillLoopACK1", feature=F, over="kill_ack1", role=RESOURCE, algorithm="3",
             lines=(128, 133))
    def kill_ack1_full(self, ctx: Ctx, msg: Message) -> None:
        """M1/M3: the unloop ends; the remote initiator hears of it; the head moves only if it
        is still the one unlooped."""
        r = msg.dst
        s = ctx.get(r)
        ctx.send(r, msg.src, "KillLoopACK2", msg.body)
        c, score, init, origin = s.Unlooping or (None, None, r, None)
        if init != r:
            ctx.send(r, init, "UnloopDone", origin)
        if hk(s) != (c, score):
            ctx.put(r, set_(s, Lock=False, Unlooping=None))
            if ctx.narrates:
                ctx.say(f"{r}: KillLoopACK1, but {c} has left its head: unlocked", r, "3", (128,))
            return
        self._head_to_tail(ctx, r, msg)
        ctx.put(r, set_(ctx.get(r), Unlooping=None))

    # ---- ours: the two messages full adds -------------------------------------------------------
    @receive("KillLoopNACK", feature=F, role=RESOURCE, title="receive KillLoopNACK (M5, ours)")
    def kill_nack(self, ctx: Ctx, msg: Message) -> None:
        """The other resource refused (the edge is on no cycle any more). Unlock; tell the
        initiator, or, when this resource was its own ≺-minimum, detect again."""
        r = msg.dst
        s = ctx.get(r)
        c, score, init, origin = s.Unlooping or (msg.body[0], msg.body[1], r, None)
        s = set_(s, Lock=False, Unlooping=None)
        ctx.put(r, s)
        if ctx.narrates:
            ctx.say(f"{r}: KillLoopNACK, the unloop of {c} is void: unlocked", r)
        if init != r:
            ctx.send(r, init, "UnloopDone", origin)
        if two_strong(s) and s.Seeking == hk(s):
            self._seek_full(ctx, r, s)

    @receive("UnloopDone", feature=F, role=RESOURCE, title="receive UnloopDone (M1, ours)",
             waits="an UnloopDone message")
    def unloop_done(self, ctx: Ctx, msg: Message) -> None:
        """The cycle this resource found was worked on elsewhere: detect again for the same
        head, which nothing else would do (the design gap D17 of the prose variant)."""
        r = msg.dst
        s = ctx.get(r)
        if (two_strong(s) and hk(s) == msg.body and s.Seeking == msg.body
                and s.Unlooping is None):
            self._seek_full(ctx, r, s)
        else:
            if ctx.narrates:
                ctx.say(f"{r}: UnloopDone for a head it no longer waits on: nothing to do", r)
