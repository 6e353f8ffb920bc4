"""The simulator: one global state, the events enabled in it, and one way to change it: ``step``.

The loop is deliberately plain (after SimPy's core): ``enabled()`` lists the events that may
happen now, each with a stable id; ``step(id)`` applies exactly that one and runs the monitors.
Everything else (time travel, hashing, snapshots for the explorer) is built on those two.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .canon import sha256_of
from .events import DELIVER, ENV, FAULT, LOCAL, PREFIX, TIMEOUT, Event, Message, Narration, SimError
from .monitors import Monitors
from .protocol import Ctx, Protocol

_MASK = (1 << 64) - 1
SNAPSHOT_EVERY = 256
EVENT_CACHE = 1 << 16      # (process, action) -> Event entries kept before starting afresh
_tuple_new = tuple.__new__
_ACTION_KINDS = frozenset((LOCAL, ENV, TIMEOUT))


@dataclass(frozen=True, slots=True)
class State:
    """A global state as plain immutable data: cheap to copy, compare and hash.

    ``procs`` is in the order of ``Simulator.pids``; ``messages`` in send order. Derived data
    (views, metrics, monitors) is kept out.
    """

    procs: tuple
    messages: tuple[Message, ...]
    next_seq: int
    crashed: frozenset
    cs: tuple            # ((pid, resources), ...) sorted: who is in its critical section
    waiting: tuple       # ((pid, request step, cs entries at request), ...) sorted

    def key(self) -> tuple:
        """Identity of the state up to message numbering (what the explorer deduplicates on)."""
        return (self.procs, tuple(m.content() for m in self.messages), self.crashed, self.cs,
                tuple(w[0] for w in self.waiting))


@dataclass(slots=True)
class _Snapshot:
    state: State
    monitors: Any
    since: dict


class Simulator:
    """Runs one protocol on one scenario. Not thread-safe; one per session."""

    def __init__(self, protocol: Protocol, scenario: Any, variant: str | None = None,
                 channels: str | None = None, faults: Any = None,
                 snapshot_every: int = SNAPSHOT_EVERY) -> None:
        self.protocol = protocol
        self.scenario = scenario
        self.variant = variant or getattr(scenario, "variant", None) or protocol.default_variant
        if self.variant not in protocol.variants:
            raise SimError(f"variant {self.variant!r} is not one of {protocol.id}'s variants: "
                           f"{', '.join(protocol.variants)}")
        chan = channels or getattr(scenario, "channels", None) or protocol.channels
        if chan not in ("fifo", "unordered"):
            raise SimError(f"channels must be 'fifo' or 'unordered', not {chan!r}")
        self.fifo = chan == "fifo"
        self.channels = chan
        self.faults = faults if faults is not None else getattr(scenario, "faults", None)
        self.snapshot_every = snapshot_every

        setup = protocol.setup(scenario, self.variant)
        self.config = setup.config
        self.pids: tuple[str, ...] = tuple(setup.pids)
        self.index = {p: i for i, p in enumerate(self.pids)}
        if len(self.index) != len(self.pids):
            raise SimError("process ids must be unique")
        self.capacity = dict(setup.capacity)
        # The protocol's ``unfinished`` hook, or None when it keeps the default (nothing beyond
        # waiting and critical sections): ``unfinished()`` runs after every step.
        self._unfinished_hook = (protocol.unfinished if type(protocol).unfinished
                                 is not Protocol.unfinished else None)
        self._eager_hook = (protocol.eager if type(protocol).eager is not Protocol.eager
                            else None)
        self.monitors = Monitors(self)
        self._event_of: dict[tuple[int, Any], Event] = {}
        self._ctx = Ctx(self)            # one per simulator: a step only resets its narration

        self.trace: list[str] = []                 # event ids applied, step k applied trace[k-1]
        self.narrations: list[tuple[Narration, ...]] = []
        self.step_no = 0
        self._snapshots: dict[int, _Snapshot] = {}

        initial = State(tuple(setup.states), (), 0, frozenset(), (), ())
        self._load(initial)
        for src, dst, kind, body in setup.messages:
            self._send(src, dst, kind, body)
        self._touched.clear()
        self._refresh_all()
        self._snapshots[0] = self._snapshot()

    # ------------------------------------------------------------------ the global state
    def _load(self, st: State) -> None:
        self.procs: list = list(st.procs)
        self.inflight: dict[int, Message] = {m.seq: m for m in st.messages}
        self.next_seq = st.next_seq
        self.crashed: set[str] = set(st.crashed)
        self.cs: dict[str, tuple[str, ...]] = dict(st.cs)
        self.waiting: dict[str, tuple[int, int]] = {w[0]: (w[1], w[2]) for w in st.waiting}
        self.usage: dict[str, list[str]] = {}
        for pid, res in self.cs.items():
            for r in res:
                self.usage.setdefault(r, []).append(pid)
        self._chan: dict[tuple[str, str], deque[int]] = {}
        for m in st.messages:
            self._chan.setdefault((m.src, m.dst), deque()).append(m.seq)
        self._msg_events: dict[int, Event] = {m.seq: self._msg_event(m) for m in st.messages}
        self._touched: set[int] = set()
        self._phash = [hash((i, s)) for i, s in enumerate(self.procs)]
        self._proc_fp = sum(self._phash) & _MASK
        self._chan_fp: dict[tuple[str, str], int] = {}
        self._chan_sum = 0           # sum of _chan_fp's values, kept as they change
        for c in self._chan:
            self._rehash_channel(c)
        self._crash_h = hash(frozenset(self.crashed))
        self._enabled: list[Event] | None = None
        self._acts: dict[int, tuple[Event, ...]] = {}
        self._act_ids: dict[str, Event] = {}   # the enabled action events by id (for step)
        self._n_progress = 0         # enabled action events with progress (see can_progress)
        self._since: dict[str, int] = {}
        for q in self._chan.values():
            for s in ([q[0]] if self.fifo else q):
                self._since[f"m{s}"] = self.step_no

    def state(self) -> State:
        """The current global state as immutable data."""
        return State(tuple(self.procs), tuple(self.inflight.values()), self.next_seq,
                     frozenset(self.crashed), tuple(sorted(self.cs.items())),
                     tuple(sorted((p, a, b) for p, (a, b) in self.waiting.items())))

    def restore(self, st: State) -> None:
        """Make ``st`` the current state (for the explorer; the timeline is not touched)."""
        self._load(st)
        self._refresh_all()

    def state_hash(self) -> str:
        """sha256 of the canonical serialisation of the global state (not of metrics or views)."""
        st = self.state()
        return sha256_of((self.protocol.id, self.variant, self.pids, st.procs,
                          [(m.seq, m.src, m.dst, m.kind, m.body) for m in st.messages],
                          st.next_seq, st.crashed, st.cs, [w[0] for w in st.waiting]))

    def fingerprint(self) -> int:
        """A 64-bit in-process fingerprint, maintained incrementally; ignores message numbers."""
        return (self._proc_fp + self._chan_sum + self._crash_h) & _MASK

    def proc(self, pid: str) -> Any:
        return self.procs[self.index[pid]]

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

    def _msg_event(self, m: Message) -> Event:
        label = f"{self.protocol.message_label(m)} {m.src}→{m.dst}"
        return Event(m.id, DELIVER, m.dst, label, self.protocol.is_progress(m), m)

    def _request(self, pid: str) -> None:
        if pid not in self.waiting:
            self.waiting[pid] = (self.step_no, self.monitors.cs_entries)
            self.monitors.on_request(pid)

    def _enter_cs(self, pid: str, resources: Iterable[str] = ()) -> None:
        resources = tuple(resources)
        again = pid in self.cs
        served = self.waiting.pop(pid, None)
        self.cs[pid] = resources
        over = []
        for r in resources:
            users = self.usage.setdefault(r, [])
            users.append(pid)
            if len(users) > self.capacity.get(r, 1):
                over.append(r)
        self.monitors.on_enter(pid, resources, served, again, over)

    def _exit_cs(self, pid: str) -> None:
        for r in self.cs.pop(pid, ()):
            users = self.usage.get(r)
            if users and pid in users:
                users.remove(pid)
                if not users:
                    del self.usage[r]
        self.monitors.on_exit(pid)

    def _cancel(self, pid: str) -> None:
        self.waiting.pop(pid, None)

    def _violation(self, text: str) -> None:
        self.monitors.violation(text)

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

    def _refresh_all(self) -> None:
        for i in range(len(self.pids)):
            self._refresh(i)

    def enabled(self) -> list[Event]:
        """The events that may happen now, in a stable order: deliveries by message number,
        then each process's actions in process order, then faults the scenario allows."""
        evs = self._enabled
        if evs is not None:
            return evs
        evs = self._deliveries()
        acts = self._acts
        if len(acts) == 1:
            evs.extend(*acts.values())
        elif acts:
            for i in sorted(acts):
                evs.extend(acts[i])
        if self._faulty:
            evs.extend(self._fault_events(evs))
        self._enabled = evs
        return evs

    @property
    def faults(self) -> Any:
        """The faults the scenario allows (``Faults``), or None."""
        return self._faults

    @faults.setter
    def faults(self, f: Any) -> None:
        self._faults = f
        self._faulty = bool(f is not None and getattr(f, "any", False))   # read per enabled()

    def _deliveries(self) -> list[Event]:
        """The deliverable messages' events, by message number (only channel heads if FIFO)."""
        events = self._msg_events
        if self.fifo:
            heads = [q[0] for q in self._chan.values()]
            if len(heads) > 1:
                heads.sort()
            return [events[s] for s in heads]
        return list(events.values())

    def enabled_ids(self) -> list[str]:
        return [e.id for e in self.enabled()]

    def since(self, event_id: str) -> int:
        """The step at which ``event_id`` became enabled (for the oldest-first scheduler)."""
        return self._since.get(event_id, self.step_no)

    def _fault_events(self, evs: list[Event]) -> list[Event]:
        f = self.faults
        out: list[Event] = []
        for e in evs:
            if e.kind == DELIVER:
                if f.drop:
                    out.append(Event(f"f:drop:{e.id}", FAULT, e.pid, f"drop {e.label}", False))
                if f.duplicate:
                    out.append(Event(f"f:dup:{e.id}", FAULT, e.pid, f"duplicate {e.label}", False))
        for i, pid in enumerate(self.pids):
            if pid in self.crashed:
                continue
            if f.crash and "crash" in self.protocol.fault_kinds:
                out.append(Event(f"f:crash:{pid}", FAULT, pid, f"crash {pid}", False))
            if f.corrupt:
                for var, val in self.protocol.corruptions(self.config, pid, self.procs[i]):
                    out.append(Event(f"f:corrupt:{pid}:{var}={val}", FAULT, pid,
                                     f"corrupt {pid}.{var} := {val}", False))
        return out

    def event(self, event_id: str) -> Event:
        """The enabled event with this id, or a fault the protocol supports; else SimError."""
        e = self._lookup(event_id)
        if e is not None:
            return e
        for e in self.enabled():
            if e.id == event_id:
                return e
        if isinstance(event_id, str) and event_id.startswith("f:"):
            return self._fault_event(event_id)
        raise SimError(self._not_enabled(event_id))

    def _lookup(self, event_id: Any) -> Event | None:
        """The enabled delivery or action with this id, found without listing ``enabled()``
        (None: not one of those, or not enabled; ``event`` then looks further)."""
        e = self._act_ids.get(event_id) if isinstance(event_id, str) else None
        if e is not None or not isinstance(event_id, str) or event_id[:1] != "m":
            return e
        seq = event_id[1:]
        if not seq.isdigit():
            return None
        e = self._msg_events.get(int(seq))
        if e is None or (self.fifo and self._chan[(e.msg.src, e.msg.dst)][0] != e.msg.seq):
            return None
        return e

    def _not_enabled(self, event_id: Any) -> str:
        ids = self.enabled_ids()
        shown = ", ".join(ids[:12]) + (" …" if len(ids) > 12 else "")
        return (f"event {event_id!r} is not enabled at step {self.step_no}; "
                f"enabled: {shown or 'none'}")

    def _fault_event(self, event_id: str) -> Event:
        parts = event_id.split(":", 2)
        kind = parts[1] if len(parts) > 1 else ""
        target = parts[2] if len(parts) > 2 else ""
        allowed = self.protocol.fault_kinds
        if kind in ("drop", "dup") and ("drop" if kind == "drop" else "duplicate") in allowed:
            seq = target[1:] if target.startswith("m") else ""
            if seq.isdigit() and int(seq) in self.inflight:
                m = self.inflight[int(seq)]
                return Event(event_id, FAULT, m.dst, f"{kind} {m.id}", False)
        elif kind == "crash" and kind in allowed and target in self.index \
                and target not in self.crashed:
            return Event(event_id, FAULT, target, f"crash {target}", False)
        elif kind == "corrupt" and "corrupt" in allowed:
            pid, _, assign = target.partition(":")
            if pid in self.index:
                for var, val in self.protocol.corruptions(self.config, pid, self.proc(pid)):
                    if f"{var}={val}" == assign:
                        return Event(event_id, FAULT, pid, f"corrupt {pid}.{assign}", False)
        raise SimError(f"fault {event_id!r} is not possible at step {self.step_no} "
                       f"(faults of {self.protocol.id}: {', '.join(allowed) or 'none'})")

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

    def _settle(self, ctx: Ctx) -> None:
        """Apply the protocol's eager actions (``Protocol.eager``) of the processes this step
        touched, round after round, until none is left (at most 64 rounds)."""
        eager, config, proto = self._eager_hook, self.config, self.protocol
        for _ in range(64):
            fired = False
            for i in sorted(self._touched):
                pid = self.pids[i]
                if pid in self.crashed:
                    continue
                name = eager(config, pid, self.procs[i])
                if name is not None:
                    proto.apply(ctx, pid, name)
                    fired = True
            if not fired:
                return

    def _apply_fault(self, ctx: Ctx, ev: Event) -> None:
        _, kind, target = ev.id.split(":", 2)
        if kind in ("drop", "dup"):
            m = self.inflight[int(target[1:])]
            if kind == "drop":
                self._remove_message(m)
                ctx.say(f"fault: {m.kind} {m.src}→{m.dst} ({m.id}) is lost", m.dst)
            else:
                c = self._send(m.src, m.dst, m.kind, m.body)
                ctx.say(f"fault: {m.kind} {m.src}→{m.dst} ({m.id}) is duplicated as {c.id}", m.dst)
        elif kind == "crash":
            self.crashed.add(target)
            self._crash_h = hash(frozenset(self.crashed))
            self._touched.add(self.index[target])
            self.waiting.pop(target, None)
            ctx.say(f"fault: {target} crashes and stops", target)
        else:
            pid, _, assign = target.partition(":")
            for var, val in self.protocol.corruptions(self.config, pid, self.proc(pid)):
                if f"{var}={val}" == assign:
                    self._put(pid, self.protocol.corrupt(self.config, self.proc(pid), var, val))
                    ctx.say(f"fault: {pid}.{var} is corrupted to {val}", pid)
                    break

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
        scratch = Simulator(self.protocol, self.scenario, self.variant, channels=self.channels,
                            faults=self.faults, snapshot_every=1 << 30)
        scratch.monitors.after_step = lambda ev: None     # no findings on the scratch copy
        scratch._load(snap.state)
        scratch.step_no = base
        scratch._since = dict(snap.since)
        scratch._refresh_all()
        for eid in self.trace[base:k]:
            scratch._apply(scratch.event(eid))
        return scratch.state()

    def back(self) -> None:
        if self.step_no == 0:
            raise SimError("already at step 0: nothing to step back to")
        self.goto(self.step_no - 1)

    def replay(self, schedule: Iterable[str]) -> None:
        """Apply a recorded schedule; SimError names the first id that is not enabled."""
        for i, eid in enumerate(schedule):
            try:
                self.step(eid)
            except SimError as exc:
                raise SimError(f"schedule item {i} ({eid!r}) cannot be applied: {exc}") from None

    def inject(self, src: str, dst: str, kind: str, body: Any = None) -> Message:
        """Put a message in flight as if ``src`` had sent it (a test's stray or forged message,
        e.g. what a broken process would send). Not a step: the trace does not record it, so a
        replay of the trace does not repeat it."""
        m = self._send(src, dst, kind, body)
        self._enabled = None
        return m

    def has_unfinished(self) -> bool:
        """``bool(self.unfinished())``, cheaply (it runs after every step)."""
        if self.waiting:
            return True
        crashed = self.crashed
        if any(p not in crashed for p in self.cs):
            return True
        hook = self._unfinished_hook
        if hook is None:
            return False
        config, procs = self.config, self.procs
        return any(hook(config, p, procs[i]) for i, p in enumerate(self.pids) if p not in crashed)

    def can_progress(self) -> bool:
        """Whether some enabled event is a progress event (faults never are): without listing
        the enabled events (a count of the progress actions is kept up to date)."""
        if self._n_progress:
            return True
        if self.fifo:
            events = self._msg_events
            return any(events[q[0]].progress for q in self._chan.values())
        return any(e.progress for e in self._msg_events.values())

    def unfinished(self) -> list[str]:
        """The processes that started something they have not finished: waiting, or (not
        crashed) in their critical section or what the protocol's ``unfinished`` hook adds.
        Deadlock and livelock are judged on these, not only on the waiting ones."""
        out = set(self.cs)
        if self._unfinished_hook is not None:
            hook, config, procs = self._unfinished_hook, self.config, self.procs
            out.update(p for i, p in enumerate(self.pids) if hook(config, p, procs[i]))
        if self.crashed:
            out.difference_update(self.crashed)
        out.update(self.waiting)     # as before the hook: a waiting entry counts, crashed or not
        return sorted(out)

    # ------------------------------------------------------------------ inspection
    def inspect(self, pid: str) -> dict[str, Any]:
        """Every variable of ``pid`` and each guarded action with its guard's truth value."""
        if pid not in self.index:
            raise SimError(f"no process {pid!r}; processes: {', '.join(self.pids)}")
        st = self.proc(pid)
        guards = self.protocol.inspect_guards(self, pid)
        return {"pid": pid, "crashed": pid in self.crashed, "in_cs": pid in self.cs,
                "waiting": pid in self.waiting,
                "variables": self.protocol.describe(self.config, pid, st),
                "guards": [g.as_dict() for g in guards],
                "inbox": [m.id for m in self.inflight.values() if m.dst == pid]}
