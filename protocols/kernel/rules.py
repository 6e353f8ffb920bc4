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

Three options serve protocols with many similar actions: ``args`` makes one rule stand for a
family of events ``name:arg`` (one per argument it lists, e.g. a form to each pool), ``eager``
marks a rule the kernel applies at once at the end of the step that enables it
(``Protocol.eager``) instead of offering it as an event, and ``only`` leaves a rule out of the
configurations (variants) that have no such mechanism. Action rules of different roles may
share an event name (kout_tree's ``EnterCS`` is Algorithm 1's at the root, Algorithm 2's
elsewhere); within one role names are unique.

A variant's departure from the base table may also be a rule marked ``feature="F"``: it is in
force only when the variant switches F on (``RuleProtocol.features``), and with ``over="effect"``
it takes the place of that rule (same position, so the order of actions and of receive rules is
kept)::

    @receive("Token", feature="prose", over="enter", title="enter")
    def enter_prose(self, ctx, msg): ...
"""

from __future__ import annotations

import ast
import linecache
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .events import DELIVER, ENV, LOCAL, PREFIX, TIMEOUT, Action, Guard, Message
from .protocol import Ctx, FastPaths, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from .sim import Simulator

RECEIVE = "receive"
KINDS = (LOCAL, ENV, TIMEOUT, RECEIVE)

Text = str | Callable[[Any, str, Any], str]

ONE, LABEL, PLAIN, FAMILY = "one", "label", "plain", "family"   # how a rule's event is made
PER_PID = "per-pid"
PID = "{pid}"         # in a label or waits text: the process's id (the text is otherwise fixed)
_new = tuple.__new__    # a NamedTuple without its Python-level constructor (hot path)


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
    label: Text = ""               # the event's label in the browser (default: "pid name"); a
    #                                text naming "{pid}" is filled in once per process
    progress: bool = True          # False: taking it cannot help a waiting process
    role: str | tuple[str, ...] = ""   # which kind(s) of process have it ("" = every process)
    args: Callable[[Any, str, Any], Sequence[str]] | None = None   # a family: one event per arg
    eager: bool = False            # applied at the end of the step that enables it, not offered
    only: Callable[[Any], bool] | None = None   # the rule exists only where only(cfg) holds
    feature: str = ""              # in force only when the variant has this feature ("": always)
    over: str = ""                 # with a feature: the effect of the rule it replaces

    def holds(self, cfg: Any, pid: str, state: Any, msg: Message | None = None) -> bool:
        if self.when is None:
            return True
        return bool(self.when(cfg, pid, state, msg) if self.kind == RECEIVE
                    else self.when(cfg, pid, state))

    def text(self, what: Text, cfg: Any, pid: str, state: Any) -> str:
        if callable(what):
            return what(cfg, pid, state)
        return what.replace(PID, pid) if PID in what else what

    def events(self, cfg: Any, pid: str, state: Any) -> list[tuple[str, str]]:
        """(name, label) of each event of this action rule, its guard aside: one, or one per
        argument of a family (whose ``label`` is called with the argument too)."""
        if self.args is None:
            return [(self.name, self.text(self.label, cfg, pid, state) or f"{pid} {self.name}")]
        lab = self.label
        return [(f"{self.name}:{a}", (lab(cfg, pid, state, a) if callable(lab)
                                       else lab.replace(PID, pid))
                 or f"{pid} {self.name}:{a}") for a in self.args(cfg, pid, state)]


def rule(kind: str, *, when: Callable[..., bool] | None = None, name: str = "", title: str = "",
         algorithm: str | None = None, lines: Sequence[int] = (), waits: Text = "",
         label: Text | Callable[..., str] = "", progress: bool = True,
         role: str | tuple[str, ...] = "",
         args: Callable[[Any, str, Any], Sequence[str]] | None = None, eager: bool = False,
         only: Callable[[Any], bool] | None = None, feature: str = "",
         over: str = "") -> Callable:
    """Declare the decorated method ``(self, ctx, pid, arg)`` as the effect of an action rule
    (``arg``: the part of the event's name after ``name:``, for a family declared with ``args``)."""
    if kind not in (LOCAL, ENV, TIMEOUT):
        raise ValueError(f"rule kind must be LOCAL, ENV or TIMEOUT, not {kind!r}")
    if over and not feature:
        raise ValueError("over= replaces a rule only in the variants of a feature=")

    def mark(fn: Callable) -> Callable:
        n = name or fn.__name__.replace("_", "-")
        fn.__rule__ = Rule(kind, n, fn.__name__, title or n, when, "", algorithm, tuple(lines),
                           waits, label, progress, role, args, eager, only, feature, over)
        return fn
    return mark


def receive(message: str, *, when: Callable[..., bool] | None = None, title: str = "",
            algorithm: str | None = None, lines: Sequence[int] = (), waits: Text = "",
            role: str | tuple[str, ...] = "",
            only: Callable[[Any], bool] | None = None, feature: str = "",
            over: str = "") -> Callable:
    """Declare the decorated method ``(self, ctx, msg)`` as the effect of receiving ``message``
    when ``when(cfg, pid, state, msg)`` holds (the first such rule of the kind applies)."""
    if over and not feature:
        raise ValueError("over= replaces a rule only in the variants of a feature=")

    def mark(fn: Callable) -> Callable:
        fn.__rule__ = Rule(RECEIVE, fn.__name__, fn.__name__, title or f"receive {message}",
                           when, message, algorithm, tuple(lines), waits, "", True, role,
                           only=only, feature=feature, over=over)
        return fn
    return mark


@dataclass(frozen=True)
class Table:
    """The rules in force for one set of features: what the kernel derives from (before
    ``RuleProtocol._mine`` keeps a process's own)."""

    rules: tuple[Rule, ...]
    actions: tuple[Rule, ...]
    by_name: dict[str, tuple[Rule, ...]]
    by_message: dict[str, tuple[Rule, ...]]
    fixed: bool = True           # no rule depends on the config (``only``): a role's own rules
    own: dict = field(default_factory=dict, compare=False)   # are cached here, role -> Table


def select(rules: Sequence[Rule], features: frozenset[str]) -> Table:
    """The table of ``rules`` in force under ``features``: the base rules, each feature rule
    added in declaration order, an ``over`` rule in the place of the one it replaces (or, when
    that one's feature is off, of the rule that one replaces)."""
    declared = {r.effect: r for r in rules}
    slots: list[Rule] = []
    where: dict[str, int] = {}
    for r in rules:
        if r.feature and r.feature not in features:
            continue
        if r.over:
            target = r.over
            while target not in where and target in declared and declared[target].over:
                target = declared[target].over
            i = where.get(target)
            if i is None:
                raise TypeError(f"rule {r.effect} replaces {r.over}, which is not in force "
                                f"with {', '.join(sorted(features)) or 'no features'}")
            slots[i] = r
            where[r.effect] = i
        else:
            where[r.effect] = len(slots)
            slots.append(r)
    return _index(slots)


def _index(slots: Sequence[Rule]) -> Table:
    actions = tuple(r for r in slots if r.kind != RECEIVE)
    by_name: dict[str, list[Rule]] = {}
    for r in actions:
        by_name.setdefault(r.name, []).append(r)
    for n, rs in by_name.items():     # a shared name: one rule per role
        seen: set[str] = set()
        for r in rs if len(rs) > 1 else ():
            roles = set(r.role) if isinstance(r.role, tuple) else {r.role}
            if "" in roles or roles & seen:
                raise TypeError(f"two action rules named {n!r} share a role")
            seen |= roles
    by_msg: dict[str, list[Rule]] = {}
    for r in slots:
        if r.kind == RECEIVE:
            by_msg.setdefault(r.message, []).append(r)
    return Table(tuple(slots), actions, {k: tuple(v) for k, v in by_name.items()},
                 {k: tuple(v) for k, v in by_msg.items()},
                 all(r.only is None for r in slots))


@dataclass(frozen=True)
class Plan:
    """One role's rules in one config, compiled once for the hot path: what ``actions()``,
    ``deliver()``, ``apply()`` and the eager hook run, with no filtering per call."""

    own: Table                                   # the role's rules (what ``_mine`` keeps)
    acts: tuple[tuple, ...]                      # per offered action rule: (when, rule, fixed)
    eager: tuple[Rule, ...]                      # the role's eager rules, in table order
    receivers: dict[str, tuple[tuple, ...]]      # message kind -> ((when, rule, effect), ...)
    effects: dict[str, Callable]                 # action name -> bound effect
    # ``acts`` as one function: ``_offer_each`` until called ``HOT_OFFER`` times, then
    # compiled (``_warming_offer``)
    offer: Callable[[Any, str, Any], list] = None


_NOT_INLINED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
                ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)


def _inline_guard(fn: Any, names: Sequence[str]) -> str | None:
    """The body of the guard ``fn``, a lambda, as an expression over ``names`` (its parameters
    renamed, in order), so that compiled code evaluates the guard without calling it; None
    unless that is exactly the same: a lambda whose body reads only its parameters (no global
    or free name, so nothing it reads can be rebound later; no nested scope), whose body's
    text in its source file compiles to the very code ``fn`` runs. Answers are kept per
    (code, names): every plan of every config asks again."""
    code = getattr(fn, "__code__", None)
    if (code is None or getattr(fn, "__name__", "") != "<lambda>" or fn.__closure__
            or fn.__defaults__ or fn.__kwdefaults__ or code.co_argcount != len(names)
            or code.co_kwonlyargcount or code.co_flags & 0x0C):     # *args / **kwargs
        return None
    key = (code, tuple(names))
    answer = _INLINED.get(key, _UNASKED)
    if answer is _UNASKED:
        with _AST_LOCK:
            if len(_INLINED) >= 4096:
                _INLINED.clear()
            answer = _INLINED[key] = _inline_lambda(code, names)
    return answer


_UNASKED = object()
_INLINED: dict[tuple, str | None] = {}          # (code, names) -> what _inline_guard said
# CPython 3.11 counts the depth of an AST conversion (``ast.parse``, ``compile`` of a tree) in
# state shared by all threads, so two threads converting at once fail with "AST constructor
# recursion depth mismatch". Scenarios are built in worker threads (app/offload.py; a room's
# students run experiments at the same time), so the parsing here is done one thread at a time.
_AST_LOCK = threading.Lock()


def _body_text(code: Any) -> str | None:
    """The source text of the body of the lambda whose code is ``code``, cut from its file at
    the columns its instructions carry (``co_positions``; UTF-8 byte offsets): the body only,
    without parsing the whole file (that parse was most of a first ``build``'s time)."""
    spans = [p for p in code.co_positions()
             if p[0] is not None and p[1] is not None and p[2] is not None
             and p[3] is not None and (p[2], p[3]) != (0, 0)]   # RESUME / the implicit return
    if not spans:
        return None
    first, col = min((p[0], p[2]) for p in spans)
    last, end = max((p[1], p[3]) for p in spans)
    lines = _source_lines(code.co_filename)
    if not first >= 1 or last > len(lines):
        return None
    text = lines[first - 1:last]
    whole = b"".join(text)
    try:
        return whole[col:sum(map(len, text[:-1])) + end].decode()
    except UnicodeDecodeError:
        return None


_LINES: dict[str, list[bytes]] = {}     # file name -> its lines as bytes (``_source_lines``)


def _source_lines(filename: str) -> list[bytes]:
    """The lines of a guard's source file as bytes (the columns of ``co_positions`` are
    UTF-8 byte offsets), read once per file: the file's bytes split at line ends, which is
    a fraction of ``linecache``'s decoding read (that was a third of a first ``build``);
    ``linecache`` where the file cannot be read (source given to it by other means). A
    stale or odd text only costs the inlining: ``_inline_lambda`` compiles what it cut and
    keeps it only if it is the very code of the guard."""
    lines = _LINES.get(filename)
    if lines is None:
        try:
            with open(filename, "rb") as f:
                lines = f.read().splitlines(keepends=True)
        except (OSError, ValueError):
            lines = [line.encode() for line in linecache.getlines(filename)]
        if len(_LINES) >= 256:
            _LINES.clear()
        _LINES[filename] = lines
    return lines


def _inline_lambda(code: Any, names: Sequence[str]) -> str | None:
    """``_inline_guard``'s answer for the lambda whose code is ``code``: its body's text,
    taken only if a lambda of the same parameters and that body compiles to the very code
    ``code`` is (same instructions, constants, names and variables), then parsed alone."""
    body_text = _body_text(code)
    if body_text is None:
        return None
    params = code.co_varnames[:code.co_argcount]
    try:
        made = compile(f"lambda {', '.join(params)}: (\n{body_text}\n)", code.co_filename,
                       "eval")
        tree = ast.parse(f"(\n{body_text}\n)", code.co_filename, "eval")
    except (SyntaxError, ValueError):
        return None
    inner = [c for c in made.co_consts if hasattr(c, "co_code")]
    if not (len(inner) == 1 and inner[0].co_code == code.co_code
            and inner[0].co_consts == code.co_consts
            and inner[0].co_names == code.co_names
            and inner[0].co_varnames == code.co_varnames):
        return None
    rename = dict(zip(params, names, strict=True))
    body = tree.body
    for node in ast.walk(body):
        if isinstance(node, _NOT_INLINED):
            return None
        if isinstance(node, ast.Name):
            if node.id not in rename or not isinstance(node.ctx, ast.Load):
                return None                  # a global or builtin: keep the call
            node.id = rename[node.id]
    return f"({ast.unparse(body)})"


_CODE: dict[str, Any] = {}      # generated source text -> its code object (``_run``)


def _run(src: str, env: dict[str, Any]) -> None:
    """``exec(src, env)`` with each distinct text compiled once: every config's plans
    generate the same few texts (``check`` builds two configs, its search's and its replay's),
    and compiling was most of building a plan."""
    code = _CODE.get(src)
    if code is None:
        if len(_CODE) >= 1024:
            _CODE.clear()
        code = _CODE[src] = compile(src, "<string>", "exec")
    exec(code, env)


def _compile_offer(acts: tuple[tuple, ...]) -> Callable[[Any, str, Any], list]:
    """``acts`` as one function ``(config, pid, state) -> [Action, ...]``: the guards called
    one after the other, each rule's way of making its Action fixed in the code. It gives what
    ``RuleProtocol._offer_each`` gives, without the loop over ``acts`` and the tests of how each
    rule is offered on every call (about half of ``actions()``'s time on the token ring)."""
    env: dict[str, Any] = {"_each": RuleProtocol._offer_each}
    body = ["def offer(config, pid, state):", "    out = []"]
    for k, (when, how, what, _r) in enumerate(acts):
        env[f"w{k}"], env[f"x{k}"], env[f"a{k}"] = when, what, (acts[k],)
        ind = "    "
        if when is not None:
            test = _inline_guard(when, ("config", "pid", "state")) or f"w{k}(config, pid, state)"
            body.append(f"    if {test}:")
            ind = "        "
        if how is ONE:
            body.append(f"{ind}out.append(x{k})")
        elif how is PER_PID:                # this process's Action, made at its first use
            body += [f"{ind}a = x{k}.get(pid)",
                     f"{ind}out.append(a if a is not None else _each(a{k}, config, pid, "
                     f"state, [], True)[0])"]
        else:                               # a label made per call, or a family: as before
            body.append(f"{ind}_each(a{k}, config, pid, state, out, True)")
    body.append("    return out")
    _run("\n".join(body), env)    # our own code from our own table: nothing read from outside
    return env["offer"]


HOT_OFFER = 256          # calls of a plan's ``offer`` before its guards are compiled in place


def _warming_offer(plan: Plan) -> Callable[[Any, str, Any], list]:
    """``plan.offer`` until it is hot: the rules' guards called one by one by
    ``_offer_each`` (the same answers), and on the ``HOT_OFFER``-th call ``_compile_offer``
    compiles them in place and takes its place in the plan. Compiling (reading and checking
    each guard's source, compiling the function) costs about as much as a few hundred
    calls, so a plan asked only a few times, like the explorer's, which asks once per new
    process state and then replays, never pays it; a simulator stepping on soon does."""
    acts, each = plan.acts, RuleProtocol._offer_each
    left = [HOT_OFFER]

    def offer(config: Any, pid: str, state: Any) -> list:
        left[0] -= 1
        if left[0] <= 0:
            f = plan.offer
            if f is offer:
                f = _hot_offer(plan)
            return f(config, pid, state)
        return each(acts, config, pid, state, [])

    offer.warming = True
    return offer


def _hot_offer(plan: Plan) -> Callable[[Any, str, Any], list]:
    """``plan``'s offer compiled (``_compile_offer``), put in the plan."""
    f = _compile_offer(plan.acts)
    object.__setattr__(plan, "offer", f)     # the plan is frozen; only its offer warms up
    return f


WHICH_RULES = 4          # at most this many offered rules get a compiled ``which``


def _compile_which(acts: tuple[tuple, ...], config: Any) -> Callable[[str, Any], int] | None:
    """``acts`` in ``config`` as one function ``(pid, state) -> bits`` (``FastPaths.which``):
    bit k set when the k-th rule's guard holds, written as nested ifs that return a constant,
    so that each guard is evaluated once and nothing is built. None when some rule's Action is
    made from the state (a label made per call, a family: the bits do not determine the
    Actions) or there are more than ``WHICH_RULES`` rules (2**k leaves)."""
    if len(acts) > WHICH_RULES or any(how not in (ONE, PER_PID, PLAIN)
                                      for _w, how, _x, _r in acts):
        return None
    env: dict[str, Any] = {"config": config}
    body = ["def which(pid, state):"]

    def branch(k: int, bits: int, ind: str) -> None:
        if k == len(acts):
            body.append(f"{ind}return {bits}")
            return
        when = acts[k][0]
        if when is None:                    # always holds
            branch(k + 1, bits | 1 << k, ind)
            return
        env[f"w{k}"] = when
        test = _inline_guard(when, ("config", "pid", "state")) or f"w{k}(config, pid, state)"
        body.append(f"{ind}if {test}:")
        branch(k + 1, bits | 1 << k, ind + "    ")
        branch(k + 1, bits, ind)

    branch(0, 0, "    ")
    _run("\n".join(body), env)    # our own code from our own table: nothing read from outside
    which = env["which"]
    which.rules = len(acts)        # its answers are below 2 ** rules (a core sizes its tables)

    def offered(pid: str, bits: int) -> list:
        """The Actions ``offer`` gives ``pid`` in a state whose bits are ``bits``, without the
        state (each rule's Action depends only on the rule and the process): for a core that
        makes its per-process tables when it is built (``Core._prebuild``)."""
        mine = tuple(a for k, a in enumerate(acts) if bits >> k & 1)
        return RuleProtocol._offer_each(mine, config, pid, None, [], True)

    which.offered = offered
    return which


def _compile_receive(proto_id: str, kind: str, config: Any,
                     receivers: tuple[tuple, ...]) -> Callable[[Ctx, Message], None]:
    """A plan's receive rules for messages of ``kind`` as one function ``(ctx, msg)``: the
    first rule whose guard holds applies, as in ``RuleProtocol.deliver``, with the guards
    called one after the other and no plan to look up per message."""
    env: dict[str, Any] = {"config": config, "_fail": NotImplementedError,
                           "_what": f"{proto_id}: no rule receives {kind} at "}
    body = ["def receive(ctx, msg):", "    dst = msg.dst", "    state = ctx.get(dst)"]
    for k, (when, _r, effect) in enumerate(receivers):
        env[f"w{k}"], env[f"e{k}"] = when, effect
        if when is None:                    # the rules after it are never reached
            body.append(f"    return e{k}(ctx, msg)")
            break
        test = (_inline_guard(when, ("config", "dst", "state", "msg"))
                or f"w{k}(config, dst, state, msg)")
        body += [f"    if {test}:", f"        return e{k}(ctx, msg)"]
    else:
        body.append("    raise _fail(_what + dst + ' in its current state')")
    _run("\n".join(body), env)    # our own code from our own table: nothing read from outside
    return env["receive"]


class RuleProtocol(Protocol):
    """A protocol whose behaviour is its rules table: subclasses declare rules, not
    ``actions`` / ``on_<Kind>`` / ``guards``. ``role(config, pid, state)`` picks which rules
    apply to a process when there are several kinds of process (a rule may name several)."""

    rules: tuple[Rule, ...] = ()   # every rule declared, of every feature and role
    # True when ``role`` reads only the config and the pid, never the state (datta_ring's
    # resource or client): then each process's plan is kept by pid (``_plan``), and a step
    # reads it with one lookup instead of asking ``role`` again.
    roles_by_pid: bool = False
    _by_message: dict[str, tuple[Rule, ...]] = {}
    _tables: dict[frozenset[str], Table] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        found: dict[str, Rule] = {}
        for klass in reversed(cls.__mro__):
            for attr, fn in vars(klass).items():
                r = getattr(fn, "__rule__", None)
                if isinstance(r, Rule):
                    found[attr] = r
        cls.rules = tuple(found.values())
        cls._tables = {}
        variants = cls.variant_table.named.values() if cls.variant_table is not None else ()
        for features in (frozenset(), *variants):     # every named variant's table is sound
            try:
                cls._tables[features] = select(cls.rules, features)
            except TypeError as e:
                raise TypeError(f"{cls.__name__}: {e}") from None
        if any(r.eager for r in cls.rules) and "eager" not in cls.__dict__:
            cls.eager = RuleProtocol._eager_rule    # only then does the kernel ask
        by_msg: dict[str, list[Rule]] = {}
        for r in cls.rules:
            if r.kind == RECEIVE:
                by_msg.setdefault(r.message, []).append(r)
        cls._by_message = {k: tuple(v) for k, v in by_msg.items()}

    def role(self, config: Any, pid: str, state: Any) -> str:
        """Which rules apply to ``pid``: those of this role and those with no role."""
        return ""

    def features(self, config: Any) -> frozenset[str]:
        """The features of the variant ``config`` was built for: which ``feature=`` rules are
        in force (default: none, the base table only)."""
        return frozenset()

    def table(self, config: Any) -> Table:
        """The rules in force in ``config``'s variant (every role)."""
        return self._memo(config)[2]

    def _memo(self, config: Any) -> tuple:
        """(config, ablated, table, any rule has a role, role -> Plan, pid -> Plan) for
        ``config``; the last holds the plans known not to depend on the process's state
        (every process's where no rule has a role or ``roles_by_pid``), filled by ``_plan``.

        The kernel asks about one config again and again (and the web server about a few, one
        per session), so each config's table and plans are kept, by identity: the entry holds
        the config, so no other object can take its place, and configs need not be hashable.
        Only a cache: what a step does never depends on it."""
        last = self._last
        if last[0] is config and last[1] is self.ablated:
            return last
        memo: list[tuple] = self.__dict__.setdefault("_memos", [])
        entry = next((e for e in memo if e[0] is config and e[1] is self.ablated), None)
        if entry is None:      # a short list searched by identity: no id(), no hashing
            f = self.features(config)
            t = self._tables.get(f)
            if t is None:
                t = self._tables[f] = select(self.rules, f)
            if len(memo) >= 64:
                memo.clear()
            entry = (config, self.ablated, t, any(r.role for r in t.rules), {}, {})
            memo.append(entry)
        self._last = entry     # one tuple, replaced whole: readers never see half of it
        return entry

    _last: tuple = (object(), None, None, True, {}, {})

    def __getstate__(self) -> dict:
        """Pickled without the caches (they hold configs and bound methods)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_memos", "_last")}

    def _plan(self, config: Any, pid: str, state: Any) -> Plan:
        """``pid``'s compiled rules in ``config`` (its role's, present in this config): built
        once per (config, role), so a step filters nothing. Kept by pid too where the role
        does not depend on the state, where ``actions()``, ``deliver()`` and ``apply()`` read
        it without a call to ``_plan`` (or ``role``)."""
        last = self._last
        if last[0] is not config or last[1] is not self.ablated:
            last = self._memo(config)
        me = self.role(config, pid, state) if last[3] else ""
        p = last[4].get(me)
        if p is None:
            p = last[4][me] = self._compile(config, pid, state)
        if not last[3] or self.roles_by_pid:
            last[5][pid] = p
        return p

    def _compile(self, config: Any, pid: str, state: Any) -> Plan:
        t = self.table(config)
        own = t.own.get(self.role(config, pid, state)) if t.fixed else None
        if own is None:
            own = _index(self._mine(t.rules, config, pid, state))
            if t.fixed:
                t.own[self.role(config, pid, state)] = own
        acts = tuple(self._offer(r) for r in own.actions if not r.eager)
        receivers = {k: tuple((r.when, r, getattr(self, r.effect)) for r in rs)
                     for k, rs in own.by_message.items()}
        effects = {n: getattr(self, rs[0].effect) for n, rs in own.by_name.items()}
        plan = Plan(own, acts, tuple(r for r in own.actions if r.eager), receivers, effects)
        object.__setattr__(plan, "offer", _warming_offer(plan))     # compiled once hot
        return plan

    @staticmethod
    def _offer(r: Rule) -> tuple:
        """How ``actions()`` offers rule r: (guard, how, what, rule) with how = ONE (``what``
        is the Action itself: a constant label), PER_PID (``what`` keeps each process's
        Action: a label naming only "{pid}"), LABEL (``what`` labels it), PLAIN (the default
        label "pid name") or FAMILY (one event per argument, ``Rule.events``). The same
        Action object each time lets the kernel reuse its Event without comparing them."""
        if r.args is not None:
            return (r.when, FAMILY, None, r)
        if callable(r.label):
            return (r.when, LABEL, r.label, r)
        if PID in r.label:
            return (r.when, PER_PID, {}, r)
        if r.label:
            return (r.when, ONE, Action(r.kind, r.name, r.label, r.progress, r.algorithm,
                                        r.lines), r)
        return (r.when, PLAIN, None, r)

    def _mine(self, rules: Sequence[Rule], config: Any, pid: str, state: Any) -> list[Rule]:
        """The rules of ``rules`` that ``pid`` has: of its role, present in this config."""
        me = None
        out = []
        for r in rules:      # one pass, role first: this runs for every step's actions
            if r.role:
                if me is None:
                    me = self.role(config, pid, state)
                if r.role != me and not (type(r.role) is tuple and me in r.role):
                    continue
            if r.only is None or r.only(config):
                out.append(r)
        return out

    # ---- derived behaviour ----------------------------------------------------------------
    def actions(self, config: Any, pid: str, state: Any) -> list[Action]:
        last = self._last         # the process's plan, if kept by pid, read without a call
        plan = last[5].get(pid) if last[0] is config and last[1] is self.ablated else None
        if plan is None:
            plan = self._plan(config, pid, state)
        return plan.offer(config, pid, state)

    def fast_paths(self, config: Any, pid: str, state: Any) -> FastPaths | None:
        """The one plan of a table without roles, as ``FastPaths`` (None with roles: which
        rules a process has then depends on its state, or if a subclass overrides how
        ``actions``, ``apply`` or ``deliver`` read the table)."""
        cls, mine = type(self), self.__dict__
        if (cls.actions is not RuleProtocol.actions or cls.apply is not RuleProtocol.apply
                or cls.deliver is not RuleProtocol.deliver or "actions" in mine
                or "apply" in mine or "deliver" in mine or self._memo(config)[3]):
            return None
        plan = self._plan(config, pid, state)
        # a core calls its offer on every step: compiled now, not once hot
        offer = plan.offer if not getattr(plan.offer, "warming", False) else _hot_offer(plan)
        return FastPaths(offer, dict(plan.effects),
                         {k: _compile_receive(self.id, k, config, rs)
                          for k, rs in plan.receivers.items()}, _compile_which(plan.acts, config))

    @staticmethod
    def _offer_each(acts: tuple[tuple, ...], config: Any, pid: str, state: Any, out: list,
                    held: bool = False) -> list:
        """The Actions of the rules ``acts`` (``Plan.acts`` entries) whose guards hold, added
        to ``out`` (``held``: the guard is known to hold). What ``Plan.offer`` is compiled
        from, and what it calls for the rules whose label is made per call."""
        for when, how, what, r in acts:
            if held or when is None or when(config, pid, state):
                if how is PER_PID:           # this process's Action, made at its first use
                    a = what.get(pid)
                    if a is None:
                        a = what[pid] = Action(r.kind, r.name, r.label.replace(PID, pid),
                                               r.progress, r.algorithm, r.lines)
                    out.append(a)
                elif how is ONE:
                    out.append(what)
                elif how is LABEL:
                    out.append(_new(Action, (r.kind, r.name, what(config, pid, state)
                                             or f"{pid} {r.name}", r.progress, r.algorithm,
                                             r.lines)))
                elif how is PLAIN:
                    out.append(_new(Action, (r.kind, r.name, f"{pid} {r.name}", r.progress,
                                             r.algorithm, r.lines)))
                else:
                    out.extend(Action(r.kind, name, label, r.progress, r.algorithm, r.lines)
                               for name, label in r.events(config, pid, state))
        return out

    def _eager_rule(self, config: Any, pid: str, state: Any) -> str | None:
        """The first eager rule of ``pid`` that holds (its first event), in table order."""
        for r in self._plan(config, pid, state).eager:
            when = r.when
            if when is None or when(config, pid, state):
                if r.args is None:      # one event, named after the rule: no label to build
                    return r.name
                evs = r.events(config, pid, state)
                if evs:
                    return evs[0][0]
        return None

    def receiver(self, config: Any, state: Any, msg: Message) -> Rule | None:
        """The rule that handles ``msg`` at its destination in ``state`` (None: no rule does)."""
        dst = msg.dst
        for when, r, _ in self._plan(config, dst, state).receivers.get(msg.kind, ()):
            if when is None or when(config, dst, state, msg):
                return r
        return None

    def deliver(self, ctx: Ctx, msg: Message) -> None:
        config, dst = ctx.config, msg.dst
        state = ctx.get(dst)
        last = self._last         # as in ``actions``
        plan = last[5].get(dst) if last[0] is config and last[1] is self.ablated else None
        if plan is None:
            plan = self._plan(config, dst, state)
        for when, _, effect in plan.receivers.get(msg.kind, ()):
            if when is None or when(config, dst, state, msg):
                effect(ctx, msg)
                return
        raise NotImplementedError(f"{self.id}: no rule receives {msg.kind} at {dst} "
                                  "in its current state")

    def apply(self, ctx: Ctx, pid: str, name: str) -> None:
        config = ctx.config
        last = self._last         # as in ``actions``
        plan = last[5].get(pid) if last[0] is config and last[1] is self.ablated else None
        if plan is None:
            plan = self._plan(config, pid, ctx.get(pid))
        effect = plan.effects.get(name)       # a name without an argument: no split
        if effect is not None:
            effect(ctx, pid, "")
            return
        head, _, arg = name.partition(":")
        effect = plan.effects.get(head)
        if effect is None:
            raise NotImplementedError(f"{self.id}: no rule named {head!r}")
        effect(ctx, pid, arg)    # names are unique within a role

    def message_kinds(self) -> tuple[str, ...]:
        return tuple(self._by_message)

    # ---- the inspector, from the same guards ---------------------------------------------
    def guards(self, config: Any, pid: str, state: Any) -> list[Guard]:
        """Every rule of ``pid``; a receive rule's value here is its guard on the state alone
        (``inspect_guards`` adds whether a message it receives is deliverable)."""
        return [self._guard(r, config, pid, state, r.kind != RECEIVE
                            and r.holds(config, pid, state)
                            and (r.args is None or bool(r.args(config, pid, state))), ())
                for r in self._mine(self.table(config).rules, config, pid, state)]

    def inspect_guards(self, sim: "Simulator", pid: str) -> list[Guard]:
        cfg, state = sim.config, sim.proc(pid)
        mine = self._mine(self.table(cfg).rules, cfg, pid, state)
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
                evs = tuple(f"{PREFIX[r.kind]}:{pid}:{n}" for n, _ in r.events(cfg, pid, state))
            else:
                evs = ()
            if r.eager:    # never an event: it holds only inside the step that enables it
                out.append(self._guard(r, cfg, pid, state, bool(evs), ()))
                continue
            out.append(self._guard(r, cfg, pid, state, bool(evs), evs))
        return out

    def _guard(self, r: Rule, cfg: Any, pid: str, state: Any, holds: bool,
               events: tuple[str, ...]) -> Guard:
        waits = r.text(r.waits, cfg, pid, state)
        if r.kind == RECEIVE and not waits:
            # "… message": the inspector then says only that none can be delivered now
            waits = f"a {r.message} message"
        return Guard(r.title, holds, r.algorithm, r.lines, waits, events, r.message)
