"""Graceful degradation: the governor slows play when the event loop lags, recovers when it
does not, and a saturated server refuses new sessions with a clear message."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from app.governor import MIN_FACTOR, REFUSE_BELOW, Governor
from app.main import create_app


def test_lag_lowers_the_play_factor_and_calm_restores_it():
    g = Governor()
    for _ in range(20):
        g.observe(0.2)                       # the loop is 200 ms late, again and again
    assert MIN_FACTOR <= g.factor < REFUSE_BELOW and not g.accepting
    assert "server busy" in g.busy_message() and "%" in g.busy_message()
    for _ in range(200):
        g.observe(0.0)
    assert g.factor == 1.0 and g.accepting


def test_short_hiccups_do_not_refuse_anyone():
    g = Governor()
    for i in range(100):
        g.observe(0.06 if i % 10 == 0 else 0.0)   # one late tick in ten
    assert g.accepting


def test_a_saturated_server_refuses_new_sessions_and_keeps_the_open_ones():
    app = create_app()
    with TestClient(app) as client:
        with client.websocket_connect("/ws") as first:
            first.send_text(json.dumps({"op": "load", "scenario": "token-ring", "id": 1}))
            assert json.loads(first.receive_text())["reply_to"] == 1
            for _ in range(30):
                app.state.governor.observe(0.3)
            with client.websocket_connect("/ws") as second:
                refused = json.loads(second.receive_text())
                assert refused["type"] == "error" and "server busy" in refused["message"]
            first.send_text(json.dumps({"op": "step", "id": 2}))
            answer = json.loads(first.receive_text())
            assert answer["type"] == "frame" and answer["step"] == 1
