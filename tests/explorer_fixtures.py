"""A tiny protocol with a livelock, to test the explorer's cycle search (not in the gallery).

p0 requests and asks p1 for permission; p1 answers ``No`` and p0 asks again, forever. In variant
``stubborn`` that is all p1 ever does: a fair livelock (p0 waits forever, every enabled event
is taken around the loop). In variant ``fair`` p1, once asked, also has a local action ``grant`` that
stays enabled until taken and lets p0 in: a weakly fair scheduler must take it, so the Ask/No loop is
not a livelock there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from protocols.kernel import ENV, LOCAL, Action, Ctx, Message, Protocol, Setup


@dataclass(frozen=True, slots=True)
class P:
    phase: str = "idle"       # p0: idle | waiting | in_cs | done ; p1: ready | asked | granted
    grant_sent: bool = False


class AskLoop(Protocol):
    id = "test_askloop"
    variants = ("stubborn", "fair")
    default_variant = "stubborn"
    channels = "fifo"

    def setup(self, scenario: Any, variant: str) -> Setup:
        return Setup(("p0", "p1"), (P("idle"), P("ready")), config=variant, capacity={"cs": 1})

    def actions(self, config: Any, pid: str, s: P) -> list[Action]:
        if pid == "p0" and s.phase == "idle":
            return [Action(ENV, "request", progress=False)]
        if pid == "p0" and s.phase == "in_cs":
            return [Action(ENV, "release")]
        if pid == "p1" and s.phase == "asked" and config == "fair":
            return [Action(LOCAL, "grant")]
        return []

    def do_request(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.put(pid, P("waiting"))
        ctx.request(pid)
        ctx.send("p0", "p1", "Ask")

    def do_release(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.exit_cs(pid)
        ctx.put(pid, P("done"))

    def do_grant(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.put(pid, P("granted"))
        ctx.send("p1", "p0", "Yes")

    def on_Ask(self, ctx: Ctx, msg: Message) -> None:
        if ctx.get("p1").phase == "ready":
            ctx.put("p1", P("asked"))
        ctx.send("p1", "p0", "No")

    def on_No(self, ctx: Ctx, msg: Message) -> None:
        if ctx.get("p0").phase == "waiting":
            ctx.send("p0", "p1", "Ask")

    def on_Yes(self, ctx: Ctx, msg: Message) -> None:
        if ctx.get("p0").phase == "waiting":
            ctx.put("p0", P("in_cs"))
            ctx.enter_cs("p0", ("cs",))
