"""Algorithm 3 as printed (lines 85–137): deadlock detection along Definition 3.1 and the unloop,
with the ≺ priority of Definition 3.2; one rule per guarded block.

The printed code keeps r_min as a resource variable (erratum D8), starts a detection on every
newStrongACK, and lets every resource that finds a cycle act on it (D15–D19): ``prose.py`` and
``repairs.py`` replace rules of this table for the other variants.

Message bodies (the same shape in every variant; the ``full``-only parts are None elsewhere):
  seekLoop (r_min, r_init, candidate, origin, via)   r_min: a resource id or "∞";
      candidate (resource, client, Score): the ≺-minimum seen so far; origin (client, Score):
      the initiator's head when it started; via (client, Score): the dependency just followed
      (the last three: full only, via also in prose)
  NoLoop origin · RemoteKillLoop (r_init, origin, client, Score) · KillLoop (client, Score)
  KillLoopACK1 / KillLoopACK2 / KillLoopNACK (client, Score) · UnloopDone origin
"""

from __future__ import annotations

from ..kernel import Ctx, Message
from ..kernel.rules import receive
from .state import INF, RESOURCE, Config, Resource, bump, search, set_, without


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


def hk(s: Resource) -> tuple | None:
    """The head's identity (client, Score), or None."""
    h = s.head
    return (h.ClId, h.Score) if h is not None else None


def two_strong(s: Resource) -> bool:
    """The head is the strong request of a two-resource request (it may depend on another)."""
    h = s.head
    return h is not None and h.RqNo == 1 and h.NextResId is not None


class Algorithm3:
    """Mixin of DattaRing: loop breaking as printed."""

    # ---- lines 85–90 ------------------------------------------------------------------------
    @receive("newStrongACK", role=RESOURCE, title="receive newStrongACK → seekLoop",
             algorithm="3", lines=(85, 90))
    def strong_ack(self, ctx: Ctx, msg: Message) -> None:
        """r_min ← ∞ if r holds the token (else it keeps whatever the last seekLoop left);
        seekLoop(r_min, r) along Head(Q_strong).NextResId."""
        r = msg.dst
        s = ctx.get(r)
        h = s.head
        rmin = INF if s.HoldingToken else s.r_min
        ctx.put(r, set_(s, r_min=rmin))
        if h is None or h.NextResId is None:
            if ctx.narrates:
                ctx.say(f"{r}: newStrongACK, but Head(Q_strong).NextResId is ⊥: the seekLoop "
                        "goes nowhere", r, "3", (85, 89))
            return
        ctx.send(r, h.NextResId, "seekLoop", (rmin, r, None, None, None))
        if ctx.narrates:
            ctx.say(f"{r} starts a deadlock detection: seekLoop(r_min={rmin}, {r}) to "
                    f"{h.NextResId}", r, "3", (85, 89))

    # ---- lines 92–110 -----------------------------------------------------------------------
    @receive("seekLoop", role=RESOURCE, algorithm="3", lines=(92, 110))
    def seek_loop(self, ctx: Ctx, msg: Message) -> None:
        """Back at r_init: a cycle (lines 93–99). Elsewhere: NoLoop without a dependency
        (101–102), else r_min ← min(r_min, r) and on along the dependency (103–107)."""
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
        ctx.put(r, set_(s, r_min=p))
        self._forward(ctx, r, s, (p, init, cand, origin, (h.ClId, h.Score)))

    def _no_dependency(self, ctx: Ctx, r: str, s: Resource, init: str, origin) -> None:
        h = s.head
        ctx.send(r, init, "NoLoop", origin)
        if ctx.narrates:
            ctx.say(f"{r} has no dependency (head: {h.ClId if h else '⊥'}"
                    f"{' weak' if h and h.RqNo == 2 else ''}): NoLoop to {init}",
                    r, "3", (101, 102))

    def _forward(self, ctx: Ctx, r: str, s: Resource, body: tuple) -> None:
        h = s.head
        ctx.send(r, h.NextResId, "seekLoop", body)
        if ctx.narrates:
            ctx.say(f"{r} depends on {h.NextResId} through {h.ClId}: seekLoop(r_min={body[0]}, "
                    f"{body[1]}) to {h.NextResId}", r, "3", (103, 107))

    def _loop_found(self, ctx: Ctx, r: str, s: Resource, p: str) -> None:
        """Lines 93–99: the initiator's seekLoop came back: a dependency cycle."""
        if p != r:
            if p == INF:
                if ctx.narrates:
                    ctx.say(f"{r} found a dependency cycle but r_min = ∞: RemoteKillLoop to ∞ "
                            "cannot be sent", r, "3", (94, 95))
                return
            ctx.send(r, p, "RemoteKillLoop", (r, None, None, None))
            if ctx.narrates:
                ctx.say(f"{r} found a dependency cycle; r_min = {p}: RemoteKillLoop to {p}",
                        r, "3", (94, 95))
            return
        self._kill(ctx, r, s, (97, 98))

    def _kill(self, ctx: Ctx, r: str, s: Resource, lines: tuple[int, int]) -> None:
        """Lock ← True; KillLoop(Head(Q_strong).ClId) to Head(Q_strong).NextResId."""
        h = s.head
        ctx.put(r, set_(s, Lock=True))
        if h is None or h.NextResId is None:
            if ctx.narrates:
                ctx.say(f"{r} locks, but Head(Q_strong).NextResId is ⊥: KillLoop goes nowhere",
                        r, "3", lines)
            return
        ctx.send(r, h.NextResId, "KillLoop", (h.ClId, h.Score))
        if ctx.narrates:
            ctx.say(f"{r} locks and starts the unloop: KillLoop({h.ClId}) to {h.NextResId}",
                    r, "3", lines)

    # ---- lines 112–114 ----------------------------------------------------------------------
    @receive("NoLoop", role=RESOURCE, title="receive NoLoop → Res1Ready", algorithm="3",
             lines=(112, 114))
    def no_loop(self, ctx: Ctx, msg: Message) -> None:
        """Res1Ready to Head(Q_strong).NextResId."""
        r = msg.dst
        h = ctx.get(r).head
        if h is None or h.NextResId is None:
            if ctx.narrates:
                ctx.say(f"{r}: NoLoop, but Head(Q_strong).NextResId is ⊥: Res1Ready goes nowhere",
                        r, "3", (112, 113))
            return
        self._ready(ctx, r, h)

    def _ready(self, ctx: Ctx, r: str, h) -> None:
        ctx.send(r, h.NextResId, "Res1Ready", (h.ClId, h.Score))
        if ctx.narrates:
            ctx.say(f"{r}: no cycle through {h.ClId}: Res1Ready to {h.NextResId}",
                    r, "3", (112, 113))

    # ---- lines 116–119 ----------------------------------------------------------------------
    @receive("RemoteKillLoop", role=RESOURCE, algorithm="3", lines=(116, 119))
    def remote_kill_loop(self, ctx: Ctx, msg: Message) -> None:
        """Lock and KillLoop, as the initiator would (lines 97–98)."""
        self._kill(ctx, msg.dst, ctx.get(msg.dst), (116, 118))

    # ---- lines 121–126 ----------------------------------------------------------------------
    @receive("KillLoop", role=RESOURCE, algorithm="3", lines=(121, 126))
    def kill_loop(self, ctx: Ctx, msg: Message) -> None:
        """Lock; search(Q_strong, c) goes back from Q_strong to Q_weak; KillLoopACK1
        (printed 'KillACK1', erratum D3)."""
        r = msg.dst
        c, score = msg.body
        s = ctx.get(r)
        x = search(s.Q_strong, c)
        qw = s.Q_weak + ((x,) if x is not None else ())
        ctx.put(r, set_(s, Lock=True, Q_weak=qw, Q_strong=without(s.Q_strong, x)))
        ctx.send(r, msg.src, "KillLoopACK1", (c, score))
        if ctx.narrates:
            ctx.say(f"{r} locks and moves {c}'s request from Q_strong back to Q_weak: "
                    f"KillLoopACK1 to {msg.src}" if x else
                    f"{r} locks; search(Q_strong, {c}) = ⊥, nothing moves: KillLoopACK1 to "
                    f"{msg.src}",
                    r, "3", (121, 125))

    # ---- lines 128–133 ----------------------------------------------------------------------
    @receive("KillLoopACK1", role=RESOURCE, algorithm="3", lines=(128, 133))
    def kill_ack1(self, ctx: Ctx, msg: Message) -> None:
        """Score + 1, the head goes to the tail of Q_strong; KillLoopACK2; NewHead, ¬Lock."""
        r = msg.dst
        ctx.send(r, msg.src, "KillLoopACK2", msg.body)
        self._head_to_tail(ctx, r, msg)

    def _head_to_tail(self, ctx: Ctx, r: str, msg: Message) -> None:
        s = ctx.get(r)
        h = s.head
        if h is None:
            ctx.put(r, set_(s, Lock=False))
            if ctx.narrates:
                ctx.say(f"{r}: KillLoopACK1 but Head(Q_strong) = ⊥: nothing to move; unlocked",
                        r, "3", (128, 132))
            return
        moved = set_(h, Score=bump(h.Score))
        ctx.put(r, set_(s, Q_strong=s.Q_strong[1:] + (moved,), NewHead=True, Lock=False))
        if ctx.narrates:
            ctx.say(f"{r}: Score of {h.ClId} + 1, its request goes from the head to the tail of "
                    f"Q_strong; KillLoopACK2 to {msg.src}; unlocked", r, "3", (128, 132))

    # ---- lines 135–137 ----------------------------------------------------------------------
    @receive("KillLoopACK2", role=RESOURCE, algorithm="3", lines=(135, 137))
    def kill_ack2(self, ctx: Ctx, msg: Message) -> None:
        r = msg.dst
        ctx.put(r, set_(ctx.get(r), Lock=False))
        if ctx.narrates:
            ctx.say(f"{r}: KillLoopACK2, the unloop is over: unlocked", r, "3", (135, 136))
