"""The search engine: every schedule of a scenario, breadth- or depth-first, on the kernel's
public ``Transitions``.

Everything a search can be asked is one ``SearchOptions``; ``search(sim, options)`` runs it and
returns a ``SearchResult``. The explorer's ``check``, the reductions' audits and every search in
tests/ and benchmarks/ use it (docs/explorer.md, "The search API"):

    res = search(build(sc, "full"), SearchOptions(max_states=5000, can_finish=True))
    res.result, res.states, res.schedule, res.cannot_finish

The search starts at the simulator's current state and tries every enabled event (faults only
as the scenario's ``faults`` allow; ``options.events`` may filter them). States are
deduplicated by a canonical key (``keys.py``; ``options.key`` replaces it). Breadth-first, the
first violation or deadlock met is at the smallest possible depth, so its schedule is a
shortest one. Livelocks are looked for afterwards in the explored graph (``livelock.py``).

For each state the search keeps its parent and the id of the event that led to it, as numbered
in the parent's stored representative; the representative of a state is the concrete state
first reached, so following parents from the root gives a schedule that ``Simulator.step``
replays from step 0.

Reductions are plug-ins: a key function (symmetry, ``forget``: ``keys.Keyer``) and an
``expand`` hook that picks the events to expand at a state (partial order: ``por.PartialOrder``).
"""

from __future__ import annotations

import time
from array import array
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..kernel import FAULT, Event, Outcome, Simulator, State, Transitions
from .driver import label
from .keys import Key, Keyer

# Fast-path frontier entries kept unpacked (see ``Search.run``): a bound on the extra memory
# (a few hundred bytes each) of not packing them.
UNPACKED = 1024

Progress = Callable[[dict[str, Any]], None]
# A predicate on the loaded state (the hooks' read-only ``sim``): a text names a finding.
StateCheck = Callable[[Simulator], "str | None"]


class Expansion(Protocol):
    """A reduction plug-in: the events to expand at node ``i`` (a subset of ``events``)."""

    def expand(self, search: "Search", i: int, st: State, st_key: Key,
               events: list[Event]) -> list[Event]: ...


@dataclass
class SearchOptions:
    """What one search looks for and how far it goes.

    - ``max_states``: stop with ``limit`` rather than store more states.
    - ``order``: ``"bfs"`` (shortest counterexamples) or ``"dfs"``.
    - ``events(sim, ev)``: explore only the enabled events it accepts (default: all).
    - ``key(state)``: the deduplication key (default: the explorer's canonical key, no
      reduction).
    - ``violations`` / ``deadlocks``: report safety violations (the kernel's capacity check
      and the protocol's predicates) / deadlocks (someone has not finished, no progress event
      is enabled: ``Simulator.unfinished``).
    - ``goal(sim)``: judged on every new state; a text is a finding ``goal``.
    - ``final(sim)``: judged on every state with no event to explore; a text is a ``final``.
    - ``stop_at_first``: stop at the first finding; False records the first of each kind and
      counts the ``final`` ones, and the search goes on.
    - ``can_finish``: after an exhaustive search, check that every reachable state can still
      reach one where everyone is served and nobody is in a critical section
      (``protocol.served_all``); ``SearchResult.cannot_finish`` is a schedule to one that
      cannot. Rules out livelocks as well as deadlocks, without a fairness argument.
    - ``keep_edges``: keep the graph's edges (the livelock search needs them).
    - ``expansion``: a reduction plug-in (``por.PartialOrder``).
    - ``audit(state, schedule)``: called with each new state (``audit.ForgetAudit``).
    - ``starts``: more states to search from besides the simulator's current one (other
      starts of the same instance, e.g. corrupted starts that differ only in their state):
      every state reachable from any start is visited once; each start is a root (parent
      -1, depth 0; one equal to an earlier start is not added again) and a node belongs to
      the start its parent chain leads back to (``Search.start_of``).
    - ``progress(info)`` every ``progress_every`` new states; ``should_stop()`` polled then
      (True: ``cancelled``); ``max_seconds`` bounds the wall time (``timeout``),
      ``max_cpu_seconds`` the CPU time of this process (``time.process_time``; ``cpu_time``),
      which does not depend on how many others share the machine, so a bounded run stops at
      the same state under any load (up to the poll granularity).
    """

    max_states: int = 200_000
    order: str = "bfs"
    events: Callable[[Simulator, Event], bool] | None = None
    key: Callable[[State], Hashable] | None = None
    violations: bool = True
    deadlocks: bool = True
    goal: StateCheck | None = None
    final: StateCheck | None = None
    stop_at_first: bool = True
    can_finish: bool = False
    keep_edges: bool = False
    expansion: Expansion | None = None
    audit: Callable[[State, Callable[[], list[str]]], None] | None = None
    progress: Progress | None = None
    progress_every: int = 10_000
    should_stop: Callable[[], bool] | None = None
    max_seconds: float | None = None
    max_cpu_seconds: float | None = None
    starts: tuple[State, ...] = ()


# The array type codes a stored sequence of numbers widens through: each holds every number
# the narrower one does, so a sequence starts narrow (one or two bytes a number) and is copied
# into the next type once, when the first number too large for it comes.
WIDER = {"B": "H", "H": "i", "h": "i", "i": "q"}


def widened(a: array, n: int) -> array:
    """``a`` cut back to its first ``n`` items (an ``extend`` that overflowed may have added
    some) and copied into the next wider type. A ``bytearray`` (one-byte numbers kept where
    they are appended one at a time: its ``append`` converts a number once, an array's
    twice) widens as type "B" does."""
    del a[n:]
    if isinstance(a, array):
        return array(WIDER[a.typecode], a)
    return array(WIDER["B"], list(a))     # (``array`` would read a bytearray as machine bytes)


class Adjacency:
    """Per expanded node, a tuple of ints (its successors, or their edge codes), stored flat
    in one array with each node's span: a few bytes an edge instead of a tuple and a dict entry
    per node. Reads like the dict it replaces: ``adj[i]``, ``i in adj``, ``sorted(adj)``,
    ``adj.items()``.

    The values are kept two bytes each until one does not fit (then four: ``widened``). While
    nodes are set in order (0, 1, 2, ...: breadth-first), a node's span ends where the next
    one's begins, so only the starts are kept; the first node set out of order (depth-first)
    makes the ends explicit (``end``, None until then). ``index``: another Adjacency whose
    spans this one shares (the graph's edge codes share its successors' spans, one code per
    successor): its node ``i`` must be set first, and this one's ``adj[i]`` then gets as many
    values."""

    def __init__(self, index: Adjacency | None = None) -> None:
        self.flat = array("H")
        self.index = index
        # per node: where its span begins (-1 until expanded) and, once nodes came out of
        # order, where it ends; 4 bytes each (up to 2**31 edges, far beyond what one search
        # keeps in memory). A shared Adjacency reads its index's.
        self.start = array("i") if index is None else index.start
        self.end: array | None = None
        self.count = 0

    def _explicit(self) -> None:
        """Keep each node's end (before the first node set out of order)."""
        if self.end is None:
            start = self.start
            self.end = array("i", start[1:])
            if len(start):
                self.end.append(len(self.flat))

    def grow(self, n: int) -> None:
        """Make room for nodes up to n - 1."""
        self._explicit()
        while len(self.start) < n:
            self.start.append(-1)
            self.end.append(-1)

    def span(self, i: int) -> tuple[int, int]:
        """Where node i's values are in ``flat`` (KeyError if it is not set)."""
        own = self.index if self.index is not None else self
        start = own.start
        if i >= len(start) or i < 0 or start[i] < 0:
            raise KeyError(i)
        if own.end is not None:
            return start[i], own.end[i]
        return start[i], start[i + 1] if i + 1 < len(start) else len(own.flat)

    def extend(self, values: Any) -> None:
        """Append ``values`` to the flat array, widening its type if one does not fit."""
        n = len(self.flat)
        try:
            self.flat.extend(values)
        except OverflowError:
            self.flat = widened(self.flat, n)
            self.extend(values)

    def __setitem__(self, i: int, values: Any) -> None:
        if self.index is not None:
            a, b = self.index.span(i) if i in self.index else (-1, -1)
            if a != len(self.flat):
                raise ValueError(f"node {i}: set it in the index first, then here")
            self.extend(values)
            if len(self.flat) != b:
                raise ValueError(f"node {i}: not as many values as in the index")
            self.count += 1
            return
        start = self.start
        if self.end is None and i == len(start):    # the usual case: nodes in order
            start.append(len(self.flat))
            self.extend(values)
            self.count += 1
            return
        self.grow(i + 1)
        if start[i] < 0:
            self.count += 1
        start[i] = len(self.flat)
        self.extend(values)
        self.end[i] = len(self.flat)

    def __getitem__(self, i: int) -> tuple[int, ...]:
        a, b = self.span(i)
        return tuple(self.flat[a:b])

    def get(self, i: int, default: Any = None) -> Any:
        return self[i] if i in self else default

    def __contains__(self, i: object) -> bool:
        return isinstance(i, int) and 0 <= i < len(self.start) and self.start[i] >= 0

    def __iter__(self):
        return (i for i, b in enumerate(self.start) if b >= 0)

    def __len__(self) -> int:
        return self.count

    def items(self):
        return ((i, self[i]) for i in self)


class Interned:
    """A list of hashable values that repeat (the events that reached each state, who waits
    there): each distinct value is kept once and each item is its number, one byte while
    there are at most 256 distinct values (a ``bytearray``; then wider: ``widened``). Reads
    like the list it replaces: ``append``, ``seq[i]``, ``len``, iteration."""

    def __init__(self) -> None:
        self.items: bytearray | array = bytearray()
        self.values: list[Any] = []
        self.number: dict[Any, int] = {}

    def append(self, value: Any) -> None:
        n = self.number.get(value)
        if n is None:
            n = self.number[value] = len(self.values)
            self.values.append(value)
        try:
            self.items.append(n)
        except (OverflowError, ValueError):     # (a bytearray refuses 256 with ValueError)
            self.items = widened(self.items, len(self.items))
            self.items.append(n)

    def __getitem__(self, i: int) -> Any:
        return self.values[self.items[i]]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self):
        values = self.values
        return (values[n] for n in self.items)


@dataclass
class Graph:
    """The explored state graph. Node i was reached from ``parent[i]`` by event ``via[i]``.
    Numbers are kept in arrays (4 bytes each; depths one byte, in a ``bytearray``, until one
    is deeper: ``widened``), not lists of int objects; ``via`` and ``waiting`` keep each
    distinct value once (``Interned``)."""

    parent: array = field(default_factory=lambda: array("i"))
    via: Interned = field(default_factory=Interned)
    depth: bytearray | array = field(default_factory=bytearray)
    # Per node: the processes that have not finished there (``Simulator.unfinished``).
    waiting: Interned = field(default_factory=Interned)
    # Per expanded node: successor indices and, in step, an edge code
    # (label number * 4 + 2 if weak fairness demands the event + 1 if it entered a CS); the
    # codes share the successors' spans.
    succ: Adjacency = field(default_factory=Adjacency)
    codes: Adjacency = field(init=False)
    labels: dict[tuple, int] = field(default_factory=dict)
    transitions: int = 0

    def __post_init__(self) -> None:
        self.codes = Adjacency(self.succ)

    def path(self, i: int) -> list[str]:
        """The schedule from node i's root (its start) to node i."""
        out = []
        parent = self.parent
        while (p := parent[i]) >= 0:
            out.append(self.via[i])
            i = p
        out.reverse()
        return out

    def root(self, i: int) -> int:
        """The root node i's parent chain leads back to (0 in a search from one start)."""
        parent = self.parent
        while (p := parent[i]) >= 0:
            i = p
        return i


@dataclass
class Stop:
    """Why the search stopped early, and where."""

    kind: str                 # violation | deadlock | goal | final | limit | cancelled | timeout | cpu_time
    node: int = -1            # the state reached (violation / deadlock)
    schedule: list[str] = field(default_factory=list)
    text: str = ""
    start: int = 0            # the start ``schedule`` begins at (``Search.start_of``)


@dataclass
class SearchResult:
    """What ``search`` found.

    ``result``: ``ok`` (exhausted, nothing found), the kind of the first finding (``violation``,
    ``deadlock``, ``goal``, ``final``), or ``limit`` / ``cancelled`` / ``timeout``; with
    ``stop_at_first=False`` the first finding's kind even though the search went on.
    """

    result: str
    states: int
    transitions: int
    depth: int
    seconds: float
    complete: bool                       # every reachable state was expanded
    schedule: list[str] | None = None    # to the first finding
    text: str = ""
    findings: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # first per kind
    finals: int = 0                      # states with no event to explore that ``final`` judged
    done_states: int = 0                 # (can_finish) states where everyone is served
    cannot_finish: list[str] | None = None
    start: int = 0                       # the start ``schedule`` begins at (``starts``: 1, 2...)
    cannot_finish_start: int = 0
    graph: Graph = field(default_factory=Graph, repr=False)


class Search:
    """One exploration; ``run()`` fills ``graph`` and returns a Stop or None."""

    def __init__(self, transitions: Transitions, options: SearchOptions,
                 key: Callable[..., Key] | None = None) -> None:
        self.ts = transitions
        self.options = o = options
        if o.order not in ("bfs", "dfs"):
            raise ValueError(f"order must be 'bfs' or 'dfs', not {o.order!r}")
        if key is None:
            if o.key is not None:
                simple = o.key

                def key(st: State, *_: Any, **__: Any) -> Key:
                    return simple(st)
            else:
                key = Keyer(transitions.protocol, transitions.config, transitions.pids,
                            transitions.fifo, None, forget=False,
                            numbers=transitions.numbers, contents=transitions).key
        self.key = key
        self.expansion = o.expansion
        self.audit = o.audit
        self.max_states = o.max_states
        self.keep_edges = o.keep_edges or o.can_finish
        self.progress_every = max(1, o.progress_every)
        self.reduced = 0          # states a reduction expanded with fewer events than enabled
        self.graph = Graph()
        self.seen: dict[Key, int] = {}
        self.started = time.perf_counter()
        self.cpu_started = time.process_time()
        self.max_depth = 0
        self.findings: dict[str, tuple[str, list[str]]] = {}
        self.finding_starts: dict[str, int] = {}     # per kind in ``findings``: its start
        # per start (the simulator's state, then ``options.starts``): its root node
        self.roots: list[int] = []
        self.finals = 0
        self.done: list[int] = []
        self.complete = False
        self.cache: dict[str, tuple[Outcome, Key, int | None, bool, str | None]] = {}
        # The memoised fast path of ``Transitions`` (no faults): states travel with the numbers
        # of their process states and message contents, and are loaded only when a hook needs
        # the simulator.
        self.fast = transitions.memo and (transitions.viewable or not o.violations)
        owner = getattr(key, "__self__", None)
        self.exact = isinstance(owner, Keyer) and not owner.group and not owner.forgets
        # Successors whose key is stored need no judging when the key is exact, or erases only
        # what the protocol's ``violations`` never reads (``forget_keeps_violations``).
        self.same_verdict = self.exact or (
            isinstance(owner, Keyer) and not owner.group and owner.forgets and
            bool(getattr(transitions.protocol, "forget_keeps_violations", False)))
        # the key of a fast-path successor: from its parts where the key function allows
        self.key_of = owner.key_of if isinstance(owner, Keyer) and key == owner.key else \
            (lambda out: key(out.state, nums=out.nums, cnums=out.cnums))
        self.root_bad = False
        self._node: tuple = ()

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def _add(self, key: Key, parent: int, via: str, waiting: frozenset) -> int:
        g = self.graph
        i = len(g.parent)
        self.seen[key] = i
        g.parent.append(parent)
        d = g.depth[parent] + 1 if parent >= 0 else 0
        try:
            g.depth.append(d)
        except (OverflowError, ValueError):     # (a bytearray refuses 256 with ValueError)
            g.depth = widened(g.depth, len(g.depth))
            g.depth.append(d)
        # ``Interned.append`` of ``via`` and ``waiting``, inline where the value is known
        # (once per stored state; a new value or a number too wide takes the method)
        seq = g.via
        n = seq.number.get(via)
        if n is not None and n < 0x100:
            seq.items.append(n)
        else:
            seq.append(via)
        seq = g.waiting
        n = seq.number.get(waiting)
        if n is not None and n < 0x100:
            seq.items.append(n)
        else:
            seq.append(waiting)
        if d > self.max_depth:
            self.max_depth = d
        return i

    def successor(self, st: State, st_key: Key, ev: Event, known: Key | None = None,
                  pre: tuple | None = None
                  ) -> tuple[Outcome, Key, int | None, bool, str | None]:
        """Apply ``ev`` to ``st``: the outcome, its key, its node if already seen, whether it
        is a deadlock and what ``goal`` says of it (both judged while the state is loaded, and
        only for new states). ``known``: the successor's key, if already worked out; ``pre``:
        ``Transitions.successor_keys``' answer for ``ev``."""
        ts = self.ts
        o = self.options
        if self.fast:
            parts, nums, cnums, unf = self._node     # (``st``'s parts)
            out = ts.step_parts(parts, nums, cnums, unf, ev, pre)
            self.graph.transitions += 1
            k = self.key_of(out) if known is None else known
            j = self.seen.get(k)
            # A state already stored had no violation when it was stored; with an exact key
            # (no forget, no symmetry) this one is the same state, so need not be judged again
            # (nor under a forget that keeps what ``violations`` reads: ``same_verdict``).
            if o.violations and out.violations is None and (
                    j is None or not self.same_verdict or (j == 0 and self.root_bad)):
                ts.judge(out)
            new = j is None and not (o.violations and out.violations)
            stuck = new and o.deadlocks and ts.stuck_of(out)
            goal = o.goal(ts.view_of(out.state, out.nums)) if new and o.goal is not None \
                else None
            return out, k, j, stuck, goal
        ts.load(st)
        out = ts.apply(ev)
        self.graph.transitions += 1
        k = self.key(out.state)
        j = self.seen.get(k)
        new = j is None and not (o.violations and out.violations)
        stuck = new and o.deadlocks and ts.stuck()
        goal = o.goal(ts.view) if new and o.goal is not None else None
        return out, k, j, stuck, goal

    def trial(self, st: State, st_key: Key, ev: Event
              ) -> tuple[Outcome, Key, int | None, bool, str | None]:
        """``successor``, kept for the expansion of ``st`` (for a reduction, which computes
        transitions to judge a set: none is applied twice)."""
        res = self.cache.get(ev.id)
        if res is None:
            res = self.cache[ev.id] = self.successor(st, st_key, ev)
        return res

    def _code(self, ev: Event) -> int:
        """``ev``'s edge code without the critical-section bit: its fairness label's number
        (numbered when first met) * 4, + 2 if weak fairness demands it."""
        labels = self.graph.labels
        lab = label(ev)
        n = labels.get(lab)
        if n is None:
            n = labels[lab] = len(labels)
        return n * 4 + (2 if ev.progress and ev.kind != FAULT else 0)

    def _report(self, frontier: int) -> None:
        if self.options.progress is not None:
            self.options.progress({"states": len(self.graph.parent),
                                   "transitions": self.graph.transitions,
                                   "depth": self.max_depth, "frontier": frontier,
                                   "seconds": round(self.elapsed(), 3)})

    def start_of(self, node: int) -> int:
        """Which start node ``node`` descends from: 0 for the simulator's own state, k for
        ``options.starts[k - 1]`` (the first of equal starts)."""
        return self.roots.index(self.graph.root(node)) if len(self.roots) > 1 else 0

    def _found(self, kind: str, text: str, node: int, schedule: list[str],
               origin: int | None = None) -> Stop | None:
        """Record a finding; a Stop if the search ends there. ``origin``: a stored node on
        the schedule's path (default ``node``), which says the start it begins at."""
        if self.options.stop_at_first:
            return Stop(kind, node, schedule, text,
                        self.start_of(node if origin is None else origin))
        if kind not in self.findings:
            self.findings[kind] = (text, schedule)
            self.finding_starts[kind] = self.start_of(node if origin is None else origin)
        return None

    def _start(self, st: State, queue: deque[int], reps: deque[Any]) -> Stop | None:
        """Add one of ``options.starts`` as a root, judged as the first one is (a start whose
        key is already stored is not added again: it shares that root)."""
        ts, o = self.ts, self.options
        ts.load(st)
        k = self.key(st)
        j = self.seen.get(k)
        if j is not None:
            self.roots.append(j)
            return None
        j = self._add(k, -1, "", ts.unfinished())
        self.roots.append(j)
        if o.violations and (bad := ts.violations()) and \
                (s := self._found("violation", "; ".join(bad), j, [])):
            return s
        if o.deadlocks and ts.stuck() and \
                (s := self._found("deadlock", "deadlock in the initial state", j, [])):
            return s
        if o.goal is not None and (text := o.goal(ts.view)) and \
                (s := self._found("goal", text, j, [])):
            return s
        if self.fast:
            nums, cnums = ts.state_numbers(st)
            reps.append((st, nums, cnums, k))
        else:
            reps.append((st, None, None, k))
        queue.append(j)
        return None

    def run(self) -> Stop | None:
        ts = self.ts
        o = self.options
        g = self.graph
        root = ts.initial
        ts.load(root)
        root_key = self.key(root)
        self._add(root_key, -1, "", ts.unfinished())
        self.roots.append(0)
        if o.violations:
            bad = ts.violations()
            self.root_bad = bool(bad)
            if bad and (s := self._found("violation", "; ".join(bad), 0, [])):
                return s
        if o.deadlocks and ts.stuck() and \
                (s := self._found("deadlock", "deadlock in the initial state", 0, [])):
            return s
        if o.goal is not None and (text := o.goal(ts.view)) and \
                (s := self._found("goal", text, 0, [])):
            return s
        # The frontier: each state waiting for expansion, with its enabled actions (see
        # ``Outcome.acts``) so that restoring it is cheaper, and its key (its successors' keys
        # are updated from it, see ``Keyer.key``).
        fast = self.fast
        # ``queue`` holds node numbers and ``reps``, in step with it, their representatives.
        if fast:
            nums, cnums = ts.root_numbers()
            reps: deque[Any] = deque([(root, nums, cnums, root_key)])
        else:
            reps = deque([(root, None, None, root_key)])
        # an event's identity (``Outcome.ident``) -> its edge code without the CS bit
        code_of: dict[Any, int] = {}
        queue: deque[int] = deque([0])
        for st in o.starts:         # more roots, all before the first expansion
            if s := self._start(st, queue, reps):
                return s
        take, take_rep = (queue.popleft, reps.popleft) if o.order == "bfs" else \
            (queue.pop, reps.pop)
        next_report = self.progress_every
        next_poll = 4 * self.progress_every
        keep = self.keep_edges
        g_succ, g_codes = g.succ, g.codes
        seen = self.seen
        owner = getattr(self.key, "__self__", None)
        # Successors already stored are recognised from numbers alone (``successor_key``)
        # where the key is exact and every event is expanded.
        quick = fast and self.exact and self.expansion is None
        keyer = owner if quick else None        # successor keys from numbers (``Keyer``)
        listed = quick and o.events is None     # no filter: ``events_and_keys`` lists them
        key_of, judging, root_bad = self.key_of, o.violations, self.root_bad
        # the options read per state or per transition, as locals
        filtering, can_finish, final, expansion = o.events, o.can_finish, o.final, \
            self.expansion
        deadlocks, goal_of, audit, max_states = o.deadlocks, o.goal, self.audit, \
            self.max_states
        unfinished_at = g.waiting       # per node: who has not finished (``Interned``)
        # The quick path stores each state as its parts (``Transitions.parts_of``); a State is
        # built only for what reads one (the hooks, ``events_at``). ``successor`` stores the
        # State its reduction's hooks read (a slow step's is already built).
        parts_only = listed and not can_finish and final is None
        # whether an option's hook reads the expanded state (through the loaded simulator)
        hooked = filtering is not None or can_finish or final is not None
        cache = self.cache      # (stays empty without a reduction)
        # The frontier keeps its first ``UNPACKED`` fast-path states as they are and packs the
        # rest as bytes (``Transitions.pack``): a narrow search (the two-client ring, Fig. 3)
        # then never packs and unpacks, a wide one still stores its frontier compactly.
        unpacked = UNPACKED
        while queue:
            i = take()
            rep = take_rep()
            if type(rep) is bytes:
                node, nums, cnums = ts.unpack(rep)
                st_key = None
            else:
                node, nums, cnums, st_key = rep
            pres = None
            if fast:
                if type(node) is tuple:     # parts (the quick path's, or unpacked)
                    st = node if parts_only else ts.state_for(node)
                else:                       # a root's State, or a State stored by successor
                    st = node
                    node = ts.parts_for(st)
                unf = unfinished_at.values[unfinished_at.items[i]]     # ``g.waiting[i]``
                if not quick:       # for ``successor`` (the quick path steps inline)
                    self._node = (node, nums, cnums, unf)
                if listed:      # the events and their successor keys in one pass
                    events, pres = ts.events_and_keys_of(node, nums, cnums, keyer)
                else:
                    events = ts.events_at(st, nums, cnums)
                if hooked and (filtering is not None or can_finish or (not events and final)):
                    ts.load_nums(st, nums)
            else:
                st = node
                ts.load(st, nums)
                events = list(ts.enabled())
            if hooked:
                if filtering is not None:
                    view = ts.view
                    events = [e for e in events if filtering(view, e)]
                if can_finish and ts.protocol.served_all(ts.view) and not ts.view.cs:
                    self.done.append(i)
                if not events and final is not None:
                    text = final(ts.view)
                    if text:
                        self.finals += 1
                        if s := self._found("final", text, i, g.path(i)):
                            return s
            if expansion is not None:
                # successors the reduction works out while choosing the events (``trial``)
                self.cache = cache = {}
                if events:
                    events = expansion.expand(self, i, st, st_key, events)
            succ: list[int] = []
            codes: list[int] = []
            # (quick) every event's successor key, where a replayed local step gives it
            if quick:
                if pres is None:
                    pres = ts.successor_keys(st, nums, cnums, events, keyer)
                # the quick path counts its transitions here (a stop below takes back the
                # events not tried); ``successor`` counts its own
                g.transitions += len(events)
            stop = None
            for k_ev, ev in enumerate(events):
                if quick:
                    pre = pres[k_ev]
                    # a replayed local step to a state already stored: its key is all we need
                    known = pre[0]
                    if known is not None:
                        j = seen.get(known)
                        if j is not None and (j or not root_bad):
                            if keep:
                                ident = pre[3][0]       # the memo key's identity
                                code = code_of.get(ident)
                                if code is None:
                                    code = code_of[ident] = self._code(ev)
                                succ.append(j)
                                codes.append(code)
                            continue
                    # ``successor``'s fast path, inline (once per transition not already
                    # recognised from its key): with an exact key, a state already stored
                    # had no violation, so only new ones (and the root, if bad) are judged
                    out = ts.step_parts(node, nums, cnums, unf, ev, pre)
                    k = key_of(out) if known is None else known
                    j = seen.get(k)
                    if judging and out.violations is None and (j is None or (
                            j == 0 and root_bad)):
                        ts.judge(out)
                    new = j is None and not (judging and out.violations)
                    stuck = new and deadlocks and ts.stuck_of(out)
                    goal = goal_of(ts.view_of(out.state, out.nums)) \
                        if new and goal_of is not None else None
                else:
                    # (a reduction may have worked it out already: ``trial``)
                    out, k, j, stuck, goal = (cache.pop(ev.id, None) if cache else None) or \
                        self.successor(st, st_key, ev)
                    if j is None:      # judged before this expansion added states: look again
                        j = self.seen.get(k)
                if judging and out.violations:
                    text = "; ".join(out.violations)
                    if stop := self._found("violation", text, -1, g.path(i) + [ev.id], i):
                        break
                if j is None:
                    if len(g.parent) >= max_states:
                        stop = Stop("limit")
                        break
                    j = self._add(k, i, ev.id, out.unfinished)
                    if stuck and (stop := self._found("deadlock", "", j, g.path(j))):
                        break
                    if goal and (stop := self._found("goal", goal, j, g.path(j))):
                        break
                    # the frontier keeps fast-path states as bytes (``Transitions.pack``)
                    if not fast:
                        reps.append((out.state, out.acts, None, k))
                    elif len(queue) < unpacked:
                        reps.append((out.parts if quick else out.state, out.nums, out.cnums,
                                     None))
                    else:
                        reps.append(ts.pack(out))
                    queue.append(j)
                    if audit is not None:
                        audit(out.state, lambda j=j: g.path(j))
                if keep:
                    ident = out.ident
                    code = code_of.get(ident) if ident is not None else None
                    if code is None:
                        code = self._code(ev)
                        if ident is not None:
                            code_of[ident] = code
                    succ.append(j)
                    codes.append(code + out.entered_cs)
            if stop is not None:
                if quick:
                    g.transitions -= len(events) - k_ev - 1
                return stop
            if keep:
                flat = g_succ.flat
                n = len(flat)
                if g_succ.end is None and i == len(g_succ.start):
                    # ``Adjacency.__setitem__``'s usual case (nodes in order, the values fit),
                    # inline; the codes share the successors' spans. ``fromlist`` converts each
                    # number once (``extend`` twice: it checks, then stores) and adds nothing
                    # when one does not fit.
                    try:
                        flat.fromlist(succ)
                        g_codes.flat.fromlist(codes)
                    except OverflowError:
                        del flat[n:]
                        del g_codes.flat[n:]
                        g_succ[i] = succ
                        g_codes[i] = codes
                    else:
                        g_succ.start.append(n)
                        g_succ.count += 1
                        g_codes.count += 1
                else:
                    g_succ[i] = succ
                    g_codes[i] = codes
            if len(g.parent) >= next_report:
                next_report += self.progress_every
                self._report(len(queue))
                poll = True
            else:   # also poll now and then when few new states appear (a deep, narrow search)
                poll = g.transitions >= next_poll
            if poll:
                next_poll = g.transitions + 4 * self.progress_every
                if o.should_stop is not None and o.should_stop():
                    return Stop("cancelled")
                if o.max_seconds is not None and self.elapsed() > o.max_seconds:
                    return Stop("timeout")
                if o.max_cpu_seconds is not None and \
                        time.process_time() - self.cpu_started > o.max_cpu_seconds:
                    return Stop("cpu_time")
        self.complete = True
        self._report(0)
        return None

    def cannot_finish(self) -> list[str] | None:
        """(can_finish, after a complete search) A schedule to the first state, in search
        order, from which no state where everyone is served can be reached; None if none."""
        i = self.cannot_finish_node()
        return None if i is None else self.graph.path(i)

    def cannot_finish_node(self) -> int | None:
        """The node ``cannot_finish`` leads to (its start: ``start_of``); None if none."""
        g = self.graph
        n = len(g.parent)
        # predecessors, flat: pred[off[v]:off[v + 1]] (two passes over the edges)
        off = array("q", bytes(8 * (n + 1)))
        flat, span = g.succ.flat, g.succ.span
        for u in g.succ:
            for k in range(*span(u)):
                off[flat[k] + 1] += 1
        for v in range(n):
            off[v + 1] += off[v]
        pred = array("i", bytes(4 * off[n]))
        fill = array("q", off)
        for u in g.succ:
            for k in range(*span(u)):
                v = flat[k]
                pred[fill[v]] = u
                fill[v] += 1
        del fill
        good = bytearray(n)
        for v in self.done:
            good[v] = 1
        work = list(self.done)
        while work:
            v = work.pop()
            for k in range(off[v], off[v + 1]):
                u = pred[k]
                if not good[u]:
                    good[u] = 1
                    work.append(u)
        for i in range(n):
            if not good[i]:
                return i
        return None


def search(sim: Simulator | Transitions, options: SearchOptions | None = None,
           key: Callable[..., Key] | None = None) -> SearchResult:
    """Run one search from ``sim``'s current state (a ``Simulator``, or ``Transitions`` on one)
    and say what it found."""
    o = options or SearchOptions()
    ts = sim if isinstance(sim, Transitions) else Transitions(sim)
    s = Search(ts, o, key)
    stop = s.run()
    findings = dict(s.findings)
    starts = dict(s.finding_starts)
    if stop is not None and stop.kind in ("violation", "deadlock", "goal", "final"):
        findings.setdefault(stop.kind, (stop.text, stop.schedule))
        starts.setdefault(stop.kind, stop.start)
    start = 0
    if stop is not None and stop.kind not in findings:
        result = "limit" if stop.kind == "limit" else stop.kind
        schedule, text = None, ""
    elif findings:
        first = stop.kind if stop is not None else next(iter(findings))
        result = first
        text, schedule = findings[first]
        start = starts[first]
    else:
        result, schedule, text = "ok", None, ""
    res = SearchResult(result, len(s.graph.parent), s.graph.transitions, s.max_depth,
                       round(s.elapsed(), 3), s.complete, schedule, text, findings, s.finals,
                       len(s.done), start=start, graph=s.graph)
    if o.can_finish and s.complete:
        node = s.cannot_finish_node()
        if node is not None:
            res.cannot_finish = s.graph.path(node)
            res.cannot_finish_start = s.start_of(node)
    return res
