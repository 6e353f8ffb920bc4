"""The transition core: one global state, the events enabled in it, and ``step`` — nothing else.

``Core`` is the kernel without a timeline, after SimPy's core: no trace, no narration (handlers'
``ctx.say`` is dropped), no snapshots, no metrics, no record of when each event became enabled,
no livelock fingerprints. Its monitors are the per-step checks only (``monitors.Headless``:
safety predicates, a critical section entered twice or a resource over capacity, a deadlock's
onset). ``Simulator`` (``sim.py``) is this core plus the timeline a user sees (trace, narration,
snapshots, ``goto``/``back``/``state_at``, metrics history, the livelock memory and the ``since``
book of the oldest-first and round-robin schedulers); a headless run pays for none of that.

    core = Core(protocol, scenario)            # or Core.of(sim): same scenario, step 0
    while (ev := sched.choose_event(core)) is not None:
        core.take(ev)                          # an Event of core.enabled(); step(id) by id

Same scenario + same events => the same states as ``Simulator`` (``tests/test_kernel.py``).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .canon import sha256_of
from .events import DELIVER, ENV, FAULT, LOCAL, PREFIX, TIMEOUT, Event, Message, SimError
from .monitors import Checks, Headless
from .protocol import Ctx, Protocol, QuietCtx

EVENT_CACHE = 1 << 16      # (process, action) -> Event entries kept before starting afresh
# A process's enabled action events as ``Core._refresh`` keeps them: (events, how many, how
# many of them are progress). ``NO_ACTIONS`` is the one entry with none, so that "nothing
# before, nothing now" is an identity test like every other unchanged entry.
NO_ACTIONS: tuple = (None, 0, 0)
_tuple_new = tuple.__new__
_ACTION_KINDS = frozenset((LOCAL, ENV, TIMEOUT))


@dataclass(frozen=True, slots=True)
class State:
    """A global state as plain immutable data: cheap to copy, compare and hash.

    ``procs`` is in the order of ``Core.pids``; ``messages`` in send order. Derived data
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


class Core:
    """Runs one protocol on one scenario, headless. Not thread-safe."""

    # Whether ``_refresh`` keeps the counts ``random_event`` picks from (``_order``,
    # ``_n_acts``, ``_multi``): a subclass whose ``_refresh`` does not sets it False.
    _counted = True

    def __init__(self, protocol: Protocol, scenario: Any, variant: str | None = None,
                 channels: str | None = None, faults: Any = None) -> None:
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
        # The protocol's message hooks when they are not the defaults (label = kind, every
        # delivery is progress): one call less per send when they are.
        cls = type(protocol)
        self._plain_label = cls.message_label is Protocol.message_label
        self._all_progress = cls.is_progress is Protocol.is_progress
        self.monitors = self._make_monitors()
        # Whether ``_apply`` may answer the per-step checks itself in the common case: the
        # monitors are the plain ``Checks`` and the protocol has no safety predicates to run.
        self._plain_checks = (type(self.monitors).after_step is Checks.check_step
                              and not self.monitors._checks)
        # The protocol's behaviour as plain callables when it is the same for every process
        # (``Protocol.fast_paths``: a rules table without roles): ``_refresh`` calls the
        # compiled ``actions`` and ``_apply`` the effect or receive function itself, one call
        # and a dispatch less per step. ``_fx``: action event id -> its effect (``_remember``).
        fast = (protocol.fast_paths(self.config, self.pids[0], setup.states[0])
                if self.pids else None)
        self._actions = fast.actions if fast is not None else protocol.actions
        # ``FastPaths.which``: the bits of the rules that hold, with process i's entry for
        # ``bits`` kept in ``_entries[i << _shift | bits]`` (see ``_refresh``); None:
        # ``_refresh`` lists the Actions. One flat list, not one per process: at 1,000
        # processes a list each was a pointer more per step and 1,000 more objects for the
        # garbage collector to go through. Bits 0 (no rule holds) is known to be no actions.
        self._which = fast.which if fast is not None else None
        self._shift = getattr(self._which, "rules", 4)
        self._entries = ([NO_ACTIONS, *[None] * ((1 << self._shift) - 1)] * len(self.pids)
                         if self._which is not None else None)
        self._effects: dict[str, Any] = fast.effects if fast is not None else {}
        self._receive: dict[str, Any] = fast.deliver if fast is not None else {}
        self._fx: dict[str, Any] = {}
        self._event_of: dict[tuple[int, Any], Event] = {}    # Simulator's (process, Action) cache
        # Core's: per process, action name -> (Action, its entry when it is the only one)
        self._events_by_name: list[dict[str, tuple]] = [{} for _ in self.pids]
        # pid -> state, the same as ``procs`` (``_put`` and ``_load`` keep both): a headless
        # core's ``ctx.get`` is this dict's own lookup, with no Python call per read.
        self._state_of: dict[str, Any] = {}
        self._ctx = self._make_ctx()      # one per simulator
        self.step_no = 0
        self._start_timeline()

        initial = State(tuple(setup.states), (), 0, frozenset(), (), ())
        self._load(initial)
        for src, dst, kind, body in setup.messages:
            self._send(src, dst, kind, body)
        self._touched.clear()
        self._refresh_all()

    @classmethod
    def of(cls, sim: Any) -> "Core":
        """A fresh core at step 0 of ``sim``'s scenario, variant, channels and faults."""
        return cls(sim.protocol, sim.scenario, sim.variant, channels=sim.channels,
                   faults=sim.faults)

    # ---------------------------------------------------------------- what a timeline adds
    def _make_monitors(self) -> Any:
        return Headless(self)

    def _make_ctx(self) -> Ctx:
        ctx = QuietCtx(self)
        ctx.get = self._state_of.__getitem__     # = self.proc (see _state_of)
        if (self._eager_hook is None and type(self)._put is Core._put
                and type(self)._refresh is Core._refresh):
            ctx.put = self._put_refreshing       # see there
        return ctx

    def _start_timeline(self) -> None:
        """Nothing to keep: ``Simulator`` starts its trace and snapshots here."""

    # ------------------------------------------------------------------ the global state
    def _load(self, st: State) -> None:
        self.procs: list = list(st.procs)
        mirror = self._state_of           # the same dict object: ctx.get is bound to it
        mirror.clear()
        mirror.update(zip(self.pids, self.procs, strict=True))
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
        # The dict with one entry per deliverable message (FIFO: per channel head), whose
        # ``len`` the random pick reads: ``_chan`` or ``_msg_events``.
        self._heads = self._chan if self.fifo else self._msg_events
        self._touched: set[int] = set()
        self._enabled: list[Event] | None = None
        self._acts: dict[int, tuple[Event, ...]] = {}
        self._cur: list[tuple] = [NO_ACTIONS] * len(self.pids)   # each process's entry
        # For ``random_event`` (kept by ``Core._refresh``): the indices of the processes with
        # enabled actions in ascending order, how many action events there are, and how many
        # processes have more than one (while none does, the k-th action is found directly).
        self._order: list[int] = []
        self._n_acts = 0
        self._multi = 0
        # Whether the random pick may use those counts: this core keeps them, no faults are
        # allowed and no process has two actions (kept where the three change).
        self._quick_pick = self._counted and not self._faulty
        self._n_progress = 0         # enabled action events with progress (see can_progress)

    def state(self) -> State:
        """The current global state as immutable data."""
        cs, waiting = self.cs, self.waiting
        return State(tuple(self.procs), tuple(self.inflight.values()), self.next_seq,
                     frozenset(self.crashed), tuple(sorted(cs.items())) if cs else (),
                     tuple(sorted((p, a, b) for p, (a, b) in waiting.items())) if waiting else ())

    def restore(self, st: State) -> None:
        """Make ``st`` the current state (a timeline, if any, is not touched)."""
        self._load(st)
        self._refresh_all()

    def state_hash(self) -> str:
        """sha256 of the canonical serialisation of the global state (not of metrics or views)."""
        st = self.state()
        return sha256_of((self.protocol.id, self.variant, self.pids, st.procs,
                          [(m.seq, m.src, m.dst, m.kind, m.body) for m in st.messages],
                          st.next_seq, st.crashed, st.cs, [w[0] for w in st.waiting]))

    def proc(self, pid: str) -> Any:
        return self.procs[self.index[pid]]

    def put_ghost(self, pid: str, state: Any) -> None:
        """The one write a monitor may make: a process's state differing only in a ghost field
        its protocol declares (``Protocol.monitor_writes``, e.g. kout_tree's ``legit``), so that
        history the monitor judges by lives in the explored state."""
        self._put(pid, state)

    # ------------------------------------------------------------------ effects (via Ctx)
    def _put(self, pid: str, state: Any) -> None:
        i = self.index[pid]
        self.procs[i] = state
        self._state_of[pid] = state
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
        q.append(seq)
        label = kind if self._plain_label else self.protocol.message_label(m)
        self._msg_events[seq] = _tuple_new(Event, (
            f"m{seq}", DELIVER, dst, f"{label} {src}→{dst}",
            True if self._all_progress else self.protocol.is_progress(m), m))
        return m

    def _remove_message(self, m: Message) -> None:
        seq = m.seq
        del self.inflight[seq]
        del self._msg_events[seq]
        c = (m.src, m.dst)
        q = self._chan[c]
        if q[0] == seq:
            q.popleft()
        else:
            q.remove(seq)
        if not q:
            del self._chan[c]

    def _msg_event(self, m: Message) -> Event:
        proto = self.protocol
        label = m.kind if self._plain_label else proto.message_label(m)
        return _tuple_new(Event, (f"m{m.seq}", DELIVER, m.dst, f"{label} {m.src}→{m.dst}",
                                  True if self._all_progress else proto.is_progress(m), m))

    def _request(self, pid: str) -> None:
        if pid not in self.waiting:
            self.waiting[pid] = (self.step_no, self.monitors.cs_entries)

    def _enter_cs(self, pid: str, resources: Iterable[str] = ()) -> None:
        if type(resources) is not tuple:
            resources = tuple(resources)
        again = pid in self.cs
        served = self.waiting.pop(pid, None)
        self.cs[pid] = resources
        over: Any = ()                     # a list only when some resource is over capacity
        usage = self.usage
        for r in resources:
            users = usage.get(r)
            if users is None:
                users = usage[r] = [pid]
            else:
                users.append(pid)
            if len(users) > self.capacity.get(r, 1):
                over = [*over, r]
        mon = self.monitors
        if again or over or type(mon) is not Headless:
            mon.on_enter(pid, resources, served, again, over)
        else:                              # ``Headless.on_enter``, inline: one call less
            mon.cs_entries += 1

    def _exit_cs(self, pid: str) -> None:
        for r in self.cs.pop(pid, ()):
            users = self.usage.get(r)
            if users and pid in users:
                users.remove(pid)
                if not users:
                    del self.usage[r]

    def _cancel(self, pid: str) -> None:
        self.waiting.pop(pid, None)

    def _violation(self, text: str) -> None:
        self.monitors.violation(text)

    # ------------------------------------------------------------------ enabled events
    def _refresh(self, i: int) -> None:
        """Recompute the enabled action events of process i (its state changed)."""
        self._put_refreshing(self.pids[i], self.procs[i])

    def _put_refreshing(self, pid: str, state: Any) -> None:
        """``_put``, then the process's enabled action events recomputed at once rather than
        after the step (``_apply``'s loop over the touched processes): a process's actions
        depend only on its own state (``Protocol.actions``), so the result is the same, with no
        set to fill and no loop and call more per step. A headless core's ``ctx.put`` when the
        protocol has no eager actions (``_settle`` reads the touched set); ``_refresh`` too.

        The events are kept as an entry (events, how many, how many are progress) that stays
        the same object while the process offers the same actions: with ``FastPaths.which``
        the entry is looked up by the bits of the rules that hold (no Actions listed), else
        found from the listed Actions (``_listed``). An unchanged entry returns at once; a
        changed one updates the counts the random pick and the deadlock check read by the
        difference of the two entries."""
        i = self.index[pid]
        self.procs[i] = state
        self._state_of[pid] = state
        which = self._which
        if pid in self.crashed:
            new = NO_ACTIONS
        elif which is not None:
            bits = which(pid, state)
            new = self._entries[i << self._shift | bits] or self._entry(i, pid, bits)
        else:
            new = self._listed(i, pid)
        old = self._cur[i]
        if new is old:
            return
        self._cur[i] = new             # (the caller clears ``_enabled``: _apply, _load)
        evs, n, prog = new
        _, old_n, old_prog = old
        if prog != old_prog:
            self._n_progress += prog - old_prog
        if n == old_n:                     # the usual change: as many actions as before
            self._acts[i] = evs
            return
        if not old_n:                      # i joins the processes with actions
            insort(self._order, i)
            self._acts[i] = evs
        elif not n:                        # i leaves them
            del self._order[bisect_left(self._order, i)]
            del self._acts[i]
        else:
            self._acts[i] = evs
        self._n_acts += n - old_n
        if (n > 1) != (old_n > 1):
            self._multi += 1 if n > 1 else -1
            self._quick_pick = self._counted and not self._faulty and not self._multi

    def _entry(self, i: int, pid: str, bits: int) -> tuple:
        """Process i's entry for the rules ``bits`` (``_refresh``), made from the Actions the
        protocol offers in its current state (which are those of ``bits``) and kept."""
        new = self._entries[i << self._shift | bits] = self._listed(i, pid)
        return new

    def _listed(self, i: int, pid: str) -> tuple:
        """Process i's entry from the Actions the protocol lists for its current state: one
        Action's entry is kept with its Event (``_remember``), so it is the same object while
        the protocol offers that Action; several make a new entry."""
        found = self._actions(self.config, pid, self.procs[i])
        if len(found) == 1:
            a = found[0]
            hit = self._events_by_name[i].get(a.name)
            if hit is None or (hit[0] is not a and hit[0] != a):
                hit = self._remember(i, pid, a)
            return hit[1]
        if not found:
            return NO_ACTIONS
        evs = tuple([self._action_event(i, pid, a) for a in found])
        return (evs, len(evs), sum([e.progress for e in evs]))

    def _action_event(self, i: int, pid: str, a: Any) -> Event:
        """The Event of process i's Action ``a``: the one made before while the protocol
        reports this Action (the same object, or an equal one: compared, not hashed, since a
        label is usually a fresh string), else a new one."""
        hit = self._events_by_name[i].get(a.name)
        if hit is None or (hit[0] is not a and hit[0] != a):
            hit = self._remember(i, pid, a)
        return hit[1][0][0]

    def _remember(self, i: int, pid: str, a: Any) -> tuple:
        """Make and keep process i's Event for Action ``a``, with the entry of it alone (what
        ``_refresh`` keeps when it is the only action)."""
        mine = self._events_by_name[i]
        if len(mine) >= 64:
            mine.clear()
        e = _tuple_new(Event, (f"{PREFIX[a.kind]}:{pid}:{a.name}", a.kind, pid,
                               a.label or a.name, a.progress, None))
        hit = mine[a.name] = (a, ((e,), 1, 1 if a.progress else 0))
        fx = self._effects.get(a.name)      # a name with no argument: its effect, for _apply
        if fx is not None:
            if len(self._fx) >= EVENT_CACHE:
                self._fx.clear()
            self._fx[e.id] = fx
        return hit

    def _refresh_all(self) -> None:
        for i in range(len(self.pids)):
            self._refresh(i)

    def enabled(self) -> list[Event]:
        """The events that may happen now, in a stable order: deliveries by message number,
        then each process's actions in process order, then faults the scenario allows."""
        evs = self._enabled
        if evs is not None:
            return evs
        if self.fifo:                       # _deliveries(), inline: this runs every step
            events = self._msg_events
            chan = self._chan
            if len(chan) == 1:
                for q in chan.values():
                    evs = [events[q[0]]]
            else:
                heads = [q[0] for q in chan.values()]
                heads.sort()
                evs = [events[s] for s in heads]
        else:
            evs = list(self._msg_events.values())
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

    def random_event(self, below: Any, bits: Any = None) -> Event | None:
        """``enabled()[below(len(enabled()))]`` (None if nothing is enabled), without listing
        the enabled events when no faults are allowed and no process has two actions: the
        random scheduler's pick, in time independent of how many processes are idle.
        ``below(n)`` draws an int in [0, n); ``bits``, if given, is its generator's
        ``getrandbits``, and the same draw is made here without a call to ``below``.
        (``schedulers.Random.choose_event`` has a copy of this inline: keep the two the same.)"""
        if self._faulty or self._multi:
            return self._random_listed(below)
        n_msgs = len(self._heads)
        n = n_msgs + self._n_acts
        if not n:
            return None
        if bits is None:
            k = below(n)
        else:                 # Random._randbelow's draw (schedulers.INLINE_DRAW checks it is)
            width = n.bit_length()
            k = bits(width)
            while k >= n:
                k = bits(width)
        if k >= n_msgs:
            return self._acts[self._order[k - n_msgs]][0]
        if n_msgs == 1 and self.fifo:
            for q in self._chan.values():
                return self._msg_events[q[0]]
        return self._deliveries()[k]

    def _random_listed(self, below: Any, bits: Any = None) -> Event | None:
        """``random_event`` on the listed enabled events (any simulator)."""
        evs = self.enabled()
        return evs[below(len(evs))] if evs else None

    @property
    def faults(self) -> Any:
        """The faults the scenario allows (``Faults``), or None."""
        return self._faults

    @faults.setter
    def faults(self, f: Any) -> None:
        self._faults = f
        self._faulty = bool(f is not None and getattr(f, "any", False))   # read per enabled()
        self._quick_pick = self._counted and not self._faulty and not getattr(self, "_multi", 0)

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
        if type(event_id) is not str or len(event_id) < 2:
            return None
        if event_id[0] == "m":
            seq = event_id[1:]
            if not seq.isdigit():
                return None
            e = self._msg_events.get(int(seq))
            if e is None or (self.fifo and self._chan[(e.msg.src, e.msg.dst)][0] != e.msg.seq):
                return None
            return e
        if event_id[1] == ":" and event_id[0] in "aet":
            i = self.index.get(event_id[2:].partition(":")[0])
            for e in self._acts.get(i, ()) if i is not None else ():
                if e.id == event_id:
                    return e
        return None

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
    def step(self, event_id: str) -> tuple:
        """Apply exactly the event ``event_id``; a bad id raises SimError and changes nothing.
        Returns no narration (a core has none): ``()``."""
        self._apply(self.event(event_id))
        return ()

    def _effect(self, ev: Event) -> None:
        """The event's own effect on the state: a delivery, an action (with the eager actions
        it triggers) or a fault. Every stepping ``_apply`` starts with it (``Core._apply``
        with a copy of it inline: keep the two the same)."""
        ctx = self._ctx
        self.step_no += 1
        kind = ev.kind
        if kind == DELIVER:
            m = ev.msg
            self._remove_message(m)
            if m.dst not in self.crashed:
                self.protocol.deliver(ctx, m)
                if self._eager_hook is not None:
                    self._settle(ctx)
        elif kind in _ACTION_KINDS:
            pid = ev.pid
            self.protocol.apply(ctx, pid, ev.id[len(pid) + 3:])
            if self._eager_hook is not None:
                self._settle(ctx)
        else:
            self._apply_fault(ctx, ev)

    def _apply(self, ev: Event) -> Any:
        # ``self._effect(ev)``, inline, with ``Core._remove_message`` inline too and the
        # protocol's effect called directly where ``fast_paths`` gave it (``_fx``,
        # ``_receive``): fewer calls on every step of a headless run. Only ``Core`` steps
        # here: ``Simulator`` and ``LeanSimulator`` override ``_apply`` and keep more books.
        ctx = self._ctx
        self.step_no += 1
        kind = ev.kind
        if kind == DELIVER:
            m = ev.msg
            seq = m.seq
            del self.inflight[seq]
            del self._msg_events[seq]
            c = (m.src, m.dst)
            q = self._chan[c]
            if q[0] == seq:
                q.popleft()
            else:
                q.remove(seq)
            if not q:
                del self._chan[c]
            if m.dst not in self.crashed:
                rx = self._receive.get(m.kind)
                if rx is not None:
                    rx(ctx, m)
                else:
                    self.protocol.deliver(ctx, m)
                if self._eager_hook is not None:
                    self._settle(ctx)
        elif (fx := self._fx.get(ev.id)) is not None:    # an action with its effect at hand
            fx(ctx, ev.pid, "")
            if self._eager_hook is not None:
                self._settle(ctx)
        elif kind in _ACTION_KINDS:
            pid = ev.pid
            self.protocol.apply(ctx, pid, ev.id[len(pid) + 3:])
            if self._eager_hook is not None:
                self._settle(ctx)
        else:
            self._apply_fault(ctx, ev)
        touched = self._touched
        if touched:
            refresh = self._refresh
            for i in touched:
                refresh(i)
            touched.clear()
        self._enabled = None
        mon = self.monitors
        if self._plain_checks and self.waiting and (
                self._n_progress or (self._all_progress and self._msg_events)):
            # ``Checks.check_step``'s whole answer when the protocol has no safety predicates,
            # someone waits and a progress event is enabled (a progress action, or a message
            # in flight when every delivery is progress: ``can_progress``'s first answers; most
            # steps of a busy run): not stuck, so no deadlock starts; two calls less per step
            mon.last_event = ev
            mon._deadlocked = False
        else:
            mon.after_step(ev)
        return ()

    # ``take(ev)``: apply ``ev``, an event of the current ``enabled()`` (not checked: the
    # caller took it from that list, e.g. ``Scheduler.choose_event``; ``step`` is the checked
    # way, by id). The step itself, without a call around it.
    take = _apply

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
            self._crash(target)
            ctx.say(f"fault: {target} crashes and stops", target)
        else:
            pid, _, assign = target.partition(":")
            for var, val in self.protocol.corruptions(self.config, pid, self.proc(pid)):
                if f"{var}={val}" == assign:
                    self._put(pid, self.protocol.corrupt(self.config, self.proc(pid), var, val))
                    ctx.say(f"fault: {pid}.{var} is corrupted to {val}", pid)
                    break

    def _crash(self, pid: str) -> None:
        self.crashed.add(pid)
        self._touched.add(self.index[pid])
        self.waiting.pop(pid, None)

    def replay(self, schedule: Iterable[str]) -> None:
        """Apply a recorded schedule; SimError names the first id that is not enabled."""
        for i, eid in enumerate(schedule):
            try:
                self.step(eid)
            except SimError as exc:
                raise SimError(f"schedule item {i} ({eid!r}) cannot be applied: {exc}") from None

    def inject(self, src: str, dst: str, kind: str, body: Any = None) -> Message:
        """Put a message in flight as if ``src`` had sent it (a test's stray or forged message,
        e.g. what a broken process would send). Not a step: a trace does not record it, so a
        replay of the trace does not repeat it."""
        m = self._send(src, dst, kind, body)
        self._enabled = None
        return m

    # ------------------------------------------------------------------ judging a state
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
        events = self._msg_events
        if self._all_progress:       # every delivery is progress, and one is enabled if any
            return bool(events)      # message is in flight (a FIFO channel's head)
        if self.fifo:
            for q in self._chan.values():
                if events[q[0]].progress:
                    return True
            return False
        for e in events.values():
            if e.progress:
                return True
        return False

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
