"""kout_tree under the explorer: the counter rotation and the clock abstraction are exact, and the
congestion bound is what makes a controller instance finite (protocols/kout_tree/search.py,
docs/explorer.md "kout_tree: counter rotation, the clock and the congestion bound").

Each reduction is compared with the unreduced search on instances both finish: the same
result, the same kind of violation on ``as-printed``, and for the clock the very same
configurations once the clock's own value is left out.
"""

from __future__ import annotations

from protocols.explorer import check
from protocols.explorer.engine import Search, SearchOptions
from protocols.explorer.keys import Keyer
from protocols.kernel import Transitions
from protocols.runner import build
from protocols.scenario import parse


def _sc(work: dict | None = None, **params) -> object:
    """Two processes, ℓ = k = 1, each asking once unless ``work`` says otherwise (the family
    ``small``'s first instance, the smallest with a controller)."""
    return parse({"id": "kout-two", "title": "two processes", "protocol": "kout_tree",
                  "params": {"ell": 1, "k": 1, **params},
                  "topology": {"root": "r", "children": {"r": ["p1"]}},
                  "workload": work or {"r": [1], "p1": [1]}, "channels": "fifo",
                  "steps": 100})


ROOT_ONLY = {"r": [1]}      # only the root asks: the smallest controller instance that ends


def test_counter_rotation_gives_the_unreduced_answer_on_full():
    sc = _sc(ROOT_ONLY, timeout=1, congestion=2)
    red = check(sc, "full", 100_000)
    plain = check(sc, "full", 100_000, forget=False)
    assert red["result"] == plain["result"] == "ok"
    assert red["reductions"]["can_finish_checked"] and plain["reductions"]["livelock_checked"]
    # n = 2, C_MAX = 1: five counter values, and every configuration's five rotations reachable
    assert (red["states"], plain["states"]) == (1_456, 7_280)


def test_counter_rotation_finds_the_printed_violation():
    sc = _sc(timeout=1, congestion=2)
    red = check(sc, "as-printed", 100_000)
    plain = check(sc, "as-printed", 100_000, forget=False)
    assert red["result"] == plain["result"] == "violation"
    assert red["counterexample"]["confirmed_by_monitor"]
    assert plain["counterexample"]["confirmed_by_monitor"]
    assert red["counterexample"]["length"] == plain["counterexample"]["length"]
    assert "2 PrioT" in red["finding"] and "2 PrioT" in plain["finding"]


def test_counter_rotation_finds_the_printed_violation_from_an_arbitrary_start():
    # the chaos family's instance n2 ℓ=1 k=1 r:1 p1:1 chaos#3 (as-printed: the root creates a
    # token that exists after the run became legitimate)
    sc = _sc(timeout=1, congestion=2, chaos={"seed": 3})
    red = check(sc, "as-printed", 100_000)
    plain = check(sc, "as-printed", 100_000, forget=False)
    assert red["result"] == plain["result"] == "violation"
    assert red["counterexample"]["confirmed_by_monitor"]


def _configurations(timeout: int) -> tuple[str, set]:
    """Every reachable configuration without the root's clock value (unreduced search)."""
    sim = build(_sc(ROOT_ONLY, timeout=timeout, congestion=2), "full")
    ts = Transitions(sim)
    keyer = Keyer(sim.protocol, sim.config, sim.pids, sim.fifo, [], forget=False,
                  numbers=ts.numbers, contents=ts)
    seen: set = set()

    def note(st, _schedule) -> None:
        procs = tuple(p.__class__(*(getattr(p, f) if f != "Timer" else 0
                                    for f in p.__slots__)) for p in st.procs)
        msgs: dict = {}
        for m in st.messages:
            msgs.setdefault((m.src, m.dst), []).append((m.kind, m.body))
        seen.add((procs, tuple(sorted((c, tuple(q)) for c, q in msgs.items()))))
    note(ts.initial, None)
    allowed = sim.protocol.explore_events(sim.config)
    s = Search(ts, SearchOptions(max_states=200_000, audit=note, events=allowed), keyer.key)
    stop = s.run()
    return ("ok" if stop is None else stop.kind), seen


def test_the_timeout_value_changes_only_the_clock():
    """timeout 1 and timeout 3 reach the same configurations up to the clock's value: a tick
    that does not time out changes nothing else, and ticks are always enabled together."""
    one, three = _configurations(1), _configurations(3)
    assert one[0] == three[0] == "ok"
    assert one[1] == three[1]


def test_without_a_congestion_bound_the_controller_floods_the_tree():
    """Every tick may be a TimeOut while the controller is in flight: the search never ends,
    and the states it stores hold more and more ctrl messages."""
    sim = build(_sc(timeout=1), "full")
    most = 0

    def note(st, _schedule) -> None:
        nonlocal most
        most = max(most, sum(1 for m in st.messages if m.kind == "ctrl"))
    ts = Transitions(sim)
    s = Search(ts, SearchOptions(max_states=3_000, audit=note))
    assert s.run().kind == "limit"
    assert most >= 4


def test_congestion_is_checked():
    import pytest

    from protocols.scenario import ScenarioError
    with pytest.raises(ScenarioError, match="congestion"):
        build(_sc(congestion=0), "full")


# ---- the memoised fast path from arbitrary starts (Protocol.monitor_ghost) ----------------------

def _everything(sc: object, variant: str, fast: bool) -> tuple:
    """An unreduced search (exact key, no forget) with ``Transitions(fast=fast)``: its answer
    and every state it stored, the legitimacy ghost included (``Proc`` equality reads it)."""
    sim = build(sc, variant)
    ts = Transitions(sim, fast=fast)
    seen: list = [ts.initial]
    s = Search(ts, SearchOptions(max_states=200_000, stop_at_first=False,
                                 audit=lambda st, _schedule: seen.append(st),
                                 events=sim.protocol.explore_events(sim.config)))
    stop = s.run()
    return ((None if stop is None else stop.kind), len(s.graph.parent), s.graph.transitions,
            s.max_depth, sorted(s.findings), ts.memo), seen


def test_a_search_from_an_arbitrary_start_replays_local_steps():
    # the ghost the monitor writes no longer makes every step go through the lean simulator
    sim = build(_sc(timeout=1, congestion=2, chaos={"seed": 3}), "full")
    ts = Transitions(sim)
    assert ts.memo
    s = Search(ts, SearchOptions(max_states=5_000, events=sim.protocol.explore_events(
        sim.config)))
    s.run()
    assert s.fast and ts.slow < s.graph.transitions // 4


def test_replayed_steps_reach_the_states_the_simulator_reaches_from_an_arbitrary_start():
    # chaos starts where only the root asks, full and as-printed (whose search also finds its
    # violation after legitimacy): the same states, legitimacy ghost and all, and the same
    # answers with and without the memo
    for seed, variant in ((0, "full"), (1, "full"), (0, "as-printed"), (3, "as-printed")):
        sc = _sc(ROOT_ONLY, timeout=1, congestion=2, chaos={"seed": seed})
        fast, fast_states = _everything(sc, variant, True)
        slow, slow_states = _everything(sc, variant, False)
        assert fast[5] and not slow[5]
        assert fast[:5] == slow[:5]
        assert set(fast_states) == set(slow_states)
        assert any(st.procs[0].legit for st in fast_states)     # the ghost was written
        assert any(not st.procs[0].legit for st in fast_states)


def test_the_counter_rotation_keeps_every_verdict_from_an_arbitrary_start():
    # forget_keeps_violations: the explorer does not judge a successor whose key it stored; the
    # forget audit, on every state here, compares the verdicts of a state and its rotation
    # (as-printed: violations after legitimacy; full: legitimacy begun by clean starts)
    from protocols.explorer.audit import ForgetAudit
    from protocols.kernel import Simulator
    for seed, variant in ((0, "full"), (3, "as-printed")):
        sc = _sc(ROOT_ONLY, timeout=1, congestion=2, chaos={"seed": seed})
        sim = build(sc, variant)
        assert sim.protocol.forget_keeps_violations
        ts = Transitions(sim)
        keyer = Keyer(sim.protocol, sim.config, sim.pids, sim.fifo, [], forget=True,
                      numbers=ts.numbers, contents=ts)
        audit = ForgetAudit(lambda p=sim.protocol, sc=sc, v=variant: Simulator(p, sc, v),
                            keyer, every=1, ts=ts)
        s = Search(ts, SearchOptions(max_states=50_000, stop_at_first=False, audit=audit,
                                     events=sim.protocol.explore_events(sim.config)), keyer.key)
        s.run()
        assert s.same_verdict and audit.checked > 500
