"""Tiny protocols that exercise single kernel features (not part of the gallery)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

from protocols.kernel import ENV, Action, Ctx, Message, Protocol, Setup


@dataclass(frozen=True, slots=True)
class Inbox:
    received: tuple[int, ...] = ()
    wants: bool = False


class Burst(Protocol):
    """p0 has sent three numbered messages to p1; p1 records the order it receives them."""

    id = "test_burst"
    variants = ("default",)

    def setup(self, scenario: Any, variant: str) -> Setup:
        return Setup(("p0", "p1"), (Inbox(), Inbox()),
                     messages=tuple(("p0", "p1", "Num", i) for i in range(3)))

    def on_Num(self, ctx: Ctx, msg: Message) -> None:
        s = ctx.get(msg.dst)
        ctx.put(msg.dst, replace(s, received=s.received + (msg.body,)))


class PingPong(Protocol):
    """p0 and p1 bounce a Ball forever; p2 requests and is never served (a livelock).

    With ``variant="stray"`` a Stray message to p2 stays in flight, so a repetition of the
    ping-pong is not fair (a fair scheduler would deliver it) until it is delivered.
    """

    id = "test_pingpong"
    variants = ("default", "stray")

    def setup(self, scenario: Any, variant: str) -> Setup:
        msgs = [("p0", "p1", "Ball", None)]
        if variant == "stray":
            msgs.append(("p0", "p2", "Stray", None))
        return Setup(("p0", "p1", "p2"), (Inbox(), Inbox(), Inbox(wants=True)),
                     messages=tuple(msgs))

    def actions(self, config: Any, pid: str, s: Inbox) -> list[Action]:
        return [Action(ENV, "request", progress=False)] if s.wants else []

    def do_request(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.put(pid, replace(ctx.get(pid), wants=False))
        ctx.request(pid)

    def on_Ball(self, ctx: Ctx, msg: Message) -> None:
        ctx.send(msg.dst, msg.src, "Ball")

    def on_Stray(self, ctx: Ctx, msg: Message) -> None:
        s = ctx.get(msg.dst)
        ctx.put(msg.dst, replace(s, received=s.received + (1,)))


@dataclass(frozen=True, slots=True)
class Phase:
    phase: str = "idle"     # client: idle | waiting | in_cs | releasing | done; server: ready


class AfterCS(Protocol):
    """A client c that, after its critical section, tells the server s ``End`` and waits for an
    ``EndACK`` (Datta et al.'s client does the same). s grants at once and answers ``End``:
    ``acks``: with the EndACK; ``lost``: never (c is stuck after its critical section: a
    deadlock nobody *waiting* shows); ``later``: with ``Later``, and c repeats its End
    forever (a livelock). c declares the after-CS phase through ``unfinished``."""

    id = "test_aftercs"
    variants = ("acks", "lost", "later")
    default_variant = "acks"
    channels = "fifo"

    def setup(self, scenario: Any, variant: str) -> Setup:
        return Setup(("c", "s"), (Phase(), Phase("ready")), config=variant, capacity={"R": 1})

    def actions(self, config: Any, pid: str, s: Phase) -> list[Action]:
        if pid == "c" and s.phase == "idle":
            return [Action(ENV, "request", progress=False)]
        if pid == "c" and s.phase == "in_cs":
            return [Action(ENV, "release")]
        return []

    def unfinished(self, config: Any, pid: str, state: Phase) -> bool:
        return state.phase == "releasing"

    def do_request(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.put(pid, Phase("waiting"))
        ctx.request(pid)
        ctx.send("c", "s", "Ask")

    def on_Ask(self, ctx: Ctx, msg: Message) -> None:
        ctx.send("s", "c", "Grant")

    def on_Grant(self, ctx: Ctx, msg: Message) -> None:
        ctx.put("c", Phase("in_cs"))
        ctx.enter_cs("c", ("R",))

    def do_release(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.exit_cs(pid)
        ctx.put(pid, Phase("releasing"))
        ctx.send("c", "s", "End")

    def on_End(self, ctx: Ctx, msg: Message) -> None:
        if ctx.config == "acks":
            ctx.send("s", "c", "EndACK")
        elif ctx.config == "later":
            ctx.send("s", "c", "Later")

    def on_Later(self, ctx: Ctx, msg: Message) -> None:
        ctx.send("c", "s", "End")

    def on_EndACK(self, ctx: Ctx, msg: Message) -> None:
        ctx.put("c", Phase("done"))


class AfterCSUndeclared(AfterCS):
    """The same client without the hook: what the monitors and the explorer saw before it."""

    def unfinished(self, config: Any, pid: str, state: Phase) -> bool:
        return Protocol.unfinished(self, config, pid, state)


def scenario(**kw: Any) -> SimpleNamespace:
    base = dict(id="t", params={}, topology={}, workload={}, channels=None, faults=None,
                variant=None)
    base.update(kw)
    return SimpleNamespace(**base)


@dataclass(frozen=True, slots=True)
class Lamp:
    on: bool = False


def lamp_on(s: Lamp) -> bool:
    """The probe ``Peek``'s handler asks of p1 (a module-level function: one identity)."""
    return s.on


class Peek(Protocol):
    """p2 has sent p0 two equal Ticks; p1 may switch its lamp on. On each Tick p0 asks p1
    (``ctx.peek``) whether its lamp is on and reports a violation if it is: a step that
    reads another process only through a probe."""

    id = "test_peek"
    variants = ("default",)

    def setup(self, scenario: Any, variant: str) -> Setup:
        return Setup(("p0", "p1", "p2"), (Lamp(), Lamp(), Lamp()),
                     messages=(("p2", "p0", "Tick", None), ("p2", "p0", "Tick", None)))

    def actions(self, config: Any, pid: str, s: Lamp) -> list[Action]:
        return [Action(ENV, "switch", progress=False)] if pid == "p1" and not s.on else []

    def do_switch(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.put(pid, Lamp(on=True))

    def on_Tick(self, ctx: Ctx, msg: Message) -> None:
        if ctx.peek("p1", lamp_on):
            ctx.violation("p0 ticked while p1's lamp is on")


class Latecomer(Peek):
    """Peek's lamps, but switching p1's lamp on also leaves a note on the simulator itself
    (``ctx.sim.latecomer``, an attribute it did not have before), which the safety predicate
    reads with a default, as careless protocol code might: a stored state is judged by a
    simulator that has the note, so a view of the state must not answer the default."""

    id = "test_latecomer"

    def do_switch(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.sim.latecomer = True
        ctx.put(pid, Lamp(on=True))

    def violations(self, sim: Any) -> list[str]:
        return ["a note on the simulator"] if getattr(sim, "latecomer", False) else []


class Copycat(Peek):
    """Peek's three lamps, but on each Tick p0 copies p1's lamp by reading p1's whole state,
    inside a ``try`` with a bare ``except`` (as careless handler code might be): a step that is
    not local even though the handler hides the error a first try alone raises."""

    id = "test_copycat"

    def on_Tick(self, ctx: Ctx, msg: Message) -> None:
        try:
            on = ctx.get("p1").on
        except:  # noqa: E722 - the point of the fixture
            on = False
        ctx.put("p0", Lamp(on=on))


@dataclass(frozen=True, slots=True)
class Marker:
    c: int = 0              # 1: in its critical section
    # ghost (kernel.canon): written only by the monitor, as kout_tree's ``legit`` is
    seen: bool = field(default=False, metadata={"ghost": True})


class Witness(Protocol):
    """p0 enters and leaves its critical section; a Beacon is in flight to p1 until p1 takes
    it. The monitor marks p0 (a ghost field) once it sees p0 in its critical section while the
    Beacon is still in flight: a ghost write read from the channels, made after a step that
    touched only p0 (its first entry), as kout_tree's clean start is read from the tokens in
    flight. Entering a critical section takes the lean simulator (not p0 alone), where a local
    step's effect is recorded; this one must not be (``Protocol.monitor_ghost``): replayed
    once the Beacon is gone, it would carry the mark over wrongly."""

    id = "test_witness"
    variants = ("default",)

    def setup(self, scenario: Any, variant: str) -> Setup:
        return Setup(("p0", "p1"), (Marker(), Inbox()), capacity={"R": 1},
                     messages=(("p0", "p1", "Beacon", None),))

    def actions(self, config: Any, pid: str, s: Any) -> list[Action]:
        if pid != "p0":
            return []
        return [Action(ENV, "leave" if s.c else "enter", progress=False)]

    def do_enter(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.put(pid, replace(ctx.get(pid), c=1))
        ctx.enter_cs(pid, ("R",))

    def do_leave(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.exit_cs(pid)
        ctx.put(pid, replace(ctx.get(pid), c=0))

    def on_Beacon(self, ctx: Ctx, msg: Message) -> None:
        ctx.put(msg.dst, Inbox(received=(1,)))

    def monitor_writes(self, config: Any) -> bool:
        return True

    def monitor_ghost(self, sim: Any) -> tuple[str, Marker] | None:
        p0 = sim.proc("p0")
        if p0.seen or p0.c != 1 or not any(m.kind == "Beacon" for m in sim.inflight.values()):
            return None
        return "p0", replace(p0, seen=True)

    def violations(self, sim: Any) -> list[str]:
        # after a step the monitor writes its mark; on a state the search stored (no
        # monitors, kout_tree's ``_observe_searching``) the search has made the write already
        if sim.monitors is not None and (write := self.monitor_ghost(sim)) is not None:
            sim.put_ghost(*write)
        return []
