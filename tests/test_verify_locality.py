"""task_game failure locality by search (protocols/verify/locality_search.py): from the crash
point of gallery ``game-locality-chain`` every continuation starves T3, at distance 2 from the
failed T1, in the paper's complete game and in our full one; the witness replays. The same
crash point built on the ``conflicts`` family's chains settles distance 2 there too."""

from __future__ import annotations

import pytest

from protocols.runner import build, report
from protocols.scenario import gallery, parse
from protocols.verify.families import get, instances
from protocols.verify.locality_search import chain_crash_point, finish, starving

CRASH = 31          # the scenario's recorded schedule crashes T1 at its 31st event


def _at_crash(variant: str):
    sc = gallery()["game-locality-chain"]
    sched = sc.schedule_for(variant)
    assert sched[CRASH - 1] == "f:crash:T1"
    sim = build(sc, variant)
    sim.replay(sched[:CRASH])
    return sc, sim


@pytest.mark.parametrize("variant", ["complete", "full"])
def test_every_continuation_after_the_crash_starves_t3_at_distance_two(variant):
    sc, sim = _at_crash(variant)
    r = starving(sim, "T1", max_states=20_000)
    assert r["complete"], r["states"]
    assert {u: s["distance"] for u, s in r["starving"].items()} == {"T2": 1, "T3": 2}
    assert r["max_distance"] == 2
    w = r["witness"]
    assert w["victim"] == "T3" and w["distance"] == 2
    # the witness, finished by the oldest-first scheduler, is a run the report calls disturbed
    run = build(sc, variant)
    run.replay(finish(sc, variant, sim.trace + w["prefix"]))
    rep = report(run, sc)
    assert rep["outcome"] == "deadlock"
    assert rep["disturbed"]["never_executed"] == ["T2", "T3"]
    assert rep["disturbed"]["max_distance"] == 2



def _family(name: str):
    return next(parse(i.scenario) for i in instances(get("task_game", "conflicts"))
                if i.name == name)


@pytest.mark.parametrize("variant", ["restricted", "complete", "full"])
def test_the_family_chain_of_three_starves_t3_at_distance_two(variant):
    """``conflicts`` chain L=3 on 3 nodes, S3's crash point: nothing can move any more (one
    state), T2 (distance 1) and T3 (distance 2) never execute; on the cycle of three every task
    is a direct conflict of T1, so the same point disturbs only distance 1."""
    r = starving(chain_crash_point(_family("chain L=3 nodes=3"), variant), "T1")
    assert r["complete"] and r["states"] == 1
    assert {u: s["distance"] for u, s in r["starving"].items()} == {"T2": 1, "T3": 2}
    c = starving(chain_crash_point(_family("cycle L=3 nodes=3"), variant), "T1")
    assert c["complete"] and c["max_distance"] == 1


def test_on_the_chain_of_four_the_task_at_distance_three_always_can_execute():
    """``conflicts`` chain L=4 on 3 nodes, S3's crash point, ``full``: every continuation
    (T4 created at any moment) searched; T2 and T3 starve, T4 (distance 3) never does."""
    r = starving(chain_crash_point(_family("chain L=4 nodes=3"), "full"), "T1", 20_000)
    assert r["complete"], r["states"]
    assert {u: s["distance"] for u, s in r["starving"].items()} == {"T2": 1, "T3": 2}
