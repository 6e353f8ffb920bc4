"""An explorer-only core: ``Core`` with a search's cheap restore and per-state action memo.

The explorer (``protocols/explorer``) restores a stored global state, applies one event and reads
the resulting ``State``, millions of times. ``Core`` (the headless kernel) already keeps no
timeline: no trace, narration, snapshots, metrics, ``since`` book or livelock fingerprints
(``Simulator`` adds those). ``LeanSimulator`` drops a little more that a search does not read,
and adds what a search needs (``save``/``resume``, process-state numbers, memoised actions):

- no ``_chan`` queues, no fingerprints (``_phash``, ``_proc_fp``, ``_chan_fp``): FIFO heads are
  found in ``inflight``, which is kept in send order (= message number order);
- delivery events carry an empty label (event ids, kinds, pids, progress flags and messages are
  the plain simulator's);
- ``Ctx.say`` records nothing (the f-strings a handler builds are still built);
- sends and deliveries are not counted in the metrics (``Monitors.on_send``/``on_deliver``).

The protocol's handlers, ``actions``, ``violations``, requests, critical-section entries and exits
run exactly as under ``Simulator.step``; its monitors are a ``Monitors`` in ``lean`` mode, as
``Transitions`` reads them; ``tests/test_kernel.py`` checks that both simulators
reach the same states with the same enabled events on random walks through the gallery.
The timeline API (``step``, ``goto``, ``fingerprint``, ``since``) is not for this class.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .core import Core, State
from .events import DELIVER, PREFIX, Event, Message
from .monitors import Monitors
from .protocol import QuietCtx
from .sim import Simulator

# The working attributes the lean simulator keeps (the rest of ``Simulator._load``'s are skipped).
WORKING = ("procs", "inflight", "next_seq", "crashed", "cs", "waiting", "usage", "_acts",
           "_touched", "_enabled")

# A saved copy of the working attributes (``LeanSimulator.save``): immutable or private
# containers, so that any number of steps from it leaves it as it was.
Working = tuple


_QuietCtx = QuietCtx      # the name ``transitions`` imports
_tuple_new = tuple.__new__


class LeanSimulator(Core):
    """A transition core for state-space search; build it with ``LeanSimulator.adopt(sim)``."""

    @classmethod
    def adopt(cls, sim: Simulator) -> "LeanSimulator":
        """A lean twin of ``sim`` in ``sim``'s current state, sharing its protocol, scenario and
        configuration (and whatever a protocol attached to it), with monitors of its own."""
        lean = cls.__new__(cls)
        skip = set(WORKING) | {"monitors", "trace", "narrations", "_snapshots", "_chan",
                               "_msg_events", "_phash", "_proc_fp", "_chan_fp", "_since",
                               "_ctx", "_event_of", "_events_by_name", "_act_ids", "_chan_sum",
                               "_crash_h", "_heads", "_cur", "_entries"}
        for name, value in vars(sim).items():
            if name not in skip:
                setattr(lean, name, value)
        lean.monitors = Monitors(lean)
        lean._ctx = _QuietCtx(lean)
        lean.trace, lean.narrations, lean._snapshots = [], [], {}
        lean.touched = ()
        # Every distinct process state met gets the next number (see ``_refresh``); the explorer
        # may hand in its own table (``Keyer``'s), so that both name states by the same numbers.
        lean.numbers = {}
        # Per number, the one object kept for that process state (``_refresh``): a handler
        # builds a new, equal object each time it reaches a state met before, and keeping
        # only the first makes every stored state, memo entry and recorded effect share it.
        lean.state_of = []
        # Per process index: number of a process state -> its enabled action events.
        lean._events_of = [{} for _ in lean.pids]
        lean._event_pool = {}      # each distinct action event once (``_action_events``)
        lean.touched_numbers = ()
        lean.restore(sim.state())
        return lean

    # ------------------------------------------------------------------ the global state
    def _load(self, st: State) -> None:
        self.procs = list(st.procs)
        self.inflight = {m.seq: m for m in st.messages}
        self.next_seq = st.next_seq
        self.crashed = set(st.crashed)
        self.cs = dict(st.cs)
        self.waiting = {w[0]: (w[1], w[2]) for w in st.waiting}
        self.usage = {}
        for pid, res in self.cs.items():
            for r in res:
                self.usage.setdefault(r, []).append(pid)
        self._touched = set()
        self._enabled = None
        self._acts = {}

    def load_with_actions(self, st: State, acts: dict[int, tuple[Event, ...]]) -> None:
        """Make ``st`` current with its processes' enabled actions already known."""
        self._load(st)
        self._acts = dict(acts)

    def save(self) -> Working:
        """The working attributes, with the enabled events computed once (``resume`` shares
        that list: nothing mutates it, a step replaces it)."""
        return (tuple(self.procs), dict(self.inflight), self.next_seq, frozenset(self.crashed),
                dict(self.cs), dict(self.waiting),
                {r: tuple(u) for r, u in self.usage.items()}, dict(self._acts), self.enabled())

    def resume(self, w: Working) -> None:
        """Make the saved working attributes current again, on fresh copies of the containers a
        step may change (cheaper than ``restore``, which asks the protocol for every process's
        actions). Explicit assignments rather than a loop: this runs once per transition."""
        procs, inflight, self.next_seq, crashed, cs, waiting, usage, acts, self._enabled = w
        self.procs = list(procs)
        self.inflight = dict(inflight)
        self.crashed = set(crashed)
        self.cs = dict(cs)
        self.waiting = dict(waiting)
        self.usage = {r: list(u) for r, u in usage.items()}
        self._acts = dict(acts)
        self._touched = set()

    # ------------------------------------------------------------------ effects (via Ctx)
    def _put(self, pid: str, state: Any) -> None:
        i = self.index[pid]
        self.procs[i] = state
        self._touched.add(i)

    def _send(self, src: str, dst: str, kind: str, body: Any = None) -> Message:
        if dst not in self.index:
            return super()._send(src, dst, kind, body)      # raises the kernel's SimError
        m = Message(self.next_seq, src, dst, kind, body)
        self.next_seq += 1
        self.inflight[m.seq] = m
        self._enabled = None
        return m

    def _remove_message(self, m: Message) -> None:
        del self.inflight[m.seq]
        self._enabled = None

    # ------------------------------------------------------------------ enabled events
    def _refresh(self, i: int) -> int:
        """Number the state of process ``i`` and look up its enabled action events; returns
        the number.

        The events are memoised per process state: ``actions`` depends only on the process's
        own state and the (fixed) config, by the protocol contract, and a search meets the same
        process state in thousands of global states. States are told apart by value (hash and
        ==, once per touched process), as the explorer's keys tell them apart; the number lets
        the key reuse this lookup instead of hashing the state again."""
        pid = self.pids[i]
        n, state = self._kept(self.procs[i])
        self.procs[i] = state       # an equal copy is replaced by the kept one
        if pid in self.crashed:
            self._acts.pop(i, None)
        else:
            memo = self._events_of[i]
            evs = memo.get(n)
            if evs is None:
                evs = memo[n] = self._action_events(pid, state)
            if evs:
                self._acts[i] = evs
            else:
                self._acts.pop(i, None)
        self._enabled = None
        return n

    def number(self, i: int, state: Any) -> tuple[int, Any]:
        """``_refresh`` of a state of process ``i`` (not crashed) that is not in the working
        attributes (a step run on its process alone, ``alone.py``): its number, the one object
        kept for it, and its enabled action events looked up for ``_events_of``."""
        n, state = self._kept(state)
        memo = self._events_of[i]
        if n not in memo:
            memo[n] = self._action_events(self.pids[i], state)
        return n, state

    def _kept(self, state: Any) -> tuple[int, Any]:
        """The number of a process state (a new one if unseen) and the one object kept for
        that value (``state`` itself if it is the first)."""
        numbers = self.numbers
        # one lookup, so the state is hashed once (a protocol's dataclass hashes in Python)
        n = numbers.setdefault(state, len(numbers))
        kept = self.state_of
        if n < len(kept):
            k = kept[n]
            if k is not None:
                return n, k
        elif n == len(kept):        # a new number, next in line: no gap to fill (``keep``)
            kept.append(state)
            return n, state
        self.keep(n, state)
        return n, state

    def keep(self, n: int, state: Any) -> Any:
        """The object kept for process state number ``n``: ``state`` if none is kept yet
        (numbers given elsewhere, e.g. by a key function sharing the table, leave gaps)."""
        kept = self.state_of
        if n >= len(kept):
            kept.extend([None] * (n + 1 - len(kept)))
        if kept[n] is None:
            kept[n] = state
        return kept[n]

    def _action_events(self, pid: str, state: Any) -> tuple[Event, ...]:
        """The process state's action events, each the one Event object kept for its value:
        many states of a process offer the same few actions (the two-client ring: 97 events
        made for 10 distinct ones), and the memo above holds them for the whole search."""
        pool = self._event_pool
        out = []
        for a in self.protocol.actions(self.config, pid, state):
            kind, name = a.kind, a.name
            # ``Event(...)`` without the named tuple's Python-level ``__new__``
            e = _tuple_new(Event, (f"{PREFIX[kind]}:{pid}:{name}", kind, pid, a.label or name,
                                   a.progress, None))
            out.append(pool.setdefault(e, e))
        return tuple(out)

    def _lookup(self, event_id: Any) -> Event | None:
        """``Simulator._lookup`` on the lean working attributes (no id table, no queues)."""
        if not isinstance(event_id, str) or len(event_id) < 2:
            return None
        if event_id[0] == "m":
            seq = event_id[1:]
            if not seq.isdigit():
                return None
            for e in self._deliveries():
                if e.id == event_id:
                    return e
            return None
        if event_id[0] in "aet" and event_id[1] == ":":
            i = self.index.get(event_id[2:].partition(":")[0])
            for e in self._acts.get(i, ()) if i is not None else ():
                if e.id == event_id:
                    return e
        return None

    def _deliverable(self) -> Iterable[Message]:
        """The deliverable messages by message number: every message in flight on unordered
        channels, each channel's oldest one on FIFO channels."""
        msgs = self.inflight.values()
        if not self.fifo:
            return msgs
        heads: dict[tuple[str, str], Message] = {}
        for m in msgs:                       # in send order: the first seen is the head
            heads.setdefault((m.src, m.dst), m)
        return sorted(heads.values(), key=lambda m: m.seq)

    random_event = Core._random_listed     # this _refresh keeps no _order (see Core._refresh)
    _counted = False

    def enabled(self) -> list[Event]:
        """``Core.enabled`` with the deliveries found in ``inflight`` (no channel queues)."""
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

    def _deliveries(self) -> list[Event]:
        """One delivery event per deliverable message, as ``Simulator.enabled`` lists them."""
        progress = self.protocol.is_progress
        return [Event(f"m{m.seq}", DELIVER, m.dst, "", progress(m), m)
                for m in self._deliverable()]

    def can_progress(self) -> bool:
        """``any(e.progress for e in self.enabled())`` without building the delivery events
        (faults never count as progress)."""
        for evs in self._acts.values():
            for e in evs:
                if e.progress:
                    return True
        progress = self.protocol.is_progress
        return any(progress(m) for m in self._deliverable())

    # ------------------------------------------------------------------ stepping
    def _apply(self, ev: Event) -> tuple:
        """``Core._apply`` that also reports which processes the step touched and their
        states' numbers (for the explorer's incremental key)."""
        self._effect(ev)
        # The processes whose state this step may have changed, and their states' numbers: all
        # others keep theirs, which lets the explorer update its canonical key instead of
        # rebuilding it.
        self.touched = tuple(self._touched)
        self.touched_numbers = tuple([self._refresh(i) for i in self.touched])
        self._touched.clear()
        self._enabled = None
        self.monitors.after_step(ev)
        if self._touched:       # the monitor kept history in the state (Protocol.monitor_writes)
            self.touched = tuple(sorted(set(self.touched) | self._touched))
            self.touched_numbers = tuple([self._refresh(i) for i in self.touched])
            self._touched.clear()
            self._enabled = None
        return ()

    take = _apply
