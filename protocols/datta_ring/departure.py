"""Client dynamicity (Section IV, which has no pseudocode): a client departs, resources forget it.

A client that leaves either sends a departure message (``Leave``) or leaves silently, and then
the perfect participant detector eventually tells each resource that may hold its requests
(``Departed``, sent on the detector's behalf: strongly complete and strongly accurate, as the
paper requires). Either way the resource removes every trace of the client and remembers it in
``Gone`` (ours), so that a request or readiness message still in flight is dropped on arrival.
The printed variant's readiness is two Booleans that name no client (erratum D9): a departure
clears WeakReady only with the head; ``prose.py`` forgets the client's own readiness instead.
"""

from __future__ import annotations

from collections.abc import Callable

from ..kernel import ENV, Ctx, Message
from ..kernel.rules import receive, rule
from .state import CLIENT, RESOURCE, Resource, drop_client, set_

Readiness = Callable[[Resource, str, bool], tuple]


def printed_readiness(s: Resource, c: str, was_head: bool) -> tuple:
    """(StrongReady, WeakReady) once ``c`` is gone, with the printed Booleans."""
    return s.StrongReady, (False if was_head else s.WeakReady)


def _how(cfg, c: str) -> str:
    return "silently" if cfg.leaves[c] == "silent" else "with a departure message"


class Departures:
    """Mixin of DattaRing: a client's departure and what its resources do about it."""

    # ---- the client -------------------------------------------------------------------------
    @rule(ENV, name="depart", role=CLIENT, title="depart (Section IV)", progress=False,
          when=lambda cfg, c, s: s.phase == "waiting" and c in cfg.leaves,
          waits=lambda cfg, c, s: "waiting for its resources (it leaves only then)"
          if c in cfg.leaves else "this client stays",
          label=lambda cfg, c, s: f"{c} leaves the system {_how(cfg, c)}")
    def depart(self, ctx: Ctx, c: str, _arg: str) -> None:
        """A waiting client leaves. With a departure message it tells the resources of D; a
        silent one tells nobody, and the perfect participant detector eventually notifies each
        resource that may hold its requests (modelled as a message from the detector)."""
        s = ctx.get(c)
        ctx.put(c, set_(s, phase="gone"))
        ctx.cancel(c)
        silent = ctx.config.leaves[c] == "silent"
        for r in (x for x in s.D if x is not None):
            ctx.send(c, r, "Departed" if silent else "Leave", c)
        if silent:
            if ctx.narrates:
                ctx.say(f"{c} leaves silently; the participant detector will tell "
                        f"{', '.join(x for x in s.D if x)}", c)
        else:
            if ctx.narrates:
                ctx.say(f"{c} leaves and sends Leave to {', '.join(x for x in s.D if x)}", c)

    @receive("resAllowed", role=CLIENT, title="resAllowed after leaving", algorithm="1",
             lines=(13,), when=lambda cfg, c, s, m: s.phase == "gone",
             waits="having left")
    def gone_allowed(self, ctx: Ctx, msg: Message) -> None:
        self._ignored(ctx, msg, (13,))

    @receive("EndACK", role=CLIENT, title="EndACK after leaving", algorithm="1", lines=(22,),
             when=lambda cfg, c, s, m: s.phase == "gone", waits="having left")
    def gone_end(self, ctx: Ctx, msg: Message) -> None:
        self._ignored(ctx, msg, (22,))

    def _ignored(self, ctx: Ctx, msg: Message, lines: tuple[int, ...]) -> None:
        c = msg.dst
        src = f" from {msg.src}" if msg.kind == "resAllowed" else ""
        if ctx.narrates:
            ctx.say(f"{c} gets {msg.kind}{src} but is {ctx.get(c).phase}: ignored", c, "1", lines)

    # ---- its resources ----------------------------------------------------------------------
    @receive("NewRequest", role=RESOURCE, title="NewRequest of a departed client",
             when=lambda cfg, r, s, m: m.body[0] in s.Gone,
             waits="the NewRequest's client having left")
    def gone_request(self, ctx: Ctx, msg: Message) -> None:
        r = msg.dst
        if ctx.narrates:
            ctx.say(f"{r} drops NewRequest of {msg.body[0]}, which has left (Section IV)", r)

    @receive("Leave", role=RESOURCE, title="receive Leave (departure message)")
    def leave(self, ctx: Ctx, msg: Message) -> None:
        self._forget(ctx, msg.dst, msg.body, "its departure message", printed_readiness)

    @receive("Departed", role=RESOURCE, title="receive Departed (participant detector)")
    def departed(self, ctx: Ctx, msg: Message) -> None:
        self._forget(ctx, msg.dst, msg.body, "the participant detector", printed_readiness)

    def _forget(self, ctx: Ctx, r: str, c: str, how: str, readiness: Readiness) -> None:
        s = ctx.get(r)
        was_head = s.head is not None and s.head.ClId == c
        q = drop_client(s.Q_strong, c)
        qt = drop_client(s.Q_token, c)
        ready, weak = readiness(s, c, was_head)
        sending = s.SendingToken or (s.HoldingToken and bool(s.Q_token) and not qt)
        # the verdicts about the old head (full's Seeking / Ready) go with it
        extra = dict(Seeking=None, Ready=None) if was_head else {}
        ctx.put(r, set_(s, Q_strong=q, Q_weak=drop_client(s.Q_weak, c), Q_token=qt,
                        StrongReady=ready, WeakReady=weak, SendingToken=sending,
                        Deferred=tuple(b for b in s.Deferred if b[0] != c),
                        NewHead=s.NewHead or (was_head and bool(q)),
                        Gone=s.Gone | {c}, **extra))
        if ctx.narrates:
            ctx.say(f"{r} learns from {how} that {c} has left and removes its requests"
                    + (" (it was the head)" if was_head else ""), r)
