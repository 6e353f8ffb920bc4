"""The simulator: the transition core (``core.Core``) plus the timeline a user sees.

The loop is deliberately plain (after SimPy's core): ``enabled()`` lists the events that may
happen now, each with a stable id; ``step(id)`` applies exactly that one and runs the monitors.
On top of the core's step a ``Simulator`` keeps what the browser, ``allocscope run`` and the
timeline read: the trace and each step's narration, snapshots for ``goto``/``back``/
``state_at``, the metrics history, the livelock memory (incremental fingerprints of process
states and channels) and when each event became enabled (``since``, for the oldest-first and
round-robin schedulers). A search or a headless run uses the core without any of it.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from typing import Any

from .core import _ACTION_KINDS, EVENT_CACHE, Core, State
from .events import DELIVER, PREFIX, Event, Message, Narration, SimError
from .monitors import Monitors
from .protocol import Ctx, Protocol

__all__ = ["SNAPSHOT_EVERY", "Simulator", "State"]

_MASK = (1 << 64) - 1
SNAPSHOT_EVERY = 256
_tuple_new = tuple.__new__


@dataclass(slots=True)
class _Snapshot:
    state: State
    monitors: Any
    since: dict


class Simulator(Core):
    """Runs one protocol on one scenario with a timeline. Not thread-safe; one per session."""

    def __init__(self, protocol: Protocol, scenario: Any, variant: str | None = None,
                 channels: str | None = None, faults: Any = None,
                 snapshot_every: int = SNAPSHOT_EVERY) -> None:
        self.snapshot_every = snapshot_every
        super().__init__(protocol, scenario, variant, channels, faults)
        self._snapshots[0] = self._snapshot()

    def _make_monitors(self) -> Any:
        return Monitors(self)

    def _make_ctx(self) -> Ctx:
        return Ctx(self)                 # narrates: a step only resets its narration

    def _start_timeline(self) -> None:
        self.trace: list[str] = []                 # event ids applied, step k applied trace[k-1]
        self.narrations: list[tuple[Narration, ...]] = []
        self._snapshots: dict[int, _Snapshot] = {}

    # ------------------------------------------------------------------ the global state
    def _load(self, st: State) -> None:
        super()._load(st)
        self._act_ids: dict[str, Event] = {}   # the enabled action events by id (for step)
        self._phash = [hash((i, s)) for i, s in enumerate(self.procs)]
        self._proc_fp = sum(self._phash) & _MASK
        self._chan_fp: dict[tuple[str, str], int] = {}
        self._chan_sum = 0           # sum of _chan_fp's values, kept as they change
        for c in self._chan:
            self._rehash_channel(c)
        self._crash_h = hash(frozenset(self.crashed))
        self._since: dict[str, int] = {}
        for q in self._chan.values():
            for s in ([q[0]] if self.fifo else q):
                self._since[f"m{s}"] = self.step_no

    def fingerprint(self) -> int:
        """A 64-bit in-process fingerprint, maintained incrementally; ignores message numbers."""
        return (self._proc_fp + self._chan_sum + self._crash_h) & _MASK

    # ------------------------------------------------------------------ effects (via Ctx)
    def _put(self, pid: str, state: Any) -> None:
        i = self.index[pid]
        self.procs[i] = state
        h = hash((i, state))
        self._proc_fp = (self._proc_fp - self._phash[i] + h) & _MASK
        self._phash[i] = h
        self._touched.add(i)

    def _send(self, src: str, dst: str, kind: str, body: Any = None) -> Message:
        if dst not in self.index:
            raise SimError(f"message {kind} sent to unknown process {dst!r}")
        seq = self.next_seq
        m = _tuple_new(Message, (seq, src, dst, kind, body))
        self.next_seq = seq + 1
        self.inflight[seq] = m
        c = (src, dst)
        q = self._chan.get(c)
        if q is None:
            q = self._chan[c] = deque()
        mid = f"m{seq}"
        if not q or not self.fifo:          # enabled from now on
            self._since[mid] = self.step_no
        q.append(seq)
        self._rehash_channel(c)
        proto = self.protocol
        self._msg_events[seq] = _tuple_new(Event, (
            mid, DELIVER, dst, f"{proto.message_label(m)} {src}→{dst}", proto.is_progress(m), m))
        self.monitors.on_send(m)
        return m

    def _remove_message(self, m: Message) -> None:
        seq = m.seq
        del self.inflight[seq]
        del self._msg_events[seq]
        self._since.pop(f"m{seq}", None)
        c = (m.src, m.dst)
        q = self._chan[c]
        if q[0] == seq:
            q.popleft()
            if q and self.fifo:             # the next message becomes deliverable
                self._since[f"m{q[0]}"] = self.step_no
        else:
            q.remove(seq)
        if not q:
            del self._chan[c]
        self._rehash_channel(c)

    def _rehash_channel(self, c: tuple[str, str]) -> None:
        q = self._chan.get(c)
        fps = self._chan_fp
        before = fps.get(c, 0)
        if not q:
            fps.pop(c, None)
            h = 0
        elif self.fifo:
            inflight = self.inflight
            if len(q) == 1:                 # the usual case: no list to build
                h = fps[c] = hash((inflight[q[0]][1:],))                 # [1:]: content()
            else:
                h = fps[c] = hash(tuple([inflight[s][1:] for s in q]))
        else:
            inflight = self.inflight
            h = fps[c] = sum([hash(inflight[s][1:]) for s in q]) & _MASK
        self._chan_sum += h - before

    def _request(self, pid: str) -> None:
        if pid not in self.waiting:
            self.waiting[pid] = (self.step_no, self.monitors.cs_entries)
            self.monitors.on_request(pid)

    def _crash(self, pid: str) -> None:
        super()._crash(pid)
        self._crash_h = hash(frozenset(self.crashed))

    # ------------------------------------------------------------------ enabled events
    def _refresh(self, i: int) -> None:
        """Recompute the actions of process i (after a step touched it)."""
        acts = self._acts
        old = acts.pop(i, ())
        since = self._since
        pid = self.pids[i]
        new: list[Event] = []
        if pid not in self.crashed:
            step = self.step_no
            cache = self._event_of
            for a in self.protocol.actions(self.config, pid, self.procs[i]):
                # One Event per distinct (process, action): ids and labels are not rebuilt for
                # an action that was enabled before (the cache is bounded, see below).
                key = (i, a)
                try:
                    e = cache.get(key)
                except TypeError:           # an Action with a list in it: not cacheable
                    e = key = None
                if e is None:
                    if len(cache) >= EVENT_CACHE:
                        cache.clear()
                    e = _tuple_new(Event, (f"{PREFIX[a.kind]}:{pid}:{a.name}", a.kind, pid,
                                           a.label or a.name, a.progress, None))
                    if key is not None:
                        cache[key] = e
                new.append(e)
                if a.progress:
                    self._n_progress += 1
                if e.id not in since:
                    since[e.id] = step
            if new:
                acts[i] = tuple(new)
        by_id = self._act_ids
        if old:
            ids = [e.id for e in new]
            for e in old:
                if e.progress:
                    self._n_progress -= 1
                if e.id not in ids:
                    since.pop(e.id, None)
                    del by_id[e.id]
        for e in new:
            by_id[e.id] = e
        self._enabled = None

    random_event = Core._random_listed     # this _refresh keeps no _order (see Core._refresh)
    _counted = False

    def since(self, event_id: str) -> int:
        """The step at which ``event_id`` became enabled (for the oldest-first scheduler)."""
        return self._since.get(event_id, self.step_no)

    # ------------------------------------------------------------------ stepping
    def step(self, event_id: str) -> tuple[Narration, ...]:
        """Apply exactly the event ``event_id``; a bad id raises SimError and changes nothing."""
        ev = self._act_ids.get(event_id) if type(event_id) is str else None
        if ev is None:
            ev = self.event(event_id)
        k = self.step_no
        trace = self.trace
        n = len(trace)
        if k < n and trace[k] != event_id:
            self._truncate(k)
            n = len(trace)
        out = self._apply(ev)
        if k == n:
            trace.append(event_id)
            self.narrations.append(out)
        else:
            self.narrations[k] = out
        k += 1
        if not k % self.snapshot_every and k not in self._snapshots:
            self._snapshots[k] = self._snapshot()
        return out

    def take(self, ev: Event) -> tuple[Narration, ...]:
        """``step(ev.id)``: on a timeline every step is recorded."""
        return self.step(ev.id)

    def _apply(self, ev: Event) -> tuple[Narration, ...]:
        ctx = self._ctx
        ctx.narration = narration = []
        self.step_no += 1
        kind = ev.kind
        if kind == DELIVER:
            m = ev.msg
            self._remove_message(m)
            self.monitors.on_deliver(m)
            if m.dst in self.crashed:
                ctx.say(f"{m.kind} from {m.src} reaches {m.dst}, which has crashed: it is lost", m.dst)
            else:
                self.protocol.deliver(ctx, m)
                if self._eager_hook is not None:
                    self._settle(ctx)
        elif kind in _ACTION_KINDS:
            eid = ev.id
            self._since.pop(eid, None)    # taken: if it stays enabled, it is enabled anew
            self.protocol.apply(ctx, ev.pid, eid[len(ev.pid) + 3:])
            if self._eager_hook is not None:
                self._settle(ctx)
        else:
            self._apply_fault(ctx, ev)
        for i in self._touched:
            self._refresh(i)
        self._touched.clear()
        self._enabled = None
        self.monitors.after_step(ev)
        return tuple(narration)

    # ------------------------------------------------------------------ time travel
    def _snapshot(self) -> _Snapshot:
        return _Snapshot(self.state(), self.monitors.save(), dict(self._since))

    def _truncate(self, k: int) -> None:
        """Forget the future after step k (a different event is being taken there)."""
        del self.trace[k:]
        del self.narrations[k:]
        for s in [s for s in self._snapshots if s > k]:
            del self._snapshots[s]
        self.monitors.truncate(k)

    def goto(self, k: int) -> None:
        """Move to step k of the recorded timeline: restore the nearest snapshot at or before k,
        then replay the recorded events. Never replays from step 0 for a jump."""
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= len(self.trace):
            raise SimError(f"step must be between 0 and {len(self.trace)}, not {k!r}")
        if k == self.step_no:
            return
        if not (self.step_no < k and k - self.step_no <= self.snapshot_every):
            base = max(s for s in self._snapshots if s <= k)
            snap = self._snapshots[base]
            self._load(snap.state)
            self.step_no = base
            self.monitors.load(snap.monitors)
            self._since = dict(snap.since)
            self._refresh_all()
        while self.step_no < k:
            ev = self.event(self.trace[self.step_no])
            self._apply(ev)
            s = self.step_no
            if s % self.snapshot_every == 0 and s not in self._snapshots:
                self._snapshots[s] = self._snapshot()

    def repetition_key(self, st: State) -> tuple:
        """What the livelock fingerprint summarises, exactly: process states, each channel's
        messages without their numbers (in order if FIFO, as a multiset if not), crashes."""
        chans: dict[tuple[str, str], list] = {}
        for m in st.messages:
            chans.setdefault((m.src, m.dst), []).append(m.content())
        if self.fifo:
            msgs = frozenset((c, tuple(v)) for c, v in chans.items())
        else:
            msgs = frozenset((c, frozenset(Counter(v).items())) for c, v in chans.items())
        return (st.procs, msgs, st.crashed)

    def state_at(self, k: int) -> State:
        """The global state at recorded step k (k < the current step), rebuilt on a scratch
        simulator from the nearest snapshot; the monitors use it to confirm a repetition."""
        if not 0 <= k < self.step_no or k > len(self.trace):
            raise SimError(f"no recorded step {k}")
        base = max(s for s in self._snapshots if s <= k)
        snap = self._snapshots[base]
        # a headless core: no timeline, no livelock memory; no per-process tables made ahead
        # (``Core._prebuild``) for a replay of at most one snapshot interval
        scratch = Core(self.protocol, self.scenario, self.variant, channels=self.channels,
                       faults=self.faults, prebuild=False)
        scratch._load(snap.state)
        scratch.step_no = base
        scratch._refresh_all()
        for eid in self.trace[base:k]:
            scratch._apply(scratch.event(eid))
        return scratch.state()

    def back(self) -> None:
        if self.step_no == 0:
            raise SimError("already at step 0: nothing to step back to")
        self.goto(self.step_no - 1)
