"""task_game failure locality by search (protocols/verify/locality_search.py): from the crash
point of gallery ``game-locality-chain`` every continuation starves T3, at distance 2 from the
failed T1, in the paper's complete game and in our full one; the witness replays."""

from __future__ import annotations

import pytest

from protocols.runner import build, report
from protocols.scenario import gallery
from protocols.verify.locality_search import finish, starving

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

