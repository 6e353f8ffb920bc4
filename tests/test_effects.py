"""The `effect` websocket op (app/effects.py): what the last step changed and what an enabled
event would change, through the real websocket; a preview never moves the run."""

from __future__ import annotations

from typing import Any

import pytest

from protocols import runner
from protocols.scenario import gallery

from .test_ws import Peer, client  # noqa: F401 - the module's app fixture

SIDS = ["datta-fig1", "coterie-fig1", "kout-fig3", "game-conflict"]


@pytest.fixture
def peer(client):  # noqa: F811
    with client.websocket_connect("/ws") as ws:
        yield Peer(ws)


def _procs(sim: Any) -> dict[str, Any]:
    return {p: sim.protocol.describe(sim.config, p, sim.proc(p)) for p in sim.pids}


@pytest.mark.parametrize("sid", SIDS)
def test_previews_come_true_and_diffs_match_the_replay(peer: Peer, sid: str) -> None:
    """For the first 12 steps: the preview of the recorded event (asked at k-1) equals the diff
    of step k; its changed processes are exactly those whose variables differ between the
    replayed states; and asking never changes the session's state hash or step."""
    peer.cmd("load", scenario=sid, step=0)
    sc = gallery()[sid]
    sched = sc.schedule_for(sc.variant or None)[:12]
    sim = runner.build(sc, None)
    for k, eid in enumerate(sched, start=1):
        before = _procs(sim)
        f0 = peer.cmd("goto", step=k - 1)
        pre = peer.cmd("effect", event=eid)
        assert pre["type"] == "effect" and pre["of"] == "next" and pre["step"] == k - 1
        again = peer.cmd("goto", step=k - 1)
        assert again["state_hash"] == f0["state_hash"]          # the preview moved nothing
        peer.cmd("goto", step=k)
        diff = peer.cmd("effect")
        assert diff["of"] == "last" and diff["event"] == eid and diff["step"] == k
        for key in ("changes", "sent", "consumed", "entered_cs", "left_cs", "crashed", "narration"):
            assert pre[key] == diff[key], (sid, k, key)
        sim.step(eid)
        after = _procs(sim)
        assert {c["proc"] for c in diff["changes"]} == {p for p in sim.pids if before[p] != after[p]}


def test_a_bad_preview_is_an_error_and_the_session_goes_on(peer: Peer) -> None:
    f = peer.cmd("load", scenario="datta-fig1")
    bad = peer.cmd("effect", event="m999")
    assert bad["type"] == "error" and "m999" in bad["message"]
    assert peer.cmd("effect")["step"] == f["step"]
    assert peer.cmd("goto", step=0)["step"] == 0
    assert peer.cmd("effect")["changes"] == []
