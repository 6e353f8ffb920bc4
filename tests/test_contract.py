"""The protocol contract: the inspector's guards agree with what can actually happen.

Every state of every gallery scenario (its own scheduler, its file's variant, up to 300 steps):
- a rules-table protocol's holding guards enable exactly the events ``enabled()`` lists for that
  process, each event by exactly one guard (datta_ring: under every variant);
- for every protocol, a receive guard holds only while a message of its kind is deliverable to
  the process (the generic check in ``Protocol.inspect_guards``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from protocols import registry
from protocols.kernel import DELIVER, FAULT, Simulator
from protocols.kernel.rules import RuleProtocol
from protocols.runner import build, scheduler_for
from protocols.scenario import gallery

MAX_STEPS = 300


def states(sid: str, variant: str | None = None) -> Iterator[Simulator]:
    sc = gallery()[sid]
    sim = build(sc, variant)
    sched = scheduler_for(sc, sim.variant)
    while True:
        yield sim
        if sim.step_no >= MAX_STEPS:
            return
        eid = sched.choose(sim)
        if eid is None:
            return
        sim.step(eid)


def guards_of(sim: Simulator, pid: str) -> list[dict]:
    """What the inspector shows of ``pid``'s guards (``sim.inspect`` without the variables)."""
    return [g.as_dict() for g in sim.protocol.inspect_guards(sim, pid)]


def test_the_inspector_shows_exactly_these_guards() -> None:
    sim = build(gallery()["coterie-fig1"])
    assert all(sim.inspect(p)["guards"] == guards_of(sim, p) for p in sim.pids)


def rule_scenarios() -> list[str]:
    return [sid for sid, sc in gallery().items()
            if isinstance(registry.get(sc.protocol), RuleProtocol)]


def every_variant(protocol: str) -> list[tuple[str, str]]:
    """(scenario, variant) for each gallery scenario of ``protocol`` under each variant."""
    return [(sid, v) for sid, sc in sorted(gallery().items()) if sc.protocol == protocol
            for v in registry.get(protocol).variants]


def test_every_protocol_is_a_rules_table() -> None:
    """Their guard values (not only how many hold) are compared with enabled() below."""
    covered = {gallery()[sid].protocol for sid in rule_scenarios()}
    assert {"datta_ring", "kout_tree", "task_game", "coterie", "token_ring",
            "ricart_agrawala"} <= covered


@pytest.mark.parametrize("sid", rule_scenarios())
def test_rules_table_guards_are_exactly_the_enabled_events(sid: str) -> None:
    exactly_the_enabled_events(sid, None)


@pytest.mark.parametrize("sid, variant", every_variant("datta_ring"))
def test_datta_ring_guards_are_exactly_the_enabled_events_in_every_variant(sid: str,
                                                                          variant: str) -> None:
    """datta_ring's variants replace rules of the printed table (prose.py, repairs.py): the
    inspector must agree with the simulator under each of them, not only the file's own."""
    exactly_the_enabled_events(sid, variant)


def exactly_the_enabled_events(sid: str, variant: str | None) -> None:
    for sim in states(sid, variant):
        enabled = [e for e in sim.enabled() if e.kind != FAULT]
        for pid in sim.pids:
            guards = guards_of(sim, pid)
            # a message to a crashed process is the kernel's to lose: no rule of it holds
            mine = sorted(e.id for e in enabled if e.pid == pid and pid not in sim.crashed)
            got = sorted(eid for g in guards for eid in g["events"])
            assert got == mine, f"{sid} step {sim.step_no} {pid}: guards {got}, enabled {mine}"
            for g in guards:
                assert g["holds"] == bool(g["events"]), (sid, sim.step_no, pid, g)
                assert g["holds"] or g["waiting_for"], f"{g['name']} is false with no reason"


@pytest.mark.parametrize("sid", sorted(gallery()))
def test_guards_agree_with_enabled_on_every_state(sid: str) -> None:
    """Every protocol: a receive guard holds exactly while a message of its kind is
    deliverable to the process, and as many of its other guards hold as it has enabled
    actions (each guarded action is one enabled event)."""
    seen = 0
    for sim in states(sid):
        enabled = [e for e in sim.enabled() if e.kind != FAULT]
        deliverable = {e.id: e.msg for e in enabled if e.kind == DELIVER}
        for pid in sim.pids:
            guards = guards_of(sim, pid)
            actions = [e.id for e in enabled if e.pid == pid and e.kind != DELIVER]
            held = [g["name"] for g in guards if g["holds"] and not g["receives"]]
            n_held = sum(len(g["events"]) or 1    # a family of a rules table: one per event
                         for g in guards if g["holds"] and not g["receives"])
            assert n_held == len(actions), \
                f"{sid} step {sim.step_no} {pid}: guards {held} hold, enabled {actions}"
            for g in guards:
                if not g["receives"]:
                    continue
                seen += 1
                assert g["holds"] == bool(g["events"]), (sid, sim.step_no, pid, g)
                for eid in g["events"]:
                    m = deliverable[eid]
                    assert m.dst == pid and g["receives"] in ("*", m.kind), (sid, pid, g)
    assert seen, f"{sid}: no receive guard was ever shown"


def test_a_token_in_flight_elsewhere_does_not_make_a_receive_guard_hold() -> None:
    sim = build(gallery()["token-ring"])
    sim.step("e:p2:request")                      # p2 wants; the Token is on its way to p0
    g = {x["name"]: x for x in sim.inspect("p2")["guards"]}["enter (on Token)"]
    assert not g["holds"] and g["waiting_for"] == "the Token from p1"
    assert {x["name"]: x for x in sim.inspect("p0")["guards"]}["pass on (on Token)"]["holds"]


@pytest.mark.parametrize("sid", sorted(gallery()))
def test_every_view_has_the_pinned_shape(sid: str) -> None:
    from protocols.kernel.viewschema import View
    for sim in states(sid):
        if sim.step_no % 25 == 0:
            view = View.model_validate(sim.protocol.view(sim))
            assert {n.id for n in view.nodes} >= set(sim.pids) or view.layout == "game", sid


def test_every_feature_names_an_erratum_entry_that_exists() -> None:
    from protocols.erratum.model import load, protocols
    papers = set(protocols())
    for pid in registry.available():
        table = registry.get(pid).variant_table
        if table is None:
            continue
        assert table.features, pid
        for f in table.features:
            assert f.reason, (pid, f)
            if f.kind in ("ablation", "paper") and not f.erratum:
                continue
            proto, _, entry = f.erratum.partition(":")
            assert proto == pid and entry, (pid, f)
            if pid in papers:
                assert entry in {e.id for e in load(pid).entries()}, (pid, f)


def test_schema_types_the_three_sections_and_lists_variants_with_their_features() -> None:
    from protocols.scenario import schema
    s = schema("coterie")
    assert s["properties"]["variant"]["enum"] == ["as-printed", "full", None]
    defs = s["$defs"]
    assert {"Params", "Topology", "Workload"} <= set(defs)
    assert defs["Workload"]["additionalProperties"] is False
    full = {v["variant"]: v for v in s["x-variants"]}["full"]
    assert [f["name"] for f in full["features"]] == ["R1", "R2", "R3", "C6"]
    for pid in registry.available():        # every protocol types its three sections
        assert registry.get(pid).scenario_model is not None, pid
        assert "Workload" in schema(pid)["$defs"] or pid in ("token_ring", "ricart_agrawala")


def test_every_protocol_declares_its_variants_as_a_table() -> None:
    for pid in registry.available():
        proto = registry.get(pid)
        assert proto.variant_table is not None, pid
        assert proto.variants == proto.variant_table.names
        assert proto.default_variant in proto.variants


@pytest.mark.parametrize("sid", [sid for sid, sc in sorted(gallery().items())
                                 if sc.scheduler.kind != "scripted"][:6])
def test_the_run_service_stops_where_the_session_plays_to(sid: str) -> None:
    """`allocscope run` (service.Run) and the web session's play stop at the same step: both
    ask service.stop_reason, and the session makes its scheduler with service.scheduler_for."""
    from app.limits import Limits
    from app.session import Session
    from protocols import service
    calls = []
    run = service.Run(gallery()[sid])
    why = run.drive(lambda sim, info: calls.append((info.event.id, info.first_seq)))
    assert len(calls) == run.sim.step_no and why in (service.END, service.FIRED,
                                                       service.SERVED, service.BUDGET)
    s = Session(Limits(play_burst=100_000))
    s.load(sid, schedule=[])
    s.set_scheduler(run.scenario.scheduler.kind, run.scenario.scheduler.seed)
    s.start_play()
    while s.playing:
        s.play_step()
    assert s.sim.step_no == run.sim.step_no and s.sim.state_hash() == run.sim.state_hash()
