"""The token ring's view takes its positions from a per-size cache (protocols/token_ring.py,
``ring_positions``): the frames a session sends are the same as when every step recomputed them.
Checked against the formula written out here, at every step of runs of several ring sizes, and
over the real websocket for the 500-process ring the cache was made for."""

from __future__ import annotations

import json
import math

import pytest
from fastapi.testclient import TestClient

from protocols.runner import build, scheduler_for
from protocols.scenario import gallery
from protocols.token_ring import ring_positions


def _ring(n: int):
    return gallery()["token-ring"].model_copy(update={"params": {"n": n, "requests": 2}})


def _recomputed(sim) -> list[tuple[float, float]]:
    """The positions as view() computed them before the cache, for every process."""
    n = len(sim.pids)
    return [(round(500 + 300 * math.cos(2 * math.pi * i / n - math.pi / 2), 1),
             round(350 + 300 * math.sin(2 * math.pi * i / n - math.pi / 2), 1))
            for i in range(n)]


@pytest.mark.parametrize("n", [2, 5, 7, 100, 500])
def test_cached_positions_are_the_recomputed_ones_at_every_step(n: int) -> None:
    sc = _ring(n)
    sim = build(sc, "reliable")
    sched = scheduler_for(sc, "reliable")
    for _ in range(40):
        v = sim.protocol.view(sim)
        assert [(x["x"], x["y"]) for x in v["nodes"]] == _recomputed(sim)
        assert [x["id"] for x in v["nodes"]] == list(sim.pids)
        eid = sched.choose(sim)
        if eid is None:
            break
        sim.step(eid)
    assert ring_positions(n) is ring_positions(n)          # computed once per size


def test_websocket_frames_carry_the_recomputed_positions() -> None:
    from app.main import create_app
    sc = _ring(500).model_dump(mode="json")
    with TestClient(create_app()) as client, client.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"op": "load", "scenario": sc, "id": 1}))
        f = json.loads(ws.receive_text())
        assert f["reply_to"] == 1 and f["type"] == "frame"
        sim = build(_ring(500), "reliable")
        nodes = f["view"]["nodes"]
        assert [(x["x"], x["y"]) for x in nodes] == _recomputed(sim)
