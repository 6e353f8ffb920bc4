"""coterie: local-coterie constructions and validator, AllocResource's safety and liveness on the
repaired variant, the races of the printed Cases (found by a small exhaustive search), the
gallery and the view contract."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocols.coterie import quorums as qm
from protocols.coterie.structure import SharingStructure, from_topology, random_structure
from protocols.explorer import SearchOptions, search
from protocols.runner import build, mismatches, run
from protocols.scenario import ScenarioError, parse, resolve

GALLERY = ["coterie-fig1", "coterie-example4", "coterie-preempt", "coterie-disjoint",
           "coterie-random", "coterie-race-stale-update", "coterie-race-stale-preempt",
           "coterie-repeated-preemption"]
SINGLE = {"u1": [["u2"]], "u2": [["u2"]], "u3": [["u2"]]}


def scenario(topology: dict, workload: dict, params: dict | None = None, **kw) -> object:
    return parse({"id": "t", "title": "t", "protocol": "coterie", "topology": topology,
                  "workload": workload, "params": params or {}, **kw})


FIG1 = {"processes": ["a", "b", "c"], "resources": ["x", "y"],
        "alpha": {"a": ["x"], "b": ["x", "y"], "c": ["y"]}}


# ---------------------------------------------------------------- local coteries (Section 3)
def test_four_process_local_coterie_is_the_papers():
    S = from_topology({"kind": "chain", "n": 4})
    assert S.alpha["u2"] == ("r2", "r3")
    assert qm.local_coterie(S) == {"u1": (("u1", "u2"),), "u2": (("u1", "u2", "u3"),),
                                   "u3": (("u2", "u3", "u4"),), "u4": (("u3", "u4"),)}
    g = S.graph()
    assert g.number_of_edges() == 8 and set(g.neighbors("r3")) == {"u2", "u3"}


def test_fig1_local_coterie():
    S = from_topology(FIG1)
    assert qm.local_coterie(S) == {"a": (("a", "b"),), "b": (("a", "b", "c"),),
                                   "c": (("b", "c"),)}


def test_validator_names_processes_and_quorums():
    S = from_topology(FIG1)
    bad = {"a": (("a",),), "b": (("b", "c"),), "c": (("c",), ("b", "c"))}
    with pytest.raises(qm.CoterieError) as e:
        qm.validate(S, bad)
    msg = str(e.value)
    assert "intersection: a and b share x but quorum {a} of Q_a and quorum {b, c} of Q_b" in msg
    assert "minimality: in Q_c, quorum {c} is contained in {b, c}" in msg
    assert "non-emptiness: Q_a is empty" in "; ".join(qm.problems(S, {**bad, "a": ()}))
    assert qm.problems(S, qm.local_coterie(S)) == []


def test_user_coterie_accepted_only_when_valid():
    wl = {"rounds": 1}
    ok = {"a": [["b"]], "b": [["b"]], "c": [["b"]]}
    assert build(scenario(FIG1, wl, {"coterie": "custom", "quorums": ok})).config.Q["a"] == \
        (("b",),)
    with pytest.raises(ScenarioError, match=r"scenario.params.quorums: .*a and b share x"):
        build(scenario(FIG1, wl, {"coterie": "custom",
                                  "quorums": {"a": [["a"]], "b": [["b"]], "c": [["c"]]}}))
    with pytest.raises(ScenarioError, match=r"scenario.params.quorums.c: quorum \['z'\]"):
        build(scenario(FIG1, wl, {"coterie": "custom",
                                  "quorums": {"a": [["a"]], "b": [["b"]], "c": [["z"]]}}))


def test_grid_coterie_row_and_column():
    """Row ∪ column meets every other row ∪ column even with a short last row: if (row u,
    column v) is missing, v's row is full, so (row v, column u) exists."""
    four = from_topology({"kind": "shared", "n": 4, "m": 1})
    assert qm.grid_coterie(four)["u1"] == (("u1", "u2", "u3"),)
    for n in range(1, 30):
        S = from_topology({"kind": "shared", "n": n, "m": 1})
        assert qm.problems(S, qm.grid_coterie(S)) == []
    five = from_topology({"kind": "shared", "n": 5, "m": 1})
    assert qm.grid_coterie(five)["u5"] == (("u2", "u4", "u5"),)


@pytest.mark.parametrize("params,field", [
    ({"coterie": "best"}, "scenario.params.coterie"),
    ({"strategy": "fastest"}, "scenario.params.strategy"),
    ({"strategy": "preference", "preference": {"b": ["x"]}}, "scenario.params.preference.b"),
    ({"quorum_choice": "any"}, "scenario.params.quorum_choice"),
])
def test_bad_params_name_the_field(params, field):
    with pytest.raises(ScenarioError, match=field.replace(".", r"\.")):
        build(scenario(FIG1, {}, params))


def test_bad_topology_and_workload_name_the_field():
    with pytest.raises(ScenarioError, match=r"scenario.topology.alpha.c: must be a non-empty"):
        build(scenario({**FIG1, "alpha": {"a": ["x"], "b": ["x"], "c": []}}, {}))
    with pytest.raises(ScenarioError, match=r"scenario.workload.requests.a: must be a whole"):
        build(scenario(FIG1, {"requests": {"a": [2]}}))


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 8), st.integers(1, 6), st.integers(1, 6), st.integers(0, 10**9))
def test_generated_local_coteries_pass_the_validator(n, m, d, seed):
    S = random_structure(n, m, min(d, m), seed)
    Q = qm.local_coterie(S)
    assert qm.problems(S, Q) == []
    assert qm.problems(S, qm.global_coterie(S)) == []
    # Interference-freedom: processes sharing nothing get disjoint quorums unless a third
    # process links them (the quorum of u is every sharer of a resource of u).
    for u in S.U:
        assert u in Q[u][0]


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 5), st.lists(st.sets(st.integers(0, 4), min_size=0, max_size=5),
                                   min_size=1, max_size=4))
def test_one_resource_special_case_is_a_coterie(n, raw):
    """|R| = 1, α(u) = R: the same quorum set for everybody is a local coterie iff it is a
    coterie (Section 3)."""
    S = SharingStructure(tuple(f"u{i}" for i in range(n)), ("r",),
                         {f"u{i}": ("r",) for i in range(n)})
    Q = tuple(tuple(f"u{i}" for i in sorted(q) if i < n) for q in raw)
    assert qm.special_case_agrees(S, Q)
    assert qm.is_coterie(Q) == (not qm.problems(S, {u: Q for u in S.U}))


# ---------------------------------------------------------------- AllocResource on `full`
@settings(max_examples=25, deadline=None)
@given(st.integers(2, 5), st.integers(1, 4), st.integers(0, 10**6), st.integers(0, 10**6),
       st.sampled_from(["lowest", "arbitrary"]))
def test_full_is_safe_and_serves_every_request(n, m, topo_seed, sched_seed, strategy):
    sc = scenario({"kind": "random", "n": n, "m": m, "degree": min(2, m), "seed": topo_seed},
                  {"rounds": 2, "k": "random", "seed": topo_seed}, {"strategy": strategy},
                  steps=20000)
    res = run(sc, "full", scheduler="random", seed=sched_seed)
    assert res["violations"] == [] and res["deadlock"] is None and res["livelock"] is None
    assert res["served_all"], res["metrics"]["requests"]


def bfs(sc, variant: str, limit: int = 50_000) -> tuple[str, list[str]]:
    """Every interleaving of ``sc`` breadth-first (the explorer's engine, no reductions): 'ok',
    or the first violation / deadlock with the schedule that reaches it ('limit' past
    ``limit`` states)."""
    res = search(build(sc, variant), SearchOptions(max_states=limit))
    return res.result, res.schedule or []


def preemption_instance(requests: list[int]):
    """Three processes, one resource, the quorum {u2} for everyone: every conflict goes
    through one member, so preemption and its races are reachable in few steps."""
    return scenario({"kind": "shared", "n": 3, "m": 1},
                    {"requests": {f"u{i + 1}": [1] * r for i, r in enumerate(requests)}},
                    {"coterie": "custom", "quorums": SINGLE})


@pytest.mark.parametrize("requests", [[1, 1, 1], [1, 1, 2]])
def test_full_passes_exhaustive_search_of_the_preemption_instance(requests):
    assert bfs(preemption_instance(requests), "full") == ("ok", [])


@pytest.mark.parametrize("repair,requests,found", [
    ("R1", [1, 1, 2], "violation"), ("R2", [1, 1, 1], "deadlock"), ("R3", [1, 1, 1], "violation"),
])
def test_each_repair_is_needed(repair, requests, found, monkeypatch):
    from protocols.coterie import Coterie
    monkeypatch.setattr(Coterie, "ablated", frozenset({repair}))
    assert bfs(preemption_instance(requests), "full")[0] == found


def test_exhaustive_search_finds_the_as_printed_race_and_it_replays():
    result, sched = bfs(preemption_instance([1, 1, 1]), "as-printed")
    assert result == "violation" and len(sched) <= 15
    sim = build(preemption_instance([1, 1, 1]), "as-printed")
    sim.replay(sched)
    kinds = [m.split()[0] for m in sim.monitors.metrics()["messages_by_type"]]
    assert "PREEMPT" in kinds and "RETURN" in kinds
    assert sim.monitors.violations()
    # The same schedule's prefix on `full` stays safe and serves everybody.
    res = run(preemption_instance([1, 1, 1]), "full", scheduler="oldest")
    assert res["outcome"] == "all-served"


# ---------------------------------------------------------------- gallery and views
@pytest.mark.parametrize("sid", GALLERY)
@pytest.mark.parametrize("variant", ["as-printed", "full"])
def test_gallery_gives_its_expect(sid, variant):
    sc = resolve(sid)
    res = run(sc, variant)
    assert mismatches(res, sc.expect) == []
    assert res["state_hash"] == run(sc, variant)["state_hash"]


def test_fig1_b_gets_y_while_a_prints_on_x():
    sc = resolve("coterie-fig1")
    sim = build(sc, "full")
    held = []
    for eid in sc.schedule_for("full"):
        sim.step(eid)
        held.append(dict(sim.cs))
    assert {"a": ("x",), "b": ("y",)} in held
    assert {"b": ("x", "y")} in held


def test_preemption_serves_the_smaller_stamp_first():
    res = run(resolve("coterie-preempt"), "full")
    assert res["metrics"]["messages_by_type"]["PREEMPT"] >= 1
    order = [r["proc"] for r in res["metrics"]["per_request"]]
    assert order == ["u1", "u3"]


@pytest.mark.parametrize("variant", ["as-printed", "full"])
def test_disjoint_processes_never_exchange_a_message(variant):
    sc = resolve("coterie-disjoint")
    sim = build(sc, variant)
    left, right = {"u1", "u2"}, {"u3", "u4"}
    from protocols.runner import scheduler_for
    crossed = []
    sched = scheduler_for(sc, variant)
    while sim.step_no < sc.steps and not sim.monitors.findings:
        eid = sched.choose(sim)
        if eid is None:
            break
        before = sim.next_seq
        sim.step(eid)
        for m in (sim.inflight.get(seq) for seq in range(before, sim.next_seq)):
            if m and (m.src in left) != (m.dst in left) and {m.src, m.dst} <= left | right:
                crossed.append((m.src, m.dst, m.kind))
    assert sim.protocol.served_all(sim) and crossed == []


def test_message_complexity_best_case_and_repeated_preemption_beyond_the_worst_case():
    from protocols.coterie.charging import charged_run
    charges, _ = charged_run(resolve("coterie-fig1"))
    first_a = charges[("a", (1, 1))]
    assert first_a == {"QUERY": 2, "RESPONSE": 2, "LOCK": 2, "UNLOCK": 2}   # 4|q|, |q| = 2
    charges, sim = charged_run(resolve("coterie-repeated-preemption"))
    u3 = charges[("u3", (16, 3))]
    assert sim.monitors.metrics()["messages_by_type"]["PREEMPT"] == 5
    assert sum(u3.values()) > (7 + 2) * 1                                  # |α(u3)| = 2, |q| = 1


@pytest.mark.parametrize("strategy,pref,got", [
    ("lowest", {}, ("x",)),
    ("preference", {"b": ["y", "x"]}, ("y",)),     # the Discussion's "printer on my floor"
])
def test_resource_selection_strategy(strategy, pref, got):
    sc = scenario(FIG1, {"requests": {"b": [1]}}, {"strategy": strategy, "preference": pref})
    sim = build(sc, "full")
    while "b" not in sim.cs:
        sim.step(sim.enabled_ids()[0])
    assert sim.cs["b"] == got


def test_arbitrary_strategy_is_seeded_not_global():
    def pick(seed):
        sc = scenario({"processes": ["a"], "resources": ["r1", "r2", "r3", "r4"],
                       "alpha": {"a": ["r1", "r2", "r3", "r4"]}},
                      {"requests": {"a": [2]}}, {"strategy": "arbitrary", "seed": seed})
        sim = build(sc, "full")
        while "a" not in sim.cs:
            sim.step(sim.enabled_ids()[0])
        return sim.cs["a"]
    assert pick(1) == pick(1)
    assert len({pick(s) for s in range(8)}) > 1


def test_view_contract():
    sc = resolve("coterie-preempt")
    sim = build(sc, "full")
    sim.replay(sc.schedule_for("full")[:4])
    v = sim.protocol.view(sim)
    assert v["layout"] == "quorum"
    ids = {n["id"] for n in v["nodes"]}
    assert ids == {"u1", "u2", "u3", "r1"}
    assert all(0 <= n["x"] <= 1000 and 0 <= n["y"] <= 700 for n in v["nodes"])
    u2 = next(n for n in v["nodes"] if n["id"] == "u2")
    assert u2["W"] == "u3" and u2["preempting"] is True
    assert [x["proc"] for x in u2["X"]] == ["u1", "u3"]
    assert {"node": "u2", "name": "X_u2", "items": ["u1@1.1", "u3@1.3"]} in v["queues"]
    assert v["extra"]["active_quorum"]["u1"] == ["u1", "u2", "u3"]
    assert {"src": "u1", "dst": "r1", "kind": "alpha", "dashed": True, "in_use": False} \
        in v["edges"]
    assert u2["D"] == [{"r": "r1", "holder": None, "t": 0}]
