"""The fifth teaching protocol, Ricart–Agrawala: the explorer's verdicts, the view over the
real websocket, the typed params, and the deferred REPLY that orders two requests."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from app.limits import Limits
from app.main import create_app
from protocols.explorer import check
from protocols.kernel.viewschema import View
from protocols.runner import build
from protocols.scenario import ScenarioError, gallery, parse


def instance(n: int, requests: int, variant: str = "ricart-agrawala") -> object:
    return parse({"id": f"ra-{n}-{requests}", "title": "t", "protocol": "ricart_agrawala",
                  "variant": variant, "params": {"n": n, "requests": requests}})


@pytest.mark.parametrize("n,requests", [(2, 2), (3, 1)])
def test_explorer_exhausts_small_instances_safe_and_deadlock_free(n, requests):
    res = check(instance(n, requests), max_states=100_000)
    assert res["result"] == "ok" and res["states"] > 10, res


def test_explorer_finds_the_eager_reply_race_and_it_replays():
    res = check(instance(2, 1, "eager-reply"), max_states=100_000)
    assert res["result"] == "violation"
    sim = build(instance(2, 1, "eager-reply"))
    sim.replay(res["counterexample"]["schedule"])
    assert sim.monitors.violations() and set(sim.cs) == {"p1", "p2"}


def test_the_older_request_defers_the_younger_ones_reply():
    sim = build(gallery()["ricart-agrawala"])
    sim.replay(["e:p1:request", "e:p2:request", "m2"])       # p2's REQUEST 1 reaches p1
    p1 = sim.proc("p1")
    assert p1.deferred == ("p2",) and p1.highest_seq == 1
    g = {x["name"]: x for x in sim.inspect("p1")["guards"]}
    assert not g["enter (all REPLYs in)"]["holds"]
    assert g["enter (all REPLYs in)"]["waiting_for"] == "a REPLY from p2, p3"


def test_bad_params_name_the_field():
    with pytest.raises(ScenarioError, match=r"scenario.params.n: must be a whole number from 2"):
        instance(1, 1)
    with pytest.raises(ScenarioError, match=r"scenario.params.rounds: Extra inputs"):
        parse({"id": "x", "title": "t", "protocol": "ricart_agrawala", "params": {"rounds": 2}})


def test_viewer_plays_it_over_the_websocket_and_draws_the_pinned_view():
    client = TestClient(create_app(Limits()))
    with client.websocket_connect("/ws", headers={"origin": "http://testserver"}) as ws:
        ws.send_text(json.dumps({"op": "load", "scenario": "ricart-agrawala", "schedule": [],
                                 "id": 1}))
        f = json.loads(ws.receive_text())
        assert f["type"] == "frame" and f["step"] == 0, f
        hashes = [f["state_hash"]]
        for k, eid in enumerate(gallery()["ricart-agrawala"].schedule, start=1):
            assert eid in {e["id"] for e in f["enabled"]}
            ws.send_text(json.dumps({"op": "deliver", "event": eid, "id": k + 1}))
            f = json.loads(ws.receive_text())
            assert f["type"] == "frame" and f["step"] == k, f
            hashes.append(f["state_hash"])
    sim = build(gallery()["ricart-agrawala"])
    want = [sim.state_hash()]
    for eid in gallery()["ricart-agrawala"].schedule:
        sim.step(eid)
        want.append(sim.state_hash())
    assert hashes == want
    view = View.model_validate(sim.protocol.view(sim))
    assert [n.id for n in view.nodes] == ["p1", "p2", "p3"]
    assert {(e.src, e.dst) for e in view.edges} == {("p2", "p1")}   # p1 defers p2's REPLY
