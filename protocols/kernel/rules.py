"""Rules tables: a protocol declares each rule once, and the kernel derives the rest from it.

A rule is one guarded block of the paper's pseudocode: a name, a guard, an effect, the paper's
reference and what the process waits for while the guard is false. ``RuleProtocol`` turns the
table into ``actions()`` (the enabled local, environment and timeout rules), ``deliver()`` (the
first receive rule for the message's kind whose guard holds), ``apply()`` and the inspector's
guards, so "why can't it move?" is computed from the same guards as what can happen.

Declare rules by decorating the effect methods, in the order the paper lists them::

    @rule(ENV, when=lambda cfg, pid, s: s.phase == "idle", title="request",
          waits="being idle", progress=False)
    def request(self, ctx, pid, arg): ...

    @receive("Token", when=lambda cfg, pid, s, msg: s.phase == "wanting", title="enter")
    def enter(self, ctx, msg): ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .events import DELIVER, ENV, LOCAL, PREFIX, TIMEOUT, Action, Guard, Message
from .protocol import Ctx, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from .sim import Simulator

RECEIVE = "receive"
_tuple_new = tuple.__new__
KINDS = (LOCAL, ENV, TIMEOUT, RECEIVE)

Text = str | Callable[[Any, str, Any], str]


@dataclass(frozen=True)
class Rule:
    """One row of a process's rules table (see the module docstring)."""

    kind: str                      # LOCAL | ENV | TIMEOUT | RECEIVE
    name: str                      # the event name of an action; the rule's key otherwise
    effect: str                    # the method that applies it
    title: str                     # what the inspector shows
    when: Callable[..., bool] | None = None   # (cfg, pid, s) or, to receive, (cfg, pid, s, msg)
    message: str = ""              # RECEIVE: the message kind it handles
    algorithm: str | None = None   # the paper's algorithm, Case or section
    lines: tuple[int, ...] = ()    # its lines (or Case / page numbers where it has no lines)
    waits: Text = ""               # what a false guard waits for
    label: Text = ""               # the event's label in the browser (default: "pid name")
    progress: bool = True          # False: taking it cannot help a waiting process
    role: str = ""                 # which kind of process has it ("" = every process)

    def holds(self, cfg: Any, pid: str, state: Any, msg: Message | None = None) -> bool:
        if self.when is None:
            return True
        return bool(self.when(cfg, pid, state, msg) if self.kind == RECEIVE
                    else self.when(cfg, pid, state))

    def text(self, what: Text, cfg: Any, pid: str, state: Any) -> str:
        return what(cfg, pid, state) if callable(what) else what


def rule(kind: str, *, when: Callable[..., bool] | None = None, name: str = "", title: str = "",
         algorithm: str | None = None, lines: Sequence[int] = (), waits: Text = "",
         label: Text = "", progress: bool = True, role: str = "") -> Callable:
    """Declare the decorated method ``(self, ctx, pid, arg)`` as the effect of an action rule."""
    if kind not in (LOCAL, ENV, TIMEOUT):
        raise ValueError(f"rule kind must be LOCAL, ENV or TIMEOUT, not {kind!r}")

    def mark(fn: Callable) -> Callable:
        n = name or fn.__name__.replace("_", "-")
        fn.__rule__ = Rule(kind, n, fn.__name__, title or n, when, "", algorithm, tuple(lines),
                           waits, label, progress, role)
        return fn
    return mark


def receive(message: str, *, when: Callable[..., bool] | None = None, title: str = "",
            algorithm: str | None = None, lines: Sequence[int] = (), waits: Text = "",
            role: str = "") -> Callable:
    """Declare the decorated method ``(self, ctx, msg)`` as the effect of receiving ``message``
    when ``when(cfg, pid, state, msg)`` holds (the first such rule of the kind applies)."""

    def mark(fn: Callable) -> Callable:
        fn.__rule__ = Rule(RECEIVE, fn.__name__, fn.__name__, title or f"receive {message}",
                           when, message, algorithm, tuple(lines), waits, "", True, role)
        return fn
    return mark


class RuleProtocol(Protocol):
    """A protocol whose behaviour is its rules table: subclasses declare rules, not
    ``actions`` / ``on_<Kind>`` / ``guards``. ``role(config, pid, state)`` picks which rules
    apply to a process when there are several kinds of process."""

    rules: tuple[Rule, ...] = ()
    _actions: tuple[Rule, ...] = ()
    _roles: bool = False
    _by_name: dict[str, Rule] = {}
    _by_message: dict[str, tuple[Rule, ...]] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        found: dict[str, Rule] = {}
        for klass in reversed(cls.__mro__):
            for attr, fn in vars(klass).items():
                r = getattr(fn, "__rule__", None)
                if isinstance(r, Rule):
                    found[attr] = r
        cls.rules = tuple(found.values())
        cls._actions = tuple(r for r in cls.rules if r.kind != RECEIVE)
        cls._roles = any(r.role for r in cls.rules)
        cls._by_name = {r.name: r for r in cls._actions}
        if len(cls._by_name) != len(cls._actions):
            raise TypeError(f"{cls.__name__}: two action rules share a name")
        by_msg: dict[str, list[Rule]] = {}
        for r in cls.rules:
            if r.kind == RECEIVE:
                by_msg.setdefault(r.message, []).append(r)
        cls._by_message = {k: tuple(v) for k, v in by_msg.items()}

    def role(self, config: Any, pid: str, state: Any) -> str:
        """Which rules apply to ``pid``: those of this role and those with no role."""
        return ""

    def _mine(self, rules: Sequence[Rule], config: Any, pid: str, state: Any) -> list[Rule]:
        if not any(r.role for r in rules):
            return list(rules)
        me = self.role(config, pid, state)
        return [r for r in rules if not r.role or r.role == me]

    # ---- derived behaviour ----------------------------------------------------------------
    def actions(self, config: Any, pid: str, state: Any) -> list[Action]:
        # Runs for every process a step touched: guards and labels inlined (no _mine / holds /
        # text calls when the table has no roles), Actions built without NamedTuple's __new__.
        rules = self._actions if not self._roles else self._mine(self._actions, config, pid,
                                                                  state)
        out = []
        for r in rules:
            when = r.when
            if when is None or when(config, pid, state):
                label = r.label
                if callable(label):
                    label = label(config, pid, state)
                out.append(_tuple_new(Action, (r.kind, r.name, label or f"{pid} {r.name}",
                                               r.progress, r.algorithm, r.lines)))
        return out

    def receiver(self, config: Any, state: Any, msg: Message) -> Rule | None:
        """The rule that handles ``msg`` at its destination in ``state`` (None: no rule does)."""
        rules = self._by_message.get(msg.kind, ())
        if self._roles:
            rules = self._mine(rules, config, msg.dst, state)
        for r in rules:
            when = r.when
            if when is None or when(config, msg.dst, state, msg):
                return r
        return None

    def deliver(self, ctx: Ctx, msg: Message) -> None:
        r = self.receiver(ctx.config, ctx.get(msg.dst), msg)
        if r is None:
            raise NotImplementedError(f"{self.id}: no rule receives {msg.kind} at {msg.dst} "
                                      "in its current state")
        getattr(self, r.effect)(ctx, msg)

    def apply(self, ctx: Ctx, pid: str, name: str) -> None:
        head, _, arg = name.partition(":")
        r = self._by_name.get(head)
        if r is None:
            raise NotImplementedError(f"{self.id}: no rule named {head!r}")
        getattr(self, r.effect)(ctx, pid, arg)

    def message_kinds(self) -> tuple[str, ...]:
        return tuple(self._by_message)

    # ---- the inspector, from the same guards ---------------------------------------------
    def guards(self, config: Any, pid: str, state: Any) -> list[Guard]:
        """Every rule of ``pid``; a receive rule's value here is its guard on the state alone
        (``inspect_guards`` adds whether a message it receives is deliverable)."""
        return [self._guard(r, config, pid, state, r.kind != RECEIVE
                            and r.holds(config, pid, state), ())
                for r in self._mine(self.rules, config, pid, state)]

    def inspect_guards(self, sim: "Simulator", pid: str) -> list[Guard]:
        cfg, state = sim.config, sim.proc(pid)
        mine = self._mine(self.rules, cfg, pid, state)
        handled: dict[str, list[str]] = {}
        if pid not in sim.crashed:
            for e in sim.enabled():
                if e.kind == DELIVER and e.pid == pid:
                    r = self.receiver(cfg, state, e.msg)
                    if r is not None:
                        handled.setdefault(r.effect, []).append(e.id)
        out = []
        for r in mine:
            if r.kind == RECEIVE:
                evs = tuple(handled.get(r.effect, ()))
            elif pid not in sim.crashed and r.holds(cfg, pid, state):
                evs = (f"{PREFIX[r.kind]}:{pid}:{r.name}",)
            else:
                evs = ()
            out.append(self._guard(r, cfg, pid, state, bool(evs), evs))
        return out

    def _guard(self, r: Rule, cfg: Any, pid: str, state: Any, holds: bool,
               events: tuple[str, ...]) -> Guard:
        waits = r.text(r.waits, cfg, pid, state)
        if r.kind == RECEIVE and not waits:
            waits = f"a {r.message} to deliver"
        return Guard(r.title, holds, r.algorithm, r.lines, waits, events, r.message)
