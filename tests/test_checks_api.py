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


def test_jobs_and_their_cap_are_shared_by_every_server_worker(tmp_path, monkeypatch):
    """Issue 20.6: two server processes on one data folder (as `--workers 2`), cap 1: a job
    started on one is polled and cancelled on the other, and the other refuses a second job."""
    import httpx

    from app.devserver import servers
    monkeypatch.setenv("ALLOCSCOPE_MAX_CHECKS", "1")
    big = {"id": "big-ring", "title": "big", "protocol": "token_ring",
           "params": {"n": 9, "requests": 3}}
    with servers(tmp_path, 2) as (a, b):
        r = httpx.post(f"{a}/api/check", json={"scenario": big, "max_states": 2_000_000},
                       timeout=30)
        assert r.status_code == 202
        jid = r.json()["job"]
        end = time.monotonic() + 30
        while time.monotonic() < end:
            seen = httpx.get(f"{b}/api/check/{jid}", timeout=10)
            assert seen.status_code == 200 and seen.json()["state"] == "running"
            if seen.json()["progress"]:
                break
            time.sleep(0.2)
        assert seen.json()["progress"]["states"] > 0
        second = httpx.post(f"{b}/api/check", json={"scenario": "token-ring"}, timeout=30)
        assert second.status_code == 429 and "ALLOCSCOPE_MAX_CHECKS" in second.text
        assert httpx.delete(f"{b}/api/check/{jid}", timeout=10).status_code == 200
        end = time.monotonic() + 20
        while httpx.get(f"{a}/api/check/{jid}", timeout=10).json()["state"] == "running":
            assert time.monotonic() < end, "the cancel asked on b never reached the job"
            time.sleep(0.2)
        assert httpx.get(f"{a}/api/check/{jid}", timeout=10).json()["state"] == "cancelled"
        again = httpx.post(f"{b}/api/check", json={"scenario": "token-ring",
                                                    "max_states": 100}, timeout=30)
        assert again.status_code == 202


def test_a_deadlock_says_nothing_can_move_only_when_nothing_can() -> None:
    """token-ring-lossy at its figure moment: three requests are still enabled (they serve no
    one, as the token is lost), so the deadlock's text must not say "nothing can move"; it
    said so before."""
    from protocols.runner import build, drive, scheduler_for
    from protocols.scenario import gallery

    sc = gallery()["token-ring-lossy"]
    sim = build(sc, sc.variant)
    drive(sim, scheduler_for(sc, sc.variant), 7)
    dead = [f for f in sim.monitors.findings.values() if f.kind == "deadlock"]
    enabled = sim.enabled()
    assert dead and len(enabled) == 3 and all(not e.progress for e in enabled)
    assert "nothing can move" not in dead[0].text
    labels = [e.label for e in enabled]
    assert ("no enabled event can serve them (still enabled, serving no one: "
            + "; ".join(labels) + ")") in dead[0].text
    assert "departure" not in dead[0].text        # a token ring has no departures to name
