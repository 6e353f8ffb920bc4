"""The kernel's public transition system: apply one event to one stored global state.

A search (the explorer, its reductions and audits, the tests' and benchmarks' searches) needs
only this: a ``State``, the events enabled in it, and what applying one of them does. It needs
none of the timeline (trace, narration, snapshots, metrics, the livelock heuristic), so
``Transitions`` drives the kernel's explorer-only ``LeanSimulator`` and gives back an
``Outcome`` per transition. Nothing outside the kernel touches a simulator's insides to search.

    ts = Transitions(sim)                 # sim: a Simulator at step 0 (its protocol, config)
    root = ts.initial
    for ev, out in ts.successors(root):
        out.state, out.violations, out.entered_cs, out.unfinished

Every transition starts from "step 0": history a protocol keys by step (kout_tree's report
track) stays bounded and is read as if the parent were the start. History a judgement needs
lives in the state instead (kout_tree's legitimacy ghost, which its monitor writes after each
step: ``Protocol.monitor_writes``), so each explored state is judged by its own history.
"""

from __future__ import annotations

import dataclasses
import sys
from array import array
from collections.abc import Iterator, Mapping
from operator import getitem, itemgetter
from typing import Any

from .alone import AloneCtx
from .events import DELIVER, Event, Message
from .lean import LeanSimulator, Working, _QuietCtx
from .protocol import Ctx
from .sim import Simulator, State

_new = object.__new__
_ORDER = sys.byteorder          # (``array``'s bytes are in the machine's order)
_first_item = itemgetter(0)     # a Message's number
_SET = tuple(State.__dict__[f].__set__ for f in ("procs", "messages", "next_seq", "crashed",
                                                  "cs", "waiting"))


def make_state(procs: tuple, messages: tuple, next_seq: int, crashed: frozenset, cs: tuple,
               waiting: tuple) -> State:
    """``State(...)`` without the frozen dataclass's ``__init__`` (which sets each field through
    ``object.__setattr__``, several times slower): the slots are filled directly. The result is
    an ordinary ``State``, equal to and hashing like one built the usual way."""
    st = _new(State)
    a, b, c, d, e, f = _SET
    a(st, procs)
    b(st, messages)
    c(st, next_seq)
    d(st, crashed)
    e(st, cs)
    f(st, waiting)
    return st


def parts_of(st: State) -> tuple:
    """A stored state as the fast path keeps it: ``State``'s fields in order, in a plain tuple
    (``procs, messages, next_seq, crashed, cs, waiting``). A search builds no ``State`` for
    the states it stores: a tuple is made in one step and read in one unpacking, where a
    frozen dataclass costs a call per field to fill (``make_state``) and to read."""
    return (st.procs, st.messages, st.next_seq, st.crashed, st.cs, st.waiting)


class Outcome:
    """What one transition did. Nobody changes one once made.

    ``state``, ``violations``, ``entered_cs`` and ``unfinished`` are what a transition *is*
    (they alone take part in ``==``); the other slots are the fast path's bookkeeping. A
    successor made by ``Transitions.step_fast`` keeps the state's ``parts`` (``parts_of``)
    and builds its ``State`` only when read: a search stores and expands the parts.
    """

    __slots__ = ("_state", "violations", "entered_cs", "unfinished", "acts", "touched",
                 "numbers", "nums", "cnums", "origin", "ident", "local", "parts")

    def __init__(self, state: State | None, violations: tuple[str, ...] | None,
                 entered_cs: bool, unfinished: frozenset,
                 acts: dict[int, tuple[Event, ...]] | None = None,
                 touched: tuple[int, ...] | None = None,
                 numbers: tuple[int, ...] | None = None) -> None:
        self._state = state
        self.violations = violations      # safety findings reported during or after the step
        self.entered_cs = entered_cs      # some process entered its critical section
        self.unfinished = unfinished      # pids not finished afterwards (Simulator.unfinished)
        # The successor's enabled actions per process index (fast mode only): handed back to
        # ``load`` when the search expands this state, so restoring it need not ask the
        # protocol for every process's actions again.
        self.acts = acts
        # Indices of the processes the step may have changed, and the numbers of their new
        # states (``Transitions.numbers``), in that order (fast mode only).
        self.touched = touched
        self.numbers = numbers
        # (``step_fast``) the numbers of all the successor's process states and of its
        # messages' contents (aligned with its messages), and what reached it (the parent's
        # parts, nums, cnums, unfinished, the event): ``violations`` is None until
        # ``Transitions.judge`` fills it in.
        self.nums = self.cnums = self.origin = None
        # (``step_fast``) the event's local identity (its message content's number or its id,
        # one per fairness label, ``explorer.driver.label``) and the key of the recorded local
        # effect it replayed or recorded; None when the step was not local.
        self.ident = self.local = None
        if state is not None:
            self.parts = parts_of(state)

    @property
    def state(self) -> State:
        st = self._state
        if st is None:
            st = self._state = make_state(*self.parts)
        return st

    @property
    def waiting(self) -> frozenset:
        """Alias of ``unfinished`` (the name before the ``unfinished`` hook)."""
        return self.unfinished

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Outcome):
            return NotImplemented
        return (self.state, self.violations, self.entered_cs, self.unfinished) == \
            (other.state, other.violations, other.entered_cs, other.unfinished)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Outcome(state={self.state!r}, violations={self.violations!r}, "
                f"entered_cs={self.entered_cs!r}, unfinished={self.unfinished!r})")


_SIM = Ctx.sim          # the slot holding a Ctx's simulator (``_WatchCtx`` shadows the name)


def _set_sim(ctx: Ctx, sim: Any) -> None:
    _SIM.__set__(ctx, sim)


def _get_sim(ctx: Ctx) -> Any:          # a handler looked at the global state: not local
    s = _SIM.__get__(ctx)
    s.watch_ok = False
    return s


class _WatchCtx(_QuietCtx):
    """A quiet Ctx that notes whether the step read or wrote anything but its own process
    (``sim.watch_i``): reading ``ctx.sim`` or another process's state, writing another's, or
    reporting a violation clears ``sim.watch_ok``. Only steps that keep it are memoised. What
    the step asked of other processes through ``peek`` is noted in ``sim.watch_probes``
    instead: the memo replays such a step only where the probes answer the same."""

    __slots__ = ()

    sim = property(_get_sim, _set_sim)

    def __init__(self, sim: Any) -> None:
        super().__init__(sim)
        # ``Ctx`` binds the simulator's effect methods into its slots; watch them instead
        self.get = self._get
        self.put = self._put
        self.send = self._send
        self.request = self._request
        self.enter_cs = self._enter_cs
        self.exit_cs = self._exit_cs
        self.cancel = self._cancel
        self.violation = self._violation

    @property
    def config(self) -> Any:
        return _SIM.__get__(self).config

    @property
    def variant(self) -> str:
        return _SIM.__get__(self).variant

    @property
    def step(self) -> int:
        return _SIM.__get__(self).step_no

    def has(self, feature: str) -> bool:
        s = _SIM.__get__(self)
        return s.protocol.has(s.variant, feature)

    def peek(self, pid: str, probe: Any) -> Any:
        s = _SIM.__get__(self)
        i = s.index[pid]
        value = probe(s.procs[i])
        if i != s.watch_i and s.watch_i >= 0:     # noted only for a step being recorded
            s.watch_probes.append((i, probe, value))
        return value

    def _own(self, pid: str) -> Any:
        s = _SIM.__get__(self)
        if s.index.get(pid) != s.watch_i:
            s.watch_ok = False
        return s

    def _get(self, pid: str) -> Any:
        s = self._own(pid)
        return s.procs[s.index[pid]]

    def _put(self, pid: str, state: Any) -> None:
        self._own(pid)._put(pid, state)

    def _send(self, src: str, dst: str, kind: str, body: Any = None) -> Message:
        return self._own(src)._send(src, dst, kind, body)

    def _request(self, pid: str) -> None:
        self._own(pid)._request(pid)

    def _enter_cs(self, pid: str, resources: Any = ()) -> None:
        self._own(pid)._enter_cs(pid, resources)

    def _exit_cs(self, pid: str) -> None:
        self._own(pid)._exit_cs(pid)

    def _cancel(self, pid: str) -> None:
        self._own(pid)._cancel(pid)

    def _violation(self, text: str) -> None:
        s = _SIM.__get__(self)
        s.watch_ok = False
        s._violation(text)


def _ghosts(state: Any) -> tuple:
    """The values of a process state's ghost fields (``kernel.canon``): what only a monitor
    writes."""
    names = _GHOST_FIELDS.get(type(state))
    if names is None:
        names = _GHOST_FIELDS[type(state)] = tuple(
            f.name for f in dataclasses.fields(state) if f.metadata.get("ghost")) \
            if dataclasses.is_dataclass(state) else ()
    return tuple([getattr(state, n) for n in names])


_GHOST_FIELDS: dict[type, tuple[str, ...]] = {}


def _waiting_shape(waiting: tuple) -> tuple[tuple, bytes | None]:
    """A state's waiting entries ``(pid, step, count)`` as ``Transitions.pack`` numbers them:
    ``((pid, step), ...)`` and the counts as four-byte unsigned ints, when every entry is
    such a triple whose count is an int that fits; else the entries whole and None."""
    shape = []
    counts = b""
    for x in waiting:       # (one or two entries: a plain loop is the cheapest)
        if len(x) != 3:
            return waiting, None
        c = x[2]
        if type(c) is not int or not 0 <= c <= 0xFFFFFFFF:
            return waiting, None
        shape.append((x[0], x[1]))
        counts += c.to_bytes(4, _ORDER)
    return tuple(shape), counts


class _NeedSim(Exception):
    """A protocol's ``violations`` read something a ``_View`` does not have."""


class InFlight(Mapping):
    """A stored state's messages read as ``Simulator.inflight`` reads them (message number ->
    Message, in number order), without building that dict: a protocol's ``violations`` reads
    it for every new state of a search (datta_ring counts the tokens in flight), and the dict
    of a few messages cost more than the predicate itself. ``values()`` is the messages
    tuple; a lookup by number scans it (a state has a handful of messages)."""

    __slots__ = ("msgs",)

    def __init__(self, msgs: tuple) -> None:
        self.msgs = msgs

    def values(self) -> tuple:       # type: ignore[override]
        return self.msgs

    def __getitem__(self, seq: int) -> Message:
        for m in self.msgs:
            if m[0] == seq:
                return m
        raise KeyError(seq)

    def __iter__(self) -> Iterator[int]:
        return map(_first_item, self.msgs)

    def __len__(self) -> int:
        return len(self.msgs)


_SET_MSGS = InFlight.msgs.__set__       # ``_View.inflight`` fills the slot without __init__


class _View:
    """What ``protocol.violations(sim)`` reads of a simulator, for a stored state, without
    loading it: process states, messages in flight, critical sections, waiting, config. Any
    other attribute raises ``_NeedSim`` (then the full simulator is used, see ``judge``)."""

    __slots__ = ("procs", "pids", "index", "config", "capacity", "protocol", "variant",
                 "fifo", "cs", "crashed", "_msgs", "_waiting")

    # A stored state, not a step: nothing to record (a protocol's ``violations`` may ask).
    monitors = None

    def load(self, out: Outcome) -> None:
        """View the state of ``out`` (from its parts: its ``State`` need not be built)."""
        self.procs, self._msgs, _seq, self.crashed, cs, self._waiting = out.parts
        self.cs = dict(cs) if cs else {}

    # Made when read (once per judged state, by the protocols that read them), without a
    # Python-level loop for the messages.
    @property
    def waiting(self) -> dict:
        w = self._waiting
        return {x[0]: (x[1], x[2]) for x in w} if w else {}

    @property
    def inflight(self) -> InFlight:
        s = _new(InFlight)
        _SET_MSGS(s, self._msgs)
        return s

    def proc(self, pid: str) -> Any:
        return self.procs[self.index[pid]]

    def __getattr__(self, name: str) -> Any:
        raise _NeedSim(name)


class Transitions:
    """Applies single events to stored states of one scenario.

    ``load(st)`` makes ``st`` current; ``enabled()`` and ``apply(ev)`` then work on it. With
    ``fast`` (the default) it works on a ``LeanSimulator`` twin of ``sim`` (no fingerprints,
    ``_since``, labels, narration or metrics), and restores cheaply: a search restores the
    same parent once per enabled event, so it keeps a copy of the working attributes of the
    last restored state and puts a fresh copy back instead of rebuilding them. Without
    ``fast`` it drives ``sim`` itself through ``Simulator.restore`` and the kernel's full
    after-step: the reference the fast path is tested against.
    """

    def __init__(self, sim: Simulator, fast: bool = True) -> None:
        self.fast = fast
        self._sim = LeanSimulator.adopt(sim) if fast else sim
        self._sim.monitors.lean = fast
        self._sim.monitors.clear_history()
        self.initial: State = self._sim.state()
        self._current: State | None = self.initial
        self._pair: tuple = (None, None)     # a State and its parts (``parts_for``)
        self._base_of: State | None = None
        self._base: Working = ()
        # Message contents (src, dst, kind, body) by number, each content's channel by number
        # and whether delivering it is progress: ``content_number``.
        self._cnum: dict[tuple, int] = {}
        self._contents: list[tuple] = []
        self.channel_of: list[int] = []
        self._chans: dict[tuple[str, str], int] = {}
        self._prog: list[bool] = []
        self._is_progress = self._prog.__getitem__      # (bound once: ``stuck_of``)
        self._dst_of: list[int] = []        # by content number: its destination's index
        # The memoised fast path (``step_fast``): see "Local transitions" below.
        f = self._sim.faults
        # A monitor that writes the state (``monitor_writes``) makes no step local, unless it
        # says what it writes (``monitor_ghost``): then a replayed step gets that write after.
        writes = getattr(self._sim.protocol, "monitor_writes", None)
        ghost = getattr(self._sim.protocol, "monitor_ghost", None)
        writing = writes is not None and bool(writes(self._sim.config))
        self._ghost = ghost if writing else None
        self.memo = fast and not (f is not None and getattr(f, "any", False)) and not (
            writing and ghost is None)
        if self.memo:
            self._init_memo()

    # ---------------------------------------------------------------- what the search reads
    @property
    def protocol(self) -> Any:
        return self._sim.protocol

    @property
    def config(self) -> Any:
        return self._sim.config

    @property
    def pids(self) -> tuple[str, ...]:
        return self._sim.pids

    @property
    def fifo(self) -> bool:
        return self._sim.fifo

    @property
    def faults(self) -> Any:
        return self._sim.faults

    @property
    def variant(self) -> str:
        return self._sim.variant

    @property
    def numbers(self) -> dict | None:
        """The process-state numbering the lean simulator keeps as it steps (None without
        ``fast``): a key function may share it instead of hashing every touched state again."""
        return self._sim.numbers if self.fast else None

    @property
    def view(self) -> Simulator:
        """The simulator holding the loaded state, for protocol hooks that take ``sim``
        (``violations``, ``wait_for``, ``served_all``, ...). Read it; do not step it."""
        return self._sim

    # ---------------------------------------------------------------- one state
    def load(self, st: State, acts: dict[int, tuple[Event, ...]] | None = None) -> None:
        """Make ``st`` current; ``acts`` is ``Outcome.acts`` of the transition that reached
        ``st`` (its processes' enabled actions, which then need not be recomputed)."""
        if self._current is st:
            return
        sim = self._sim
        if self.fast and self._base_of is st:
            sim.resume(self._base)
        else:
            if self.fast and acts is not None:
                sim.load_with_actions(st, acts)
            else:
                sim.restore(st)
            if self.fast:
                self._base = sim.save()
                self._base_of = st
        self._current = st

    def forget(self) -> None:
        """Forget which state is loaded (the next ``load`` restores, even the same object)."""
        self._current = None

    def enabled(self) -> list[Event]:
        """The events enabled in the loaded state, in the kernel's stable order."""
        return self._sim.enabled()

    def enabled_in(self, st: State) -> list[Event]:
        self.load(st)
        return list(self._sim.enabled())

    def apply(self, ev: Event) -> Outcome:
        """Apply ``ev`` (enabled in the loaded state) and report the transition; the resulting
        state is loaded afterwards."""
        sim = self._sim
        mon = sim.monitors
        entries = mon.begin_transition()
        sim.step_no = 0
        sim._apply(ev)
        viol = mon.transition_violations()
        st = sim.state()
        self._current = st
        if sim.cs or sim._unfinished_hook is not None:
            unfinished = frozenset(sim.unfinished())
        else:
            unfinished = frozenset(sim.waiting)
        if self.fast:
            return Outcome(st, viol, mon.cs_entries != entries, unfinished,
                           dict(sim._acts), sim.touched, sim.touched_numbers)
        return Outcome(st, viol, mon.cs_entries != entries, unfinished)

    def step(self, st: State, ev: Event) -> Outcome:
        """``load(st)`` then ``apply(ev)``."""
        self.load(st)
        return self.apply(ev)

    def successors(self, st: State) -> list[tuple[Event, Outcome]]:
        """Every enabled event of ``st`` with its outcome, in the kernel's order."""
        self.load(st)
        out = []
        for ev in list(self._sim.enabled()):
            self.load(st)
            out.append((ev, self.apply(ev)))
        return out

    def unfinished(self) -> frozenset:
        """``Simulator.unfinished`` of the loaded state."""
        return frozenset(self._sim.unfinished())

    def stuck(self) -> bool:
        """Deadlock in the loaded state: someone has not finished and no progress event is
        enabled."""
        sim = self._sim
        if not sim.waiting and not sim.cs and sim._unfinished_hook is None:
            return False
        if not sim.unfinished():
            return False
        if self.fast:
            return not sim.can_progress()
        return not any(e.progress for e in sim.enabled())

    def violations(self) -> tuple[str, ...]:
        """The protocol's own safety predicates on the loaded state (sorted)."""
        return tuple(sorted(self._sim.protocol.violations(self._sim)))

    # ---------------------------------------------------------------- local transitions
    # A search applies the same few hundred *local* transitions (one message content delivered
    # to one process state, one action of one process state) millions of times, in different
    # global states. A step is local when its handler reads and writes only its own process
    # (``_WatchCtx`` watches it) and reports no violation: its effect (the process's new state,
    # the messages sent, its own critical-section and waiting entries) then depends only on
    # the event, that process's state and its own cs / waiting entries, so ``step_fast``
    # records it the first time (on the lean simulator) and replays it on stored tuples after
    # that, without loading anything. Process states and message contents are named by number
    # (``nums``, ``cnums``): the process numbers are the lean simulator's (and the keyer's).
    # What is not local, or meets a capacity conflict, or a protocol whose ``violations``
    # reads more than ``_View`` offers, takes the lean simulator as before.

    def _init_memo(self) -> None:
        sim = self._sim
        sim._ctx = _WatchCtx(sim)
        sim.watch_i = -1
        sim.watch_ok = True
        sim.watch_probes = []
        # (probe, process state number) -> the probe's answer (``_probes_hold``)
        self._probed: dict[tuple[Any, int], Any] = {}
        self._index = sim.index
        self._pids = sim.pids       # ``pids`` without the property call (read per transition)
        self._fifo = sim.fifo
        # ``_keys``: per number the keyer gives cs and waiting, ``_at`` of them
        self._at_keyer: Any = None
        self._at_of: dict[int, list] = {}
        # memo key (identity, process state number, waits, cs value) -> the effect: (new
        # state, its number, content numbers sent, cs value after, waits after, entered a CS,
        # unfinished after, probes or None, whether the cs value and waiting are unchanged)
        self._effects: dict[tuple, tuple] = {}
        # (state, event, its ``successor_keys`` answer) of the last ``successor_key``
        self._last: tuple = (None, None, None)
        # (message number, content number) -> its delivery event, whose ``msg`` is also the
        # Message the fast path puts in the states it builds (one table for both)
        self._dev: dict[tuple[int, int], Event] = {}
        self._dev_ids: dict[int, str] = {}
        self._acts_of = sim._events_of     # per process index: state number -> action events
        # per process index, by state number: 2 if the state offers a progress action, 1 if
        # not, 0 not asked yet (``stuck_of``)
        self._hasprog: list[bytearray] = [bytearray() for _ in sim.pids]
        self._checks = sim.monitors._checks
        self._viewing = True
        v = self._view = _View()
        v.pids, v.index, v.config = sim.pids, sim.index, sim.config
        v.capacity, v.protocol, v.variant, v.fifo = sim.capacity, sim.protocol, sim.variant, \
            sim.fifo
        self._capacity = sim.capacity
        # first-time steps run on their process alone (``_first``)
        self._alone = AloneCtx(sim.config, sim.variant, sim.protocol, sim.index)
        self._eager = sim._eager_hook
        self._unfinished_hook = sim._unfinished_hook
        # process state number -> the one object kept for it (``unpack``; the lean
        # simulator's table, see ``LeanSimulator._refresh``)
        self._state_of: list[Any] = sim.state_of
        self._extras: dict[tuple, int] = {}
        self._extra_list: list[tuple] = []
        # ``pack``: the last (waiting, cs, crashed) packed or unpacked, its number and counts
        self._last_extra: tuple = (None, None, None, -1, None)
        self._last_unpacked: tuple = (-1, b"", ())          # ``unpack``: the last waiting
        self.slow = 0                      # first-time steps (alone or on the lean simulator)
        # Whether ``violations`` can be judged on a ``_View`` (else a search that judges
        # violations should not take the fast path: each step would be redone on the lean
        # simulator).
        self.viewable = True
        if self._checks:
            v.load(Outcome(self.initial, (), False, frozenset()))
            try:
                sim.protocol.violations(v)
            except _NeedSim:
                self.viewable = self._viewing = False

    def drop_memo(self) -> None:
        """Forget the recorded local effects and the cached events and messages (a search
        that has ended calls it to free them before replaying its counterexample; they are
        recorded again if stepping goes on)."""
        if self.memo:
            self._effects.clear()
            self._last = (None, None, None)
            self._dev.clear()
            self._dev_ids.clear()

    def content_number(self, content: tuple) -> int:
        """The number of a message content (src, dst, kind, body), given when first met (a
        key function may share it, see ``explorer.keys.Keyer``)."""
        n = self._cnum.get(content)
        if n is None:
            n = self._cnum[content] = len(self._cnum)
            self._contents.append(content)
            self.channel_of.append(self._chans.setdefault(content[:2], len(self._chans)))
            self._dst_of.append(self._sim.index.get(content[1], -1))
            self._prog.append(bool(self._sim.protocol.is_progress(Message(0, *content))))
        return n

    def root_numbers(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``nums`` and ``cnums`` of ``initial`` (memo only)."""
        sim = self._sim
        self.load(self.initial)
        nums = tuple([sim.numbers[p] for p in sim.procs])
        for p, n in zip(sim.procs, nums, strict=True):
            self._known(n, p)
        return nums, tuple([self.content_number(m[1:]) for m in self.initial.messages])

    def state_numbers(self, st: State) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``nums`` and ``cnums`` of any state (memo only), e.g. one the search never stepped
        to (the forget audit's erased states): its process states numbered as the lean
        simulator numbers them, with their enabled actions looked up, so that ``events_at``
        and ``step_fast`` work on it."""
        sim = self._sim
        numbers = sim.numbers
        acts_of = self._acts_of
        nums = []
        for i, p in enumerate(st.procs):
            n = numbers.get(p)
            if n is None:
                n = numbers[p] = len(numbers)
            if n not in acts_of[i]:
                acts_of[i][n] = sim._action_events(self.pids[i], p)
            self._known(n, p)
            nums.append(n)
        return tuple(nums), tuple([self.content_number(m[1:]) for m in st.messages])

    def load_nums(self, st: State, nums: tuple[int, ...]) -> None:
        """``load(st)`` for a state of the fast path (its actions looked up by number)."""
        if self._current is st:
            return
        acts = {}
        for i, n in enumerate(nums):
            a = self._acts_of[i].get(n)
            if a:
                acts[i] = a
        self._sim.load_with_actions(st, acts)
        self._current = st

    def events_at(self, st: State, nums: tuple[int, ...], cnums: tuple[int, ...]) -> list[Event]:
        """``enabled()`` of a stored state without loading it: deliveries by message number
        (FIFO: channel heads), then each process's actions in process order (no faults: the
        fast path is off when the scenario allows any)."""
        evs: list[Event] = []
        msgs = st.messages
        if msgs:
            dev = self._dev
            heads = set() if self._sim.fifo else None
            chan_of = self.channel_of
            for k, m in enumerate(msgs):
                cn = cnums[k]
                if heads is not None:
                    ch = chan_of[cn]
                    if ch in heads:
                        continue
                    heads.add(ch)
                key = (m[0], cn)
                e = dev.get(key)
                if e is None:
                    e = dev[key] = self._delivery(m, cn)
                evs.append(e)
        acts_of = self._acts_of
        for i, n in enumerate(nums):
            a = acts_of[i].get(n)
            if a:
                evs.extend(a)
        return evs

    def _delivery(self, m: Message, cn: int) -> Event:
        """The delivery event of message ``m`` (content number ``cn``), first asked for; its
        id is shared by every content sent with the same message number."""
        ids = self._dev_ids
        seq = m[0]
        i = ids.get(seq)
        if i is None:
            i = ids[seq] = f"m{seq}"
        return Event(i, DELIVER, m[2], "", self._prog[cn], m)

    def stuck_of(self, out: Outcome) -> bool:
        """``stuck()`` of a fast-path successor: someone unfinished and no progress event."""
        if not out.unfinished:
            return False
        prog = self._prog
        fifo = self._sim.fifo
        # Unordered channels: a progress message in flight is a progress event, and one is
        # in most states of a search, so it is asked first (one ``map`` in C, no per-process
        # work; the two-client ring: 489 of 573 states answered here).
        if not fifo and any(map(self._is_progress, out.cnums)):
            return False
        nums = out.nums
        # per process, 2 if its state offers a progress action, 1 if not, 0 if not asked yet
        # (``map`` over the per-index tables: no Python-level loop per process)
        try:
            flags = bytes(map(getitem, self._hasprog, nums))
        except IndexError:
            flags = b"\0"
        if 0 in flags:      # some state not asked yet: work out only those
            hp = self._has_progress
            if len(flags) == len(nums):     # (not after the IndexError above)
                both = zip(flags, nums)  # noqa: B905 - equal lengths; strict= costs here
                flags = bytes([f or hp(i, n) for i, (f, n) in enumerate(both)])
            else:
                flags = bytes([hp(i, n) for i, n in enumerate(nums)])
        if 2 in flags:
            return False
        if not fifo:
            return True     # and no progress message in flight (asked above)
        heads = set()
        chan_of = self.channel_of
        for cn in out.cnums:
            ch = chan_of[cn]
            if ch in heads:
                continue
            heads.add(ch)
            if prog[cn]:
                return False
        return True

    def _has_progress(self, i: int, n: int) -> int:
        """``stuck_of``'s flag of process i's state numbered n (2: it offers a progress
        action, 1: it does not), worked out the first time it is asked."""
        hp = self._hasprog[i]
        if n >= len(hp):
            hp.extend(bytes(n + 1 - len(hp)))
        if not hp[n]:
            hp[n] = 2 if any(e.progress for e in self._acts_of[i].get(n, ())) else 1
        return hp[n]

    def judge(self, out: Outcome) -> tuple[str, ...]:
        """Fill in ``out.violations`` of a fast-path successor (the protocol's safety
        predicates on the new state; a replayed step reports none of its own)."""
        if out.violations is not None:
            return out.violations
        if not self._checks:
            out.violations = ()
            return ()
        if self._viewing:
            v = self._view
            # ``v.load(out)``, inline: once per new state of a search
            v.procs, v._msgs, _seq, v.crashed, cs, v._waiting = out.parts
            v.cs = dict(cs) if cs else {}
            try:
                bad = self._sim.protocol.violations(v)
            except _NeedSim:
                self._viewing = False
            else:
                out.violations = tuple(sorted(set(bad))) if bad else ()
                return out.violations
        parts, nums, cnums, unf, ev = out.origin   # redo the step on the lean simulator
        out.violations = self._slow(parts, nums, cnums, unf, ev, None).violations
        return out.violations

    def parts_for(self, st: State) -> tuple:
        """``parts_of(st)``, the same tuple for the same ``State`` asked again (and
        ``state_for`` answers ``st`` for that tuple): a state's events are stepped one by one,
        and what is loaded is recognised by identity (``load_nums``)."""
        pair = self._pair
        if pair[0] is st:
            return pair[1]
        parts = parts_of(st)
        self._pair = (st, parts)
        return parts

    def state_for(self, parts: tuple) -> State:
        """The ``State`` of a stored state's parts (``parts_of``), for what needs one
        (loading the lean simulator, a reduction's hooks); the same object for the same tuple
        asked again (``parts_for``)."""
        pair = self._pair
        if pair[1] is parts:
            return pair[0]
        st = make_state(*parts)
        self._pair = (st, parts)
        return st

    def view_of(self, st: State, nums: tuple[int, ...]) -> Simulator:
        """The simulator loaded with a fast-path state (for hooks that take ``sim``)."""
        self.load_nums(st, nums)
        return self._sim

    def _where(self, parts: tuple, ev: Event) -> tuple[int, int, str, bool, Any]:
        """Where ``ev`` acts in a stored state (its parts), for its memo key: the process's
        index, the delivered message's position among the messages (-1 for an action), the
        pid, whether it waits, and its critical-section value (None outside)."""
        _procs, msgs, _seq, _crashed, cs, waiting = parts
        m = ev.msg
        if m is not None:
            i = self._index[m[2]]
            seq = m[0]
            pos = 0
            for x in msgs:
                if x[0] == seq:
                    break
                pos += 1
        else:
            i = self._index[ev.pid]
            pos = -1
        pid = self.pids[i]
        csv = None
        for c in cs:
            if c[0] == pid:
                csv = c[1]
                break
        w = False
        for x in waiting:
            if x[0] == pid:
                w = True
                break
        return i, pos, pid, w, csv

    def successor_key(self, st: State, nums: tuple[int, ...], cnums: tuple[int, ...],
                      ev: Event, keyer: Any) -> tuple[Any, Any] | None:
        """The key of ``step_fast(st, ..., ev)``'s successor, worked out from numbers alone
        when ``ev`` replays a recorded local effect that enters no critical section, as
        ``(key, ident)``, with ``keyer`` the search's ``explorer.keys.Keyer`` (its
        ``step_key``, ``extra_number`` and ``extra_after``); None otherwise. Most successors of a search are states already stored: for
        those, this is all the search needs (no ``Outcome``, no ``State``)."""
        pre = self.successor_keys(st, nums, cnums, [ev], keyer)[0]
        # ``step_fast`` of the same state and event (the search's next call when this
        # successor is new) starts from what was worked out here
        self._last = (st, ev, pre)
        return None if pre[0] is None else (pre[0], pre[3][0])

    def events_and_keys(self, st: State, nums: tuple[int, ...], cnums: tuple[int, ...],
                        keyer: Any) -> tuple[list[Event], list[tuple]]:
        """``events_and_keys_of`` a ``State``."""
        return self.events_and_keys_of(self.parts_for(st), nums, cnums, keyer)

    def events_and_keys_of(self, parts: tuple, nums: tuple[int, ...], cnums: tuple[int, ...],
                           keyer: Any) -> tuple[list[Event], list[tuple]]:
        """``events_at`` and ``successor_keys`` of those events in one pass, for a stored
        state given by its parts (``parts_of``): where each event acts (process index,
        message position, identity) is known while the events are listed, instead of being
        looked up again per event. Hot: once per expanded state of a search with an exact
        key."""
        evs: list[Event] = []
        todo = []           # (process index, message position, identity)
        msgs = parts[1]
        if msgs:
            dev = self._dev
            heads = set() if self._sim.fifo else None
            chan_of, dst_of = self.channel_of, self._dst_of
            for pos, m in enumerate(msgs):
                cn = cnums[pos]
                if heads is not None:
                    ch = chan_of[cn]
                    if ch in heads:
                        continue
                    heads.add(ch)
                e = dev.get((m[0], cn))
                if e is None:
                    e = dev[(m[0], cn)] = self._delivery(m, cn)
                evs.append(e)
                todo.append((dst_of[cn], pos, cn))
        acts_of = self._acts_of
        for i, n in enumerate(nums):
            a = acts_of[i].get(n)
            if a:
                evs.extend(a)
                for e in a:
                    todo.append((i, -1, e.id))
        return evs, self._keys(parts, nums, cnums, todo, keyer)

    def successor_keys(self, st: State, nums: tuple[int, ...], cnums: tuple[int, ...],
                       evs: list[Event], keyer: Any) -> list[tuple]:
        """``successor_key`` of each of ``evs`` (events of ``st``) in one call, with where each
        acts found once per state instead of once per event: per event one flat tuple
        ``(key, process index, message position or -1, memo key, effect)``, ``key`` None
        where ``successor_key`` says None; the memo key's first item is the event's
        identity. It is also what ``step_fast`` may start from (its ``pre`` argument)."""
        index = self._index
        pos_of = {m[0]: k for k, m in enumerate(st.messages)} if st.messages else None
        todo = []
        for ev in evs:
            m = ev.msg
            if m is not None:
                pos = pos_of[m[0]]
                todo.append((index[m[2]], pos, cnums[pos]))
            else:
                todo.append((index[ev.pid], -1, ev.id))
        return self._keys(self.parts_for(st), nums, cnums, todo, keyer)

    def _keys(self, parts: tuple, nums: tuple[int, ...], cnums: tuple[int, ...], todo: list,
              keyer: Any) -> list[tuple]:
        """``successor_keys`` of the events of ``todo``: (its process's index, the position
        of the message it delivers or -1, its identity). Hot: once per transition of a
        search; one tuple per event is all it builds besides the memo key and the key, which
        the keyer makes from numbers (``step_key``; who is in a critical section and who
        waits by number too, ``extra_after``)."""
        effects = self._effects
        pids = self._pids
        _procs, _msgs, _seq, crashed, cs, waiting = parts
        extra = keyer.extra_number(crashed, cs, waiting)
        step_key, extra_after = keyer.step_key, keyer.extra_after
        # ``Keyer.step_key``'s one-byte form, worked out here without its two calls per event
        # (unordered channels: the messages' numbers sorted) while the keyer's keys all had
        # that form; any other key is the keyer's (``tests/test_kernel.py`` compares the two)
        inline = keyer.narrow and not self._fifo
        replay = self._ghost is None    # a monitor's ghost write: ``step_fast`` makes it
        # per process index, whether it waits and its critical-section value: what the memo
        # key reads of cs and waiting, a function of the keyer's number of them (``extra``),
        # so worked out once per number, not per event
        if keyer is not self._at_keyer:
            self._at_keyer, self._at_of = keyer, {}
        at = self._at_of.get(extra)
        if at is None:
            at = self._at_of[extra] = self._at(cs, waiting)
        res = []
        for i, pos, ident in todo:
            w, csv = at[i]
            mk = (ident, nums[i], w, csv)
            eff = effects.get(mk)
            if eff is None or eff[5] or not replay or (
                    eff[7] is not None and not self._probes_hold(eff[7], nums)):
                # unknown, enters a CS, or probes fail
                res.append((None, i, pos, mk, eff))
                continue
            # the successor's content numbers, in message order: the delivered one out, the
            # sent ones in (one list: fewer objects than slices)
            c = [*cnums, *eff[2]]
            if pos >= 0:
                del c[pos]
            e = extra if eff[8] else \
                extra_after(extra, pids[i], eff[3], eff[4])     # the key reads who waits
            if inline:
                c.sort()        # (unordered channels: in the key, a multiset)
                vals = [*nums, *c, e, 1]
                vals[i] = eff[1]
                try:
                    one = bytearray(vals)       # refuses a number above 255
                except ValueError:
                    one = None
                if one is not None and 0xFF not in one:
                    res.append((int.from_bytes(one, "little"), i, pos, mk, eff))
                    continue
                inline = False
            res.append((step_key(nums, i, eff[1], c, e), i, pos, mk, eff))
        return res

    def _at(self, cs: tuple, waiting: tuple) -> list[tuple[bool, Any]]:
        """Per process index: (whether it waits, its critical-section value or None)."""
        csd = dict(cs)
        who = {x[0] for x in waiting}
        return [(pid in who, csd.get(pid)) for pid in self._pids]

    def step_fast(self, st: State, nums: tuple[int, ...], cnums: tuple[int, ...],
                  unf: frozenset, ev: Event, pre: tuple | None = None) -> Outcome:
        """``step(st, ev)`` on a stored state with its numbers, replaying a recorded local
        transition when there is one: ``step_parts`` of ``st``'s parts."""
        if pre is None:
            last = self._last
            if last[0] is st and last[1] is ev:
                pre = last[2]
        return self.step_parts(self.parts_for(st), nums, cnums, unf, ev, pre)

    def step_parts(self, parts: tuple, nums: tuple[int, ...], cnums: tuple[int, ...],
                   unf: frozenset, ev: Event, pre: tuple | None = None) -> Outcome:
        """``step_fast`` of a stored state given by its parts (``parts_of``). The outcome
        carries ``nums`` / ``cnums`` and the successor's ``parts`` (its ``State`` is built
        only if read); its ``violations`` may be None (``judge`` fills them in when they are
        needed). ``pre``: ``successor_keys``' answer for this state and event."""
        procs, msgs, nseq, crashed, cs, waiting = parts
        if pre is not None:
            _k, i, pos, mk, eff = pre
            ident, _n, w, csv = mk
            pid = self._pids[i]
            if eff is None:     # recorded since (an equal event of the same state)
                eff = self._effects.get(mk)
        else:
            i, pos, pid, w, csv = self._where(parts, ev)
            ident = cnums[pos] if pos >= 0 else ev.id
            mk = (ident, nums[i], w, csv)
            eff = self._effects.get(mk)
        if eff is None:
            eff = self._first(parts, nums, ev, i, pid, w, csv, mk)
            if eff is None:
                return self._slow(parts, nums, cnums, unf, ev, mk)
        nstate, nnum, scnums, csafter, wafter, entered, unf_i, probes, _keeps = eff
        if probes is not None and not self._probes_hold(probes, nums):
            return self._slow(parts, nums, cnums, unf, ev, None)   # another path: not recorded
        if entered:
            # the capacity check of ``_enter_cs`` depends on the others in their CS; entering
            # again is judged by the protocol's ``transient`` (recorded where it was transient)
            if csv is not None or cs and self._over(cs, pid, csafter):
                return self._slow(parts, nums, cnums, unf, ev, None)
            self._sim.monitors.cs_entries += 1
        out = _new(Outcome)
        out._state = None
        out.origin = (parts, nums, cnums, unf, ev)
        # tuples changed at one place through a list: two objects, where slices and
        # concatenations make five to seven
        t = list(nums)
        t[i] = nnum
        out.nums = tuple(t)
        if pos >= 0 or scnums:
            m = list(msgs)
            c = [*cnums, *scnums]
            if pos >= 0:
                del m[pos]
                del c[pos]
            dev = self._dev
            for cn in scnums:       # the sent messages (each Message made once: ``_dev``)
                k = (nseq, cn)
                e = dev.get(k)
                if e is None:
                    e = dev[k] = self._delivery(Message(nseq, *self._contents[cn]), cn)
                m.append(e.msg)
                nseq += 1
            msgs = tuple(m)
            cnums = tuple(c)
        out.cnums = cnums
        if csafter != csv:
            rest = [c for c in cs if c[0] != pid]
            if csafter is not None:
                rest.append((pid, csafter))
                rest.sort()
            cs = tuple(rest)
        if wafter != w:
            if wafter:
                waiting = tuple(sorted(waiting + ((pid, 1, self._sim.monitors.cs_entries
                                                   - entered),)))
            else:
                waiting = tuple([x for x in waiting if x[0] != pid])
        t = list(procs)
        t[i] = nstate
        out.parts = (tuple(t), msgs, nseq, crashed, cs, waiting)
        if unf_i != (pid in unf):
            unf = unf | {pid} if unf_i else unf - {pid}
        out.unfinished = unf
        out.violations = None
        out.entered_cs = entered
        out.acts = None
        out.touched = (i,)
        out.numbers = (nnum,)
        out.ident = ident
        out.local = mk
        if self._ghost is not None:
            self._write_ghost(out)
        return out

    def _write_ghost(self, out: Outcome) -> None:
        """The monitor's write (``Protocol.monitor_ghost``) on a replayed successor: what the
        lean simulator's monitor would ``put_ghost`` after the same step (no faults here)."""
        v = self._view
        v.load(out)
        w = self._ghost(v)
        if w is None:
            return
        pid, state = w
        i = self._index[pid]
        nnum, state = self._sim.number(i, state)
        procs, *rest = out.parts
        out.parts = (procs[:i] + (state,) + procs[i + 1:], *rest)
        out.nums = out.nums[:i] + (nnum,) + out.nums[i + 1:]
        touched = sorted({*out.touched, i})
        out.touched = tuple(touched)
        out.numbers = tuple([out.nums[t] for t in touched])
        hook = self._unfinished_hook
        if hook is not None:
            unf = out.unfinished
            if bool(hook(self._sim.config, pid, state)) != (pid in unf):
                out.unfinished = unf - {pid} if pid in unf else unf | {pid}

    def _over(self, cs: tuple, pid: str, res: tuple) -> bool:
        cap = self._capacity
        for r in res:
            used = 1
            for p, rr in cs:
                if p != pid and r in rr:
                    used += 1
            if used > cap.get(r, 1):
                return True
        return False

    def _first(self, parts: tuple, nums: tuple[int, ...], ev: Event, i: int, pid: str, w: bool,
               csv: Any, mk: tuple) -> tuple | None:
        """A first-time step run on its process alone (``alone.py``): its effect, recorded
        under ``mk``, or None where the step reached beyond the process (then it takes the
        lean simulator, ``_slow``, which records it if it is local after all)."""
        ctx = self._alone
        procs, _msgs, next_seq, crashed, _cs, _waiting = parts
        if crashed or not ctx.run(ev, procs, i, pid, next_seq, w, csv, self._eager):
            return None
        self.slow += 1
        sim = self._sim
        state = ctx.state
        if ctx.touched:
            nnum, state = sim.number(i, state)
        else:
            nnum = nums[i]
        cn = self.content_number
        scnums = tuple([cn(m[1:]) for m in ctx.sends])
        csafter, wafter = ctx.csv, ctx.waits
        # ``Simulator.unfinished`` of the process: in its critical section, waiting, or what
        # the protocol's hook adds
        hook = self._unfinished_hook
        unf_i = csafter is not None or wafter or (
            hook is not None and bool(hook(sim.config, pid, state)))
        probes = tuple(ctx.probes) or None
        eff = self._effects[mk] = (state, nnum, scnums, csafter, wafter, False, unf_i, probes,
                                   csafter == csv and wafter == w)
        return eff

    def _slow(self, parts: tuple, nums: tuple[int, ...], cnums: tuple[int, ...],
              unf: frozenset, ev: Event, mk: tuple | None) -> Outcome:
        """The step on the lean simulator; records its effect under ``mk`` if it was local."""
        self.slow += 1
        sim = self._sim
        st = self.state_for(parts)
        self.load_nums(st, nums)
        i = self._index[ev.pid]
        sim.watch_i = i if mk is not None else -1
        sim.watch_ok = True
        sim.watch_probes = []
        out = self.apply(ev)
        sim.watch_i = -1
        out.ident = mk[0] if mk is not None else None
        child = out.state
        new_nums = list(nums)
        for t, n in zip(out.touched, out.numbers, strict=True):
            new_nums[t] = n
        out.nums = tuple(new_nums)
        for t in out.touched:
            self._known(new_nums[t], child.procs[t])
        sends = child.messages[len(st.messages) - (ev.msg is not None):]
        kept = cnums
        if ev.msg is not None:
            pos = next(k for k, x in enumerate(st.messages) if x[0] == ev.msg[0])
            kept = cnums[:pos] + cnums[pos + 1:]
        out.cnums = kept + tuple([self.content_number(x[1:]) for x in sends])
        if mk is not None and sim.watch_ok and not out.violations and \
                self._remember(st, ev, i, mk, out, sends):
            out.local = mk
        return out

    def _remember(self, st: State, ev: Event, i: int, mk: tuple, out: Outcome,
                  sends: tuple) -> bool:
        """Record the effect of a local step, after checking it is one (only process i
        changed, only its message taken, sends in order, no crash, others' entries kept);
        whether it was recorded."""
        child = out.state
        pid = self.pids[i]
        if any(t != i for t in out.touched) or child.crashed != st.crashed:
            return False
        n_kept = len(st.messages) - (ev.msg is not None)
        kept = tuple(x for x in st.messages if ev.msg is None or x[0] != ev.msg[0])
        if child.messages[:n_kept] != kept or any(
                x[0] != st.next_seq + k for k, x in enumerate(sends)) or \
                child.next_seq != st.next_seq + len(sends):
            return False
        if [c for c in st.cs if c[0] != pid] != [c for c in child.cs if c[0] != pid] or \
                [x for x in st.waiting if x[0] != pid] != \
                [x for x in child.waiting if x[0] != pid]:
            return False
        if self._ghost is not None and _ghosts(child.procs[i]) != _ghosts(st.procs[i]):
            return False        # the monitor wrote the ghost: not the handler's effect alone
        csafter = dict(child.cs).get(pid)
        wafter = any(x[0] == pid for x in child.waiting)
        probes = tuple(self._sim.watch_probes) or None
        self._effects[mk] = (child.procs[i], out.nums[i], out.cnums[n_kept:], csafter, wafter,
                             out.entered_cs, pid in out.unfinished, probes,
                             csafter == mk[3] and wafter == mk[2])
        return True

    def _probes_hold(self, probes: tuple, nums: tuple[int, ...]) -> bool:
        """Whether every probe a recorded step asked of another process (``Ctx.peek``:
        process index, probe, answer) answers the same in the state numbered ``nums``: then
        the step takes the same path there and has the recorded effect."""
        probed, state_of = self._probed, self._state_of
        for j, probe, value in probes:
            n = nums[j]
            a = probed.get((probe, n), probed)
            if a is probed:
                a = probed[(probe, n)] = probe(state_of[n])
            if a != value:
                return False
        return True

    # ---------------------------------------------------------------- stored compactly
    def _known(self, n: int, state: Any) -> None:
        self._sim.keep(n, state)

    def pack(self, out: Outcome) -> bytes:
        """A fast-path successor as bytes, for a search's frontier: its process-state numbers,
        next message number, (crashed, cs, waiting) by number, then each message's number and
        content number, then the waiting entries' counts. ``unpack`` gives back equal parts
        with their ``nums``/``cnums``.

        A waiting entry ``(pid, step, cs_entries)`` carries the monitor's count of critical
        sections entered so far in the search, so nearly every packed state has its own; the
        number keeps only (crashed, cs, each entry's pid and step), a few values a search
        keeps for its whole life, and the counts follow the numbers as four bytes each (an
        entry that does not fit is numbered whole, as all were before: ``_waiting_shape``).
        """
        _procs, msgs, next_seq, crashed, cs, waiting = out.parts
        # (a state's successors share its tuples where they leave them as they were: the
        # number and counts of the last ones packed or unpacked are kept with them)
        last = self._last_extra
        if last[0] is waiting and last[1] is cs and last[2] is crashed:
            e, counts = last[3], last[4]
        else:
            if waiting:
                shape, counts = _waiting_shape(waiting)
            else:
                shape, counts = waiting, None
            ex = (crashed, cs, shape, counts is not None)     # (a whole waiting of pairs is
            e = self._extras.get(ex)                           # not a shape of triples)
            if e is None:
                e = self._extras[ex] = len(self._extra_list)
                self._extra_list.append(ex)
            self._last_extra = (waiting, cs, crashed, e, counts)
        vals = [*out.nums, next_seq, e]
        for m, cn in zip(msgs, out.cnums, strict=True):
            vals.append(m[0])
            vals.append(cn)
        top = max(vals)     # the narrowest array type that holds every number, named first
        if top < 0x100:
            blob = b"B" + bytes(vals)
        elif top < 0x10000:
            blob = b"H" + array("H", vals).tobytes()
        else:
            blob = b"i" + array("i", vals).tobytes()
        return blob if counts is None else blob + counts

    @property
    def packed_extras(self) -> int:
        """How many distinct (crashed, cs, waiting) entries ``pack`` has numbered and keeps for
        the search's whole life (memory a frontier of packed states holds on to)."""
        return len(self._extra_list)

    def unpack(self, blob: bytes) -> tuple[tuple, tuple[int, ...], tuple[int, ...]]:
        k = len(self.pids)
        code = blob[0]
        # the numbers, a count trailer included (four bytes a count: whole array items)
        if code == 66:       # b"B": the bytes are the numbers (no array needed)
            a: Any = blob[1:]
        else:
            a = array(chr(code))
            a.frombytes(memoryview(blob)[1:])
        e = a[k + 1]
        crashed, cs, waiting, inline = self._extra_list[e]
        if inline:      # the counts' trailer: four bytes per waiting entry
            shape = waiting
            n = len(a) - (4 * len(shape)) // (1 if code == 66 else a.itemsize)
            last = self._last_unpacked
            if last[0] == e and blob.endswith(last[1]):
                # the same tuple as the last one's (frontier neighbours are often siblings
                # with the same waiting): the keyer's ``extra_number`` knows it by identity
                waiting = last[2]
                trailer = last[1]
            else:
                trailer = blob[-4 * len(shape):]
                if len(shape) == 1:     # (the usual case: one process waits)
                    p, st = shape[0]
                    waiting = ((p, st, int.from_bytes(trailer, _ORDER)),)
                else:
                    counts = array("I")
                    counts.frombytes(trailer)
                    waiting = tuple([(p, st, c) for (p, st), c in zip(shape, counts,
                                                                       strict=True)])
                self._last_unpacked = (e, trailer, waiting)
            seqs, cnums = a[k + 2:n:2], tuple(a[k + 3:n:2])
        else:
            trailer = None
            seqs, cnums = a[k + 2::2], tuple(a[k + 3::2])
        # the successors that leave them as they are share them: ``pack`` knows them
        self._last_extra = (waiting, cs, crashed, e, trailer)
        nums = tuple(a[:k])
        state_of = self._state_of
        dev, contents = self._dev, self._contents
        msgs = []
        for seq, cn in zip(seqs, cnums, strict=True):
            key = (seq, cn)
            e = dev.get(key)
            if e is None:
                e = dev[key] = self._delivery(Message(seq, *contents[cn]), cn)
            msgs.append(e.msg)
        parts = (tuple([state_of[n] for n in nums]), tuple(msgs), a[k], crashed, cs, waiting)
        return parts, nums, cnums
