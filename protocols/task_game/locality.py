"""History derived by replaying a run: each task's phase timeline, its messages, and the failure
locality (which tasks a crash disturbed, compared with the same schedule without the crash).

Nothing here is simulation state: ``report`` rebuilds a fresh simulator and replays the trace.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from .. import service
from ..kernel import Simulator
from .data import ACCESSING, Config


class _Timeline:
    """Per task, the step of each status change and its messages, recorded while a simulator
    steps (``seen`` after every step); and every message's content by number."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self.tasks = list(sim.config.task_order)
        self.last = {t: sim.proc(t).status for t in self.tasks}
        self.phases: dict[str, list[list[Any]]] = {t: [] for t in self.tasks}
        self.msgs = {t: 0 for t in self.tasks}
        self.contents: dict[int, tuple] = {}

    def seen(self, first_seq: int) -> None:
        """After a step whose new messages are numbered from ``first_seq``."""
        sim = self.sim
        for seq in range(first_seq, sim.next_seq):
            m = sim.inflight.get(seq)
            if m is None:
                continue
            self.contents[seq] = m.content()
            for end in (m.src, m.dst):
                if end in self.msgs:
                    self.msgs[end] += 1
        for t in self.tasks:
            st = sim.proc(t).status
            if st != self.last[t]:
                self.phases[t].append([st, sim.step_no])
                self.last[t] = st

    def result(self) -> dict[str, Any]:
        return {"phases": self.phases, "messages": self.msgs, "contents": self.contents,
                "sim": self.sim}


def replay_timeline(proto: Any, scenario: Any, variant: str, trace: list[str]) -> dict[str, Any]:
    """Replay ``trace`` and record, per task, the step of each status change and its messages
    (and, under ``contents``, each message's content by number, for the reference run)."""
    tl = _Timeline(Simulator(proto, scenario, variant))
    for eid in trace:
        before = tl.sim.next_seq
        tl.sim.step(eid)
        tl.seen(before)
    return tl.result()


def _executed_at(phases: list[list[Any]]) -> int | None:
    return next((k for st, k in phases if st == ACCESSING), None)


def _without_faults(trace: list[str], step: int | None) -> int | None:
    """Step ``step`` of ``trace`` counted without the fault events before it, so that a run with
    a crash and its reference without one are compared on the same clock."""
    if step is None:
        return None
    return step - sum(1 for e in trace[:step] if e.startswith("f:"))


def reference_trace(proto: Any, scenario: Any, variant: str, trace: list[str],
                    contents: dict[int, tuple], max_steps: int) -> dict[str, Any]:
    """The same schedule without its crash faults: message ids are matched by content (their
    numbers shift once the crashed task stops sending), events that cannot happen are skipped,
    and the run is finished by the oldest-first scheduler. Its timeline (as ``replay_timeline``
    gives it), recorded as it runs; the trace is ``["sim"].trace``."""
    from ..kernel import make_scheduler
    tl = _Timeline(Simulator(proto, scenario, variant))
    sim = tl.sim
    for eid in trace:
        if eid.startswith("f:crash:"):
            continue
        if eid.startswith("m"):
            seq = int(eid[1:])
            want = contents.get(seq)
            if want is None:
                continue
            ids = [e.id for e in sim.enabled() if e.msg is not None and e.msg.content() == want]
        else:
            ids = [e.id for e in sim.enabled() if e.id == eid]
        if ids:
            before = sim.next_seq
            sim.step(ids[0])
            tl.seen(before)
    # the run service, without its stop rules: the reference is the run to its end
    service.drive(sim, make_scheduler("oldest"), max_steps, stop_rules=False,
                  on_step=lambda _s, info: tl.seen(info.first_seq))
    return tl.result()


def report(sim: Any) -> dict[str, Any]:
    """Extra ``run --json`` keys: per-task phase timeline and messages, and ``disturbed``."""
    cfg: Config = sim.config
    trace = list(sim.trace)
    tl = replay_timeline(sim.protocol, sim.scenario, sim.variant, trace)
    out: dict[str, Any] = {
        "tasks": {t: {"status": sim.proc(t).status, "crashed": t in sim.crashed,
                      "interest": list(cfg.tasks[t].interest),
                      "phases": tl["phases"][t], "messages": tl["messages"][t]}
                  for t in cfg.task_order},
    }
    faulty = sorted(t for t in sim.crashed if t in cfg.tasks)
    faulty += sorted(t for a in sim.crashed if a in cfg.agents
                     for t in cfg.task_order if cfg.tasks[t].agent == a)
    if not faulty:
        out["disturbed"] = None
        return out
    rtl = reference_trace(sim.protocol, sim.scenario, sim.variant, trace, tl["contents"],
                          max(len(trace) * 4, 2000))
    ref = rtl["sim"].trace
    never, later = [], []
    for t in cfg.task_order:
        if t in faulty:
            continue
        got = _without_faults(trace, _executed_at(tl["phases"][t]))
        base = _executed_at(rtl["phases"][t])
        if got is None and base is not None:
            never.append(t)
        elif got is not None and base is not None and got > base:
            later.append(t)
    dist: dict[str, int | None] = {}
    g = cfg.conflict
    for t in sorted(never + later):
        ds = [nx.shortest_path_length(g, f, t) for f in faulty if nx.has_path(g, f, t)]
        dist[t] = min(ds) if ds else None
    finite = [d for d in dist.values() if d is not None]
    out["disturbed"] = {
        "faulty": faulty,
        "set": sorted(never + later),
        "never_executed": never,
        "executed_later": later,
        "distance": dist,
        "max_distance": max(finite) if finite else 0,
        "direct_conflicts": sorted({u for f in faulty for u in g.neighbors(f)}),
        "executed_at": {t: _executed_at(tl["phases"][t]) for t in cfg.task_order},
        "reference_executed_at": {t: _executed_at(rtl["phases"][t]) for t in cfg.task_order},
        "reference_steps": len(ref),
    }
    return out
