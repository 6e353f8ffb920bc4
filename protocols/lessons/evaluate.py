"""Evaluates parsed predicates (``predicates.py``) against one state of a real simulator.

The facts come from what the student sees: the protocol's own view (nodes, queues, cycles), the
kernel's critical-section and waiting sets, the messages in flight and the monitors' findings.
"""

from __future__ import annotations

from typing import Any

from protocols.kernel import Simulator

from .predicates import Node, PredicateError, parse


class Facts:
    """The readable facts of one simulator state, computed once and read by many predicates."""

    def __init__(self, sim: Simulator, answer: str | None = None) -> None:
        self.sim = sim
        self.answer = answer
        self._view: dict[str, Any] | None = None

    @property
    def view(self) -> dict[str, Any]:
        if self._view is None:
            self._view = self.sim.protocol.view(self.sim)
        return self._view

    def node(self, pid: str) -> dict[str, Any]:
        for n in self.view["nodes"]:
            if str(n["id"]) == pid:
                return n
        raise PredicateError(f"no process {pid!r} in the view; processes: "
                             f"{', '.join(str(n['id']) for n in self.view['nodes'])}")

    def cycle(self) -> list[str]:
        cycles = [list(map(str, c)) for c in self.view.get("cycles") or [] if c]
        if cycles:
            return cycles[0]
        dl = self.sim.monitors.first("deadlock")
        return [str(x) for x in (dl.cycle or [])] if dl else []

    def monitor(self) -> str:
        mon = self.sim.monitors
        found = [f for f in (mon.first("violation"), mon.first("deadlock"), mon.first("livelock"))
                 if f is not None]
        return min(found, key=lambda f: f.step).kind if found else "ok"

    def queue(self, pid: str, name: str) -> list[str]:
        for q in self.view.get("queues") or []:
            if str(q["node"]) == pid and q["name"] == name:
                return [_label(x) for x in q.get("items") or []]
        names = [q["name"] for q in self.view.get("queues") or [] if str(q["node"]) == pid]
        raise PredicateError(f"{pid} has no queue {name!r}; its queues: {', '.join(names) or 'none'}")


def _label(item: Any) -> str:
    if isinstance(item, dict):
        return str(item.get("label") or item.get("id") or item)
    return str(item)


def _sym(node: Node, facts: Facts) -> Any:
    if node.value == "$answer":
        if facts.answer is None:
            raise PredicateError("$answer is used outside a prediction")
        return facts.answer
    return node.value


def value(node: Node, facts: Facts) -> Any:
    """The value of a term (a number, a symbol, a list, or a function's result)."""
    k = node.kind
    if k == "num" or k == "bool":
        return node.value
    if k == "none":
        return None
    if k == "sym":
        return _sym(node, facts)
    if k == "list":
        return [value(a, facts) for a in node.args]
    if k == "value":
        return _named(node.value, facts)
    if k == "call":
        return _call(node, facts)
    return holds(node, facts)


def _named(name: str, facts: Facts) -> Any:
    sim = facts.sim
    if name == "step":
        return sim.step_no
    if name == "cycle":
        return facts.cycle()
    if name == "monitor":
        return facts.monitor()
    if name == "cs_entries":
        return sim.monitors.cs_entries
    if name == "served_all":
        return bool(sim.protocol.served_all(sim))
    if name == "in_cs_count":
        return len(sim.cs)
    raise PredicateError(f"unknown value {name!r}")


def _proc(node: Node, facts: Facts) -> str:
    pid = str(value(node, facts))
    if pid not in facts.sim.index:
        raise PredicateError(f"no process {pid!r}; processes: {', '.join(facts.sim.pids)}")
    return pid


def _call(node: Node, facts: Facts) -> Any:
    name, args, sim = node.value, node.args, facts.sim
    if name == "in_cs":
        return _proc(args[0], facts) in sim.cs
    if name == "waiting":
        return _proc(args[0], facts) in sim.waiting
    if name == "crashed":
        return _proc(args[0], facts) in sim.crashed
    if name == "field":
        n = facts.node(str(value(args[0], facts)))   # any node of the view (also resources)
        key = str(value(args[1], facts))
        if key not in n:
            raise PredicateError(f"{n['id']} has no field {key!r}; fields: {', '.join(n)}")
        return _plain(n[key])
    if name == "var":
        pid = _proc(args[0], facts)
        variables = sim.inspect(pid)["variables"]
        key = str(value(args[1], facts))
        if key not in variables:
            raise PredicateError(f"{pid} has no variable {key!r}; variables: {', '.join(variables)}")
        return _plain(variables[key])
    if name in ("queue", "head"):
        items = facts.queue(_proc(args[0], facts), str(value(args[1], facts)))
        return items if name == "queue" else (items[0] if items else None)
    if name in ("messages", "sent"):
        filt = {k: str(value(v, facts)) for k, v in node.kwargs}
        if name == "sent":
            if set(filt) - {"type"}:
                raise PredicateError("sent() filters by type= only")
            return sum(n for t, n in sim.monitors.sent.items() if filt.get("type", t) == t)
        return sum(1 for m in sim.inflight.values()
                   if filt.get("type", m.kind) == m.kind and filt.get("src", m.src) == m.src
                   and filt.get("dst", m.dst) == m.dst)
    if name == "said":
        word = str(value(args[0], facts))
        return sum(1 for step in sim.narrations for n in step if word in n.text)
    if name == "tokens":
        counts = (facts.view.get("extra") or {}).get("tokens")
        kind = str(value(args[0], facts))
        if not isinstance(counts, dict) or kind not in counts:
            raise PredicateError(f"tokens({kind}): this view counts no such tokens")
        return counts[kind]
    if name == "enabled":
        return str(value(args[0], facts)) in sim.enabled_ids()
    if name == "len":
        v = value(args[0], facts)
        if not isinstance(v, list | tuple | str):
            raise PredicateError("len() of something that is not a list")
        return len(v)
    if name == "meets":
        a, b = (set(_flat(value(x, facts))) for x in args)
        return bool(a & b)
    raise PredicateError(f"unknown function {name!r}")


def _flat(v: Any) -> list[str]:
    if isinstance(v, list | tuple):
        return [y for x in v for y in _flat(x)]
    return [str(v)]


def _plain(v: Any) -> Any:
    """View values compared with the predicate's words: ids and enums as strings."""
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if v is None or isinstance(v, bool | int):
        return v
    return str(v) if not isinstance(v, dict) else v


def _rotations_equal(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    if not a:
        return True
    return any(a[i:] + a[:i] == b for i in range(len(a)))


def _compare(op: str, left: Node, right: Node, facts: Facts) -> bool:
    a, b = _numeric(value(left, facts)), _numeric(value(right, facts))
    if op in ("==", "!="):
        if "cycle" in (left.value, right.value) and isinstance(a, list) and isinstance(b, list):
            eq = _rotations_equal([str(x) for x in a], [str(x) for x in b])
        else:
            eq = _norm(a) == _norm(b)
        return eq if op == "==" else not eq
    if not isinstance(a, int) or not isinstance(b, int):
        raise PredicateError(f"{op} compares numbers, not {a!r} and {b!r}")
    return {">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b}[op]


def _numeric(v: Any) -> Any:
    """A student's answer "3" compared with a count 3: digits read as a number."""
    if isinstance(v, str) and v.lstrip("-").isdigit() and len(v) < 10:
        return int(v)
    return v


def _norm(v: Any) -> Any:
    if isinstance(v, list):
        return [_norm(x) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, int):
        return v
    return str(v)


def holds(node: Node, facts: Facts) -> bool:
    """Whether a parsed predicate is true of the facts."""
    k = node.kind
    if k == "and":
        return holds(node.args[0], facts) and holds(node.args[1], facts)
    if k == "or":
        return holds(node.args[0], facts) or holds(node.args[1], facts)
    if k == "not":
        return not holds(node.args[0], facts)
    if k == "cmp":
        return _compare(node.value, node.args[0], node.args[1], facts)
    v = value(node, facts)
    if not isinstance(v, bool):
        raise PredicateError(f"{v!r} is not true or false; compare it with ==, >= …")
    return v


def check(text: str, sim: Simulator, answer: str | None = None) -> bool:
    """Parse and evaluate one predicate on the simulator's current state."""
    return holds(parse(text), Facts(sim, answer))
