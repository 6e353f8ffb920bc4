"""The explorer behind the web API: a worker process, progress, cancel, clear errors."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from app.main import app
from protocols.runner import build


@pytest.fixture(scope="module")
def client():
    with TestClient(app) as c:
        yield c


def wait(client, jid: str, seconds: float = 60) -> dict:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        body = client.get(f"/api/check/{jid}").json()
        if body["state"] != "running":
            return body
        time.sleep(0.1)
    raise AssertionError(f"check {jid} still running after {seconds} s")


def test_check_finds_the_lossy_deadlock_and_its_schedule_replays(client):
    r = client.post("/api/check", json={"scenario": "token-ring-lossy", "max_states": 5000})
    assert r.status_code == 202
    body = wait(client, r.json()["job"])
    assert body["state"] == "done", body
    res = body["result"]
    assert res["result"] == "deadlock"
    schedule = res["counterexample"]["schedule"]
    from protocols.scenario import gallery
    sim = build(gallery()["token-ring-lossy"])
    sim.replay(schedule)
    assert sim.waiting and not any(e.progress for e in sim.enabled())
    assert res["link"].startswith("/sim/token-ring-lossy?")


def test_check_can_be_cancelled(client):
    big = {"id": "big-ring", "title": "big", "protocol": "token_ring",
           "params": {"n": 9, "requests": 3}}
    r = client.post("/api/check", json={"scenario": big, "max_states": 2_000_000})
    jid = r.json()["job"]
    end = time.monotonic() + 30
    while not client.get(f"/api/check/{jid}").json()["progress"] and time.monotonic() < end:
        time.sleep(0.1)
    assert client.get(f"/api/check/{jid}").json()["progress"]["states"] > 0
    assert client.delete(f"/api/check/{jid}").status_code == 200
    body = wait(client, jid, 15)
    assert body["state"] == "cancelled"


@pytest.mark.parametrize("payload, status, needle", [
    ({"scenario": "no-such"}, 400, "no gallery scenario"),
    ({"scenario": {"id": "x", "title": "t", "protocol": "nope"}}, 400, "scenario.protocol"),
    ({"scenario": "token-ring", "max_states": 10**12}, 413, "at most"),
    ({"scenario": "token-ring", "bogus": 1}, 400, "bogus"),
])
def test_bad_check_requests_are_clear(client, payload, status, needle):
    r = client.post("/api/check", json=payload)
    assert r.status_code == status and needle in r.text


def test_unknown_job_is_404(client):
    assert client.get("/api/check/nope").status_code == 404
    assert client.delete("/api/check/nope").status_code == 404
