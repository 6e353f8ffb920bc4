"""The rules-table options kout_tree and task_game need (kernel/rules.py): rules sharing an event
name across roles, families of events (``args``), ``eager`` rules, rules present only in some
configurations (``only``) and rules of several roles, on a tiny two-process protocol."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pytest

from protocols.kernel import ENV, LOCAL, Ctx, Message, Setup, Simulator
from protocols.kernel.rules import RuleProtocol, receive, rule
from protocols.kernel.variants import Feature, table
from tests.kernel_fixtures import scenario


@dataclass(frozen=True, slots=True)
class S:
    phase: str = "idle"          # idle -> sending -> done (the boss); the clerk stays "clerk"
    todo: tuple[str, ...] = ()
    got: tuple[str, ...] = ()
    log: tuple[str, ...] = ()


class Office(RuleProtocol):
    """A boss sends a note to each clerk (a family), and is 'done' at once (eager) when none is
    left; 'go' is an event of both roles with different effects; the 'stamp' rule exists only
    in the variant 'stamped'."""

    id = "test_office"
    variant_table = table(features=(Feature("stamp", "clerks stamp notes", "", "ablation"),),
                          variants={"plain": (), "stamped": ("stamp",)}, default="plain")

    def setup(self, scenario: Any, variant: str) -> Setup:
        return Setup(("boss", "c1", "c2"), (S(), S(phase="clerk"), S(phase="clerk")),
                     config={"stamp": self.has(variant, "stamp")})

    def role(self, config: Any, pid: str, state: S) -> str:
        return "clerk" if state.phase == "clerk" else state.phase

    @rule(ENV, name="go", role="idle", label=lambda cfg, p, s: f"{p} starts")
    def boss_go(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.put(pid, replace(ctx.get(pid), phase="sending", todo=("c1", "c2")))

    @rule(ENV, name="go", role="clerk", when=lambda cfg, p, s: not s.log,
          waits="nothing: it went once")
    def clerk_go(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.put(pid, replace(ctx.get(pid), log=("went",)))

    @rule(LOCAL, name="note", role="sending", args=lambda cfg, p, s: s.todo,
          label=lambda cfg, p, s, c: f"{p} writes to {c}", waits="a clerk to write to")
    def note(self, ctx: Ctx, pid: str, clerk: str) -> None:
        s = ctx.get(pid)
        ctx.send(pid, clerk, "Note", clerk)
        ctx.put(pid, replace(s, todo=tuple(c for c in s.todo if c != clerk)))

    @rule(LOCAL, name="done", role="sending", eager=True, when=lambda cfg, p, s: not s.todo,
          waits="every note written")
    def done(self, ctx: Ctx, pid: str, _arg: str) -> None:
        ctx.put(pid, replace(ctx.get(pid), phase="done"))

    @receive("Note", role="clerk", only=lambda cfg: cfg["stamp"], title="stamp a note")
    def stamp(self, ctx: Ctx, msg: Message) -> None:
        s = ctx.get(msg.dst)
        ctx.put(msg.dst, replace(s, got=s.got + (f"stamped {msg.body}",)))

    @receive("Note", role=("clerk", "done"), title="file a note")
    def file(self, ctx: Ctx, msg: Message) -> None:
        s = ctx.get(msg.dst)
        ctx.put(msg.dst, replace(s, got=s.got + (msg.body,)))


def guards(sim: Simulator, pid: str) -> dict[str, dict]:
    return {g["name"]: g for g in sim.inspect(pid)["guards"]}


@pytest.mark.parametrize("variant", ["plain", "stamped"])
def test_families_eager_rules_shared_names_and_only(variant: str) -> None:
    sim = Simulator(Office(), scenario(), variant)
    assert sim.enabled_ids() == ["e:boss:go", "e:c1:go", "e:c2:go"]
    sim.step("e:c1:go")                                  # the clerk's 'go', not the boss's
    assert sim.proc("c1").log == ("went",) and sim.proc("boss").phase == "idle"
    assert not guards(sim, "c1")["go"]["holds"]
    sim.step("e:boss:go")
    assert [e.id for e in sim.enabled() if e.pid == "boss"] == ["a:boss:note:c1",
                                                                "a:boss:note:c2"]
    assert [e.label for e in sim.enabled() if e.pid == "boss"][0] == "boss writes to c1"
    g = guards(sim, "boss")
    assert g["note"]["events"] == ["a:boss:note:c1", "a:boss:note:c2"]
    assert not g["done"]["holds"] and g["done"]["events"] == []
    sim.step("a:boss:note:c1")
    sim.step("a:boss:note:c2")                           # 'done' applies in the same step
    assert sim.proc("boss").phase == "done"
    assert "note" not in guards(sim, "boss")             # a rule of another role
    msgs = [e.id for e in sim.enabled() if e.kind == "deliver"]
    for m in msgs:
        sim.step(m)
    want = ("stamped c1",) if variant == "stamped" else ("c1",)
    assert sim.proc("c1").got == want
    names = list(guards(sim, "c1"))
    assert ("stamp a note" in names) == (variant == "stamped")
    assert "file a note" in names


def test_a_false_family_waits_and_a_crashed_process_holds_nothing() -> None:
    sim = Simulator(Office(), scenario(), "plain")
    g = guards(sim, "c2")
    assert g["go"]["holds"] and g["go"]["events"] == ["e:c2:go"]
    sim.crashed.add("c2")
    assert not any(x["holds"] for x in guards(sim, "c2").values())


def test_two_rules_of_one_role_cannot_share_an_event_name() -> None:
    with pytest.raises(TypeError, match="share a role"):
        class Clash(RuleProtocol):
            @rule(ENV, name="go", role="clerk")
            def a(self, ctx: Ctx, pid: str, _arg: str) -> None: ...

            @rule(ENV, name="go", role=("boss", "clerk"))
            def b(self, ctx: Ctx, pid: str, _arg: str) -> None: ...


def test_one_protocol_object_serves_configs_of_two_variants_in_turn() -> None:
    """The compiled per-(config, role) rules are a cache: two simulators of different variants
    sharing one protocol object, stepped alternately, each see their own variant's rules (the
    'stamp' rule exists only in 'stamped'), and the object pickles without its caches."""
    import pickle
    office = Office()
    sims = {v: Simulator(office, scenario(), v) for v in ("plain", "stamped")}
    for eid in ("e:boss:go", "a:boss:note:c1", "a:boss:note:c2"):
        for sim in sims.values():
            sim.step(eid)
    while any(e.kind == "deliver" for s in sims.values() for e in s.enabled()):
        for sim in sims.values():
            m = next((e.id for e in sim.enabled() if e.kind == "deliver"), None)
            if m is not None:
                sim.step(m)
    assert sims["plain"].proc("c1").got == ("c1",)
    assert sims["stamped"].proc("c1").got == ("stamped c1",)
    assert "stamp a note" not in guards(sims["plain"], "c1")
    copy = pickle.loads(pickle.dumps(office))
    assert "_memos" not in vars(copy) and "_last" not in vars(copy)
    assert Simulator(copy, scenario(), "plain").enabled_ids() == ["e:boss:go", "e:c1:go",
                                                                  "e:c2:go"]


# ---------------------------------------------------------------- compiled guards (issue 15)
LIMIT = 2          # read by a guard of ``Counter``: a global, so that guard stays a call


@dataclass(frozen=True, slots=True)
class C:
    n: int = 0
    held: bool = False


class Counter(RuleProtocol):
    """Three processes without roles: each counts up while below ``LIMIT`` (a guard reading a
    global) and passes a Baton on when it holds it and has counted (a guard on its parameters
    only); ``wait`` has two lambdas on one line."""

    id = "test_counter"

    def setup(self, scenario: Any, variant: str) -> Setup:
        return Setup(("a", "b", "c"), (C(held=True), C(), C()), config=("a", "b", "c"))

    @rule(ENV, when=lambda cfg, p, s: s.n < LIMIT, progress=False, label="{pid} counts")
    def count(self, ctx: Ctx, pid: str, _arg: str) -> None:
        s = ctx.get(pid)
        ctx.put(pid, C(s.n + 1, s.held))

    @rule(LOCAL, when=lambda cfg, p, s: s.held and s.n > 0, waits=lambda cfg, p, s: "a baton")
    def pass_on(self, ctx: Ctx, pid: str, _arg: str) -> None:
        cfg = ctx.config
        ctx.put(pid, C(0, False))
        ctx.send(pid, cfg[(cfg.index(pid) + 1) % 3], "Baton")

    @receive("Baton", when=lambda cfg, p, s, m: s.n == 0, title="take it and start afresh")
    def take_fresh(self, ctx: Ctx, msg: Message) -> None:
        ctx.put(msg.dst, C(0, True))

    @receive("Baton", title="take it")
    def take(self, ctx: Ctx, msg: Message) -> None:
        ctx.put(msg.dst, C(ctx.get(msg.dst).n, True))


def test_guards_reading_only_their_parameters_are_compiled_in_place() -> None:
    """``_inline_guard`` inlines a lambda whose body reads only its parameters, and keeps the
    call for one that reads a global (``LIMIT``) or is not a lambda."""
    from protocols.kernel.rules import _inline_guard
    by = {r.effect: r for r in Counter.rules}
    assert _inline_guard(by["pass_on"].when, ("config", "pid", "state")) == \
        "(state.held and state.n > 0)"
    assert _inline_guard(by["take_fresh"].when, ("config", "dst", "state", "msg")) == \
        "(state.n == 0)"
    assert _inline_guard(by["count"].when, ("config", "pid", "state")) is None
    assert _inline_guard(len, ("config", "pid", "state")) is None


def test_which_sets_the_bits_of_the_rules_that_hold_only_for_fixed_actions() -> None:
    """``FastPaths.which`` (``rules._compile_which``): bit k is set exactly when the k-th
    offered rule's guard holds (Counter's two rules, both, one or neither, one guard reading a
    global); None where an Action is made from the state (a label made per call, a family),
    since the bits then do not name the Actions, or where there are too many rules."""
    from protocols.kernel.rules import LABEL, ONE, WHICH_RULES, _compile_which
    proto = Counter()
    cfg = proto.setup(None, "default").config
    fast = proto.fast_paths(cfg, "a", C())
    seen = set()
    for n in range(4):
        for held in (False, True):
            s = C(n, held)
            bits = fast.which("b", s)
            offered = [a.name for a in proto.actions(cfg, "b", s)]
            assert [r for k, r in enumerate(("count", "pass-on")) if bits >> k & 1] == offered
            seen.add(bits)
    assert seen == {0, 1, 2, 3}
    r = Counter.rules[0]
    assert _compile_which(((None, LABEL, lambda cfg, p, s: p, r),), cfg) is None
    assert _compile_which(((None, ONE, None, r),) * (WHICH_RULES + 1), cfg) is None
    assert _compile_which(((None, ONE, None, r),) * WHICH_RULES, cfg)("a", C()) == \
        (1 << WHICH_RULES) - 1


def test_guards_are_inlined_safely_from_two_threads_at_once(tmp_path, monkeypatch) -> None:
    """Two threads building plans at once (room experiments run in worker threads) must not
    corrupt CPython's AST conversion ("AST constructor recursion depth mismatch" failed a
    student's run). A garbage-collection callback makes the second thread parse exactly while
    the first is converting its tree; the second must wait for the first."""
    import gc
    import importlib.util
    import sys
    import threading

    from protocols.kernel import rules

    # a long body: only the guard's body is parsed, and a collection must run inside it
    body = " and ".join(["state.phase == 'idle'"] + [f"state.n != {i}" for i in range(300)])

    def module(name: str) -> Any:
        path = tmp_path / f"{name}.py"
        path.write_text(f"guard = lambda state: {body}\n")
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    first, second = module("guards_one").guard, module("guards_two").guard
    monkeypatch.setattr(rules, "_INLINED", {})
    me, others, answers = threading.get_ident(), [], []

    def parsing() -> bool:
        f = sys._getframe(2)
        while f is not None and not (f.f_code.co_name == "parse"
                                     and f.f_code.co_filename.endswith("ast.py")):
            f = f.f_back
        return f is not None

    def meanwhile(phase: str, info: dict) -> None:
        # a collection inside the first thread's ``ast.parse`` (its tree being converted)
        if phase == "start" and threading.get_ident() == me and len(others) < 3 and parsing():
            t = threading.Thread(target=lambda: answers.append(
                rules._inline_guard(second, ("state",))))
            others.append(t)
            t.start()
            t.join(0.5)           # without the lock it parses to its end here

    threshold = gc.get_threshold()
    gc.set_threshold(50)
    gc.callbacks.append(meanwhile)
    try:
        got = rules._inline_guard(first, ("state",))
    finally:
        gc.callbacks.remove(meanwhile)
        gc.set_threshold(*threshold)
        for t in others:
            t.join()
    assert others, "no collection ran during the conversion: the test proves nothing"
    import ast
    assert got == f"({ast.unparse(ast.parse(body, mode='eval').body)})"
    assert answers and set(answers) == {got}


def test_a_core_on_fast_paths_steps_like_the_simulator(monkeypatch) -> None:
    """A headless ``Core`` (compiled actions, effects and receive functions from
    ``fast_paths``, guards inlined) and a ``Simulator`` (``actions`` / ``apply`` / ``deliver``)
    take the same events to the same states, also after the global a guard reads changes (a
    guard that reads it is called, not compiled in place with the value it had)."""
    from protocols.kernel import make_scheduler
    from protocols.kernel.core import Core
    proto = Counter()
    assert proto.fast_paths(proto.setup(None, "default").config, "a", C()) is not None
    sim = Simulator(proto, scenario())
    core = Core.of(sim)
    a, b = make_scheduler("random", 3), make_scheduler("random", 3)
    most = 0
    for step in range(200):
        if step == 100:
            monkeypatch.setattr(f"{__name__}.LIMIT", 4)
        assert core.enabled_ids() == sim.enabled_ids()
        ev, eid = a.choose_event(core), b.choose(sim)
        assert ev.id == eid
        core.take(ev)
        sim.step(eid)
        assert core.state() == sim.state()
        most = max(most, *(s.n for s in core.procs))
    assert most > 2                                 # the new LIMIT was honoured


def test_guard_source_is_read_from_its_file_without_linecache(tmp_path, monkeypatch) -> None:
    """A first ``build`` inlines a few guards, and reading their files through ``linecache``
    (decoding every line) was a third of its time: the guard's file is read as bytes once
    (``rules._source_lines``), and the inlined text is the same."""
    import importlib.util
    import linecache

    from protocols.kernel import rules

    path = tmp_path / "guards_bytes.py"
    path.write_text("# é: a non-ASCII comment before the guard\n"
                    "guard = lambda state: state.phase == 'idle' and state.n != 'ü'\n",
                    encoding="utf-8")
    spec = importlib.util.spec_from_file_location("guards_bytes", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(rules, "_INLINED", {})

    def refused(*_a: Any, **_k: Any) -> list[str]:
        raise AssertionError("read through linecache")

    monkeypatch.setattr(linecache, "getlines", refused)
    assert rules._inline_guard(mod.guard, ("s",)) == "(s.phase == 'idle' and s.n != 'ü')"


def test_a_plan_compiles_its_offer_only_once_hot(monkeypatch) -> None:
    """Compiling a plan's ``offer`` (its guards' sources read, checked and compiled in place)
    cost most of a first ``build`` of the datta ring, whose explorer then asks each plan a few
    dozen times: a plan answers through ``_offer_each`` until ``HOT_OFFER`` calls, then
    compiles, with the same answers before and after."""
    from protocols.kernel import rules
    from protocols.runner import build
    from protocols.scenario import gallery

    compiled = []
    real = rules._compile_offer
    monkeypatch.setattr(rules, "_compile_offer", lambda acts: compiled.append(acts) or real(acts))
    sim = build(gallery()["datta-fig1"], "naive")
    proto, cfg = sim.protocol, sim.config
    pid = sim.pids[0]
    state = sim.proc(pid)
    first = proto.actions(cfg, pid, state)
    assert compiled == []                   # built and asked: not compiled
    for _ in range(rules.HOT_OFFER + 1):
        assert proto.actions(cfg, pid, state) == first
    assert len(compiled) == 1               # hot: compiled once, in place
    for _ in range(3):
        assert proto.actions(cfg, pid, state) == first
    assert len(compiled) == 1


def test_roles_by_pid_ask_each_process_role_once_per_config():
    """A protocol whose ``role`` reads only the config and the pid (``roles_by_pid``, as
    datta_ring's: resource or client) has each process's plan kept by pid, so a step no
    longer asks ``role`` (it was asked about 400 times in a search of the two-client ring,
    once per handler run and per new process state's actions); a state-dependent role
    (``Office``'s) is asked every time, as before. Same answers either way: the explorer's
    result and counterexample are those of the plain protocol."""
    from protocols.datta_ring import DattaRing
    from protocols.explorer import check
    from protocols.explorer.check import explore
    from protocols.scenario import parse

    class Counting(DattaRing):
        asked = 0

        def role(self, config: Any, pid: str, state: Any) -> str:
            Counting.asked += 1
            return super().role(config, pid, state)

    sc = parse({"id": "t", "title": "t", "protocol": "datta_ring",
                "topology": {"ring": ["R1", "R2"]},
                "workload": {"clients": [{"id": "C1", "requests": [["R1", "R2"]]},
                                         {"id": "C2", "requests": [["R2", "R1"]]}]}})
    assert Counting.roles_by_pid and not Office.roles_by_pid
    res = explore(Simulator(Counting(), sc, "naive"), sc)
    want = check(sc, "naive")
    assert (res["result"], res["states"], res["counterexample"]) == \
        (want["result"], want["states"], want["counterexample"])
    # one plan per role and per config (the search's, the replay's), each process's once
    assert Counting.asked <= 2 * (3 * 2 + 4), Counting.asked
