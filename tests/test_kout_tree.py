"""kout_tree: the paper's figures per variant, and hypothesis properties of the full protocol.

Properties (bounded example counts, a few seconds each):
- from a clean start: after every step at most ℓ units in use, at most k per process, exactly
  ℓ ResT / one PushT / one PrioT in the network; every request served under the random scheduler,
  with the longest wait below Theorem 2's ℓ·(2n−3)²;
- from seeded arbitrary configurations: ``full`` becomes legitimate within
  2(n−1)(C_MAX+1) + 4 controller rounds (the counter domain plus count, reset and refill
  rounds), and afterwards never resets and never breaks safety.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocols.kernel import make_scheduler
from protocols.kout_tree.legitimacy import counts, expected, report, safety, track
from protocols.kout_tree.state import IN, REQ
from protocols.runner import build, drive, run
from protocols.scenario import ScenarioError, load_file, parse, resolve

VARIANTS = ("no-pusher", "no-priority", "no-controller", "as-printed", "full")


def scenario(**kw):
    base = {"id": "t", "title": "t", "protocol": "kout_tree", "params": {"ell": 3, "k": 2},
            "topology": {"root": "r", "children": {"r": ["a", "b"], "a": ["c"]}},
            "workload": {}, "scheduler": {"kind": "random", "seed": 1}, "steps": 20000}
    base.update(kw)
    return parse(base)


# ---------------------------------------------------------------- figures
def test_fig1_virtual_ring_is_the_dfs_tour():
    sim = build(resolve("kout-fig1"), "full")
    assert sim.protocol.view(sim)["extra"]["virtual_ring"] == \
        ["r", "a", "c", "a", "d", "a", "r", "b", "e", "b"]


def test_fig1_token_follows_the_ring():
    """With ResT only, the token's hops spell the tour (Fig. 1)."""
    sim = build(resolve("kout-fig1"), "no-pusher")
    hops = []
    for _ in range(10):
        (m,) = sim.inflight.values()
        hops.append(m.src)
        sim.step(m.id)
    assert hops == ["r", "a", "c", "a", "d", "a", "r", "b", "e", "b"]


def test_fig2_no_pusher_deadlock_holds_all_units():
    res = run(resolve("kout-fig2"), "no-pusher")
    assert res["outcome"] == "deadlock" and res["cs_entries"] == 0
    sim = build(resolve("kout-fig2"), "no-pusher")
    drive(sim, make_scheduler("scripted", 1, resolve("kout-fig2").schedule_for("no-pusher"),
                              "oldest"), 100)
    held = {p: len(sim.proc(p).RSet) for p in "abcd"}
    assert held == {"a": 2, "b": 1, "c": 1, "d": 1}
    assert all(sim.proc(p).State == REQ for p in "abcd") and not sim.inflight


@pytest.mark.parametrize("variant", ["no-priority", "no-controller", "as-printed", "full"])
def test_fig2_workload_is_served_once_a_pusher_exists(variant):
    res = run(resolve("kout-fig2"), variant)
    assert res["outcome"] == "all-served" and res["cs_entries"] == 4


def test_fig3_no_priority_livelock_has_the_period_of_i_to_viii():
    res = run(resolve("kout-fig3"), "no-priority")
    assert res["livelock"]["period"] == 14 and res["livelock"]["step"] == 17
    assert "a waits throughout" in res["livelock"]["text"]
    assert res["cs_entries"] == 2          # r and b were served; a never was


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_fig3_full_serves_a_under_any_random_schedule(seed):
    sc = resolve("kout-fig3")
    res = run(sc, "full", scheduler="random", seed=seed, steps=20000)
    assert res["outcome"] == "all-served"
    assert any(r["proc"] == "a" for r in res["metrics"]["per_request"])


def test_priority_token_leaves_in_the_step_that_completes_the_request():
    """Event granularity: the loop's PrioT release (Alg. 2 l. 73–76) is part of the delivery
    that makes |RSet| ≥ Need, so a process cannot cycle Req→In→Out→Req holding it."""
    sc = scenario(params={"ell": 1, "k": 1, "tokens": [["r", "a", "PrioT"], ["r", "a", "ResT"]]},
                  workload={"a": {"needs": [1], "repeat": True}})
    sim = build(sc, "no-controller")
    sim.step("e:a:request")
    sim.step("m0")                       # a takes the PrioT (unsatisfied request)
    assert sim.proc("a").Prio == 0
    sim.step("m1")                       # the ResT completes the request ...
    assert sim.proc("a").Prio is None    # ... and the PrioT is gone in the same step
    assert any(m.kind == "PrioT" and m.src == "a" for m in sim.inflight.values())


def test_as_printed_pusher_guard_keeps_tokens_without_priority():
    """Alg. 2 line 17 as printed releases only when Prio ≠ ⊥; the prose says Prio = ⊥."""
    tokens = [["r", "a", "ResT"], ["r", "a", "PushT"], ["r", "b", "ResT"]]
    sc = scenario(params={"ell": 2, "k": 2, "tokens": tokens}, workload={"a": [2]})
    kept = {}
    for v in ("full", "as-printed"):
        sim = build(sc, v)
        sim.step("e:a:request")
        sim.step("m0")
        sim.step("m1")
        kept[v] = len(sim.proc("a").RSet)
    assert kept == {"full": 0, "as-printed": 1}


def test_bad_params_name_the_field():
    with pytest.raises(ScenarioError, match="scenario.params.k"):
        build(scenario(params={"ell": 2, "k": 3}), "full")
    with pytest.raises(ScenarioError, match=r"scenario.params.tokens\[0\]"):
        build(scenario(params={"ell": 1, "k": 1, "tokens": [["r", "c", "ResT"]]}), "full")
    with pytest.raises(ScenarioError, match="scenario.workload.zz"):
        build(scenario(workload={"zz": [1]}), "full")


def test_replay_is_deterministic_and_time_travel_restores_the_report():
    sc = resolve("kout-chaos")
    a, b = build(sc, "full"), build(sc, "full")
    drive(a, make_scheduler("random", 3), 400)
    b.replay(a.trace)
    assert a.state_hash() == b.state_hash()
    keys = ("converged_at", "legitimate", "controller_rounds", "transient", "tokens")
    before = {k: report(a)[k] for k in keys}
    a.goto(100)
    a.goto(400)
    assert a.state_hash() == b.state_hash()
    assert {k: report(a)[k] for k in keys} == before


# ---------------------------------------------------------------- properties
trees = st.integers(2, 8).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, 10**6)))


@settings(max_examples=20, deadline=None)
@given(tree=trees, ell=st.integers(1, 4), kf=st.floats(0, 1), seed=st.integers(0, 10**6))
def test_clean_start_is_safe_and_serves_everyone(tree, ell, kf, seed):
    n, tseed = tree
    k = 1 + int(kf * (ell - 1))
    sc = scenario(params={"ell": ell, "k": k}, topology={"random": {"n": n, "seed": tseed}},
                  workload={"random": {"requests": 2, "seed": seed}},
                  scheduler={"kind": "random", "seed": seed})
    sim = build(sc, "full")
    sched = make_scheduler("random", seed)
    while sim.step_no < 20000 and not sim.protocol.served_all(sim):
        sim.step(sched.choose(sim))
        cfg = sim.config
        assert sum(len(s.RSet) for s in sim.procs if s.State == IN) <= cfg.ell
        assert all(len(s.RSet) <= cfg.k for s in sim.procs)
        assert counts(sim) == expected(cfg)
    assert sim.protocol.served_all(sim)
    assert sim.monitors.metrics()["waiting_time"]["max"] <= ell * (2 * n - 3) ** 2


@settings(max_examples=12, deadline=None)
@given(n=st.integers(2, 8), seed=st.integers(0, 10**6), c_max=st.integers(0, 2))
def test_full_converges_from_arbitrary_configurations_and_stays(n, seed, c_max):
    sc = scenario(params={"ell": 3, "k": 2, "c_max": c_max, "chaos": {"seed": seed}},
                  topology={"random": {"n": n, "seed": seed}},
                  workload={"random": {"requests": 2, "seed": seed}})
    sim = build(sc, "full")
    sched = make_scheduler("random", seed)
    t = track(sim)
    while sim.step_no < 30000 and not t.legit(sim.step_no):
        sim.step(sched.choose(sim))
    rep = report(sim)
    assert rep["converged_at"] is not None, "no convergence in 30000 steps"
    bound = 2 * (n - 1) * (c_max + 1) + 4
    assert rep["converged_at"]["rounds"] <= bound
    legit_round = rep["controller_rounds"]
    for _ in range(1500):                    # closure: stays legitimate, no reset, safe
        sim.step(sched.choose(sim))
        assert t.legit(sim.step_no)
        assert safety(sim) == []
    assert report(sim)["controller_rounds"] > legit_round   # the controller kept going
    while sim.step_no < 40000 and not sim.protocol.served_all(sim):
        sim.step(sched.choose(sim))
    assert sim.protocol.served_all(sim), "a request was not satisfied after stabilization"
    assert sim.monitors.violations() == []


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_a_dropped_token_is_recreated(seed):
    sc = scenario(params={"ell": 2, "k": 1}, workload={"random": {"requests": 3, "seed": seed}})
    sim = build(sc, "full")
    sched = make_scheduler("random", seed)
    for _ in range(50):
        sim.step(sched.choose(sim))
    res = next(m for m in sim.inflight.values() if m.kind in ("ResT", "PushT", "PrioT"))
    sim.step(f"f:drop:{res.id}")
    assert not track(sim).legit(sim.step_no)
    while sim.step_no < 20000 and not track(sim).legit(sim.step_no):
        sim.step(sched.choose(sim))
    assert track(sim).legit(sim.step_no) and counts(sim) == expected(sim.config)


def _bfs_counterexample(variant, sc, limit):
    """The shortest schedule (timeouts and faults excluded) to a state with wrong token counts."""
    from protocols.explorer import SearchOptions, search
    res = search(build(sc, variant), SearchOptions(
        max_states=limit, violations=False, deadlocks=False,
        events=lambda _sim, e: e.kind not in ("timeout", "fault"),
        goal=lambda sim: "token count" if counts(sim) != expected(sim.config) else None))
    return res.schedule if res.result == "goal" else None


def test_as_printed_root_creates_a_second_priority_token_from_a_clean_start():
    """Exhaustive search on r–a (ℓ = k = 1): judging the traversal before counting the tokens the
    root passes on its last channel (Alg. 1 line 48 before 66) makes it create a PrioT that
    exists; the repaired order keeps exactly one on the same schedule."""
    sc = scenario(params={"ell": 1, "k": 1, "c_max": 0, "timeout": 1},
                  topology={"root": "r", "children": {"r": ["a"]}}, workload={"r": [1], "a": [1]})
    path = _bfs_counterexample("as-printed", sc, 3000)
    assert path is not None
    printed = build(sc, "as-printed")
    printed.replay(path)
    assert counts(printed)[2] == 2
    full = build(sc, "full")
    for eid in path:
        if eid not in full.enabled_ids():
            break
        full.step(eid)
        assert counts(full) == expected(full.config)


def test_a_corrupted_root_recovers_without_later_violations():
    sc = scenario(params={"ell": 2, "k": 2}, workload={"random": {"requests": 4, "seed": 2}})
    sim = build(sc, "full")
    sched = make_scheduler("random", 2)
    for _ in range(40):
        sim.step(sched.choose(sim))
    sim.step("f:corrupt:r:Reset=True")
    assert sim.proc("r").Reset and not track(sim).legit(sim.step_no)
    while sim.step_no < 20000 and not (track(sim).legit(sim.step_no)
                                        and sim.protocol.served_all(sim)):
        sim.step(sched.choose(sim))
    rep = report(sim)
    assert rep["legitimate"] and rep["converged_at"]["step"] > 41
    assert rep["transient"] and sim.monitors.violations() == []


def test_view_data_for_the_tree_view():
    sim = build(resolve("kout-fig3"), "full")
    sim.step("e:a:request")
    v = sim.protocol.view(sim)
    assert v["layout"] == "tree"
    nodes = {n["id"]: n for n in v["nodes"]}
    assert nodes["r"]["y"] < nodes["a"]["y"] and nodes["r"]["kind"] == "root"
    assert all(0 <= n["x"] <= 1000 and 0 <= n["y"] <= 700 for n in v["nodes"])
    for key in ("State", "Need", "RSet", "Prio", "myC", "Succ", "channels"):
        assert key in nodes["a"]
    for key in ("SToken", "SPush", "SPrio", "Reset", "Timer"):
        assert key in nodes["r"]
    assert {(e["src"], e["dst"]) for e in v["edges"]} == {("r", "b"), ("r", "a")}
    assert v["extra"]["virtual_ring"] == ["r", "b", "r", "a"]
    labels = {sim.protocol.message_label(m) for m in sim.inflight.values()}
    assert {"ResT", "PushT", "PrioT", "ctrl(1,F,0,0)"} <= labels


@pytest.mark.parametrize("variant, kinds", [
    ("no-pusher", {"ResT"}), ("no-priority", {"ResT", "PushT"}),
    ("no-controller", {"ResT", "PushT", "PrioT"}), ("full", {"ResT", "PushT", "PrioT", "ctrl"}),
    ("as-printed", {"ResT", "PushT", "PrioT", "ctrl"})])
def test_the_inspector_shows_the_rules_of_the_variants_tokens_and_the_processs_algorithm(
        variant, kinds):
    """Rules tables: a variant without a token type has no rules for it; the root's rules cite
    Algorithm 1, the others' Algorithm 2; printed and prose readings are separate rules."""
    from protocols.scenario import gallery
    sim = build(gallery()["kout-fig3"], variant)
    for pid in sim.pids:
        guards = sim.inspect(pid)["guards"]
        assert {g["receives"] for g in guards if g["receives"]} == kinds, (variant, pid)
        algs = {g["algorithm"] for g in guards if g["algorithm"]}
        assert algs == ({"1"} if pid == sim.config.root else {"2"}), (variant, pid)
        names = [g["name"] for g in guards]
        assert len(names) == len(set(names)), names
    root = [g["name"] for g in sim.inspect(sim.config.root)["guards"]]
    assert ("TimeOut(), or a tick of the root's clock" in root) == ("ctrl" in kinds)
    counted = "accept ctrl from Succ with C = myC (count, then judge)" in root
    assert counted == (variant == "full")


def test_asynchronous_rounds_are_counted_to_legitimacy():
    """converged_at.async_rounds: rounds in which every process enabled at the round's start
    stepped (or was disabled), up to the step legitimacy began; a chaos start needs more of them
    than controller traversals, and a prefix never has more rounds than the whole."""
    from protocols.kout_tree.legitimacy import async_rounds
    sim = build(resolve("kout-chaos"), "full")
    drive(sim, make_scheduler("random", 3), 2000)
    conv = report(sim)["converged_at"]
    assert conv is not None
    assert conv["async_rounds"] == async_rounds(sim, conv["step"]) >= conv["rounds"] >= 1
    assert async_rounds(sim, 0) == 0
    assert async_rounds(sim, conv["step"] // 2) <= conv["async_rounds"]


# ---- issue 14 item 6: the explorer judges legitimacy from the state it explores -------------

def _walk(sc, variant: str, schedule: list[str]) -> list[tuple[str, tuple, bool]]:
    """Each transition of ``schedule`` through the kernel's ``Transitions`` (every one starts
    from "step 0", as in a search): the event, the violations it reports, the root's ghost."""
    from protocols.kernel import Transitions
    sim = build(sc, variant)
    ts = Transitions(sim)
    st, out = ts.initial, []
    for eid in schedule:
        ev = next(e for e in ts.enabled_in(st) if e.id == eid)
        o = ts.step(st, ev)
        st = o.state
        out.append((eid, o.violations, st.procs[sim.index[sim.config.root]].legit))
    return out


def test_a_fault_ends_legitimacy_on_its_branch_only_so_the_explorer_reports_no_transient():
    """kout-fig3 with drop faults, ``full``: losing a ResT (f:drop:m0) leaves 2 of 3 units, a
    transient the controller repairs; the explorer used to read the initial configuration's
    legitimacy at every transition and reported the next step (m1) as a violation."""
    import json
    from pathlib import Path

    from protocols.explorer import check
    data = json.loads((Path(__file__).parents[1] / "protocols" / "scenarios" / "kout-fig3.json")
                      .read_text(encoding="utf-8"))
    sc = parse({**data, "faults": {"drop": True}})
    steps = _walk(sc, "full", ["f:drop:m0", "m1"])
    assert [(v, g) for _e, v, g in steps] == [((), False), ((), False)]
    res = check(sc, "full", max_states=600, livelock_check=False)
    assert res["result"] == "limit", res["finding"]


def test_from_an_arbitrary_start_a_violation_after_legitimacy_is_reported():
    """A corrupted start (chaos seed 0 on two processes) under ``as-printed``: the controller
    makes the state legitimate (the root's ghost turns true at step 12), then the root judges a
    traversal before counting the ResT it holds (K8) and creates a second one, a real violation
    at step 20. Before, the explorer judged every transition by the start's legitimacy (false),
    so from an arbitrary start it could never report one."""
    sc = parse({"id": "t", "title": "t", "protocol": "kout_tree",
                "params": {"ell": 1, "k": 1, "chaos": {"seed": 0}},
                "topology": {"root": "r", "children": {"r": ["p1"]}},
                "workload": {"r": [1], "p1": [1]}, "channels": "fifo"})
    schedule = ["t:r:TimeOut", "t:r:TimeOut", "t:r:TimeOut", "m1", "e:r:ReleaseCS", "m3",
                "e:r:request", "m0", "m2", "m4", "m5", "m6", "m7", "m8", "m9", "m10", "m11",
                "m12", "m13", "m14"]
    steps = _walk(sc, "as-printed", schedule)
    ghost = [g for _e, _v, g in steps]
    assert ghost.index(True) == 11 and all(ghost[11:])
    assert [k for k, (_e, v, _g) in enumerate(steps) if v] == [19]
    assert "2 ResT" in steps[19][1][0]
    sim = build(sc, "as-printed")                  # the kernel's own monitor agrees
    sim.replay(schedule)
    assert [f.step for f in sim.monitors.violations()] == [20]
    assert report(sim)["converged_at"]["step"] == 12


FOUND = Path(__file__).resolve().parent.parent / "benchmarks" / "found"


@pytest.mark.parametrize("n", [41, 78, 89, 104, 109])
def test_entering_twice_after_a_fault_before_legitimacy_is_transient(n):
    """Issue 14, chaos instances found by ``verify`` (branch famrun): from a corrupted start a
    fault sets a process's State back to Req inside its critical section and it enters again.
    The kernel's own re-entry check used to report that as a violation, so it counted as a
    counterexample to ``full``; before legitimacy it is transient, as kout_tree's predicates
    are: listed with them at its step, not a violation."""
    sc = load_file(FOUND / f"verify-kout-tree-chaos-{n}-full-ce.json")
    out = run(sc, "full")
    assert out["violations"] == [] and not out["legitimate"]
    again = [t for t in out["transient"] if "while already in it" in t["text"]]
    assert again and again[-1]["step"] == out["steps"]


def test_entering_twice_counts_once_legitimate_or_without_a_controller():
    """The hook judges only runs that are not yet legitimate: on a clean start (legitimate from
    step 0) and for a variant without a controller a re-entry stays a violation."""
    from protocols.kout_tree.legitimacy import transient

    clean = build(scenario(workload={"a": [1]}), "full")
    assert not transient(clean, "a enters its critical section while already in it")
    assert track(clean).pending == []
    bare = build(scenario(workload={"a": [1]}), "no-controller")
    assert not transient(bare, "a enters its critical section while already in it")
