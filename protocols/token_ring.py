"""Teaching example: mutual exclusion by one token circulating on a unidirectional ring.

Not from the papers: it exercises the kernel before the paper protocols, and shows in a few
lines how a protocol plugs in (docs/adding-a-protocol.md). Variant ``lossy``: one process forgets
to pass the token on after its critical section, so everyone else ends up waiting forever and
the deadlock monitor fires.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import networkx as nx
from pydantic import Field

from .kernel import ENV, Ctx, Message, Setup
from .kernel.rules import RuleProtocol, receive, rule
from .kernel.variants import Feature, table
from .scenario import Empty, ScenarioError, Section, check_fields, whole
from .scenario import Fields as ScenarioFields


@functools.lru_cache(maxsize=16)   # bounded: ring sizes come from users
def ring_positions(n: int) -> tuple[tuple[float, float], ...]:
    """(x, y) of the i-th of ``n`` processes on the drawn ring, from the top clockwise.
    Computed once per ring size: every step's view used to redo the trigonometry for every
    process (about half of a step's server time at 500 processes)."""
    out = []
    for i in range(n):
        a = 2 * math.pi * i / n - math.pi / 2
        out.append((round(500 + 300 * math.cos(a), 1), round(350 + 300 * math.sin(a), 1)))
    return tuple(out)


@dataclass(slots=True, unsafe_hash=True)
class Proc:
    """One process: what it is doing, whether it holds the token, how many requests remain.

    A value like every process state: a handler builds a new one and never changes one in
    place (the kernel keeps old ones in snapshots and explored states). Not ``frozen`` only
    because a frozen dataclass is built about 3× slower (each field is set through
    ``object.__setattr__``), and a step of this ring builds one."""

    phase: str = "idle"          # idle | wanting | in_cs
    token: bool = False
    requests_left: int = 0


class Params(Section):
    """``params`` of a token ring scenario."""

    n: whole(2, 10_000, "how many processes stand on the ring") = 5
    requests: whole(0, 1_000_000, "critical-section requests per process") = 1
    lossy: str | None = Field(None, max_length=40,
                              description="variant lossy: the process that loses the token")
    note: str = Field("", description="free text for the reader; not run")


class Fields(ScenarioFields):
    params: Params = Field(default_factory=Params)
    topology: Empty = Field(default_factory=Empty)
    workload: Empty = Field(default_factory=Empty)


@dataclass(frozen=True)
class Config:
    pids: tuple[str, ...]
    next: dict[str, str]
    prev: dict[str, str]
    lossy: str | None


class TokenRing(RuleProtocol):
    id = "token_ring"
    title = "Token ring (teaching example)"
    variant_table = table(
        features=(Feature("lossy", "one process forgets to pass the token on after its "
                          "critical section, so everyone else waits for ever", "", "ablation"),),
        variants={"reliable": (), "lossy": ("lossy",)}, default="reliable")
    channels = "fifo"
    view_kind = "ring"
    # A fixed glyph, colour and short label per message type (distinct pairs; the label is
    # always drawn too, so colour never carries the meaning alone): read by the viewer.
    message_styles = {
        "Token": ("star", "#000000", "Token"),
    }
    fault_kinds = ("drop", "duplicate", "crash", "corrupt")

    scenario_model = Fields

    def setup(self, scenario: Any, variant: str) -> Setup:
        p = check_fields(scenario).params
        n, reqs = p.n, p.requests
        pids = tuple(f"p{i}" for i in range(n))
        lossy = (p.lossy or pids[-1]) if self.has(variant, "lossy") else None
        if lossy is not None and lossy not in pids:
            raise ScenarioError(f"scenario.params.lossy: no process {lossy!r}")
        nxt = {q: pids[(i + 1) % n] for i, q in enumerate(pids)}
        prv = {q: pids[(i - 1) % n] for i, q in enumerate(pids)}
        states = tuple(Proc(requests_left=reqs) for _ in pids)
        # The token starts in flight from the last process to the first.
        return Setup(pids, states, Config(pids, nxt, prv, lossy),
                     messages=((pids[-1], pids[0], "Token", None),), capacity={"cs": 1})

    # ---- the rules table: one row per guarded block ---------------------------------------
    # Labels name only the process ("{pid} ..."): the kernel makes each process's Action once
    # and reuses it. A handler builds the new Proc directly (``dataclasses.replace`` costs
    # about 2.5× as much) and its narration only when someone reads it (``ctx.narrates``).
    @rule(ENV, title="request", progress=False,
          when=lambda cfg, pid, s: s.phase == "idle" and s.requests_left > 0,
          waits=lambda cfg, pid, s: "being idle" if s.requests_left else "no requests left",
          label="{pid} requests the critical section")
    def request(self, ctx: Ctx, pid: str, _arg: str) -> None:
        s = ctx.get(pid)
        ctx.put(pid, Proc("wanting", s.token, s.requests_left - 1))
        ctx.request(pid)
        if ctx.narrates:
            ctx.say(f"{pid} wants the critical section and waits for the token", pid)

    @rule(ENV, title="release", when=lambda cfg, pid, s: s.phase == "in_cs",
          waits="being in the critical section",
          label="{pid} leaves its critical section")
    def release(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.exit_cs(pid)
        ctx.put(pid, Proc("idle", False, ctx.get(pid).requests_left))
        if pid == ctx.config.lossy:
            if ctx.narrates:
                ctx.say(f"{pid} leaves its critical section and forgets the token: it is lost",
                        pid)
            return
        nxt = ctx.config.next[pid]
        ctx.send(pid, nxt, "Token")
        if ctx.narrates:
            ctx.say(f"{pid} leaves its critical section and passes the token to {nxt}", pid)

    @receive("Token", title="enter (on Token)",
             when=lambda cfg, pid, s, msg: s.phase == "wanting" and not s.token,
             waits=lambda cfg, pid, s: f"the Token from {cfg.prev[pid]}"
             if s.phase == "wanting" else "a request")
    def enter(self, ctx: Ctx, msg: Message) -> None:
        pid = msg.dst
        ctx.put(pid, Proc("in_cs", True, ctx.get(pid).requests_left))
        ctx.enter_cs(pid, ("cs",))
        if ctx.narrates:
            ctx.say(f"{pid} receives the token and enters its critical section", pid)

    @receive("Token", title="pass on (on Token)",
             waits=lambda cfg, pid, s: f"the Token from {cfg.prev[pid]}")
    def pass_on(self, ctx: Ctx, msg: Message) -> None:
        pid = msg.dst
        nxt = ctx.config.next[pid]
        ctx.send(pid, nxt, "Token")
        if ctx.narrates:
            ctx.say(f"{pid} does not need the token and passes it to {nxt}", pid)

    # ---- monitors and views ---------------------------------------------------------------
    def wait_for(self, sim: Any) -> nx.DiGraph:
        """x -> prev(x) for every x with no token and none on its way: x can only ever get
        the token from its predecessor. A lost token closes this into a cycle of the ring."""
        coming = {m.dst for m in sim.inflight.values() if m.kind == "Token"}
        g = nx.DiGraph()
        for i, pid in enumerate(sim.pids):
            if not sim.procs[i].token and pid not in coming and pid not in sim.crashed:
                g.add_edge(pid, sim.config.prev[pid])
        return g

    def served_all(self, sim: Any) -> bool:
        return not sim.waiting and not sim.cs and all(s.requests_left == 0 for s in sim.procs)

    def quiescent_ok(self, sim: Any) -> bool:
        return True

    # ---- symmetry (explorer) ---------------------------------------------------------------
    def permute_state(self, config: Config, s: Proc, mapping: dict[str, str]) -> Proc:
        """Rename process ids inside a process state: a Proc holds none. Which processes are
        interchangeable is the scenario's claim (the ring's direction makes that only the two
        processes of a 2-ring); the explorer checks it before using it."""
        return s

    def permute_message(self, config: Config, kind: str, body: Any,
                        mapping: dict[str, str]) -> Any:
        return body   # a Token carries nothing

    def corruptions(self, config: Config, pid: str, s: Proc):
        return [("token", not s.token)]

    def view(self, sim: Any) -> dict[str, Any]:
        nodes = []
        xy = ring_positions(len(sim.pids))
        for i, (pid, (x, y)) in enumerate(zip(sim.pids, xy, strict=True)):
            s = sim.procs[i]
            nodes.append({"id": pid, "label": pid, "kind": "process", "x": x, "y": y,
                          "phase": s.phase, "token": s.token, "requests_left": s.requests_left,
                          "cs": pid in sim.cs, "waiting": pid in sim.waiting,
                          "crashed": pid in sim.crashed})
        edges = [{"src": p, "dst": sim.config.next[p], "kind": "ring"} for p in sim.pids]
        return {"layout": "ring", "nodes": nodes, "edges": edges}
