"""A simulation session: one Simulator, its scheduler, its step records and its play state.

Separate from the websocket that drives it (app/ws.py), so that later several connections (a
teacher and a class) can attach to one session. Everything here is synchronous and deterministic:
a session is rebuilt exactly from scenario + variant + schedule, which is what links and several
workers rely on. Errors are ``SessionError`` with a message meant for the user.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from protocols import runner
from protocols.kernel import FAULT, SimError, Simulator, make_scheduler
from protocols.kernel.schedulers import Scheduler
from protocols.scenario import Scenario, ScenarioError, gallery, parse

from .limits import Limits
from .offload import checkpoint

# Snapshots every 64 steps instead of the kernel's 256: `back` and `goto` replay at most 63
# steps (a few ms at n = 100) for a snapshot's memory (one tuple of process states) per 64 steps.
SNAPSHOT_EVERY = 64


def build(sc: Scenario, variant: str | None) -> Simulator:
    try:
        sim = runner.build(sc, variant)
    except ScenarioError as exc:
        raise SessionError(str(exc)) from None
    sim.snapshot_every = SNAPSHOT_EVERY
    return sim


class SessionError(ValueError):
    """A command the session cannot carry out; nothing was changed."""


@dataclass(frozen=True)
class PlayResult:
    """What one play step did: ``status`` is "ok", "fired", "end" or "limit"; ``notice`` says why
    play stopped (shown to the user)."""

    status: str
    notice: str = ""


class Session:
    """The state one browser (later: one classroom) works on."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.scenario: Scenario | None = None
        self.sim: Simulator | None = None
        self.schedule: list[str] = []          # the schedule given at load (the scripted one)
        self.sched: Scheduler | None = None
        self.sched_kind = "manual"
        self.sched_seed = 0
        # what step k did, compactly (the narration stays in sim.narrations): _meta[k-1] =
        # (event, kind, proc, src, dst, type, sent_step), about 100 bytes a step
        self._meta: list[tuple] = []
        self._json: dict[int, str] = {}           # step -> its record as JSON, made on first use
        self.playing = False
        self.speed = 4.0
        self.play_steps = 0                     # steps taken by the current play

    # ------------------------------------------------------------------ loading
    def load(self, scenario: str | dict[str, Any] | Scenario, variant: str | None = None,
             schedule: list[str] | None = None, step: int | None = None) -> None:
        """Build the scenario, replay ``schedule`` (default: the scenario's), go to ``step``
        (default: the end of the schedule). On any error the previous state is kept."""
        sc = self._scenario(scenario)
        sim = build(sc, variant)
        lim = self.limits
        if len(sim.pids) > lim.max_processes:
            raise SessionError(f"scenario has {len(sim.pids)} processes; this server allows "
                               f"{lim.max_processes} (ALLOCSCOPE_MAX_PROCESSES)")
        if len(sim.inflight) > lim.max_messages:
            raise SessionError(f"scenario starts with {len(sim.inflight)} messages; this server "
                               f"allows {lim.max_messages} (ALLOCSCOPE_MAX_MESSAGES)")
        sched_ids = list(schedule) if schedule is not None else sc.schedule_for(sim.variant)
        if len(sched_ids) > min(lim.max_schedule, lim.max_steps):
            raise SessionError(f"schedule has {len(sched_ids)} events; this server allows "
                               f"{min(lim.max_schedule, lim.max_steps)} (ALLOCSCOPE_MAX_SCHEDULE)")
        if step is not None and step > len(sched_ids):
            raise SessionError(f"step must be between 0 and {len(sched_ids)} (the schedule's "
                               f"length), not {step}")
        old = (self.scenario, self.sim, self.schedule, self._meta, self._json)
        self.scenario, self.sim, self.schedule, self._meta, self._json = \
            sc, sim, sched_ids, [], {}
        try:
            for i, eid in enumerate(sched_ids):
                checkpoint()                     # the work budget (app/offload.py)
                try:
                    self._apply(eid)
                except SessionError as exc:
                    raise SessionError(f"schedule item {i} ({eid!r}) cannot be applied: "
                                       f"{exc}") from None
            if step is not None:
                sim.goto(step)
        except Exception:          # a bad schedule, or a protocol bug: keep the old session
            self.scenario, self.sim, self.schedule, self._meta, self._json = old
            raise
        self.playing = False
        self._make_scheduler(sc.scheduler.kind, sc.scheduler.seed)

    def _scenario(self, ref: str | dict[str, Any] | Scenario) -> Scenario:
        if isinstance(ref, Scenario):
            return ref
        if isinstance(ref, str):
            try:
                g = gallery()
            except ScenarioError as exc:
                raise SessionError(f"the gallery cannot be read: {exc}") from None
            if ref not in g:
                raise SessionError(f"no gallery scenario {ref!r}")
            return g[ref]
        try:
            return parse(ref)
        except ScenarioError as exc:
            raise SessionError(str(exc)) from None

    def reset(self) -> None:
        """Back to step 0 with an empty timeline; the scheduler starts afresh (same kind, same
        seed, same scripted schedule)."""
        self._need()
        self.sim = build(self.scenario, self.sim.variant)
        self._meta = []
        self._json = {}
        self.playing = False
        self._make_scheduler(self.sched_kind, self.sched_seed)

    # ------------------------------------------------------------------ scheduling
    def set_scheduler(self, kind: str, seed: int | None = None) -> None:
        self._need()
        self._make_scheduler(kind, self.sched_seed if seed is None else seed)

    def _make_scheduler(self, kind: str, seed: int) -> None:
        sc = self.scenario
        # as protocols.runner.scheduler_for, so that stepping here follows `allocscope run`
        then = sc.scheduler.then if kind == "scripted" else None
        if kind == "scripted" and then is None and not self.schedule:
            then = "oldest"
        try:
            self.sched = make_scheduler(kind, seed, self.schedule, then, sc.faults.rate)
        except SimError as exc:
            raise SessionError(str(exc)) from None
        self.sched_kind, self.sched_seed = kind, seed

    # ------------------------------------------------------------------ stepping
    def step(self) -> str:
        """Let the scheduler pick one event and apply it; returns its id."""
        self._need()
        if self.sched_kind == "manual":
            raise SessionError("manual scheduler: choose an event")
        try:
            eid = self.sched.choose(self.sim)
        except SimError as exc:
            raise SessionError(str(exc)) from None
        if eid is None:
            raise SessionError(f"nothing to do: the {self.sched_kind} scheduler has no event to "
                               f"pick at step {self.sim.step_no}")
        self._apply(eid)
        return eid

    def deliver(self, event_id: str) -> None:
        self._need()
        self._apply(event_id)

    def fault(self, event_id: str) -> None:
        """Inject a fault by hand: any fault the protocol supports (the scenario's ``faults``
        flags only govern what the random scheduler and the explorer inject on their own)."""
        self._need()
        self._apply(event_id)

    def _apply(self, event_id: str) -> None:
        sim = self.sim
        lim = self.limits
        if sim.step_no >= lim.max_steps:
            raise SessionError(f"the timeline is at this server's limit of {lim.max_steps} "
                               f"steps (ALLOCSCOPE_MAX_STEPS); step back or reset")
        if len(sim.inflight) >= lim.max_messages:
            raise SessionError(f"{len(sim.inflight)} messages are in flight, this server's "
                               f"limit (ALLOCSCOPE_MAX_MESSAGES)")
        try:
            ev = sim.event(event_id)
        except SimError as exc:
            raise SessionError(str(exc)) from None
        msg = ev.msg
        if msg is None and ev.kind == FAULT and event_id.count(":") == 2:
            target = event_id.rsplit(":", 1)[1]
            if target[:1] == "m" and target[1:].isdigit():
                msg = sim.inflight.get(int(target[1:]))
        meta = (event_id, ev.kind, ev.pid) + (
            (msg.src, msg.dst, msg.kind, sim.monitors.sent_at.get(msg.seq)) if msg is not None
            else (None, None, None, None))
        k = sim.step_no
        # as the kernel does: the recorded future survives only if this is its next event
        diverges = k < len(sim.trace) and sim.trace[k] != event_id
        try:
            sim.step(event_id)
        except SimError as exc:
            raise SessionError(str(exc)) from None
        if diverges:
            del self._meta[k:]
            self._json = {s: t for s, t in self._json.items() if s <= k}
        if k == len(self._meta):
            self._meta.append(meta)

    # ------------------------------------------------------------------ time travel
    def back(self) -> None:
        self._need()
        try:
            self.sim.back()
        except SimError as exc:
            raise SessionError(str(exc)) from None

    def goto(self, k: int) -> None:
        self._need()
        try:
            self.sim.goto(k)
        except SimError as exc:
            raise SessionError(str(exc)) from None

    # ------------------------------------------------------------------ play
    def start_play(self) -> None:
        self._need()
        if self.sched_kind == "manual":
            raise SessionError("manual scheduler: choose another scheduler to play, or "
                               "deliver events by hand")
        self.playing = True
        self.play_steps = 0

    def play_step(self) -> PlayResult:
        """One step of play; says whether play goes on. Stops (and pauses) where ``allocscope
        run`` stops — a monitor firing, the end of the run, everyone served for protocols whose
        tokens circulate forever, the scenario's step budget — or at the play-burst limit."""
        sim = self.sim
        if self.play_steps >= self.limits.play_burst:
            self.playing = False
            return PlayResult("limit", f"paused after {self.play_steps} steps "
                                       f"(ALLOCSCOPE_PLAY_BURST); press play to go on")
        before = len(sim.monitors.findings)
        try:
            self.step()
        except SessionError as exc:
            self.playing = False
            return PlayResult("end", str(exc))
        self.play_steps += 1
        fired = self.fired()
        if fired or len(sim.monitors.findings) > before:
            self.playing = False
            kinds = ", ".join(sorted({f.kind for f in fired})) or "a monitor"
            return PlayResult("fired", f"paused: {kinds} at step {sim.step_no}")
        proto = sim.protocol
        if proto.quiescent_ok(sim) and proto.served_all(sim):
            self.playing = False
            return PlayResult("end", "every request has been served")
        if not sim.enabled():
            self.playing = False
            return PlayResult("end", "end of the run: no event is enabled")
        if sim.step_no == self.scenario.steps:
            self.playing = False
            return PlayResult("limit", f"paused at the scenario's step budget ({sim.step_no} "
                                       f"steps, where `allocscope run` stops); press play to "
                                       f"go on")
        return PlayResult("ok")

    # ------------------------------------------------------------------ reading
    def record(self, k: int) -> dict[str, Any]:
        """The step record of step k (1 <= k <= len(timeline)), as frames carry it."""
        event, kind, proc, src, dst, typ, sent = self._meta[k - 1]
        rec: dict[str, Any] = {"step": k, "event": event, "kind": kind, "proc": proc}
        if src is not None:
            rec.update(src=src, dst=dst, type=typ, sent_step=sent)
        rec["narration"] = [n.as_dict() for n in self.sim.narrations[k - 1]]
        return rec

    def records(self, lo: int, hi: int) -> list[dict[str, Any]]:
        """The records of steps lo+1 .. hi."""
        return [self.record(k) for k in range(lo + 1, hi + 1)]

    def history_json(self, lo: int, hi: int) -> str:
        """The records of steps lo+1 .. hi as a JSON array. A record never changes once made,
        so each is encoded once: a full frame after `back` costs a join, not 2000 encodings.
        The cache keeps about three histories' worth around the steps last asked for."""
        cache = self._json
        for k in range(lo + 1, hi + 1):
            if k not in cache:
                cache[k] = json.dumps(self.record(k), separators=(",", ":"), ensure_ascii=False)
        text = "[" + ",".join(cache[k] for k in range(lo + 1, hi + 1)) + "]"
        if len(cache) > 3 * max(hi - lo, 1000):
            self._json = {k: cache[k] for k in range(lo + 1, hi + 1)}
        return text

    def fired(self) -> list:
        """The findings of the current step (what makes a monitor light flash)."""
        sim = self.sim
        k = sim.step_no
        return sorted((f for f in sim.monitors.findings.values() if f.step == k),
                      key=lambda f: (f.kind, f.text))

    def inspect(self, pid: str) -> dict[str, Any]:
        self._need()
        try:
            return self.sim.inspect(pid)
        except SimError as exc:
            raise SessionError(str(exc)) from None

    def _need(self) -> None:
        if self.sim is None:
            raise SessionError("no scenario loaded: send {\"op\": \"load\", ...} first")

