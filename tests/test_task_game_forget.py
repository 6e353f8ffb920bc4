"""task_game's key hook (``TaskGame.forget``, protocols/task_game/forget.py): clocks made
relative must be a sound abstraction. A reachable state, the same state with every clock shifted,
and its relative image must enable the same events with successors of the same image (the
bisimulation the module argues); on the gallery the explorer answers the same with and without
the hook."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocols.explorer import check
from protocols.explorer.keys import Keyer
from protocols.kernel import State, Transitions, make_scheduler
from protocols.runner import build, scheduler_for
from protocols.scenario import gallery
from protocols.task_game.data import AgentState, TaskState

GAME = sorted(sid for sid, sc in gallery().items() if sc.protocol == "task_game")
VARIANTS = ("restricted", "complete", "full")


def _shift(st: State, k: int) -> State:
    """``st`` with every clock and alarm moved ``k`` later: a state the game cannot tell apart."""
    procs = []
    for p in st.procs:
        if isinstance(p, AgentState):
            p = dataclasses.replace(p, clock=p.clock + k,
                                    alarms=tuple((t, m + k) for t, m in p.alarms))
        elif isinstance(p, TaskState):
            p = dataclasses.replace(p, clock=p.clock + k, alarm_clock=None
                                    if p.alarm_clock is None else p.alarm_clock + k)
        procs.append(p)
    return dataclasses.replace(st, procs=tuple(procs))


def _futures(ts: Transitions, keyer: Keyer, st: State) -> Counter:
    """Each enabled event with the relative key of its successor and what the monitors saw."""
    out: Counter = Counter()
    for ev, o in ts.successors(st):
        out[(ev.id, keyer.key(o.state), o.violations, o.entered_cs, o.unfinished)] += 1
    ts.forget()
    return out


@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GAME), st.sampled_from(VARIANTS), st.integers(0, 10_000),
       st.integers(1, 9))
def test_relative_clocks_are_a_bisimulation_along_random_runs(sid, variant, seed, k):
    """Along a random run (crashes allowed where the scenario allows them), every state, its
    clocks shifted by ``k`` and its relative image have the same futures up to the key."""
    sc = gallery()[sid]
    sim = build(sc, variant)
    keyer = Keyer(sim.protocol, sim.config, sim.pids, sim.fifo, None, forget=True)
    ts = Transitions(build(sc, variant))
    sched = make_scheduler("random", seed, fault_rate=0.02 if sc.faults.crash else 0.0)
    for _ in range(160):
        st_ = sim.state()
        here = _futures(ts, keyer, st_)
        assert _futures(ts, keyer, _shift(st_, k)) == here
        assert _futures(ts, keyer, keyer.forgotten(st_)) == here
        eid = sched.choose(sim)
        if eid is None:
            break
        sim.step(eid)


def test_the_hook_changes_keys_only_where_clocks_moved():
    """Not vacuous: some reachable state has a clock ahead of 0 and an alarm that has rung, and
    its relative image differs from it (game-fault: T2's alarm rings and it advances past the
    crashed T1's request); the image of a state without clocks is itself."""
    sc = gallery()["game-fault"]
    sim = build(sc, "full")
    keyer = Keyer(sim.protocol, sim.config, sim.pids, sim.fifo, None, forget=True)
    assert keyer.forgotten(sim.state()).procs == sim.state().procs
    sched = scheduler_for(sc, "full")
    moved = False
    while not moved and sim.step_no < 400:
        eid = sched.choose(sim)
        assert eid is not None, "the run ended with every clock at 0"
        sim.step(eid)
        img = keyer.forgotten(sim.state())
        moved = img.procs != sim.state().procs
    assert moved
    assert all(p.clock == 0 for p in img.procs if isinstance(p, (AgentState, TaskState)))


@pytest.mark.parametrize("sid", ["game-fault", "game-locality-chain"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_gallery_verdicts_equal_with_and_without_relative_clocks(sid, variant):
    """The explorer's verdict, stop reason and counterexample on the gallery's crash games are
    the same with the hook and without it (2,000 states; the crash deadlocks are found either
    way). tests/golden/explorer.json pins both modes on every other gallery game."""
    sc = gallery()[sid]
    a = check(sc, variant, 2000)
    b = check(sc, variant, 2000, forget=False)
    assert a["reductions"]["forget"] and not b["reductions"]["forget"]
    assert (a["result"], a["stopped"]) == (b["result"], b["stopped"])
    ce_a, ce_b = a["counterexample"], b["counterexample"]
    assert (ce_a and ce_a["schedule"]) == (ce_b and ce_b["schedule"])

