"""The contract between the kernel and a protocol module.

A protocol is a class with no mutable state of its own. It builds an immutable ``Setup`` from a
scenario, and then only answers questions about process states (which actions are enabled, what
to do on a message) through a ``Ctx`` that records the step's effects. See
``docs/adding-a-protocol.md`` for a walk through the teaching token ring.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import networkx as nx

from .events import Action, Guard, Message, Narration
from .variants import Variants

if TYPE_CHECKING:  # pragma: no cover
    from .sim import Simulator


@dataclass(frozen=True)
class Setup:
    """What a protocol builds from a scenario: the processes, their initial states, the messages
    already in flight, and an immutable ``config`` (topology, parameters) that is not state."""

    pids: tuple[str, ...]
    states: tuple[Hashable, ...]
    config: Any = None
    messages: tuple[tuple[str, str, str, Hashable], ...] = ()   # (src, dst, kind, body)
    capacity: dict[str, int] = field(default_factory=dict)     # resource -> units (default 1)


class FastPaths(NamedTuple):
    """A protocol's behaviour in one config, as plain callables a headless core calls directly
    (``Protocol.fast_paths``): the same answers as ``actions`` / ``apply`` / ``deliver`` for
    every process, without their dispatch on each call."""

    actions: Callable[[Any, str, Any], Sequence[Action]]   # = actions(config, pid, state)
    effects: dict[str, Callable[..., None]]   # name -> f: f(ctx, pid, "") = apply(ctx, pid, name)
    deliver: dict[str, Callable[..., None]]   # kind -> f: f(ctx, msg) = deliver(ctx, msg)
    # Optional: ``which(pid, state) -> int`` (the config is fixed in it), the bits of the
    # offered rules whose guards hold (bit k: the k-th), where a rule's Action depends only on
    # the rule and the process (so ``actions`` gives the same Actions for the same bits): a
    # core keeps each process's events per bits and asks only this, building no list of
    # Actions per step. Its answers are below 16, or below ``2 ** which.rules`` if it has that
    # attribute (a core keeps a table of that size per process).
    which: Callable[[str, Any], int] | None = None


class Protocol:
    """Base class: subclasses set the class attributes and implement the handlers.

    Message handlers are methods ``on_<Kind>(ctx, msg)``; action handlers are ``do_<head>(ctx,
    pid, arg)`` where an action named ``"head:arg"`` (or just ``"head"``) was reported enabled.
    """

    id: str = ""
    title: str = ""
    version: str = "1"               # bump when a change alters replays (links carry it)
    variants: tuple[str, ...] = ("default",)
    default_variant: str = "default"
    channels: str = "fifo"           # "fifo" or "unordered"; a scenario may override
    view_kind: str = "ring"          # ring | tree | quorum | game
    fault_kinds: tuple[str, ...] = ("drop", "duplicate", "crash")
    paper: str = ""                  # file name in shared/papers
    # How the viewer draws each message type: kind -> (glyph, colour, short label), distinct
    # (glyph, colour) pairs within the protocol; the label is always drawn, so colour never
    # carries the meaning alone. Glyphs: circle, square, diamond, triangle, star, vee, hexagon.
    message_styles: dict[str, tuple[str, str, str]] = {}
    # Livelock monitor: by default a repeated global state counts only if nobody entered a
    # critical section in between; True also counts it when some requester waited through the
    # whole period while others were served (starvation by a cycle, e.g. kout_tree's Fig. 3).
    livelock_bypass: bool = False
    messages: tuple[str, ...] = ()   # the message kinds, where no on_<Kind> handler names them

    # Named variants (kernel.variants): set ``variant_table`` and the class gets ``variants``
    # and ``default_variant`` from it; handlers ask ``ctx.has(feature)``. ``ablated`` switches
    # features off in every variant (benchmarks and tests show each repair is needed).
    variant_table: Variants | None = None
    ablated: frozenset[str] = frozenset()

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        t = cls.__dict__.get("variant_table")
        if t is not None:
            cls.variants = t.names
            cls.default_variant = t.default

    def has(self, variant: str, feature: str) -> bool:
        """Whether ``variant`` switches ``feature`` on (and it is not ablated)."""
        t = self.variant_table
        return t is not None and feature in t.on(variant) and feature not in self.ablated

    # ---- building -------------------------------------------------------------------------
    def setup(self, scenario: Any, variant: str) -> Setup:
        """The processes, initial states and config of ``scenario``; bad params raise
        ``ScenarioError`` naming the field (``scenario_model`` validates them first)."""
        raise NotImplementedError

    #: The pydantic model of this protocol's ``params`` / ``topology`` / ``workload``
    #: (``protocols.scenario`` validates a scenario's three fields with it and serves its JSON
    #: Schema at /api/schema/{protocol}); None: they stay free-form objects.
    scenario_model: Any = None

    # ---- behaviour ------------------------------------------------------------------------
    def actions(self, config: Any, pid: str, state: Any) -> Sequence[Action]:
        """The actions enabled for ``pid`` in ``state``: local, environment and timeouts.

        Must depend only on the process's own state (and config): the kernel recomputes them only
        for processes a step touched.
        """
        return ()

    def fast_paths(self, config: Any, pid: str, state: Any) -> FastPaths | None:
        """``config``'s behaviour as ``FastPaths`` when it is the same for every process and
        state (``pid`` and ``state``: any process's, e.g. to build it), else None (then a core
        calls ``actions`` / ``apply`` / ``deliver``). Default: None. Only a shortcut: a step
        gives the same state either way."""
        return None

    def eager(self, config: Any, pid: str, state: Any) -> str | None:
        """The name of an action of ``pid`` that happens at once, at the end of the step that
        enables it (a status change the paper makes immediate), or None. After each delivery
        or action the kernel applies these to the processes the step touched, round after
        round (in process order), until none is left. Default: none."""
        return None

    def deliver(self, ctx: "Ctx", msg: Message) -> None:
        handler = getattr(self, "on_" + msg.kind, None)
        if handler is None:
            raise NotImplementedError(f"{self.id}: no handler for message {msg.kind}")
        handler(ctx, msg)

    def apply(self, ctx: "Ctx", pid: str, name: str) -> None:
        head, _, arg = name.partition(":")
        handler = getattr(self, "do_" + head.replace("-", "_"), None)
        if handler is None:
            raise NotImplementedError(f"{self.id}: no handler for action {head}")
        handler(ctx, pid, arg)

    # ---- monitors -------------------------------------------------------------------------
    def violations(self, sim: "Simulator") -> list[str]:
        """Protocol-specific safety violations in the current state (beyond the kernel's
        resource-capacity check). Called after every step: keep it cheap."""
        return []

    def transient(self, sim: "Simulator", text: str) -> bool:
        """Whether a violation the kernel itself found in this step (a critical section entered
        twice, a resource beyond its capacity) is transient: a self-stabilising protocol
        promises safety only once its run is legitimate, so before that it records ``text`` in
        its own report and answers True, as it does with its own predicates. Default: False
        (every violation counts)."""
        return False

    def wait_for(self, sim: "Simulator") -> nx.DiGraph:
        """The wait-for (or dependency) graph of the current state; edges u -> v: u waits for v."""
        return nx.DiGraph()

    def unfinished(self, config: Any, pid: str, state: Any) -> bool:
        """Whether ``pid`` has started something it has not finished beyond what the kernel
        already knows (it requested and waits, or is in its critical section): e.g. a client
        that left its critical section and waits for an acknowledgement. Deadlock and livelock
        count every unfinished process, not only waiting ones. Default: nothing beyond the
        kernel's own bookkeeping."""
        return False

    def served_all(self, sim: "Simulator") -> bool:
        """Every request of the workload was made and served."""
        return not sim.waiting

    def report(self, sim: "Simulator") -> dict[str, Any]:
        """Extra top-level keys for ``allocscope run --json`` (e.g. convergence of kout_tree)."""
        return {}

    def quiescent_ok(self, sim: "Simulator") -> bool:
        """Whether a run may stop early once everything is served (protocols whose tokens
        circulate forever say yes, so runs do not burn their whole step budget)."""
        return False

    # ---- inspection -----------------------------------------------------------------------
    def guards(self, config: Any, pid: str, state: Any) -> list[Guard]:
        """Every guarded action of ``pid`` with its guard's truth value (default: the enabled ones)."""
        return [Guard(a.name, True, a.algorithm, a.lines) for a in self.actions(config, pid, state)]

    def describe(self, config: Any, pid: str, state: Any) -> dict[str, Any]:
        """All variables of a process, for the inspector."""
        from .canon import canon
        c = canon(state)
        if isinstance(c, dict):
            c.pop("@", None)
        return c if isinstance(c, dict) else {"state": c}

    def corruptions(self, config: Any, pid: str, state: Any) -> Iterable[tuple[str, Any]]:
        """(variable, value) pairs a 'corrupt' fault may set on ``pid``; empty if not supported."""
        return ()

    def corrupt(self, config: Any, state: Any, var: str, value: Any) -> Any:
        import dataclasses
        return dataclasses.replace(state, **{var: value})

    def inspect_guards(self, sim: "Simulator", pid: str) -> list[Guard]:
        """The inspector's guards of ``pid`` in the simulator's current state, agreeing with
        ``sim.enabled()``: a receive guard holds only while a message of its kind is deliverable
        to ``pid`` (it lists those messages' ids in ``events``).

        A receive guard is one with ``receives`` set (``"*"``: any message) or, for protocols
        not yet declared as a rules table, one whose name mentions a message kind (of
        ``message_kinds()`` or in flight: "receive Token", "take a PrioT"), or says "receive"
        without one ("receive forms"). Rules-table protocols (``kernel.rules``) derive their
        guards exactly instead."""
        kinds = set(self.message_kinds())
        kinds.update(m.kind for m in sim.inflight.values())
        inbox: dict[str, list[str]] = {}
        if pid not in sim.crashed:
            for e in sim.enabled():
                if e.kind == "deliver" and e.pid == pid:
                    inbox.setdefault(e.msg.kind, []).append(e.id)
                    inbox.setdefault("*", []).append(e.id)
        out = []
        ordered = tuple(sorted(kinds))
        for g in self.guards(sim.config, pid, sim.proc(pid)):
            kind = g.receives or receive_kind(g.name, ordered)
            if kind:
                evs = tuple(inbox.get(kind, ()))
                g = dataclasses.replace(g, holds=g.holds and bool(evs),
                                        events=evs if g.holds else (), receives=kind)
            out.append(g)
        return out

    def message_kinds(self) -> tuple[str, ...]:
        """The kinds of message this protocol sends: ``messages`` if set, else one per
        ``on_<Kind>`` handler.
        The inspector uses them to tell receive guards, the viewer's legend to list them."""
        if self.messages:
            return self.messages
        return _handled_kinds(type(self))

    def message_label(self, msg: Message) -> str:
        """The text drawn beside an in-flight message and in its delivery event's label
        (default its kind; e.g. coterie adds a QUERY's stamp). The browser picks each kind's
        glyph (shape and colour) from the kind itself, so a label may carry the body freely."""
        return msg.kind

    def is_progress(self, msg: Message) -> bool:
        """Whether delivering ``msg`` can help a waiting process (default yes). A protocol whose
        control messages circulate forever may say no for them, so that a state where only they
        move counts as a deadlock."""
        return True

    def view(self, sim: "Simulator") -> dict[str, Any]:
        """Positions and per-node data for the browser, in the shape of
        ``kernel.viewschema.View`` (docs/adding-a-protocol.md, section 5)."""
        return {"layout": self.view_kind, "nodes": [], "edges": []}

    # ---- explorer reductions (docs/explorer.md "Reductions"), all optional -----------------
    # The explorer looks these up with getattr(protocol, name, None) and uses a reduction only
    # when the protocol sets it; None (the default) means "not supported".
    #: ``permute_state(config, state, mapping) -> state``: rename process ids inside one
    #: process state (symmetry reduction; the scenario's ``symmetry`` lists what may swap).
    permute_state: Callable[..., Any] | None = None
    #: ``permute_message(config, kind, body, mapping) -> body``: the same for a message body.
    permute_message: Callable[..., Any] | None = None
    #: ``forget(config, pids, procs, messages) -> (procs, messages)``: erase values no future
    #: step reads, or shift those only read relative to each other (task_game's clocks), for
    #: the explorer's keys only (audited during searches).
    forget: Callable[..., Any] | None = None
    #: ``forget_parts = (context, proc, content)``, optional with ``forget``: the same erasure
    #: as ``context(config, pids, procs, messages) -> hashable ctx``, ``proc(config, pid,
    #: state, ctx) -> state`` and ``content(config, (src, dst, kind, body), ctx) -> content``,
    #: so the explorer erases each process state and message content once per context.
    forget_parts: tuple | None = None
    #: ``forget_context_parts = (proc, content, combine)``, optional with ``forget_parts``: its
    #: ``context`` from parts, ``proc(config, pid, state) -> hashable``, ``content(config,
    #: (src, dst, kind, body)) -> hashable or None`` and ``combine(config, pids, proc_parts,
    #: content_parts) -> ctx`` equal to ``context``, where ``content_parts`` is the frozenset of
    #: the messages' parts that are not None (the context reads them as a set), so the
    #: explorer works a context out once per combination of numbered parts. An optional fourth
    #: member ``reads(config, pids, proc_parts) -> bool`` says whether ``combine`` reads the
    #: content parts at all given those process parts; where it does not, the explorer looks
    #: the context up by the process parts alone (coterie: not before every request is made).
    forget_context_parts: tuple | None = None
    #: ``forget_keeps_violations``, optional with ``forget``: True when the erasure leaves all
    #: that ``violations`` reads alone, so a state and its forgotten version are judged alike
    #: and the explorer need not judge a successor whose key it has stored (audited).
    forget_keeps_violations: bool = False
    #: ``por_senders(config) -> {pid: peers}``: who may send to whom (partial-order reduction).
    por_senders: Callable[..., Any] | None = None
    #: ``por_signature(config, pid, state) -> hashable``: what the monitors read of a process.
    por_signature: Callable[..., Any] | None = None
    #: ``monitor_writes(config) -> bool``: the protocol's monitor (``violations``) keeps history
    #: in the state it judges (a ghost field, ``kernel.canon``), so that a search judges each
    #: state by its own history; no step is then local to its process (``Transitions``),
    #: unless the protocol also declares ``monitor_ghost``.
    monitor_writes: Callable[..., Any] | None = None
    #: ``monitor_ghost(view) -> (pid, state) | None``, with ``monitor_writes``: the one write
    #: the monitor makes after a fault-free step, read from the state after it (the same
    #: ``put_ghost`` that ``violations`` makes). With it a step is local again except for its
    #: ghost: ``Transitions`` replays a handler's recorded effect and then applies this write,
    #: so the memoised fast path serves such protocols too (``Transitions.step_fast``).
    monitor_ghost: Callable[..., Any] | None = None
    #: Partial-order reduction on by default in ``allocscope check`` (only where the protocol
    #: argues it cannot livelock, since the reduced search skips livelocks).
    por_default: bool = False
    #: The configuration fields that only describe the start (read to report it, never by a
    #: step or a judgement of the search, e.g. kout_tree's initial root counter ``myc0``, which
    #: only the timeline's history reads): two scenarios whose built configurations differ
    #: only there are one instance up to its start, and ``check(..., also=[...])`` may explore
    #: them in one search from all their starts (``explorer.check.same_instance``).
    start_fields: tuple[str, ...] = ()


@functools.cache
def _handled_kinds(cls: type) -> tuple[str, ...]:
    """The kinds a protocol class has an ``on_<Kind>`` handler for (once per class)."""
    return tuple(sorted(a[3:] for a in dir(cls) if a.startswith("on_") and a != "on_"))


def receive_kind(name: str, kinds: Iterable[str]) -> str:
    """The message kind a guard's name mentions as a whole word ("" when none does)."""
    return _receive_kind(name, tuple(kinds))


@functools.lru_cache(maxsize=8192)
def _receive_kind(name: str, kinds: tuple[str, ...]) -> str:
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", name)
    known = set(kinds)
    for i, w in enumerate(words):
        if w in known and (i == 0 or words[i - 1] not in ("send", "sends")):   # not "send Done"
            return w
    return "*" if "receive" in words else ""    # "receive forms": any message to it


_tuple_new = tuple.__new__


class Ctx:
    """The effects of one step, applied by the simulator as they are recorded.

    ``get(pid)`` / ``put(pid, state)`` read and replace a process state; ``send(src, dst, kind,
    body=None)`` puts a message in flight; ``request(pid)`` (``pid`` starts waiting for its
    critical section), ``enter_cs(pid, resources=())``, ``exit_cs(pid)`` and ``cancel(pid)``
    (it stops waiting unserved: it departed) keep the kernel's books of who waits and who is
    in a critical section; ``violation(text)`` reports a safety violation found while handling
    the step. Those are the simulator's own methods, bound once when its context is made, so
    that an effect costs one call, not two (a step makes several). ``peek(pid, probe)`` reads
    one value of another process's state (an in-step monitor's question).
    """

    __slots__ = ("sim", "narration", "get", "put", "send", "request", "enter_cs", "exit_cs",
                 "cancel", "violation")

    #: Whether ``say`` keeps what it is told: a handler may build its narration only then
    #: (``if ctx.narrates: ctx.say(f"...")``), since a headless step or a search drops it.
    narrates = True

    def __init__(self, sim: "Simulator") -> None:
        self.sim = sim
        self.narration: list = []
        self.get: Callable[[str], Any] = sim.proc
        self.put: Callable[[str, Any], None] = sim._put
        self.send: Callable[..., Message] = sim._send
        self.request: Callable[[str], None] = sim._request
        self.enter_cs: Callable[..., None] = sim._enter_cs
        self.exit_cs: Callable[[str], None] = sim._exit_cs
        self.cancel: Callable[[str], None] = sim._cancel
        self.violation: Callable[[str], None] = sim._violation

    @property
    def config(self) -> Any:
        return self.sim.config

    @property
    def variant(self) -> str:
        return self.sim.variant

    @property
    def step(self) -> int:
        return self.sim.step_no

    def has(self, feature: str) -> bool:
        """Whether the running variant switches ``feature`` on (kernel.variants)."""
        sim = self.sim
        return sim.protocol.has(sim.variant, feature)

    def peek(self, pid: str, probe: Callable[[Any], Any]) -> Any:
        """``probe(state of pid)``, for a probe that is a pure function of one process state:
        how a handler reads *another* process (an in-step monitor, say) without its step
        depending on that process's whole state. The explorer replays such a step wherever
        the probes answer as they did when it was recorded (``Transitions``)."""
        return probe(self.get(pid))

    def say(self, text: str, pid: str = "", algorithm: str | None = None,
            lines: Sequence[int] = ()) -> None:
        # tuple.__new__ skips NamedTuple's Python-level constructor: one per narrated effect.
        self.narration.append(_tuple_new(Narration, (text, pid, algorithm, tuple(lines))))


class QuietCtx(Ctx):
    """A ``Ctx`` that drops narration: a headless core and a search have no one to read it.
    ``config`` is a plain slot, read without a property call (a simulator's config never
    changes; handlers read it on most steps)."""

    __slots__ = ("config",)
    narrates = False

    def __init__(self, sim: "Simulator") -> None:
        super().__init__(sim)
        _CONFIG.__set__(self, sim.config)   # the slot, also under a subclass's property

    def say(self, text: str, pid: str = "", algorithm: str | None = None,
            lines: Sequence[int] = ()) -> None:
        return None


_CONFIG = QuietCtx.config
