"""Fair CPU: the governor shares play time max–min fairly (the fast sessions slow down first),
refuses new sessions only when even an idle one could not be served, and over the real socket
a greedy player does not lock out a new one."""

from __future__ import annotations

import contextlib
import json
import time

import pytest
from fastapi.testclient import TestClient

from app.governor import REFUSE_LAG, Governor
from app.limits import Limits
from app.main import create_app


def test_slow_players_get_all_they_ask_and_fast_ones_share_the_rest():
    g = Governor(share=0.6)
    cost = 1e-3                                   # a step of a 200-process ring, about
    for k in range(200):                          # a class at 10 steps/s: 2 s of CPU asked
        g.ask(k, 10.0, cost / 100)                # ... of a cheap ring: 0.02 s/s in all
    assert g.ask(0, 10.0, cost / 100) == 10.0     # nobody is slowed
    fast = [g.ask(1000 + k, 1000.0, cost) for k in range(4)]   # four greedy players
    slow = g.ask(1, 10.0, cost / 100)
    assert slow == 10.0                           # the class plays on at full speed
    assert all(f < 1000.0 for f in fast)          # the greedy ones slowed down first
    used = sum(min(d, g.level) for d in g.demand.values())
    assert used == pytest.approx(0.6, rel=1e-6)   # and the share is used, not exceeded
    assert g.ask(1000, 1000.0, cost) == pytest.approx(g.level / cost)
    for k in range(4):
        g.leave(1000 + k)
    assert g.level == 0.6 and g.ask(1, 10.0, cost / 100) == 10.0


def test_equal_greedy_players_get_equal_slices():
    g = Governor(share=0.5)
    speeds = [g.ask(k, 1000.0, 1e-3) for k in range(5)]
    speeds = [g.ask(k, 1000.0, 1e-3) for k in range(5)]      # after everyone has asked
    assert speeds == [pytest.approx(100.0)] * 5               # 0.5 s/s / 5 / 1 ms a step


def test_refused_only_when_even_an_idle_session_could_not_be_served():
    g = Governor()
    for k in range(50):
        g.ask(k, 1000.0, 1e-2)                    # play asks for 500 s of CPU a second
    assert g.accepting                            # still: play is capped, commands are quick
    for _ in range(20):
        g.observe(2 * REFUSE_LAG)                 # the loop itself is half a second late
    assert not g.accepting and "server busy" in g.busy_message()
    for _ in range(60):
        g.observe(0.0)
    assert g.accepting


def test_a_late_server_refuses_new_sessions_and_keeps_the_open_ones():
    app = create_app(Limits())
    with TestClient(app) as client:
        with client.websocket_connect("/ws") as first:
            first.send_text(json.dumps({"op": "load", "scenario": "token-ring", "id": 1}))
            loaded = json.loads(first.receive_text())
            assert loaded["reply_to"] == 1
            app.state.governor.lag = 10 * REFUSE_LAG
            app.state.governor.observe = lambda lag: None      # hold the measurement
            with client.websocket_connect("/ws") as second:
                refused = json.loads(second.receive_text())
                assert refused["type"] == "error" and "server busy" in refused["message"]
            first.send_text(json.dumps({"op": "step", "id": 2}))
            answer = json.loads(first.receive_text())
            assert answer["type"] == "frame" and answer["step"] == loaded["step"] + 1


def _big(n: int) -> dict:
    """A kout_tree of n processes with requests enough to play for minutes (datta_ring's
    typed topology stops at 64 resources)."""
    return {"id": "big-tree", "title": f"{n}-process tree", "protocol": "kout_tree",
            "topology": {"random": {"n": n, "seed": 1}}, "params": {"ell": 5, "k": 2},
            "workload": {"random": {"requests": 10_000, "seed": 1}}, "steps": 1_000_000}


def _answer(ws, rid):
    """The answer to command ``rid`` (play frames before it are skipped)."""
    while True:
        f = json.loads(ws.recv(timeout=20))
        if f.get("reply_to") == rid:
            return f


def test_greedy_players_do_not_stop_a_new_session_from_connecting_and_stepping(live_server):
    """Issue 20.3: four sessions playing a 200-process tree at 1,000 steps/s on a real server;
    a fifth connects, loads and steps, and its command latency stays that of a quiet server."""
    from websockets.sync.client import connect
    url = live_server.replace("http", "ws") + "/ws"
    with contextlib.ExitStack() as stack:
        # (a player's close waits behind the frames it was sent: no need to wait 10 s for each)
        players = [stack.enter_context(connect(url, max_size=None, close_timeout=0.5))
                   for _ in range(4)]
        for p in players:
            for i, cmd in enumerate(({"op": "load", "scenario": _big(200)},
                                     {"op": "scheduler", "kind": "random", "seed": 1},
                                     {"op": "speed", "steps_per_second": 1000},
                                     {"op": "play"})):
                p.send(json.dumps({**cmd, "id": i}))
                f = _answer(p, i)
                assert f["type"] == "frame", f      # really loaded, really playing
        time.sleep(1.0)
        steps = []
        for p in players:                           # they play (a fair slice each)
            p.send(json.dumps({"op": "speed", "steps_per_second": 1000, "id": "s"}))
            steps.append(_answer(p, "s")["step"])
        assert all(s > 0 for s in steps), steps
        time.sleep(1.0)                           # they play, at their fair slices
        latencies = []
        with connect(url, max_size=None) as fifth:
            fifth.send(json.dumps({"op": "load", "scenario": "datta-fig3", "id": "a"}))
            f = _answer(fifth, "a")
            assert f["type"] == "frame", f
            at = f["step"]
            fifth.send(json.dumps({"op": "scheduler", "kind": "oldest", "id": "b"}))
            _answer(fifth, "b")
            for k in range(20):
                t = time.perf_counter()
                fifth.send(json.dumps({"op": "step", "id": k}))
                f = _answer(fifth, k)
                latencies.append(time.perf_counter() - t)
                assert f["type"] == "frame" and f["step"] == at + k + 1, f
        latencies.sort()
        # a shared 2-core machine: generous, but far from the seconds a starved loop takes
        assert latencies[len(latencies) // 2] < 0.25, latencies
