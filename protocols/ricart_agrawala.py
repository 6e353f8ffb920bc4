"""Teaching example: Ricart and Agrawala's mutual exclusion by permissions (CACM 24(1), 1981).

Not from our papers: the fifth protocol, built by following docs/adding-a-protocol.md step by
step (tests/test_adding_a_protocol.py checks that the guide's snippets are this file's code). A
process that wants its critical section stamps a REQUEST with a sequence number one higher than
any it has seen and sends it to every other process; it enters once all of them have answered
with a REPLY. A process defers its REPLY while it is in its critical section, or while it wants
it with an older request (smaller stamp; ties broken by process number), and sends the deferred
REPLYs when it leaves. The references name the steps of the paper's algorithm in its own words
("Invoke", "Receive REQUEST", ...): ``algorithm="RA"``, ``lines=(step,)``.

Variant ``eager-reply`` drops the deferral while waiting (a process defers only in its critical
section): two processes that request at the same time both get every REPLY and enter together,
and the kernel's capacity check reports it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import networkx as nx
from pydantic import Field

from .kernel import ENV, LOCAL, Ctx, Message, Setup
from .kernel.rules import RuleProtocol, receive, rule
from .kernel.variants import Feature, table
from .scenario import Empty, Section, check_fields, whole
from .scenario import Fields as ScenarioFields

ALG = "RA"


# ---- 1. state: the paper's variables, as plain immutable data --------------------------------
@dataclass(frozen=True, slots=True)
class Proc:
    """One process: Requesting_Critical_Section, Our_Sequence_Number, Highest_Sequence_Number,
    the processes whose REPLY it still awaits (Outstanding_Reply_Count is their number) and
    Reply_Deferred (whose REQUEST it answers on leaving)."""

    requesting: bool = False          # Requesting_Critical_Section
    in_cs: bool = False
    our_seq: int = 0                  # Our_Sequence_Number
    highest_seq: int = 0              # Highest_Sequence_Number
    awaiting: tuple[str, ...] = ()    # |awaiting| = Outstanding_Reply_Count
    deferred: tuple[str, ...] = ()    # Reply_Deferred, sorted
    requests_left: int = 0


# ---- 2. typed scenario fields and the fixed config -------------------------------------------
class Params(Section):
    """``params`` of a Ricart-Agrawala scenario."""

    n: whole(2, 200, "how many processes") = 3
    requests: whole(0, 10_000, "critical-section requests per process") = 1


class Fields(ScenarioFields):
    params: Params = Field(default_factory=Params)
    topology: Empty = Field(default_factory=Empty)
    workload: Empty = Field(default_factory=Empty)


@dataclass(frozen=True)
class Config:
    pids: tuple[str, ...]
    number: dict[str, int]            # the process numbers that break ties between stamps
    eager: bool                       # the variant's feature "eager-reply"


def _others(cfg: Config, pid: str) -> tuple[str, ...]:
    return tuple(q for q in cfg.pids if q != pid)


def _priority(cfg: Config, s: Proc, pid: str, msg: Message) -> bool:
    """Whether ``pid``'s own pending request is older than the REQUEST ``msg`` carries."""
    return (s.our_seq, cfg.number[pid]) < (msg.body, cfg.number[msg.src])


# ---- 3. named variants -----------------------------------------------------------------------
VARIANTS = table(
    features=(Feature("eager-reply", "a waiting process answers every REQUEST at once, so two "
                      "requesters can both collect all REPLYs",
                      "ricart_agrawala:eager-reply (docs/protocols/ricart_agrawala.md)"),),
    variants={"ricart-agrawala": (), "eager-reply": ("eager-reply",)},
    default="ricart-agrawala")


# ---- 4. the rules table ----------------------------------------------------------------------
class RicartAgrawala(RuleProtocol):
    id = "ricart_agrawala"
    title = "Ricart–Agrawala (teaching example)"
    variant_table = VARIANTS
    channels = "unordered"
    view_kind = "ring"
    fault_kinds = ("drop", "duplicate", "crash")
    # the viewer draws each message type with its own glyph, colour and short label
    message_styles = {"REQUEST": ("circle", "#0072B2", "REQ"),
                      "REPLY": ("diamond", "#E69F00", "REPLY")}
    scenario_model = Fields

    def setup(self, scenario: Any, variant: str) -> Setup:
        p = check_fields(scenario).params
        pids = tuple(f"p{i}" for i in range(1, p.n + 1))
        cfg = Config(pids, {q: i + 1 for i, q in enumerate(pids)},
                     self.has(variant, "eager-reply"))
        return Setup(pids, tuple(Proc(requests_left=p.requests) for _ in pids), cfg,
                     capacity={"cs": 1})

    @rule(ENV, title="request (Invoke)", algorithm=ALG, lines=(1,), progress=False,
          when=lambda cfg, pid, s: not s.requesting and s.requests_left > 0,
          waits=lambda cfg, pid, s: "a request left" if not s.requests_left
          else "leaving its critical section",
          label=lambda cfg, pid, s: f"{pid} requests the critical section")
    def request(self, ctx: Ctx, pid: str, _arg: str) -> None:
        s = ctx.get(pid)
        seq = s.highest_seq + 1
        others = _others(ctx.config, pid)
        ctx.put(pid, replace(s, requesting=True, our_seq=seq, awaiting=others,
                             requests_left=s.requests_left - 1))
        ctx.request(pid)
        for q in others:
            ctx.send(pid, q, "REQUEST", seq)
        ctx.say(f"{pid} stamps its request {seq} and sends REQUEST to {', '.join(others)}",
                pid, ALG, (1,))

    @rule(LOCAL, title="enter (all REPLYs in)", algorithm=ALG, lines=(2,),
          when=lambda cfg, pid, s: s.requesting and not s.in_cs and not s.awaiting,
          waits=lambda cfg, pid, s: f"a REPLY from {', '.join(s.awaiting)}" if s.awaiting
          else "a request",
          label=lambda cfg, pid, s: f"{pid} enters its critical section")
    def enter(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.put(pid, replace(ctx.get(pid), in_cs=True))
        ctx.enter_cs(pid, ("cs",))
        ctx.say(f"{pid} has every REPLY and enters its critical section", pid, ALG, (2,))

    @rule(ENV, title="release (Release)", algorithm=ALG, lines=(3,),
          when=lambda cfg, pid, s: s.in_cs, waits="being in its critical section",
          label=lambda cfg, pid, s: f"{pid} leaves its critical section")
    def release(self, ctx: Ctx, pid: str, _arg: str) -> None:
        s = ctx.get(pid)
        ctx.exit_cs(pid)
        ctx.put(pid, replace(s, requesting=False, in_cs=False, deferred=()))
        for q in s.deferred:
            ctx.send(pid, q, "REPLY")
        told = f" and sends the deferred REPLYs to {', '.join(s.deferred)}" if s.deferred else ""
        ctx.say(f"{pid} leaves its critical section{told}", pid, ALG, (3,))

    @receive("REQUEST", title="defer (on REQUEST)", algorithm=ALG, lines=(4,),
             when=lambda cfg, pid, s, msg: s.in_cs or (
                 s.requesting and _priority(cfg, s, pid, msg) and not cfg.eager),
             waits="a REQUEST while it has priority")
    def defer(self, ctx: Ctx, msg: Message) -> None:
        pid, s = msg.dst, ctx.get(msg.dst)
        ctx.put(pid, replace(s, highest_seq=max(s.highest_seq, msg.body),
                             deferred=tuple(sorted({*s.deferred, msg.src}))))
        ctx.say(f"{pid} defers its REPLY to {msg.src} (request {msg.body}): its own request "
                f"{s.our_seq} goes first", pid, ALG, (4,))

    @receive("REQUEST", title="reply (on REQUEST)", algorithm=ALG, lines=(4,),
             waits="a REQUEST it does not defer")
    def reply(self, ctx: Ctx, msg: Message) -> None:
        pid, s = msg.dst, ctx.get(msg.dst)
        ctx.put(pid, replace(s, highest_seq=max(s.highest_seq, msg.body)))
        ctx.send(pid, msg.src, "REPLY")
        ctx.say(f"{pid} answers {msg.src}'s REQUEST {msg.body} with a REPLY", pid, ALG, (4,))

    @receive("REPLY", title="count a REPLY", algorithm=ALG, lines=(5,),
             waits=lambda cfg, pid, s: f"a REPLY from {', '.join(s.awaiting)}" if s.awaiting
             else "an outstanding REPLY")
    def count_reply(self, ctx: Ctx, msg: Message) -> None:
        pid, s = msg.dst, ctx.get(msg.dst)
        ctx.put(pid, replace(s, awaiting=tuple(q for q in s.awaiting if q != msg.src)))
        ctx.say(f"{pid} gets {msg.src}'s REPLY", pid, ALG, (5,))

    # ---- 5. monitors, explorer hooks and the view ---------------------------------------------
    def wait_for(self, sim: Any) -> nx.DiGraph:
        """u → v while u awaits v's REPLY."""
        g = nx.DiGraph()
        for u, s in zip(sim.pids, sim.procs, strict=True):
            if s.requesting and not s.in_cs:
                for v in s.awaiting:
                    g.add_edge(u, v)
        return g

    def served_all(self, sim: Any) -> bool:
        return not sim.waiting and not sim.cs and all(s.requests_left == 0 for s in sim.procs)

    def message_label(self, msg: Message) -> str:
        return f"REQUEST {msg.body}" if msg.kind == "REQUEST" else msg.kind

    def por_senders(self, config: Config) -> dict[str, tuple[str, ...]]:
        return {q: _others(config, q) for q in config.pids}

    def por_signature(self, config: Config, pid: str, s: Proc) -> bool:
        return s.in_cs     # violations() reads nothing of a process; the kernel reads the CS

    def view(self, sim: Any) -> dict[str, Any]:
        n = len(sim.pids)
        nodes, edges = [], []
        for i, pid in enumerate(sim.pids):
            s = sim.procs[i]
            a = 2 * math.pi * i / n - math.pi / 2
            nodes.append({"id": pid, "label": pid, "kind": "process",
                          "x": round(500 + 280 * math.cos(a), 1),
                          "y": round(350 + 280 * math.sin(a), 1),
                          "phase": "in_cs" if s.in_cs else "wanting" if s.requesting else "idle",
                          "cs": pid in sim.cs, "waiting": pid in sim.waiting,
                          "crashed": pid in sim.crashed,
                          "badges": [f"seq {s.our_seq}"] if s.requesting else []})
            edges.extend({"src": q, "dst": pid, "kind": "wait", "dashed": True}
                         for q in s.deferred)     # q waits for the REPLY pid defers
        return {"layout": "ring", "nodes": nodes, "edges": edges,
                "cycles": [], "extra": {}}

