"""task_game (Winkowski's game of tasks): gallery outcomes, failure locality, safety and property 2
under random schedules (hypothesis), liveness of ``full`` under the fair random scheduler and
under every schedule of small instances (a small breadth-first search written here)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocols.explorer import SearchOptions, search
from protocols.explorer.keys import Keyer
from protocols.kernel import make_scheduler
from protocols.runner import build, drive, run, scheduler_for
from protocols.scenario import ScenarioError, parse, resolve
from protocols.task_game.data import ACCESSING, AgentState, TaskState

VARIANTS = ("restricted", "complete", "full")


def _run(sid: str, variant: str):
    sc = resolve(sid)
    sim = build(sc, variant)
    drive(sim, scheduler_for(sc, variant), sc.steps)
    return sim


# ---------------------------------------------------------------------------- gallery
@pytest.mark.parametrize("variant", VARIANTS)
def test_fault_chain_disturbed_set(variant):
    """T1 stops with its request first at P1. Restricted: T2 and T3 never execute (T3 is at
    distance 2 in the conflict graph). Complete / full: T2 advances past the dead request and
    nobody is disturbed in this schedule."""
    res = run(resolve("game-fault"), variant)
    d = res["disturbed"]
    assert d["faulty"] == ["T1"]
    assert d["direct_conflicts"] == ["T2"]
    if variant == "restricted":
        assert res["outcome"] == "deadlock"
        assert d["never_executed"] == ["T2", "T3"]
        assert d["distance"] == {"T2": 1, "T3": 2} and d["max_distance"] == 2
    else:
        assert res["outcome"] == "all-served"
        assert d["set"] == [] and d["max_distance"] == 0
        phases = [p for p, _ in res["tasks"]["T2"]["phases"]]
        assert "ADVANCING" in phases     # the alarm-clock rang and T2 jumped the dead request


@pytest.mark.parametrize("variant", VARIANTS)
def test_restricted_locality_three_on_a_chain_of_four(variant):
    """Erratum S4 (found by the conflicts family's crash runs): T4 crashes on entering WINNING.
    Restricted: T3, T2 and T1 wait behind one another for ever, T1 at distance 3 (no
    alarm-clock moves a request past one that never leaves). Complete / full, the same crash
    after the same first 108 events: only T3, the direct conflict, waits; T2 advances."""
    sc = resolve("game-restricted-locality-3")
    res = run(sc, variant)
    d = res["disturbed"]
    assert res["outcome"] == "deadlock"
    assert d["faulty"] == ["T4"] and d["direct_conflicts"] == ["T3"]
    assert res["tasks"]["T4"]["crashed"] and res["tasks"]["T4"]["status"] == "WINNING"
    first = sc.schedule_for("restricted")[:108]
    assert sc.schedule_for(variant)[:108] == first     # one crash, one start, every variant
    waiting = sorted(t for t, x in res["tasks"].items() if not x["crashed"]
                     and x["status"] not in ("ACCESSING", "RELEASING", "LEFT"))
    if variant == "restricted":
        assert d["never_executed"] == ["T1", "T2", "T3"] == waiting
        assert d["distance"] == {"T1": 3, "T2": 2, "T3": 1} and d["max_distance"] == 3
        assert res["deadlock"] and "T1, T2, T3 wait" in res["deadlock"]["text"]
    else:
        assert d["never_executed"] == ["T3"] == waiting and d["max_distance"] == 1
        assert "ADVANCING" in [p for p, _ in res["tasks"]["T2"]["phases"]]


@pytest.mark.parametrize("variant", VARIANTS)
def test_conflict_lower_ticket_withdraws_and_higher_wins_first(variant):
    sim = _run("game-conflict", variant)
    res = run(resolve("game-conflict"), variant)
    assert res["outcome"] == "all-served"
    t1 = dict((p, k) for p, k in res["tasks"]["T1"]["phases"])
    t2 = dict((p, k) for p, k in res["tasks"]["T2"]["phases"])
    assert t1["ACCESSING"] < t2["ACCESSING"]
    # T2 (ticket 2) had its request first at P1 and withdrew it: the regressive behaviour
    t2_withdrawals = [e for e in sim.trace if e.startswith("a:T2:withdraw:")]
    assert t2_withdrawals and sim.trace.index(t2_withdrawals[0]) < t1["ACCESSING"]


def test_lost_winning_form_leaves_complete_stuck_and_full_repairs_it():
    sim = _run("game-lost-winning", "complete")
    assert sim.monitors.first("deadlock") is not None
    assert sim.proc("T1").status == "WINNING"
    texts = [n.text for step in sim.narrations for n in step]
    assert any("T1's winning form is lost" in t for t in texts)
    for v in ("restricted", "full"):
        assert run(resolve("game-lost-winning"), v)["outcome"] == "all-served"


@pytest.mark.parametrize("variant", VARIANTS)
def test_three_nodes_all_served_and_view(variant):
    sim = _run("game-three-nodes", variant)
    assert sim.protocol.served_all(sim)
    v = sim.protocol.view(sim)
    assert v["layout"] == "game"
    assert all(0 <= n["x"] <= 1000 and 0 <= n["y"] <= 700 for n in v["nodes"])
    kinds = {n["kind"] for n in v["nodes"]}
    assert kinds == {"agent", "pool", "task"}
    assert {q["node"] for q in v["queues"]} == {"P1", "P2", "P3", "P4"}
    assert all(n["phase"] == "LEFT" for n in v["nodes"] if n["kind"] == "task")


def test_bad_scenario_names_the_field():
    base = resolve("game-conflict").model_dump()
    bad = dict(base, workload={"tasks": [{"id": "T1", "agent": "A9", "interest": ["P1"]}]})
    with pytest.raises(ScenarioError, match=r"scenario.workload.tasks\[0\].agent"):
        build(parse(bad), "full")
    bad = dict(base, params={"gamma": 0})
    with pytest.raises(ScenarioError, match="scenario.params.gamma"):
        build(parse(bad), "full")


# ---------------------------------------------------------------------------- random instances
@st.composite
def instances(draw):
    na = draw(st.integers(1, 3))
    agents = [f"A{i + 1}" for i in range(na)]
    npools = draw(st.integers(1, 3))
    pools = {f"P{j + 1}": {"agent": draw(st.sampled_from(agents)), "units": draw(st.integers(1, 2))}
             for j in range(npools)}
    tasks = []
    for k in range(draw(st.integers(1, 3))):
        interest = draw(st.lists(st.sampled_from(sorted(pools)), min_size=1, max_size=2,
                                 unique=True))
        tasks.append({"id": f"T{k + 1}", "agent": draw(st.sampled_from(agents)),
                      "interest": interest})
    return {"id": "hyp", "title": "random instance", "protocol": "task_game",
            "topology": {"agents": agents, "pools": pools}, "workload": {"tasks": tasks},
            "params": {"gamma": draw(st.integers(1, 3))}}


def _check_step(sim) -> None:
    cfg = sim.config
    for p in cfg.pools:
        assert len(sim.proc(p).in_use) <= len(cfg.units[p])
    for t in cfg.task_order:
        if sim.proc(t).status == ACCESSING:
            # property 2: a task accessing one pool of its interest accesses all of them
            for p in cfg.tasks[t].interest:
                assert any(u == t for _, u in sim.proc(p).in_use), (t, p)
                assert p in sim.cs[t]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.sampled_from(VARIANTS), st.integers(0, 10_000))
def test_units_never_exceeded_and_property_2(data, variant, seed):
    sim = build(parse(data), variant)
    sched = make_scheduler("random", seed)
    for _ in range(1500):
        eid = sched.choose(sim)
        if eid is None:
            break
        sim.step(eid)
        _check_step(sim)
    assert not sim.monitors.violations()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.integers(0, 10_000))
def test_full_executes_every_task_under_the_random_scheduler(data, seed):
    sim = build(parse(data), "full")
    drive(sim, make_scheduler("random", seed), 5000)
    assert sim.monitors.first("deadlock") is None
    assert sim.protocol.served_all(sim), {t: sim.proc(t).status for t in sim.config.task_order}


# ---------------------------------------------------------------------------- every schedule
def _key(sim):
    """The explorer's key with task_game's ``forget`` hook: clocks made relative (guards only
    compare clock >= alarm-clock and set alarm-clock = clock + Γ; protocols/task_game/forget.py,
    tests/test_task_game_forget.py), which keeps the searched space finite."""
    return Keyer(sim.protocol, sim.config, sim.pids, sim.fifo, None, forget=True).key


def every_schedule(sim, budget_s: float = 20.0) -> tuple[int, list]:
    """Breadth-first search of every schedule from the current state (the explorer's engine,
    with clocks taken relative): returns the number of states and the schedule to the first
    final state in which some created, non-crashed task never executed (or [])."""
    def check(view) -> None:
        _check_step(view)

    def unserved(view) -> str | None:
        return None if view.protocol.served_all(view) else "a task never executed"

    res = search(sim, SearchOptions(max_states=10**7, key=_key(sim), violations=False,
                                    deadlocks=False, goal=check, final=unserved,
                                    stop_at_first=False, max_seconds=budget_s))
    assert res.complete, f"search unfinished after {res.states} states"
    return res.states, [res.findings["final"][1]] if res.finals else []


SMALL = {"id": "small", "title": "small", "protocol": "task_game",
         "topology": {"agents": ["A1", "A2"],
                      "pools": {"P1": {"agent": "A1", "units": 1},
                                "P2": {"agent": "A2", "units": 1}}},
         "params": {"gamma": 1}}


def test_full_every_schedule_one_task_two_nodes():
    sc = parse(dict(SMALL, workload={"tasks": [
        {"id": "T1", "agent": "A1", "interest": ["P1", "P2"]}]}))
    n, stuck = every_schedule(build(sc, "full"))
    assert n > 100 and stuck == []


@pytest.mark.parametrize("t1_status", ["ORDERING", "WINNING", "ACCESSING"])
def test_full_every_schedule_two_conflicting_tasks_from_the_competition(t1_status):
    """Two tasks on one single-unit pool: the oldest-first scheduler brings T1 to ``t1_status``
    while T2 is TRYING; from there every schedule must execute both. (Searching from step 0
    takes minutes: benchmarks/task_game.py does it.)"""
    sc = parse(dict(SMALL, workload={"tasks": [
        {"id": "T1", "agent": "A1", "interest": ["P1"]},
        {"id": "T2", "agent": "A2", "interest": ["P1"]}]}))
    sim = build(sc, "full")
    sched = make_scheduler("oldest")
    while not (sim.proc("T1").status == t1_status and sim.proc("T2").status == "TRYING"):
        sim.step(sched.choose(sim))
    n, stuck = every_schedule(sim)
    assert n > 50 and stuck == []


def test_the_inspector_shows_a_tasks_rules_of_its_status_and_a_managers_one_per_form():
    """Rules tables: a task's role is its status; a manager has one receive rule per form."""
    from protocols.scenario import gallery
    sim = build(gallery()["game-conflict"], "full")
    forms = {"Registration", "Admission", "Request", "Order", "Advancing", "Withdrawal",
             "Winning", "Releasing"}
    seen = set()
    for _ in range(60):
        for pid in sim.pids:
            s = sim.proc(pid)
            guards = sim.inspect(pid)["guards"]
            if isinstance(s, TaskState):
                seen.add(s.status)
                names = {g["name"] for g in guards}
                assert ("send a registration form" in names) == (s.status == "REGISTERING")
                assert ("send a request" in names) == (s.status == "TRYING")
                assert "receive the manager's Info" in names
            elif isinstance(s, AgentState):
                assert not any(g["receives"] for g in guards)
            else:
                assert {g["receives"] for g in guards} == forms
        ids = sim.enabled_ids()
        if not ids:
            break
        sim.step(ids[0])
    assert {"REGISTERING", "TRYING"} <= seen


def test_every_rule_and_its_narration_cite_the_same_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each event's reference (its rule's, shown by the inspector) and its narration's agree:
    the same section, and the narration's pages are the rule's or among them (a rule for a
    message whose handling spans pp. 16-17 narrates each part with its own page). Every rule
    runs at least once in the gallery's task_game runs (recorded and random schedules)."""
    import functools

    from protocols.scenario import gallery
    from protocols.task_game.protocol import TaskGame
    said: dict[str, set[tuple[str | None, tuple[int, ...]]]] = {}
    for r in TaskGame.rules:
        def wrap(fn, r=r):  # type: ignore[no-untyped-def]
            @functools.wraps(fn)
            def effect(self, ctx, *a):  # type: ignore[no-untyped-def]
                n = len(ctx.narration)
                fn(self, ctx, *a)
                said.setdefault(r.effect, set()).update((x.algorithm, x.lines) for x in ctx.narration[n:])
            return effect
        monkeypatch.setattr(TaskGame, r.effect, wrap(getattr(TaskGame, r.effect)))
    for sc in (s for s in gallery().values() if s.protocol == "task_game"):
        for v in ("restricted", "complete", "full"):
            for kind in (None, "random"):
                sim = build(sc, v)
                drive(sim, scheduler_for(sc, v, kind, 3 if kind else None), 3000)
    bad = []
    for r in TaskGame.rules:
        assert said.get(r.effect), f"{r.effect} never ran"
        for alg, pages in said[r.effect]:
            if alg != r.algorithm or not set(pages) <= set(r.lines) or not pages:
                bad.append((r.effect, (r.algorithm, r.lines), (alg, pages)))
    assert bad == [], bad
