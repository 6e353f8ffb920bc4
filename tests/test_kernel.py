"""The kernel's promises: determinism, exact time travel, channel models, schedulers,
monitors, and clear errors that change nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocols.kernel import SimError, Simulator, make_scheduler
from protocols.registry import get
from protocols.runner import build, drive, run
from protocols.scenario import Faults, parse
from tests.kernel_fixtures import AfterCS, AfterCSUndeclared, Burst, PingPong, scenario

RING = {"id": "ring-test", "title": "ring", "protocol": "token_ring", "params": {"n": 6, "requests": 3}}


def ring(**over) -> Simulator:
    data = dict(RING)
    data.update(over)
    return build(parse(data))


def random_run(sim: Simulator, seed: int, steps: int) -> list[str]:
    sched = make_scheduler("random", seed)
    for _ in range(steps):
        eid = sched.choose(sim)
        if eid is None:
            break
        sim.step(eid)
    return list(sim.trace)


def test_same_schedule_same_hash_in_two_processes():
    cmd = [sys.executable, "-m", "app.cli", "run", "token-ring", "--json", "--scheduler", "random",
           "--seed", "11"]
    hashes = set()
    for seed in ("1", "2"):   # different PYTHONHASHSEED: nothing may depend on hash order
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
        hashes.add(json.loads(out)["state_hash"])
    assert len(hashes) == 1


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(0, 700), every=st.sampled_from([1, 7, 64]))
def test_goto_equals_fresh_run(seed, k, every):
    sim = build(parse(RING | {"params": {"n": 5, "requests": 200}}))
    sim.snapshot_every = every
    trace = random_run(sim, seed, 700)
    k = min(k, len(trace))
    sim.goto(k)
    fresh = build(parse(RING | {"params": {"n": 5, "requests": 200}}))
    fresh.replay(trace[:k])
    assert sim.step_no == k
    assert sim.state_hash() == fresh.state_hash()
    assert sim.enabled_ids() == fresh.enabled_ids()
    assert sim.monitors.metrics() == fresh.monitors.metrics()
    # and forward again to the end of the recorded timeline
    sim.goto(len(trace))
    fresh.replay(trace[k:])
    assert sim.state_hash() == fresh.state_hash()


def test_back_then_different_event_forgets_the_future():
    sim = ring()
    trace = random_run(sim, 3, 40)
    k = next(k for k in range(10, 40) if (sim.goto(k) or len(sim.enabled_ids()) > 1))
    alternative = next(e for e in sim.enabled_ids() if e != trace[k])
    sim.step(alternative)
    assert sim.trace == trace[:k] + [alternative]
    with pytest.raises(SimError):
        sim.goto(k + 2)


def test_fifo_delivers_in_order_only():
    sim = Simulator(Burst(), scenario(channels="fifo"))
    assert sim.enabled_ids() == ["m0"]
    for eid in ("m0", "m1", "m2"):
        assert sim.enabled_ids() == [eid]
        sim.step(eid)
    assert sim.proc("p1").received == (0, 1, 2)


def test_unordered_can_deliver_out_of_order():
    sim = Simulator(Burst(), scenario(channels="unordered"))
    assert sim.enabled_ids() == ["m0", "m1", "m2"]
    for eid in ("m2", "m0", "m1"):
        sim.step(eid)
    assert sim.proc("p1").received == (2, 0, 1)


def test_fifo_rejects_out_of_order_delivery_and_changes_nothing():
    sim = Simulator(Burst(), scenario(channels="fifo"))
    before = sim.state_hash()
    with pytest.raises(SimError, match="m1.*not enabled.*enabled: m0"):
        sim.step("m1")
    assert sim.state_hash() == before and sim.step_no == 0 and sim.trace == []


@pytest.mark.parametrize("bad", ["m99", "", "a:p0:nothing", "f:drop:m42", "f:crash:nobody", 17])
def test_bad_event_ids_are_clear_errors_that_change_nothing(bad):
    sim = ring()
    random_run(sim, 5, 20)
    before = (sim.state_hash(), sim.step_no, list(sim.trace))
    with pytest.raises(SimError):
        sim.step(bad)
    assert (sim.state_hash(), sim.step_no, list(sim.trace)) == before


@pytest.mark.parametrize("kind", ["random", "oldest", "round-robin"])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 1000))
def test_schedulers_only_pick_enabled_events(kind, seed):
    sim = ring(faults={"drop": True, "duplicate": True, "rate": 0.05})
    sched = make_scheduler(kind, seed, fault_rate=0.05)
    for _ in range(150):
        eid = sched.choose(sim)
        if eid is None:
            assert not [e for e in sim.enabled() if e.kind != "fault"]
            break
        assert eid in sim.enabled_ids()
        sim.step(eid)


def test_oldest_first_serves_the_longest_enabled_event():
    sim = Simulator(Burst(), scenario(channels="unordered"))
    sched = make_scheduler("oldest")
    order = []
    while (eid := sched.choose(sim)) is not None:
        order.append(eid)
        sim.step(eid)
    assert order == ["m0", "m1", "m2"]


def test_scripted_replays_exactly_and_names_the_first_bad_id():
    sim = ring()
    trace = random_run(sim, 9, 60)
    again = ring()
    random_run_with = make_scheduler("scripted", schedule=trace)
    while (eid := random_run_with.choose(again)) is not None:
        again.step(eid)
    assert again.trace == trace and again.state_hash() == sim.state_hash()
    bad = trace[:5] + ["m12345"] + trace[6:]
    third = ring()
    with pytest.raises(SimError, match=r"schedule item 5 \('m12345'\) is not enabled"):
        drive(third, make_scheduler("scripted", schedule=bad), 10_000)
    assert third.step_no == 5


def test_lossy_token_ring_is_caught_as_a_deadlock_with_the_ring_as_cycle():
    res = run(parse(RING | {"variant": "lossy", "params": {"n": 4, "requests": 2}}),
              scheduler="random", seed=4)
    assert res["deadlock"] is not None
    assert sorted(res["deadlock"]["cycle"]) == ["p0", "p1", "p2", "p3"]
    assert not res["served_all"]
    reliable = run(parse(RING | {"params": {"n": 4, "requests": 2}}), scheduler="random", seed=4)
    assert reliable["deadlock"] is None and reliable["served_all"]


def test_duplicated_token_breaks_mutual_exclusion_and_the_monitor_says_so():
    sim = ring(params={"n": 3, "requests": 5})
    sim.step("e:p1:request")
    sim.step("e:p2:request")
    sim.step("f:dup:m0")          # faults are opt-in through step(): m1 is a second token
    sim.step("m0")                # p0 passes the first token on (m2)
    sim.step("m2")                # p1 enters with it
    sim.step("m1")                # the duplicate reaches p0, passed on (m3)
    sim.step("m3")                # p1 is in its critical section: passes it on (m4)
    assert not sim.monitors.violations()
    sim.step("m4")                # p2 enters with the duplicate while p1 is still inside
    viols = sim.monitors.violations()
    assert viols and "resource cs is used by p1, p2 at once" in viols[0].text


def test_livelock_fires_with_the_period_of_a_fair_cycle():
    sim = Simulator(PingPong(), scenario(channels="fifo"))
    sim.step("e:p2:request")
    for _ in range(4):
        sim.step(sim.enabled_ids()[0])
    ll = sim.monitors.first("livelock")
    assert ll is not None and ll.period == 2 and ll.step == 3


def test_livelock_waits_until_the_repetition_is_fair():
    sim = Simulator(PingPong(), scenario(channels="unordered"), variant="stray")
    sim.step("e:p2:request")
    for _ in range(6):             # bounce the ball while the stray message waits
        sim.step(next(e for e in sim.enabled_ids() if e != "m1"))
    assert sim.monitors.first("livelock") is None
    sim.step("m1")                 # the stray message is delivered: now repetitions are fair
    for _ in range(4):
        sim.step(sim.enabled_ids()[0])
    assert sim.monitors.first("livelock") is not None


def test_state_is_immutable_data_that_restores_exactly():
    sim = ring()
    random_run(sim, 2, 30)
    st0 = sim.state()
    h0 = sim.state_hash()
    assert hash(st0) == hash(sim.state()) and st0 == sim.state()
    random_run(sim, 3, 10)
    sim.restore(st0)
    assert sim.state_hash() == h0


def test_cost_per_step_does_not_depend_on_idle_processes():
    """Enabled events are maintained incrementally: a step touches only what it changed."""
    calls = {"n": 0}
    proto = get("token_ring")
    orig = proto.actions

    def counting(*a):
        calls["n"] += 1
        return orig(*a)

    sim = ring(params={"n": 400, "requests": 1})
    proto.actions = counting
    try:
        for _ in range(100):
            sim.step(sim.enabled_ids()[0] if sim.inflight else sim.enabled_ids()[-1])
    finally:
        del proto.actions
    assert calls["n"] <= 2 * 100


def test_faults_appear_in_enabled_only_when_the_scenario_allows_them():
    plain = ring()
    assert not [e for e in plain.enabled() if e.kind == "fault"]
    lossy = ring(faults=Faults(drop=True).model_dump())
    assert "f:drop:m0" in lossy.enabled_ids()


def test_metrics_survive_jumps_across_snapshots_in_both_directions():
    """goto back then forward past several snapshots keeps every served request (a bug once:
    restoring a later snapshot lost the requests served between the two positions)."""
    sim = build(parse(RING | {"params": {"n": 5, "requests": 200}}))
    sim.snapshot_every = 16
    trace = random_run(sim, 8, 400)
    full = sim.monitors.metrics()
    sent_at = dict(sim.monitors.sent_at)
    sim.goto(100)
    sim.goto(len(trace))
    assert sim.monitors.metrics() == full
    assert sim.monitors.sent_at == sent_at
    sim.goto(37)
    fresh = build(parse(RING | {"params": {"n": 5, "requests": 200}}))
    fresh.replay(trace[:37])
    assert sim.monitors.metrics() == fresh.monitors.metrics()


def test_a_fingerprint_collision_is_not_taken_for_a_livelock():
    """The livelock fingerprint is a 64-bit sum; a match is confirmed on the exact states
    (rebuilt from the nearest snapshot) before anything is reported."""
    sim = ring(params={"n": 3, "requests": 3})
    sim.fingerprint = lambda: 42          # every state "collides" with every other
    sim.step("e:p1:request")
    sched = make_scheduler("oldest")
    for _ in range(12):
        sim.step(sched.choose(sim))
    assert sim.monitors.first("livelock") is None
    # the same run with the real fingerprint: still nothing (and a true repetition is found
    # by test_livelock_fires_with_the_period_of_a_fair_cycle)
    again = ring(params={"n": 3, "requests": 3})
    again.replay(sim.trace)
    assert again.monitors.first("livelock") is None


def _lean_walk(sc_id: str, variant: str | None, seed: int, steps: int) -> None:
    """Walk ``sc_id`` at random with the plain simulator; the kernel's ``Transitions`` (its
    lean simulator) follows, loading the plain state at every step, and must see the same
    enabled events, successor state, waiting, critical sections and unfinished processes."""
    import random

    from protocols.kernel import Transitions
    from protocols.scenario import gallery

    sc = gallery()[sc_id]
    sim = build(sc, variant)
    ts = Transitions(build(sc, variant))
    rng = random.Random(seed)

    def same(a: list, b: list) -> bool:
        return [(e.id, e.kind, e.pid, e.progress, e.msg) for e in a] == \
            [(e.id, e.kind, e.pid, e.progress, e.msg) for e in b]

    for _ in range(steps):
        evs = sim.enabled()
        here = sim.state()
        mine = ts.enabled_in(here)
        assert same(mine, evs)                     # rebuilt from the State
        if not evs:
            break
        ev = evs[rng.randrange(len(evs))]
        out = ts.step(here, mine[evs.index(ev)])
        sim.step(ev.id)
        # equal up to history: a waiting entry's request step counts from the parent
        assert out.state.key() == sim.state().key()
        assert out.state.messages == sim.state().messages
        assert same(ts.enabled(), sim.enabled())   # kept up to date by the step
        assert out.unfinished == frozenset(sim.unfinished())
        assert sorted(ts.view.waiting) == sorted(sim.waiting) and ts.view.cs == sim.cs
        if sim.protocol.id != "kout_tree":         # its legitimacy is history (issue 14)
            assert ts.violations() == tuple(sorted(sim.protocol.violations(sim)))


def _gallery_variants() -> list[tuple[str, str]]:
    from protocols.scenario import gallery
    out = []
    for sid, sc in sorted(gallery().items()):
        for v in get(sc.protocol).variants:
            out.append((sid, v))
    return out


@pytest.mark.parametrize("sid,variant", _gallery_variants())
def test_lean_simulator_steps_like_the_plain_one(sid, variant):
    """The search API's lean simulator skips only what a State does not contain."""
    for seed in range(3):
        _lean_walk(sid, variant, seed, 80)


# ---------------------------------------------------------------- unfinished processes (issue 14)
AFTER_CS = ["e:c:request", "m0", "m1", "e:c:release", "m2"]


def test_a_client_stuck_after_its_critical_section_is_a_deadlock():
    """c left its critical section and waits for an EndACK that never comes: nobody *waits*,
    but c declares itself unfinished, so the monitor reports the deadlock at that step."""
    sim = Simulator(AfterCS(), scenario(), "lost")
    sim.replay(AFTER_CS)
    assert not sim.waiting and not sim.cs and sim.unfinished() == ["c"]
    dl = sim.monitors.first("deadlock")
    assert dl is not None and dl.step == len(AFTER_CS)
    assert "c has not finished" in dl.text
    ok = Simulator(AfterCS(), scenario(), "acks")
    ok.replay(AFTER_CS + ["m3"])
    assert ok.unfinished() == [] and ok.monitors.first("deadlock") is None
    blind = Simulator(AfterCSUndeclared(), scenario(), "lost")
    blind.replay(AFTER_CS)
    assert blind.unfinished() == [] and blind.monitors.first("deadlock") is None


def test_in_cs_counts_as_unfinished_by_default():
    sim = Simulator(AfterCSUndeclared(), scenario(), "acks")
    sim.replay(AFTER_CS[:3])
    assert sim.cs and not sim.waiting and sim.unfinished() == ["c"]


def test_a_client_looping_after_its_critical_section_is_a_livelock():
    sim = Simulator(AfterCS(), scenario(), "later")
    sim.replay(AFTER_CS + ["m3", "m4", "m5"])
    ll = sim.monitors.first("livelock")
    assert ll is not None and ll.period == 2 and "c has not finished" in ll.text
    blind = Simulator(AfterCSUndeclared(), scenario(), "later")
    blind.replay(AFTER_CS + ["m3", "m4", "m5"])
    assert blind.monitors.first("livelock") is None


def test_an_injected_message_is_deliverable_but_not_a_step():
    sim = Simulator(Burst(), scenario(channels="unordered"))
    before = sim.enabled_ids()
    m = sim.inject("p1", "p0", "Num", 9)
    assert m.id not in before and m.id in sim.enabled_ids()
    assert sim.step_no == 0 and sim.trace == []


def test_actions_with_unhashable_fields_step_like_hashable_ones(monkeypatch):
    """The kernel reuses one Event per (process, action); an Action carrying a list (its
    ``lines`` as a list, say) cannot be a key and must still give the same run."""
    from protocols.kernel.events import Action
    sc = parse({"id": "t", "title": "t", "protocol": "token_ring", "params": {"n": 4, "requests": 3}})
    plain = build(sc)
    drive(plain, make_scheduler("random", 4), 60)
    listy = build(sc)
    orig = listy.protocol.actions
    monkeypatch.setattr(listy.protocol, "actions", lambda c, p, s: [
        Action(a.kind, a.name, a.label, a.progress, a.algorithm, list(a.lines))
        for a in orig(c, p, s)])
    drive(listy, make_scheduler("random", 4), 60)
    assert listy.trace == plain.trace and listy.state_hash() == plain.state_hash()


# ---------------------------------------------------------------- the headless core (issue 15)
@pytest.mark.parametrize("sid,variant", _gallery_variants())
def test_headless_core_steps_like_the_simulator(sid, variant):
    """``Core`` (no timeline) and ``Simulator`` (core + timeline), driven by the same random
    scheduler, the core by event (``choose_event`` / ``take``) and the simulator by id: the
    same event ids, the same state hash at every step, the same safety and deadlock findings."""
    from protocols.kernel.core import Core
    from protocols.scenario import gallery

    sim = build(gallery()[sid], variant)
    core = Core.of(sim)
    a, b = make_scheduler("random", 7), make_scheduler("random", 7)
    for _ in range(60):
        assert core.enabled_ids() == sim.enabled_ids()
        ev = a.choose_event(core)
        eid = b.choose(sim)
        if ev is None:
            assert eid is None
            break
        assert ev.id == eid
        core.take(ev)
        sim.step(eid)
        assert core.state_hash() == sim.state_hash()
        assert core.state() == sim.state()
    judged = ("violation", "deadlock")
    assert sorted((k, f.text) for k, f in core.monitors.findings.items() if f.kind in judged) \
        == sorted((k, f.text) for k, f in sim.monitors.findings.items() if f.kind in judged)


def test_headless_core_checks_ids_and_keeps_no_timeline():
    """``step`` by id refuses an event that is not enabled (SimError, nothing changed), and a
    core keeps no trace, narration or snapshots: ``step`` narrates nothing."""
    from protocols.kernel.core import Core
    core = Core.of(ring(params={"n": 3, "requests": 1}))
    before = core.state_hash()
    with pytest.raises(SimError, match="not enabled"):
        core.step("e:p0:release")
    assert core.state_hash() == before and core.step_no == 0
    assert core.step("e:p0:request") == ()
    assert not hasattr(core, "trace") and not hasattr(core, "_snapshots")
    assert core.waiting == {"p0": (1, 0)}


def test_no_module_outside_the_kernel_touches_its_private_names() -> None:
    """Issue 15: the kernel's private methods and attributes (``_put``, ``_touched``, …) are
    used only inside protocols/kernel/; everything else goes through its public API."""
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    private: set[str] = set()
    for p in (root / "protocols" / "kernel").glob("*.py"):
        text = p.read_text()
        private |= set(re.findall(r"def (_[a-z]\w*)\(self", text))
        private |= set(re.findall(r"self\.(_[a-z]\w*)\s*[:=]", text))
    assert {"_put", "_touched", "_send"} <= private          # the scan sees the kernel's names
    hits = []
    for folder in ("protocols", "app", "benchmarks", "tests"):
        for p in sorted((root / folder).rglob("*.py")):
            rel = p.relative_to(root).as_posix()
            if rel.startswith("protocols/kernel/") or rel == "tests/test_kernel.py":
                continue
            text = p.read_text()
            local = set(re.findall(r"self\.(_[a-z]\w*)\s*[:=,]", text))  # the file's own
            for n, line in enumerate(text.splitlines(), 1):
                for m in re.finditer(r"\b(\w+)\.(_[a-z]\w*)\b", line):
                    if m.group(1) != "self" and m.group(2) in private - local:
                        hits.append(f"{rel}:{n}: {m.group(0)}")
    assert hits == []


def test_a_step_that_peeks_is_replayed_only_where_the_probe_answers_the_same():
    """``Ctx.peek`` keeps a step replayable (``Transitions``' memo): p0's Tick is recorded
    with p1's answer (lamp off) and replayed where p1 still answers so; where p1's lamp is on
    it is taken afresh and reports its violation, as the reference transitions do."""
    from protocols.kernel import Transitions
    from tests.kernel_fixtures import Peek
    ts = Transitions(Simulator(Peek(), scenario(channels="unordered")))
    ref = Transitions(Simulator(Peek(), scenario(channels="unordered")), fast=False)
    root = ts.initial
    nums, cnums = ts.root_numbers()
    tick1, tick2, switch = ts.events_at(root, nums, cnums)
    assert switch.id == "e:p1:switch"
    first = ts.step_fast(root, nums, cnums, frozenset(), tick1)
    assert ts.slow == 1 and first.local is not None and not first.violations
    again = ts.step_fast(first.state, first.nums, first.cnums, frozenset(), tick2)
    assert ts.slow == 1 and again.local == first.local       # replayed: p1 answers the same
    assert ts.judge(again) == ()
    assert again.state == ref.step(first.state, tick2).state
    on = ts.step_fast(root, nums, cnums, frozenset(), switch)
    slow = ts.slow
    after = ts.step_fast(on.state, on.nums, on.cnums, frozenset(), tick1)
    assert ts.slow == slow + 1 and after.local is None      # p1's lamp is on: taken afresh
    assert after.violations == ("p0 ticked while p1's lamp is on",)
    assert after.violations == ref.step(on.state, tick1).violations


def test_a_step_after_which_the_monitor_writes_its_ghost_is_never_recorded():
    """``Witness``: p0's first entry happens while the Beacon is in flight, so the monitor
    marks p0 after it. The memoised search must not record that step's effect (mark
    included) and replay it once the Beacon is delivered: it reaches exactly the states the
    lean simulator reaches, among them p0 in its critical section, unmarked, Beacon gone.
    (Removing the check in ``Transitions._remember`` loses that state.)"""
    from protocols.explorer.engine import Search, SearchOptions
    from protocols.kernel import Transitions
    from tests.kernel_fixtures import Witness

    def states(fast: bool) -> set:
        ts = Transitions(Simulator(Witness(), scenario(channels="unordered")), fast=fast)
        seen = {ts.initial}
        s = Search(ts, SearchOptions(max_states=1_000, deadlocks=False,
                                     audit=lambda st, _schedule: seen.add(st)))
        s.run()
        assert s.fast == fast
        return {(st.procs[0].c, st.procs[0].seen, len(st.messages)) for st in seen}

    reference = states(False)
    assert (1, False, 0) in reference       # entered after the Beacon was taken: not marked
    assert (1, True, 1) in reference        # entered while it was in flight: marked
    assert states(True) == reference


# ---------------------------------------------------------------- first-time steps, alone
FIRST_STEPS = [("datta-fig1", "naive"), ("datta-fig3", "full"), ("coterie-fig1", "full"),
               ("game-three-nodes", "full"), ("token-ring", "reliable")]


@pytest.mark.parametrize("sid,variant", FIRST_STEPS)
def test_a_first_time_local_step_runs_on_its_process_alone(sid, variant):
    """A step the search meets for the first time is run on its own process alone
    (``kernel/alone.py``) when it stays there: the lean simulator is not even loaded for it,
    and its outcome is the reference transition's (state, messages, unfinished, CS entry,
    violations once judged). A step that reaches further (another process, ``ctx.sim``, a
    critical-section entry) still takes the lean simulator, with the same outcome."""
    from collections import deque

    from protocols.kernel import Transitions
    from protocols.scenario import gallery
    sc = gallery()[sid]
    ts = Transitions(build(sc, variant))
    ref = Transitions(build(sc, variant), fast=False)
    assert ts.memo
    nums, cnums = ts.root_numbers()
    ts.load(ts.initial)
    queue = deque([(ts.initial, nums, cnums, ts.unfinished())])
    seen = {ts.initial.key()}
    alone = firsts = 0
    while queue and firsts < 150:
        st, nums, cnums, unf = queue.popleft()
        for ev in ts.events_at(st, nums, cnums):
            slow, before = ts.slow, ts.view.state()
            out = ts.step_fast(st, nums, cnums, unf, ev)
            if ts.slow > slow:
                firsts += 1
                if out.local is not None and not out.entered_cs:
                    assert ts.view.state() == before, ev.id     # never loaded
                    alone += 1
            r = ref.step(st, {e.id: e for e in ref.enabled_in(st)}[ev.id])
            assert out.state.key() == r.state.key() and out.state.messages == r.state.messages
            assert out.unfinished == r.unfinished and out.entered_cs == r.entered_cs
            assert ts.judge(out) == r.violations
            if not r.violations and out.state.key() not in seen:
                seen.add(out.state.key())
                queue.append((out.state, out.nums, out.cnums, out.unfinished))
    assert firsts and alone, (firsts, alone)


@pytest.mark.parametrize("sid,variant", [("datta-fig3", "naive"), ("token-ring", "reliable"),
                                         ("coterie-fig1", "full"), ("kout-fig3", "no-priority")])
def test_events_and_keys_in_one_pass_equal_the_two_calls(sid, variant):
    """``Transitions.events_and_keys`` (the engine's one pass per expanded state) lists the
    same events as ``events_at`` and gives each the same successor key, identity and
    ``step_fast`` start as ``successor_keys``: on unordered and FIFO channels, on every state
    of a bounded breadth-first walk (kout-fig3's FIFO channels hold several messages whose
    contents' numbers are not in message order)."""
    from collections import deque

    from protocols.explorer.keys import Keyer
    from protocols.kernel import Transitions
    from protocols.scenario import gallery
    sim = build(gallery()[sid], variant)
    ts = Transitions(sim)
    keyer = Keyer(sim.protocol, sim.config, sim.pids, sim.fifo, None, forget=False,
                  numbers=ts.numbers, contents=ts)
    nums, cnums = ts.root_numbers()
    ts.load(ts.initial)
    queue = deque([(ts.initial, nums, cnums, ts.unfinished())])
    seen = {ts.initial.key()}
    keyed = 0
    while queue and len(seen) < 400:
        st, nums, cnums, unf = queue.popleft()
        events, pres = ts.events_and_keys(st, nums, cnums, keyer)
        assert events == ts.events_at(st, nums, cnums)
        assert pres == ts.successor_keys(st, nums, cnums, events, keyer)
        keyed += sum(pre[0] is not None for pre in pres)
        for ev, pre in zip(events, pres, strict=True):
            out = ts.step_fast(st, nums, cnums, unf, ev, pre)
            # a key from numbers (``Keyer.step_key``) is the successor's own key
            assert pre[0] is None or pre[0] == keyer.key_of(out) == keyer.key(out.state)
            if out.state.key() not in seen:
                seen.add(out.state.key())
                queue.append((out.state, out.nums, out.cnums, out.unfinished))
    assert keyed > 0


def test_a_stored_state_is_judged_with_what_the_simulator_gained_since():
    """``Transitions.judge`` of replayed successors (on a view of their parts) after a step
    left a new attribute on the simulator that the protocol's predicate reads with a default
    (``Latecomer``): each successor's violations are the reference transition's."""
    from protocols.kernel import Transitions
    from tests.kernel_fixtures import Latecomer
    ts = Transitions(Simulator(Latecomer(), scenario(channels="unordered")))
    ref = Transitions(Simulator(Latecomer(), scenario(channels="unordered")), fast=False)
    root = ts.initial
    nums, cnums = ts.root_numbers()
    tick1, _tick2, switch = ts.events_at(root, nums, cnums)
    first = ts.step_fast(root, nums, cnums, frozenset(), tick1)     # recorded, judged: none
    assert ts.judge(first) == ref.step(root, tick1).violations == ()
    on = ts.step_fast(root, nums, cnums, frozenset(), switch)       # leaves the note
    assert ts.judge(on) == ref.step(root, switch).violations == ("a note on the simulator",)
    again = ts.step_fast(root, nums, cnums, frozenset(), tick1)     # replayed, judged anew
    assert again.local is not None
    assert ts.judge(again) == ref.step(root, tick1).violations == ("a note on the simulator",)


def test_a_first_time_step_that_hides_leaving_its_process_still_takes_the_lean_simulator():
    """A handler that swallows every exception (``Copycat``: a bare ``except`` around reading
    another process) cannot make a non-local step look local: the try alone is abandoned
    anyway (``AloneCtx.left``), the step takes the lean simulator, is not recorded, and each
    outcome is the reference transition's, with p1's lamp off and on."""
    from protocols.kernel import Transitions
    from tests.kernel_fixtures import Copycat
    ts = Transitions(Simulator(Copycat(), scenario(channels="unordered")))
    ref = Transitions(Simulator(Copycat(), scenario(channels="unordered")), fast=False)
    root = ts.initial
    nums, cnums = ts.root_numbers()
    tick1, _tick2, switch = ts.events_at(root, nums, cnums)
    on = ts.step_fast(root, nums, cnums, frozenset(), switch)
    for here, n, c in ((root, nums, cnums), (on.state, on.nums, on.cnums)):
        out = ts.step_fast(here, n, c, frozenset(), tick1)
        assert out.local is None                        # not recorded: it read p1
        expected = ref.step(here, {e.id: e for e in ref.enabled_in(here)}[tick1.id]).state
        assert out.state == expected
    assert out.state.procs[0].on                        # copied p1's lamp, switched on


@pytest.mark.parametrize("ref,variant,bound", [
    ({"id": "datta-two-clients", "title": "two clients, two resources",
      "protocol": "datta_ring", "topology": {"ring": ["R1", "R2"]},
      "workload": {"clients": [{"id": "C1", "requests": [["R1", "R2"]]},
                               {"id": "C2", "requests": [["R2", "R1"]]}]}}, "naive", 2100),
    ("datta-fig3", "naive", 600), ("kout-fig2", "no-pusher", 600), ("coterie-fig1", "full", 600),
    ("token-ring", "reliable", 600)])
def test_a_stored_successor_is_judged_and_found_stuck_as_the_reference_says(ref, variant, bound):
    """``Transitions.judge`` (the protocol's predicates on a ``_View`` of the successor's
    parts) and ``stuck_of`` (deadlock from the successor's numbers: in-flight progress
    messages, each process state's progress actions) answer what the reference simulator,
    loaded with the same state, answers: on every state of a bounded breadth-first walk, on
    unordered and FIFO channels, deadlocked or not. The two-client ring's deadlock is met
    within ``bound`` states (concrete ones: message numbers included)."""
    from collections import deque

    from protocols.kernel import Transitions
    from protocols.scenario import gallery
    sc = parse(ref) if isinstance(ref, dict) else gallery()[ref]
    ts = Transitions(build(sc, variant))
    plain = Transitions(build(sc, variant), fast=False)
    nums, cnums = ts.root_numbers()
    ts.load(ts.initial)
    queue = deque([(ts.initial, nums, cnums, ts.unfinished())])
    seen = {ts.initial.key()}
    stuck = judged = 0
    while queue and len(seen) < bound:
        st, nums, cnums, unf = queue.popleft()
        for ev in ts.events_at(st, nums, cnums):
            out = ts.step_fast(st, nums, cnums, unf, ev)
            plain.load(out.state)
            assert ts.stuck_of(out) == plain.stuck(), ev.id
            assert ts.judge(out) == plain.violations(), ev.id
            judged += 1
            stuck += ts.stuck_of(out)
            if out.state.key() not in seen:
                seen.add(out.state.key())
                queue.append((out.state, out.nums, out.cnums, out.unfinished))
    assert judged > 100
    if isinstance(ref, dict):
        assert stuck, "the walk should meet the ring's deadlock"


def test_in_flight_messages_of_a_stored_state_read_like_the_simulators_dict():
    """``kernel.transitions.InFlight`` (what ``violations`` reads as ``sim.inflight`` on a
    stored state) answers every read a protocol makes of ``Simulator.inflight`` the same:
    values, keys, items, lookups by number, membership, length, ``get``."""
    from protocols.kernel.events import Message
    from protocols.kernel.transitions import InFlight
    msgs = (Message(3, "R1", "R2", "Token"), Message(5, "C1", "R1", "NewRequest", (1, 2)),
            Message(8, "R2", "R1", "Token"))
    ref = {m.seq: m for m in msgs}
    got = InFlight(msgs)
    assert list(got.values()) == list(ref.values())
    assert list(got) == list(ref) and list(got.keys()) == list(ref.keys())
    assert list(got.items()) == list(ref.items()) and len(got) == len(ref) == 3
    assert got[5] is ref[5] and got.get(8) is ref[8] and got.get(4) is None
    assert 3 in got and 4 not in got and dict(got) == ref
    with pytest.raises(KeyError):
        got[4]
    assert list(InFlight(()).values()) == [] and not InFlight(())
