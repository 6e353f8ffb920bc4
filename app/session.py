"""A simulation session: one Simulator, its scheduler, its step records and its play state.

Separate from the websocket that drives it (app/ws.py), so that later several connections (a
teacher and a class) can attach to one session. Everything here is synchronous and deterministic:
a session is rebuilt exactly from scenario + variant + schedule, which is what links and several
workers rely on. Errors are ``SessionError`` with a message meant for the user.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from protocols import runner, service
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


MAX_BRANCHES = 32     # kept futures per session; the oldest side branch is forgotten beyond


@dataclass
class Branch:
    """One line of the event tree (DSLabs-style): delivering by hand where the timeline had
    recorded another event forks a new branch and keeps the old future reachable.

    ``fork``: the steps it shares with its parent (its own events start at step fork + 1).
    ``trace``: its event ids, kept while it is not the current branch (then ``sim.trace`` is
    its truth). ``off_script``: the first step index where it leaves the loaded schedule (the
    scripted scheduler does not apply from there), None if it never does."""

    id: int
    parent: int | None
    fork: int
    label: str
    off_script: int | None = None
    trace: list[str] = field(default_factory=list)

    def as_dict(self, length: int, current: bool) -> dict[str, Any]:
        return {"id": self.id, "parent": self.parent, "fork": self.fork, "label": self.label,
                "length": length, "current": current, "off_script": self.off_script}


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
        self.branches: list[Branch] = []
        self.branch = 0                         # the current branch's id
        self.version = 0                        # bumped whenever recorded steps change
        self.changes: list[tuple[int, int]] = []   # (version, records after this step changed)
        self._notice = ""                       # a sentence for the next frame
        # how many first steps of the recorded run (branch 0) are the variant's own run, the
        # one the scenario's bookmarks describe (None: all of it; see _own_steps)
        self.own_steps: int | None = None
        self._auto_scheduler = ""               # "scripted" when a fork switched it away

    # ------------------------------------------------------------------ loading
    def load(self, scenario: str | dict[str, Any] | Scenario, variant: str | None = None,
             schedule: list[str] | None = None, step: int | None = None) -> None:
        """Build the scenario, replay ``schedule`` (default: the scenario's), go to ``step``
        (default: the scenario's figure moment ``open_at``, else the end of the schedule). With
        the scenario's own schedule the timeline is extended by the scenario's scheduler up to
        its figure moment and bookmarks, so every marker is on it. On any error the previous
        state is kept."""
        sc = self._scenario(scenario)
        sim = build(sc, variant)
        lim = self.limits
        if len(sim.pids) > lim.max_processes:
            raise SessionError(f"scenario has {len(sim.pids)} processes; this server allows "
                               f"{lim.max_processes} (ALLOCSCOPE_MAX_PROCESSES)")
        if len(sim.inflight) > lim.max_messages:
            raise SessionError(f"scenario starts with {len(sim.inflight)} messages; this server "
                               f"allows {lim.max_messages} (ALLOCSCOPE_MAX_MESSAGES)")
        own = schedule is None
        sched_ids = list(schedule) if schedule is not None else sc.schedule_for(sim.variant)
        if len(sched_ids) > min(lim.max_schedule, lim.max_steps):
            raise SessionError(f"schedule has {len(sched_ids)} events; this server allows "
                               f"{min(lim.max_schedule, lim.max_steps)} (ALLOCSCOPE_MAX_SCHEDULE)")
        horizon = len(sched_ids)
        if own:
            marks = [b.step for b in sc.bookmarks_for(sim.variant)]
            opening = sc.open_at_for(sim.variant)
            horizon = min(max([horizon, *marks] + ([opening] if opening is not None else [])),
                          lim.max_steps)
            if step is None:
                step = opening
        if step is not None and step > horizon:
            raise SessionError(f"step must be between 0 and {len(sched_ids)} (the schedule's "
                               f"length), not {step}")
        old = self._save()
        self.scenario, self.sim, self.schedule, self._meta, self._json = \
            sc, sim, sched_ids, [], {}
        self._new_tree()
        try:
            for i, eid in enumerate(sched_ids):
                checkpoint()                     # the work budget (app/offload.py)
                try:
                    self._apply(eid)
                except SessionError as exc:
                    raise SessionError(f"schedule item {i} ({eid!r}) cannot be applied: "
                                       f"{exc}") from None
            self._make_scheduler(sc.scheduler.kind, sc.scheduler.seed)
            while sim.step_no < horizon:        # up to the figure moment and the bookmarks
                eid = self._choose()
                if eid is None:
                    break
                self._apply(eid)
            own_steps = None if own else self._own_steps(sc, sim.variant, list(sim.trace))
            if step is not None:
                sim.goto(min(step, len(sim.trace)))
        except Exception:          # a bad schedule, or a protocol bug: keep the old session
            self._restore(old)
            raise
        self.own_steps = own_steps
        self.playing = False

    def _own_steps(self, sc: Scenario, variant: str, trace: list[str]) -> int | None:
        """How many first events of ``trace`` are those of ``variant``'s own run (its schedule,
        then its scheduler) up to its last bookmark: a bookmark says what that run does at its
        step, and another variant's schedule replayed here (the viewer's variant switch, a link)
        may do something else there (datta-prose-remote-unloop: full's schedule under prose
        never deadlocks at 16). None when the scenario has no bookmark for this variant."""
        marks = [b.step for b in sc.bookmarks_for(variant)]
        opening = sc.open_at_for(variant)
        last = max(marks + ([opening] if opening is not None else []), default=0)
        if not last:
            return None
        last = min(last, len(trace), self.limits.max_steps)
        sim = build(sc, variant)
        own = sc.schedule_for(variant)
        sched = service.scheduler_for(sc, variant, sc.scheduler.kind, sc.scheduler.seed, own)
        for k in range(last):
            checkpoint()
            try:            # the schedule's items as load applies them, then the scheduler's picks
                eid = own[k] if k < len(own) else sched.choose(sim)
                if eid != trace[k]:
                    return k
                sim.step(eid)
            except SimError:                # the own run stops here (its schedule does not apply)
                return k
        return None

    def _save(self) -> tuple:
        return (self.scenario, self.sim, self.schedule, self._meta, self._json, self.sched,
                self.sched_kind, self.sched_seed, self.branches, self.branch)

    def _restore(self, old: tuple) -> None:
        (self.scenario, self.sim, self.schedule, self._meta, self._json, self.sched,
         self.sched_kind, self.sched_seed, self.branches, self.branch) = old

    def _new_tree(self) -> None:
        self.branches = [Branch(0, None, 0, "the recorded run" if self.schedule else "the first run")]
        self.branch = 0
        self._changed(0)
        self._auto_scheduler = ""

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
        self._new_tree()
        self._make_scheduler(self.sched_kind, self.sched_seed)

    # ------------------------------------------------------------------ scheduling
    def set_scheduler(self, kind: str, seed: int | None = None) -> None:
        self._need()
        self._make_scheduler(kind, self.sched_seed if seed is None else seed)
        self._auto_scheduler = ""
        off = self._off_script()
        if kind == "scripted" and off is not None:
            self._notice = (f"this branch left the recorded schedule at step {off + 1}: "
                            f"scripted follows it where it still applies, then "
                            f"{self._fallback_kind()}")

    def _fallback_kind(self) -> str:
        then = self.scenario.scheduler.then
        return then if then and then != "scripted" else "oldest"

    def _off_script(self) -> int | None:
        return self.branches[self.branch].off_script if self.branches else None

    def _make_scheduler(self, kind: str, seed: int) -> None:
        # the run service's scheduler, so that stepping here follows `allocscope run`
        try:
            self.sched = service.scheduler_for(self.scenario, self.sim.variant, kind, seed,
                                               self.schedule)
        except SimError as exc:
            raise SessionError(str(exc)) from None
        self.sched_kind, self.sched_seed = kind, seed

    # ------------------------------------------------------------------ stepping
    def step(self) -> str:
        """One step on: the recorded timeline's next event while there is one (a redo, on
        whichever branch is current), else the event the current scheduler picks."""
        self._need()
        sim = self.sim
        k = sim.step_no
        if k < len(sim.trace):
            eid = sim.trace[k]
        else:
            if self.sched_kind == "manual":
                raise SessionError("manual scheduler: choose an event")
            eid = self._choose()
            if eid is None:
                raise SessionError(f"nothing to do: the {self.sched_kind} scheduler has no "
                                   f"event to pick at step {k}")
        self._apply(eid)
        return eid

    def _choose(self) -> str | None:
        """The scheduler's pick; the scripted one hands over to its ``then`` scheduler on a
        branch that left the script (never an error about a schedule that no longer applies)."""
        sched = self.sched
        off = self._off_script()
        if self.sched_kind == "scripted" and off is not None and self.sim.step_no >= off:
            sched = getattr(sched, "then", None) or make_scheduler("oldest")
        try:
            return sched.choose(self.sim)
        except SimError as exc:
            raise SessionError(str(exc)) from None

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
        # a different event where the timeline recorded another: the recorded future is kept
        # on a branch of its own, and this event starts (or rejoins) another branch
        diverges = k < len(sim.trace) and sim.trace[k] != event_id
        saved = list(sim.trace) if diverges and not self._replaying else None
        try:
            sim.step(event_id)
        except SimError as exc:
            raise SessionError(str(exc)) from None
        if diverges:
            del self._meta[k:]
            self._json = {s: t for s, t in self._json.items() if s <= k}
        if k == len(self._meta):
            self._meta.append(meta)
        if diverges:
            self._changed(k)
            if saved is not None:
                self._fork(k, event_id, saved)
        elif k < len(self.schedule) and self.schedule[k] != event_id:
            br = self.branches[self.branch] if self.branches else None
            if br is not None and br.off_script is None:
                br.off_script = k       # left the script where the timeline had not gone yet

    _replaying = False

    # ------------------------------------------------------------------ branches
    def _fork(self, k: int, event_id: str, saved: list[str]) -> None:
        """Step k + 1 took ``event_id`` instead of the recorded ``saved[k]``: keep ``saved`` as
        the old branch, and continue on an existing branch that took the same event here (its
        future is replayed), or on a new one."""
        cur = self.branches[self.branch]
        cur.trace = saved
        prefix = saved[:k]
        for b in self.branches:
            if b.id != cur.id and len(b.trace) > k and b.trace[k] == event_id \
                    and b.trace[:k] == prefix:
                self._enter(b, k + 1)
                self._notice = (f"this is the event {b.label} took here: back on {b.label} "
                                f"(its future is kept)")
                return
        off = cur.off_script if cur.off_script is not None and cur.off_script <= k else (
            k if k < len(self.schedule) else None)
        if len(self.branches) >= MAX_BRANCHES:     # forget the oldest side branch
            drop = next(b for b in self.branches if b.id not in (0, cur.id))
            self.branches.remove(drop)
        new = Branch(max(b.id for b in self.branches) + 1, cur.id, k,
                     f"branch {max(b.id for b in self.branches) + 1}", off)
        self.branches.append(new)
        self.branch = new.id
        self._notice = (f"a new branch from step {k}: the recorded future stays on "
                        f"{cur.label} (pick it on the timeline)")
        if self.sched_kind == "scripted" and off is not None:
            self._auto_scheduler = "scripted"
            self._make_scheduler(self._fallback_kind(), self.sched_seed)
            self._notice += f"; stepping on uses the {self.sched_kind} scheduler"

    def _enter(self, b: Branch, at: int | None) -> None:
        """Make ``b`` current (the caller has kept the current branch's trace): replay its
        events after the prefix it shares with the timeline, then go to step ``at``."""
        sim = self.sim
        p = 0
        n = min(len(b.trace), len(sim.trace))
        while p < n and b.trace[p] == sim.trace[p]:
            p += 1
        self.branch = b.id
        self._replaying = True
        try:
            if sim.step_no > p:
                sim.goto(p)
            for eid in b.trace[sim.step_no:]:
                self._apply(eid)
        finally:
            self._replaying = False
        self._changed(p)
        b.trace = []
        sim.goto(max(0, min(p + 1 if at is None else at, len(sim.trace))))
        if self._auto_scheduler and b.off_script is None:
            self._make_scheduler(self._auto_scheduler, self.sched_seed)
            self._auto_scheduler = ""
        elif self.sched_kind == "scripted" and b.off_script is not None:
            self._auto_scheduler = "scripted"
            self._make_scheduler(self._fallback_kind(), self.sched_seed)
        self._notice = f"on {b.label} (it parts from the other at step {p + 1})"

    def switch_branch(self, bid: int, step: int | None = None) -> None:
        """Go to branch ``bid`` at ``step`` (default: the first step where it differs from the
        current timeline)."""
        self._need()
        b = next((x for x in self.branches if x.id == bid), None)
        if b is None:
            raise SessionError(f"no branch {bid}; branches: "
                               f"{', '.join(str(x.id) for x in self.branches)}")
        length = len(self.sim.trace) if b.id == self.branch else len(b.trace)
        if step is not None and not 0 <= step <= length:
            raise SessionError(f"step must be between 0 and {length} (branch {bid}'s length), "
                               f"not {step}")
        if b.id == self.branch:
            self.goto(min(b.fork + 1, length) if step is None else step)
            return
        self.branches[self.branch].trace = list(self.sim.trace)
        try:
            self._enter(b, step)
        except SimError as exc:
            raise SessionError(str(exc)) from None

    def branch_list(self) -> list[dict[str, Any]]:
        n = len(self.sim.trace)
        return [b.as_dict(n if b.id == self.branch else len(b.trace), b.id == self.branch)
                for b in self.branches]

    def _changed(self, k: int) -> None:
        """The records after step k changed (a fork, a branch switch, a load)."""
        self.version += 1
        self.changes.append((self.version, k))
        del self.changes[:-64]

    def changed_since(self, version: int) -> int:
        """The first step whose record changed after ``version`` (0 when that is too old)."""
        if not self.changes or version < self.changes[0][0] - 1:
            return 0
        return min((k for v, k in self.changes if v > version), default=len(self.sim.trace))

    def take_notice(self) -> str:
        text, self._notice = self._notice, ""
        return text

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
        why = service.stop_reason(sim, before)      # the stop rules of `allocscope run`
        if fired or why == service.FIRED:
            self.playing = False
            kinds = ", ".join(sorted({f.kind for f in fired})) or "a monitor"
            return PlayResult("fired", f"paused: {kinds} at step {sim.step_no}")
        if why == service.SERVED:
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

