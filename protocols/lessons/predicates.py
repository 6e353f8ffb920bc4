"""A small, safe predicate language for lesson claims, evaluated against a live simulator.

A lesson says what is true at a step as text such as ``cycle == [R1, R2]``, ``in_cs(C1)``,
``tokens(ResT) == 3``, ``monitor == livelock`` or ``sent(type=seekLoop) >= 1 and not
waiting(C2)``. The text is tokenised and parsed by hand into a tiny tree; nothing is ever passed
to ``eval``. Bare words are symbols (process ids, message types, phases), numbers are integers,
``$answer`` stands for a student's answer in a prediction. Every function is listed in
``FUNCTIONS`` with the positions of its arguments that must name a process, so a file can be
checked against a scenario's processes before anything runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_TEXT = 400
_TOKEN = re.compile(r"\s*(?:(?P<num>-?\d+)|(?P<op>==|!=|>=|<=|>|<|\(|\)|\[|\]|,|=)"
                    r"|(?P<name>\$?[A-Za-z_][A-Za-z0-9_:.\-']*))")
COMPARE = ("==", "!=", ">=", "<=", ">", "<")
KEYWORDS = ("and", "or", "not", "true", "false", "none")


class PredicateError(ValueError):
    """A predicate that cannot be read or evaluated; the message says where and why."""


# name -> (argument positions naming a process, min args, max args, meaning for the docs)
FUNCTIONS: dict[str, tuple[tuple[int, ...], int, int, str]] = {
    "in_cs": ((0,), 1, 1, "the process is in its critical section"),
    "waiting": ((0,), 1, 1, "the process has a request that is not served"),
    "crashed": ((0,), 1, 1, "the process has crashed"),
    "field": ((0,), 2, 2, "a field of the process's node in the view (e.g. field(T1, phase))"),
    "var": ((0,), 2, 2, "a variable of the process as the inspector shows it"),
    "queue": ((0,), 2, 2, "the items of a queue of the view (e.g. queue(R2, Q_strong))"),
    "head": ((0,), 2, 2, "the first item of a queue, or none"),
    "messages": ((), 0, 0, "messages in flight (type=, src=, dst= filter them)"),
    "sent": ((), 0, 0, "messages sent since step 0 (type= filters them)"),
    "said": ((), 1, 1, "narration lines since step 0 that contain a word (what the log told)"),
    "tokens": ((), 1, 1, "kout_tree: tokens of a type (ResT, PushT, PrioT) in the system"),
    "enabled": ((), 1, 1, "an event id that may happen now"),
    "len": ((), 1, 1, "the length of a list"),
    "meets": ((), 2, 2, "two lists (or lists of lists) share an element"),
}
VALUES = {
    "step": "the current step",
    "cycle": "the first dependency / wait-for cycle drawn (compared up to rotation), [] if none",
    "monitor": "the first finding so far: ok, deadlock, livelock or violation",
    "cs_entries": "critical-section entries so far",
    "served_all": "every request of the workload has been served",
    "in_cs_count": "processes in their critical section now",
}
FILTERS = ("type", "src", "dst")


@dataclass(frozen=True)
class Node:
    kind: str                 # num, sym, list, call, cmp, and, or, not, bool, none, value
    value: Any = None
    args: tuple = ()
    kwargs: tuple = ()        # ((name, Node), ...)


class _Parser:
    def __init__(self, text: str) -> None:
        if not isinstance(text, str) or not text.strip():
            raise PredicateError("empty predicate")
        if len(text) > MAX_TEXT:
            raise PredicateError(f"predicate longer than {MAX_TEXT} characters")
        self.text = text
        self.toks: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if not m:
                raise PredicateError(f"cannot read {text[pos:].strip()[:20]!r} in {text!r}")
            kind = m.lastgroup or ""
            self.toks.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> tuple[str, str]:
        t = self.peek()
        if t is None:
            raise PredicateError(f"{self.text!r} ends too early" + (f": expected {want!r}" if want else ""))
        if want is not None and t[1] != want:
            raise PredicateError(f"expected {want!r} but found {t[1]!r} in {self.text!r}")
        self.i += 1
        return t

    def parse(self) -> Node:
        node = self.or_()
        if self.peek() is not None:
            raise PredicateError(f"unexpected {self.peek()[1]!r} in {self.text!r}")  # type: ignore[index]
        return node

    def or_(self) -> Node:
        node = self.and_()
        while self.peek() == ("name", "or"):
            self.take()
            node = Node("or", args=(node, self.and_()))
        return node

    def and_(self) -> Node:
        node = self.not_()
        while self.peek() == ("name", "and"):
            self.take()
            node = Node("and", args=(node, self.not_()))
        return node

    def not_(self) -> Node:
        if self.peek() == ("name", "not"):
            self.take()
            return Node("not", args=(self.not_(),))
        return self.cmp()

    def cmp(self) -> Node:
        left = self.term()
        t = self.peek()
        if t and t[0] == "op" and t[1] in COMPARE:
            self.take()
            return Node("cmp", t[1], (left, self.term()))
        return left

    def term(self) -> Node:
        kind, val = self.take()
        if kind == "num":
            return Node("num", int(val))
        if val == "[":
            items: list[Node] = []
            if self.peek() != ("op", "]"):
                items.append(self.term())
                while self.peek() == ("op", ","):
                    self.take()
                    items.append(self.term())
            self.take("]")
            return Node("list", args=tuple(items))
        if val == "(":
            inner = self.or_()
            self.take(")")
            return inner
        if kind != "name":
            raise PredicateError(f"unexpected {val!r} in {self.text!r}")
        if val in ("true", "false"):
            return Node("bool", val == "true")
        if val == "none":
            return Node("none")
        if self.peek() == ("op", "("):
            return self.call(val)
        if val in VALUES:
            return Node("value", val)
        return Node("sym", val)

    def call(self, name: str) -> Node:
        if name not in FUNCTIONS:
            raise PredicateError(f"unknown function {name!r} in {self.text!r}; known: "
                                 f"{', '.join(FUNCTIONS)}")
        self.take("(")
        args: list[Node] = []
        kwargs: list[tuple[str, Node]] = []
        while self.peek() != ("op", ")"):
            if args or kwargs:
                self.take(",")
            t = self.peek()
            if t and t[0] == "name" and self.i + 1 < len(self.toks) and self.toks[self.i + 1] == ("op", "="):
                self.take()
                self.take("=")
                if t[1] not in FILTERS:
                    raise PredicateError(f"{name}(): unknown filter {t[1]!r}; filters: "
                                         f"{', '.join(FILTERS)}")
                kwargs.append((t[1], self.term()))
            else:
                args.append(self.term())
        self.take(")")
        _procs, lo, hi, _doc = FUNCTIONS[name]
        if not lo <= len(args) <= hi:
            raise PredicateError(f"{name}() takes {lo if lo == hi else f'{lo} to {hi}'} "
                                 f"argument(s), not {len(args)}, in {self.text!r}")
        if kwargs and name not in ("messages", "sent"):
            raise PredicateError(f"{name}() takes no filters, in {self.text!r}")
        return Node("call", name, tuple(args), tuple(kwargs))


def parse(text: str) -> Node:
    """The tree of a predicate; PredicateError names what cannot be read."""
    return _Parser(text).parse()


def process_names(node: Node) -> list[str]:
    """The symbols a predicate uses as process ids (to check them against a scenario)."""
    out: list[str] = []
    if node.kind == "call":
        for i in FUNCTIONS[node.value][0]:
            a = node.args[i]
            if a.kind == "sym" and not a.value.startswith("$"):
                out.append(a.value)
    if node.kind == "cmp":
        left, right = node.args
        for side, other in ((left, right), (right, left)):
            if side.kind == "value" and side.value == "cycle" and other.kind == "list":
                out += [a.value for a in other.args if a.kind == "sym"]
    for a in node.args:
        if isinstance(a, Node):
            out += process_names(a)
    return out


def uses_answer(node: Node) -> bool:
    if node.kind == "sym" and node.value == "$answer":
        return True
    return any(isinstance(a, Node) and uses_answer(a) for a in node.args) or any(
        uses_answer(v) for _k, v in node.kwargs)
