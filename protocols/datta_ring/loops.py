"""Loop breaking: Algorithm 3 (lines 85–137), deadlock detection along Definition 3.1 and the
unloop, with the ≺ priority of Definition 3.2; plus the two messages ``full`` adds.

Message bodies (the same shape in every variant; the ``full``-only parts are None elsewhere):
  seekLoop (r_min, r_init, candidate, origin, via)   r_min: a resource id or "∞";
      candidate (resource, client, Score): the ≺-minimum seen so far; origin (client, Score):
      the initiator's head when it started; via (client, Score): the dependency just followed
      (the last three: full only)
  NoLoop origin · RemoteKillLoop (r_init, origin, client, Score) · KillLoop (client, Score)
  KillLoopACK1 / KillLoopACK2 / KillLoopNACK (client, Score) · UnloopDone origin
"""

from __future__ import annotations

from ..kernel import Ctx, Guard, Message
from .state import INF, Config, Resource, bump, search, set_, tied, without


def prio(cfg: Config, s: Resource, r: str) -> str:
    """Definition 3.2 as a level: ∞ for the token holder, the identifier otherwise."""
    return INF if s.HoldingToken else r


def above(cfg: Config, a: str, b: str) -> bool:
    """a > b in identifier order, ∞ above everything."""
    if a == INF:
        return b != INF
    if b == INF:
        return False
    return cfg.rank[a] > cfg.rank[b]


def _hk(s: Resource) -> tuple | None:
    h = s.head
    return (h.ClId, h.Score) if h is not None else None


def _two_strong(s: Resource) -> bool:
    h = s.head
    return h is not None and h.RqNo == 1 and h.NextResId is not None


class LoopBreaking:
    """Mixin of DattaRing: Algorithm 3 and the full repair's additions."""

    def loop_guards(self, cfg: Config, r: str, s: Resource) -> list[Guard]:
        return [
            Guard("receive newStrongACK → seekLoop", _two_strong(s), "3", (85, 90),
                  "a newStrongACK for a two-resource head"),
            Guard("receive seekLoop", True, "3", (92, 110), "a seekLoop message"),
            Guard("receive NoLoop → Res1Ready", _two_strong(s), "3", (112, 114), "a NoLoop"),
            Guard("receive RemoteKillLoop", True, "3", (116, 119), "a RemoteKillLoop"),
            Guard("receive KillLoop", True, "3", (121, 126), "a KillLoop"),
            Guard("receive KillLoopACK1", s.Lock, "3", (128, 133), "an unloop in progress"),
            Guard("receive KillLoopACK2", s.Lock, "3", (135, 137), "an unloop in progress"),
        ]

    # ---- lines 85–90: start a detection ---------------------------------------------------
    def on_newStrongACK(self, ctx: Ctx, msg: Message) -> None:
        r, cfg = msg.dst, ctx.config
        s = ctx.get(r)
        h = s.head
        if not cfg.detect:
            # naive: no detection; answer as a NoLoop would (line 113)
            if _two_strong(s) and (h.ClId, h.Score) == tuple(msg.body):
                ctx.send(r, h.NextResId, "Res1Ready", (h.ClId, h.Score))
                ctx.say(f"{r} (naive, no deadlock detection): Res1Ready for {h.ClId} to "
                        f"{h.NextResId}", r, "3", (113,))
            return
        if cfg.printed:
            rmin = INF if s.HoldingToken else s.r_min
            ctx.put(r, set_(s, r_min=rmin))
            if h is None or h.NextResId is None:
                ctx.say(f"{r}: newStrongACK, but Head(Q_strong).NextResId is ⊥: the seekLoop "
                        "goes nowhere", r, "3", (85, 89))
                return
            ctx.send(r, h.NextResId, "seekLoop", (rmin, r, None, None, None))
            ctx.say(f"{r} starts a deadlock detection: seekLoop(r_min={rmin}, {r}) to "
                    f"{h.NextResId}", r, "3", (85, 89))
            return
        if not _two_strong(s) or (cfg.repair and _hk(s) != tuple(msg.body)):
            ctx.say(f"{r}: newStrongACK for {msg.body[0]}, no longer its head: no detection",
                    r, "3", (85,))
            return
        self._seek(ctx, r, s)

    def _seek(self, ctx: Ctx, r: str, s: Resource) -> None:
        """Lines 86–89 with r_min computed for this detection (prose fix)."""
        cfg = ctx.config
        h = s.head
        p = prio(cfg, s, r)
        cand = (r, h.ClId, h.Score) if cfg.repair and p != INF else None
        origin = (h.ClId, h.Score) if cfg.repair else None
        if cfg.repair:
            ctx.put(r, set_(s, Seeking=origin))
        ctx.send(r, h.NextResId, "seekLoop", (p, r, cand, origin, (h.ClId, h.Score)))
        ctx.say(f"{r} starts a deadlock detection for {h.ClId}: seekLoop(r_min={p}, {r}) to "
                f"{h.NextResId}", r, "3", (85, 89))

    # ---- lines 92–110: follow the dependencies ---------------------------------------------
    def on_seekLoop(self, ctx: Ctx, msg: Message) -> None:
        r, cfg = msg.dst, ctx.config
        p, init, cand, origin, via = msg.body
        s = ctx.get(r)
        # full: the dependency the seekLoop just followed must really exist: the client it came
        # through has its weak request (same Score) in this Q_strong. Otherwise (its NewStrong
        # is still in flight, or it was served meanwhile) there is no cycle through it now.
        real = True
        if cfg.repair:
            w = search(s.Q_strong, via[0])
            real = w is not None and w.RqNo == 2 and w.Score == via[1]
        if r == init and not real:
            self._no_loop(ctx, r, s, origin)
            return
        if r == init:
            self._loop_found(ctx, r, s, p, cand, origin)
            return
        h = s.head
        if h is None or h.NextResId is None or h.RqNo == 2 or not real:
            ctx.send(r, init, "NoLoop", origin)
            ctx.say(f"{r} has no dependency (head: {h.ClId if h else '⊥'}"
                    f"{' weak' if h and h.RqNo == 2 else ''}): NoLoop to {init}",
                    r, "3", (101, 102))
            return
        if not s.HoldingToken and above(cfg, p, r):
            p = r
            if cfg.repair:
                cand = (r, h.ClId, h.Score)
        if cfg.printed:
            ctx.put(r, set_(s, r_min=p))
        ctx.send(r, h.NextResId, "seekLoop", (p, init, cand, origin, (h.ClId, h.Score)))
        ctx.say(f"{r} depends on {h.NextResId} through {h.ClId}: seekLoop(r_min={p}, {init}) "
                f"to {h.NextResId}", r, "3", (103, 107))

    def _loop_found(self, ctx: Ctx, r: str, s: Resource, p: str, cand, origin) -> None:
        """Lines 93–99: the initiator's seekLoop came back: a dependency cycle."""
        cfg = ctx.config
        if cfg.repair:
            if _hk(s) != origin or s.Seeking != origin or not _two_strong(s):
                ctx.say(f"{r}: its seekLoop came back, but its head changed since: stale, "
                        "dropped", r, "3", (93,))
                return
            target = cand[0] if cand else r
            if target != r:
                ctx.send(r, target, "RemoteKillLoop", (r, origin, cand[1], cand[2]))
                ctx.say(f"{r} found a dependency cycle; its ≺-minimum is {target}: "
                        f"RemoteKillLoop to {target}", r, "3", (94, 95))
                return
            if s.Unlooping is not None:
                ctx.say(f"{r} found a cycle but is already unlooping: dropped", r, "3", (96,))
                return
            if s.HoldingToken:
                # full: the token holder is ≺-maximal and is never unlooped; the priorities
                # seen on the way are out of date (the token moved): detect again.
                ctx.say(f"{r} found a cycle but every member looked like the token holder: "
                        "detect again", r, "3", (94,))
                self._seek(ctx, r, s)
                return
            self._start_unloop(ctx, r, s, r, origin, (97, 98))
            return
        if p != r:
            if p == INF:
                ctx.say(f"{r} found a dependency cycle but r_min = ∞: RemoteKillLoop to ∞ "
                        "cannot be sent", r, "3", (94, 95))
                return
            ctx.send(r, p, "RemoteKillLoop", (r, None, None, None))
            ctx.say(f"{r} found a dependency cycle; r_min = {p}: RemoteKillLoop to {p}",
                    r, "3", (94, 95))
            return
        self._kill(ctx, r, s, (97, 98))

    def _kill(self, ctx: Ctx, r: str, s: Resource, lines: tuple[int, int]) -> None:
        """as-printed / prose: Lock, KillLoop(Head(Q_strong).ClId) to Head(Q_strong).NextResId."""
        h = s.head
        ctx.put(r, set_(s, Lock=True))
        if h is None or h.NextResId is None:
            ctx.say(f"{r} locks, but Head(Q_strong).NextResId is ⊥: KillLoop goes nowhere",
                    r, "3", lines)
            return
        ctx.send(r, h.NextResId, "KillLoop", (h.ClId, h.Score))
        ctx.say(f"{r} locks and starts the unloop: KillLoop({h.ClId}) to {h.NextResId}",
                r, "3", lines)

    def _start_unloop(self, ctx: Ctx, r: str, s: Resource, init: str, origin, lines) -> None:
        """full: lock and remember which head is being unlooped and for whom."""
        h = s.head
        ctx.put(r, set_(s, Lock=True, Unlooping=(h.ClId, h.Score, init, origin)))
        ctx.send(r, h.NextResId, "KillLoop", (h.ClId, h.Score))
        ctx.say(f"{r} locks and starts the unloop of {h.ClId}: KillLoop({h.ClId}) to "
                f"{h.NextResId}", r, "3", lines)

    # ---- lines 112–119 ----------------------------------------------------------------------
    def on_NoLoop(self, ctx: Ctx, msg: Message) -> None:
        self._no_loop(ctx, msg.dst, ctx.get(msg.dst), msg.body)

    def _no_loop(self, ctx: Ctx, r: str, s: Resource, origin) -> None:
        cfg = ctx.config
        h = s.head
        if cfg.repair and (_hk(s) != origin or s.Seeking != origin
                           or s.Unlooping is not None or not _two_strong(s)):
            ctx.say(f"{r}: NoLoop for a head it no longer waits on: stale, dropped", r, "3", (112,))
            return
        if h is None or h.NextResId is None:
            ctx.say(f"{r}: NoLoop, but Head(Q_strong).NextResId is ⊥: Res1Ready goes nowhere",
                    r, "3", (112, 113))
            return
        if cfg.repair:
            ctx.put(r, set_(s, Seeking=None, Ready=(h.ClId, h.Score)))
        ctx.send(r, h.NextResId, "Res1Ready", (h.ClId, h.Score))
        ctx.say(f"{r}: no cycle through {h.ClId}: Res1Ready to {h.NextResId}", r, "3", (112, 113))

    def on_RemoteKillLoop(self, ctx: Ctx, msg: Message) -> None:
        r, cfg = msg.dst, ctx.config
        s = ctx.get(r)
        if not cfg.repair:
            self._kill(ctx, r, s, (116, 118))
            return
        init, origin, c, score = msg.body
        if (s.Unlooping is not None or _hk(s) != (c, score) or not _two_strong(s)
                or s.HoldingToken):
            # full: refuse when the head changed, an unloop runs here already, or this resource
            # got the token since it was seen (≺ of Definition 3.2 is evaluated now).
            ctx.send(r, init, "UnloopDone", origin)
            ctx.say(f"{r}: RemoteKillLoop for {c}, which is no longer its waiting head (or an "
                    f"unloop is running): refused, UnloopDone to {init}", r, "3", (116,))
            return
        self._start_unloop(ctx, r, s, init, origin, (116, 118))

    # ---- lines 121–137: the atomic reorganisation -------------------------------------------
    def on_KillLoop(self, ctx: Ctx, msg: Message) -> None:
        r, cfg = msg.dst, ctx.config
        c, score = msg.body
        s = ctx.get(r)
        x = search(s.Q_strong, c)
        if cfg.repair and (x is None or x.RqNo != 2 or x.Score != score or x is s.head
                           or s.Unlooping is not None):
            # full: only a weak request that is in Q_strong and not at its head can go back:
            # at the head it may already be granted, and then this edge is on no cycle. And
            # when this resource is itself breaking the same cycle, one unloop is enough.
            ctx.send(r, msg.src, "KillLoopNACK", (c, score))
            ctx.say(f"{r}: KillLoop({c}) but {c}'s weak request is not waiting behind another "
                    "head here: KillLoopNACK", r, "3", (121,))
            return
        ready = frozenset(q for q in tied(s) if q[0] != c) if not cfg.printed else s.StrongReady
        qw = s.Q_weak + ((x,) if x is not None else ())
        ctx.put(r, set_(s, Lock=True, Q_weak=qw, Q_strong=without(s.Q_strong, x),
                        StrongReady=ready))
        ctx.send(r, msg.src, "KillLoopACK1", (c, score))
        ctx.say(f"{r} locks and moves {c}'s request from Q_strong back to Q_weak: "
                f"KillLoopACK1 to {msg.src}" if x else
                f"{r} locks; search(Q_strong, {c}) = ⊥, nothing moves: KillLoopACK1 to {msg.src}",
                r, "3", (121, 125))

    def on_KillLoopACK1(self, ctx: Ctx, msg: Message) -> None:
        r, cfg = msg.dst, ctx.config
        s = ctx.get(r)
        h = s.head
        ctx.send(r, msg.src, "KillLoopACK2", msg.body)
        if cfg.repair:
            c, score, init, origin = s.Unlooping or (None, None, r, None)
            if init != r:
                ctx.send(r, init, "UnloopDone", origin)
            if _hk(s) != (c, score):
                ctx.put(r, set_(s, Lock=False, Unlooping=None))
                ctx.say(f"{r}: KillLoopACK1, but {c} has left its head: unlocked", r, "3", (128,))
                return
        if h is None:
            ctx.put(r, set_(s, Lock=False))
            ctx.say(f"{r}: KillLoopACK1 but Head(Q_strong) = ⊥: nothing to move; unlocked",
                    r, "3", (128, 132))
            return
        moved = set_(h, Score=bump(h.Score))
        ctx.put(r, set_(s, Q_strong=s.Q_strong[1:] + (moved,), NewHead=True, Lock=False,
                        Unlooping=None))
        ctx.say(f"{r}: Score of {h.ClId} + 1, its request goes from the head to the tail of "
                f"Q_strong; KillLoopACK2 to {msg.src}; unlocked", r, "3", (128, 132))

    def on_KillLoopACK2(self, ctx: Ctx, msg: Message) -> None:
        r = msg.dst
        ctx.put(r, set_(ctx.get(r), Lock=False))
        ctx.say(f"{r}: KillLoopACK2, the unloop is over: unlocked", r, "3", (135, 136))

    # ---- full only ----------------------------------------------------------------------------
    def on_KillLoopNACK(self, ctx: Ctx, msg: Message) -> None:
        """full: the other resource refused (the edge is on no cycle any more). Unlock; tell
        the initiator, or, when this resource was its own ≺-minimum, detect again."""
        r = msg.dst
        s = ctx.get(r)
        c, score, init, origin = s.Unlooping or (msg.body[0], msg.body[1], r, None)
        s = set_(s, Lock=False, Unlooping=None)
        ctx.put(r, s)
        ctx.say(f"{r}: KillLoopNACK, the unloop of {c} is void: unlocked", r)
        if init != r:
            ctx.send(r, init, "UnloopDone", origin)
        if _two_strong(s) and s.Seeking == _hk(s):
            self._seek(ctx, r, s)

    def on_UnloopDone(self, ctx: Ctx, msg: Message) -> None:
        """full: the cycle this resource found was worked on elsewhere: detect again for the same
        head, which nothing else would do (the design gap of the prose variant)."""
        r = msg.dst
        s = ctx.get(r)
        if (_two_strong(s) and _hk(s) == msg.body and s.Seeking == msg.body
                and s.Unlooping is None):
            self._seek(ctx, r, s)
        else:
            ctx.say(f"{r}: UnloopDone for a head it no longer waits on: nothing to do", r)
