"""Client dynamicity (Section IV): a resource forgets a departed client.

A client that leaves either sends a departure message (``Leave``) or leaves silently, and then
the perfect participant detector eventually tells each resource that may hold its requests
(``Departed``, sent on the detector's behalf: strongly complete and strongly accurate, as the
paper requires). Either way the resource removes every trace of the client and remembers it in
``Gone`` (ours), so that a request or readiness message still in flight is dropped on arrival.
"""

from __future__ import annotations

from ..kernel import Ctx, Message
from .state import drop_client, set_, tied


class Departures:
    """Mixin of DattaRing: Leave and Departed."""

    def on_Leave(self, ctx: Ctx, msg: Message) -> None:
        self._forget(ctx, msg.dst, msg.body, "its departure message")

    def on_Departed(self, ctx: Ctx, msg: Message) -> None:
        self._forget(ctx, msg.dst, msg.body, "the participant detector")

    def _forget(self, ctx: Ctx, r: str, c: str, how: str) -> None:
        cfg = ctx.config
        s = ctx.get(r)
        was_head = s.head is not None and s.head.ClId == c
        q = drop_client(s.Q_strong, c)
        qt = drop_client(s.Q_token, c)
        if cfg.printed:
            ready, weak = s.StrongReady, (False if was_head else s.WeakReady)
        else:
            ready = frozenset(p for p in tied(s) if p[0] != c)
            weak = None if s.WeakReady == c else s.WeakReady
        sending = s.SendingToken or (s.HoldingToken and bool(s.Q_token) and not qt)
        extra = {}
        if cfg.repair and was_head:
            extra = dict(Seeking=None, Ready=None)
        ctx.put(r, set_(s, Q_strong=q, Q_weak=drop_client(s.Q_weak, c), Q_token=qt,
                        StrongReady=ready, WeakReady=weak, SendingToken=sending,
                        Deferred=tuple(b for b in s.Deferred if b[0] != c),
                        NewHead=s.NewHead or (was_head and bool(q)),
                        Gone=s.Gone | {c}, **extra))
        ctx.say(f"{r} learns from {how} that {c} has left and removes its requests"
                + (" (it was the head)" if was_head else ""), r)
