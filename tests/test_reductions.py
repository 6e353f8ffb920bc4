"""The explorer's exact reductions can only merge or skip what cannot matter: partial-order
reduction (explorer/por.py) and forgetting dead values (coterie/forget.py, explorer/audit.py).

Each is checked against the unreduced search on instances where the answer is known to be a
violation or a deadlock (the printed Cases, the repairs of ``full`` taken out one at a time)
and on generated instances, and each wrong declaration is shown to stop the search loudly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocols.coterie import Coterie
from protocols.explorer import check
from protocols.explorer.check import explore
from protocols.kernel import Simulator
from protocols.scenario import ScenarioError, parse

SINGLE = {"u1": [["u2"]], "u2": [["u2"]], "u3": [["u2"]]}
FIG1 = {"processes": ["a", "b", "c"], "resources": ["x", "y"],
        "alpha": {"a": ["x"], "b": ["x", "y"], "c": ["y"]}}


def coterie(topology: dict, requests: dict, params: dict | None = None):
    return parse({"id": "t", "title": "t", "protocol": "coterie", "topology": topology,
                  "workload": {"requests": requests}, "params": params or {}})


def preemption(requests: list[int]):
    """Three processes, one resource, everyone's quorum {u2}: the races of the printed Cases."""
    return coterie({"kind": "shared", "n": 3, "m": 1},
                   {f"u{i + 1}": [1] * r for i, r in enumerate(requests)},
                   {"coterie": "custom", "quorums": SINGLE})


def plain(sc, variant: str, limit: int = 200_000) -> dict:
    return check(sc, variant, limit, partial_order=False, forget=False, livelock_check=False)


def reduced(sc, variant: str, limit: int = 200_000, por: bool = True) -> dict:
    return check(sc, variant, limit, partial_order=por, forget=True, livelock_check=False)


# ---------------------------------------------------------------- known findings stay found
@pytest.mark.parametrize("variant,requests,found", [
    ("as-printed", [1, 1, 1], "violation"),
    ("full", [1, 1, 1], "ok"),
    ("full", [1, 1, 2], "ok"),
])
def test_reductions_keep_the_printed_race_and_the_repairs_verdict(variant, requests, found):
    sc = preemption(requests)
    base = plain(sc, variant)
    assert base["result"] == found
    for por in (False, True):
        res = reduced(sc, variant, por=por)
        assert res["result"] == found, (por, res)
        assert res["states"] <= base["states"]
        if found != "ok":
            assert res["counterexample"]["replayed"] and \
                res["counterexample"]["confirmed_by_monitor"]
    # forgetting alone is a bisimulation quotient: the shortest counterexample keeps its length
    if found != "ok":
        assert reduced(sc, variant, por=False)["counterexample"]["length"] == \
            base["counterexample"]["length"]


@pytest.mark.parametrize("repair,requests,found", [
    ("R1", [1, 1, 2], "violation"), ("R2", [1, 1, 1], "deadlock"), ("R3", [1, 1, 1], "violation"),
])
def test_reductions_still_show_each_repair_is_needed(repair, requests, found, monkeypatch):
    monkeypatch.setattr(Coterie, "ablated", frozenset({repair}))
    sc = preemption(requests)
    assert plain(sc, "full")["result"] == found
    for por in (False, True):
        res = reduced(sc, "full", por=por)
        assert res["result"] == found, (repair, por, res["finding"])
        assert res["counterexample"]["confirmed_by_monitor"]


def test_both_reductions_shrink_fig1_with_two_users():
    """Fig. 1's a and b asking once each: 22,863 states unreduced, 2,827 forgetting dead
    clocks, 1,029 with partial-order reduction too (measured when this test was written)."""
    sc = coterie(FIG1, {"a": [1], "b": [1]})
    base = plain(sc, "full")
    forgot = reduced(sc, "full", por=False)
    red = reduced(sc, "full")
    assert base["result"] == forgot["result"] == red["result"] == "ok"
    assert red["reductions"]["partial_order"] and red["reductions"]["forget"]
    assert red["reductions"]["reduced_states"] > 0
    assert forgot["states"] * 4 < base["states"], (forgot["states"], base["states"])
    assert red["states"] * 2 < forgot["states"], (red["states"], forgot["states"])


# ---------------------------------------------------------------- generated instances
@settings(max_examples=15, deadline=None)
@given(st.integers(2, 3), st.integers(1, 2), st.integers(0, 10**6),
       st.lists(st.integers(1, 2), min_size=3, max_size=3),
       st.sampled_from(["as-printed", "full"]))
def test_reductions_agree_with_the_full_search(n, m, seed, reqs, variant):
    sc = parse({"id": "g", "title": "g", "protocol": "coterie",
                "topology": {"kind": "random", "n": n, "m": m, "degree": min(2, m),
                             "seed": seed},
                "workload": {"rounds": 1, "k": "random", "seed": seed}})
    base = plain(sc, variant, 5_000)
    if base["result"] == "limit":
        return
    for por in (False, True):
        res = reduced(sc, variant, 5_000, por=por)
        assert res["result"] == base["result"], (por, res["finding"], base["finding"])
        assert res["states"] <= base["states"]
        if por is False and base["counterexample"]:
            assert res["counterexample"]["length"] == base["counterexample"]["length"]


# ---------------------------------------------------------------- wrong declarations are caught
class Mute(Coterie):
    """Declares that nobody sends to anybody: every QUERY breaks the declaration."""

    def por_senders(self, config):
        return {u: () for u in config.S.U}


class Amnesiac(Coterie):
    """Forgets every clock, although the next QUERY's stamp is read from it."""

    def forget(self, config, pids, procs, messages):
        from dataclasses import replace
        procs, messages = super().forget(config, pids, procs, messages)
        return tuple(replace(p, C=0) for p in procs), messages


class Clockwatcher(Coterie):
    """Judges a finished process's clock (a "violation" only a forgotten state shows, since
    forget zeroes that clock) and still declares ``forget_keeps_violations``."""

    def violations(self, sim):
        cfg = sim.config
        return [f"{u} finished with clock 0" for u, s in zip(sim.pids, sim.procs, strict=True)
                if s.req.phase == "idle" and s.req.done == len(cfg.workload[u]) and s.C == 0]


def test_a_wrong_locality_declaration_stops_the_search():
    sc = preemption([1, 1, 1])
    sim = Simulator(Mute(), sc, "full")
    with pytest.raises(ScenarioError, match="not local.*por_senders"):
        explore(sim, sc, 10_000, partial_order=True)


def test_a_forget_hook_that_erases_a_live_value_is_caught():
    sc = coterie(FIG1, {"a": [1, 1], "b": [1, 2], "c": [1]})
    sim = Simulator(Amnesiac(), sc, "full")
    with pytest.raises(ScenarioError, match="forget erased a value a later step reads"):
        explore(sim, sc, 20_000, livelock_check=False)


def test_a_wrong_forget_keeps_violations_declaration_is_caught():
    """The explorer skips judging successors whose key it has stored when the protocol says its
    forget keeps what violations reads; the audit checks the claim on sampled states."""
    sc = coterie(FIG1, {"a": [1, 1], "b": [1, 2], "c": [1]})
    assert Clockwatcher.forget_keeps_violations
    sim = Simulator(Clockwatcher(), sc, "full")
    with pytest.raises(ScenarioError, match="forget_keeps_violations is wrong"):
        explore(sim, sc, 20_000, livelock_check=False)


def test_partial_order_reduction_needs_the_hooks_and_no_faults():
    with pytest.raises(ScenarioError, match="does not declare por_senders"):
        check(parse({"id": "r", "title": "r", "protocol": "token_ring",
                     "params": {"n": 3}}), None, 1000, partial_order=True)
    sc = parse({"id": "f", "title": "f", "protocol": "coterie", "topology": FIG1,
                "workload": {"requests": {"a": [1]}}, "faults": {"drop": True}})
    with pytest.raises(ScenarioError, match="allows faults"):
        check(sc, "full", 1000, partial_order=True)


# ---------------------------------------------------------------- forget in parts = forget whole
class WholeForget(Coterie):
    """coterie keyed through its whole-state ``forget`` alone: no ``forget_parts``, no
    ``forget_context_parts`` (the reference the explorer's per-part keys must agree with)."""

    forget_parts = None
    forget_context_parts = None


@pytest.mark.parametrize("requests,por", [
    ({"a": [1], "b": [1], "c": [1]}, False),
    ({"a": [1], "b": [1, 2], "c": [1]}, True),
    ({"a": [1, 1], "b": [1], "c": [1]}, True),
])
def test_forget_in_parts_merges_exactly_what_the_whole_state_forget_merges(requests, por):
    """The keys from numbered parts (the context from each process's and message's part, a
    successor's key from its parent's: ``Keyer._child_key``) identify the same states as keys
    of the whole forgotten state: the same search, step for step, up to the bound."""
    sc = coterie(FIG1, requests)
    out = [explore(Simulator(p, sc, "full"), sc, 4_000, partial_order=por, livelock_check=False)
           for p in (Coterie(), WholeForget())]
    assert [(r["result"], r["states"], r["transitions"], r["depth"]) for r in out][0] == \
        [(r["result"], r["states"], r["transitions"], r["depth"]) for r in out][1]



@pytest.mark.parametrize("seed", range(6))
def test_coterie_context_reads_the_messages_only_where_it_says_so(seed):
    """``context_reads_contents`` lets the explorer look a context up without the messages'
    stamp times; on random walks through Fig. 1 (past the point where every request is made),
    wherever it says the times are not read, the context is the same with and without them."""
    import random

    from protocols.coterie import forget as fg
    sc = coterie(FIG1, {"a": [1, 1], "b": [1, 2], "c": [1]})
    sim = Simulator(Coterie(), sc, "full")
    cfg, rng, skipped = sim.config, random.Random(seed), 0
    for _ in range(120):
        parts = [fg.context_proc(cfg, u, s) for u, s in zip(sim.pids, sim.procs, strict=True)]
        times = frozenset(t for m in sim.inflight.values()
                          if (t := fg.context_content(cfg, m[1:])) is not None)
        whole = fg.context(cfg, sim.pids, sim.procs, tuple(sim.inflight.values()))
        assert fg.context_of(cfg, sim.pids, parts, times) == whole
        if not fg.context_reads_contents(cfg, sim.pids, parts):
            skipped += 1
            assert fg.context_of(cfg, sim.pids, parts, frozenset()) == whole
        evs = sorted(sim.enabled(), key=lambda e: e.id)
        if not evs:
            break
        sim.step(rng.choice(evs).id)
    assert skipped
