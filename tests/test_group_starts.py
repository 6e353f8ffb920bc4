"""One search from a group of starts of one instance (kout_tree's corrupted starts): the engine's
several roots, ``check(..., also=[...])``, ``check_group`` and ``verify --group-starts``.

The union of the starts' state spaces is searched once; each answer must still belong to the
start whose schedule it is, and replay on that start's own scenario."""

from __future__ import annotations

import json

import pytest

from protocols.explorer.check import check, check_group
from protocols.explorer.engine import Search, SearchOptions
from protocols.explorer.keys import Keyer, plain_key
from protocols.kernel import Simulator, Transitions
from protocols.runner import build
from protocols.scenario import ScenarioError, gallery, parse
from protocols.verify import get, tasks

# n2 (()) ℓ=1 k=1 r:1 p1:1 with two of its corrupted starts (chaos seeds 9, 3: the
# smallest state spaces of the ten, 9-11 k states each, both `ok` in `full`)
CHAOS = (9, 3)


def chaos_scenarios(seeds=CHAOS, variant: str = "full") -> list:
    fam = get("kout_tree", "chaos")
    by_index = {t["index"]: t for t in tasks(fam, variant, only=set(seeds), max_states=1)}
    return [parse(by_index[i]["scenario"]) for i in seeds]


def small_instance(tokens: list[list[str]] | None = None, sid: str = "a") -> object:
    """kout_tree family ``small`` #0 (n2, ℓ = k = 1), a clean start with the given tokens in
    flight: `as-printed` has a violation from every such start, found in 6-9 steps."""
    data = {"id": sid, "title": sid, "protocol": "kout_tree",
            "params": {"ell": 1, "k": 1, "timeout": 1, "congestion": 2},
            "topology": {"root": "r", "children": {"r": ["p1"]}},
            "workload": {"r": [1], "p1": [1]}, "channels": "fifo", "steps": 3000}
    if tokens is not None:
        data["params"]["tokens"] = tokens
    return parse(data)


# every token on p1's channel to the root: as printed, a violation after 6 steps (the default
# start, every token on the root's channel 0, needs 9)
EARLY = [["p1", "r", "ResT"], ["p1", "r", "PushT"], ["p1", "r", "PrioT"]]


def stored_keys(sims: list[Simulator], max_states: int = 100_000) -> tuple[Search, dict]:
    """A search from every simulator's start as ``check`` searches (its keys, its event
    restriction); each stored state by node, as a plain value comparable between searches
    (the protocol's ``forget`` applied, no message numbers), collected through the audit hook
    that sees every new state."""
    first = sims[0]
    ts = Transitions(first)
    keyer = Keyer(first.protocol, first.config, first.pids, first.fifo, None, forget=True,
                  numbers=ts.numbers, contents=ts)
    starts = tuple(x.state() for x in sims[1:])
    stored: dict[int, object] = {}

    def plain(st) -> object:
        return plain_key(keyer.forgotten(st), first.fifo)

    s = Search(ts, SearchOptions(
        max_states=max_states, events=first.protocol.explore_events(first.config),
        starts=starts, audit=lambda st, _schedule: stored.setdefault(
            len(s.graph.parent) - 1, plain(st))), keyer.key)
    assert s.run() is None
    for st, node in zip((ts.initial, *starts), s.roots, strict=True):
        stored.setdefault(node, plain(st))
    assert sorted(stored) == list(range(len(s.graph.parent)))
    return s, stored


def test_a_search_from_several_starts_visits_exactly_the_union_of_their_state_spaces():
    scs = chaos_scenarios()
    alone = [set(stored_keys([build(sc, "full")])[1].values()) for sc in scs]
    together, stored = stored_keys([build(sc, "full") for sc in scs])
    union = set().union(*alone)
    assert set(stored.values()) == union and len(stored) == len(union)
    assert max(map(len, alone)) <= len(union) < sum(map(len, alone))
    # every start is a root; each node's schedule replays from its own start to its state
    g = together.graph
    assert [g.parent[r] for r in together.roots] == [-1] * 2
    keyer = Keyer(*(lambda s: (s.protocol, s.config, s.pids, s.fifo))(build(scs[0], "full")),
                  None, forget=True)
    for node in (together.roots[1], len(g.parent) - 1, len(g.parent) // 2):
        sim = build(scs[together.start_of(node)], "full")
        sim.replay(g.path(node))
        assert plain_key(keyer.forgotten(sim.state()), True) == stored[node]
    assert [together.start_of(r) for r in together.roots] == [0, 1]


def test_a_start_equal_to_an_earlier_one_is_not_added_again():
    sc = chaos_scenarios((9,))[0]
    s, stored = stored_keys([build(sc, "full"), build(sc, "full")])
    assert s.roots == [0, 0] and stored == stored_keys([build(sc, "full")])[1]


def test_check_with_also_answers_ok_for_the_group_with_the_unions_states():
    scs = chaos_scenarios()
    alone = [check(sc, "full", 100_000) for sc in scs]
    assert [r["result"] for r in alone] == ["ok"] * 2
    assert all("group" not in r and "start" not in r for r in alone)   # unchanged answers
    r = check(scs[0], "full", 100_000, also=scs[1:])
    assert r["result"] == "ok" and r["start"] is None and r["counterexample"] is None
    assert r["group"] == {"starts": 2, "distinct_starts": 2}
    assert r["reductions"]["can_finish_checked"]
    sizes = [a["states"] for a in alone]
    assert max(sizes) <= r["states"] <= sum(sizes)
    rows = check_group(scs, "full", 100_000)
    assert [x["result"] for x in rows] == ["ok"] * 2
    assert {x["states"] for x in rows} == {r["states"]}
    assert [x["scenario"] for x in rows] == [sc.id for sc in scs]
    assert all(x["group"]["members"] == [0, 1] and x["group"]["searches"] == 1 for x in rows)


def test_a_counterexample_names_its_start_and_replays_on_that_scenario():
    late, early = small_instance(None, "late"), small_instance(EARLY, "early")
    own = check(early, "as-printed", 5000)
    assert own["result"] == "violation" and own["counterexample"]["length"] == 6
    r = check(late, "as-printed", 5000, also=[early])
    assert r["result"] == "violation" and r["start"] == 1
    ce = r["counterexample"]
    assert ce["scenario"] == "early" and ce["schedule"] == own["counterexample"]["schedule"]
    assert ce["replayed"] and ce["confirmed_by_monitor"]
    assert r["link"].startswith("/sim/early?")
    sim = build(early, "as-printed")
    sim.replay(ce["schedule"])
    assert sim.monitors.first("violation") is not None
    # each start gets its own verdict: the late start is searched again on its own
    rows = check_group([late, early], "as-printed", 5000)
    assert [x["result"] for x in rows] == ["violation", "violation"]
    assert [x["start"] for x in rows] == [0, 1]
    assert [x["counterexample"]["scenario"] for x in rows] == ["late", "early"]
    assert rows[0]["counterexample"]["length"] == 9 and rows[0]["counterexample"][
        "confirmed_by_monitor"]
    assert rows[0]["group"]["members"] == [0] and rows[0]["group"]["searches"] == 2
    assert rows[1]["group"]["members"] == [0, 1] and rows[1]["group"]["searches"] == 1


def test_a_livelock_lasso_is_built_and_confirmed_on_its_own_start():
    """kout_tree `no-priority` on Fig. 3 starves a (a fair lasso): from the gallery's tokens in
    16 steps, from the default tokens in 29. Together, the lasso nearest a root is the Fig. 3
    start's, and its stem and loop replay there."""
    fig3 = gallery()["kout-fig3"]
    default = fig3.model_copy(update={"id": "fig3-default-tokens", "params": {
        k: v for k, v in fig3.params.items() if k != "tokens"}})
    r = check(default, "no-priority", 50_000, also=[fig3])
    assert r["result"] == "livelock" and r["start"] == 1
    assert r["reductions"]["livelock_checked"]
    ce = r["counterexample"]
    assert ce["scenario"] == "kout-fig3" and ce["confirmed_by_monitor"] and ce["length"] == 16
    sim = build(fig3, "no-priority")          # the loop returns to its first state
    sim.replay(ce["schedule"][:ce["loop_start"]])
    first = plain_key(sim.state(), sim.fifo)
    sim.replay(ce["schedule"][ce["loop_start"]:])
    assert plain_key(sim.state(), sim.fifo) == first


@pytest.mark.parametrize("change, part", [
    ({"params": {"ell": 2, "k": 1, "timeout": 1, "congestion": 2}}, "config"),
    ({"workload": {"r": [1], "p1": [1, 1]}}, "config"),
    ({"channels": "unordered"}, "channels"),
    ({"faults": {"drop": True, "rate": 0.1}}, "faults"),
])
def test_scenarios_that_are_not_one_instance_are_refused(change, part):
    a = small_instance()
    data = {**a.model_dump(exclude_none=True), **change, "id": "b"}
    b = parse(data)
    with pytest.raises(ScenarioError, match=f"scenario 1 \\(b\\) is not the same instance as "
                                            f"scenario 0 \\(a\\) up to its start: its {part}"):
        check(a, "as-printed", 100, also=[b])
    with pytest.raises(ScenarioError, match="not the same instance"):
        check_group([a, b], "as-printed", 100)


def test_a_clean_start_and_a_corrupted_one_are_not_one_instance():
    """``clean`` is not a start-only field: it changes how the monitor judges (kout_tree)."""
    chaos = chaos_scenarios((3,))[0]
    clean = parse({**chaos.model_dump(exclude_none=True), "id": "clean",
                   "params": {k: v for k, v in chaos.params.items() if k != "chaos"}})
    with pytest.raises(ScenarioError, match=r"its config differs \(fields clean\)"):
        check(chaos, "full", 100, also=[clean])


def test_corrupted_starts_differ_only_in_start_fields():
    a, b = chaos_scenarios((3, 6))
    ca, cb = build(a, "full").config, build(b, "full").config
    assert ca.myc0 != cb.myc0 or ca == cb
    check(a, "full", 10, also=[b])       # accepted (a limit, at 10 states)


# --------------------------------------------------------------- verify --group-starts

def test_verify_group_starts_gives_each_instance_its_row_with_the_groups_states(capsys,
                                                                                 tmp_path):
    from app.cli import main
    args = ["verify", "kout_tree", "--family", "chaos", "--variant", "full", "--seeds", "1",
            "--only", "3,9", "--max-states", "60000", "--workers", "1", "--json"]
    assert main([*args, "--group-starts"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows, summ = out["rows"], out["summary"]
    assert [(r["index"], r["result"], r["group"]) for r in rows] == [(3, "ok", [3, 9]),
                                                                      (9, "ok", [3, 9])]
    assert rows[0]["states"] == rows[1]["states"] == summ["states"]
    assert rows[0]["explorer"]["group"] == [3, 9]
    assert summ["searches"] == 1 and summ["where"].endswith("starts grouped")
    separate = [check(sc, "full", 60000)["states"] for sc in chaos_scenarios((3, 9))]
    assert max(separate) <= summ["states"] < sum(separate)
    assert main([*args, "--first", "1", "--only", "0"]) == 0    # the default: no grouping
    out = json.loads(capsys.readouterr().out)
    assert "group" not in out["rows"][0] and "searches" not in out["summary"]


def test_verify_group_starts_gives_a_counterexample_to_its_own_instance_only(capsys, tmp_path):
    """no-controller: chaos seed 6 violates at its start, seed 5 is ok; searched together the
    violation is seed 6's, and seed 5 is searched again alone."""
    from app.cli import main
    assert main(["verify", "kout_tree", "--family", "chaos", "--variant", "no-controller",
                 "--seeds", "1", "--only", "5,6", "--group-starts", "--workers", "1",
                 "--save", str(tmp_path)]) == 1
    text = capsys.readouterr().out
    five, six = [ln for ln in text.splitlines() if "chaos#5" in ln or "chaos#6" in ln][:2]
    assert " ok " in five and "one search with" not in five
    assert "counterexample (violation)" in six and "one search with #5-#6" in six
    saved = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert saved["params"]["chaos"] == {"seed": 6}
    assert saved["expect"]["outcome"] == "violation"


def test_group_tasks_groups_consecutive_starts_of_one_instance_only():
    from protocols.verify import group_tasks
    fam = get("kout_tree", "chaos")
    groups = list(group_tasks(tasks(fam, "full", first=22, max_states=10)))
    assert [[m["index"] for m in g["members"]] for g in groups] == [
        list(range(10)), list(range(10, 20)), [20, 21]]
