"""Rooms across two server processes sharing one real redis-server (started on a free loopback
port in a temporary folder, stopped after): a student on one follows a teacher on the other;
Redis going away mid-lesson gives both a clear notice, and the room recovers when it returns."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from .rooms_fixtures import REDIS, Member, RedisServer, start_room, uvicorn_server
from .test_ws import run_async

pytestmark = pytest.mark.skipif(not __import__("os").path.exists(REDIS),
                                reason="needs Debian's redis-server (scripts/test.sh installs it)")


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    r = RedisServer()
    r.start()
    try:
        yield r
    finally:
        r.cleanup()


@pytest.fixture(scope="module")
def two_workers(redis_server: RedisServer) -> Iterator[tuple[str, str]]:
    env = {"ALLOCSCOPE_REDIS_URL": redis_server.url}
    with ExitStack() as stack:
        a = stack.enter_context(uvicorn_server(env))
        b = stack.enter_context(uvicorn_server(env))
        yield a, b


def frame(m: Member, pred: Any = lambda f: True, timeout: float = 10) -> dict[str, Any]:
    return m.wait(lambda x: x.get("type") == "frame" and pred(x), timeout)


def test_student_on_one_worker_follows_teacher_on_the_other(two_workers: tuple[str, str]) -> None:
    a, b = two_workers
    r = start_room(a, scenario="datta-fig1", variant="naive", schedule=[], step=0)
    with urllib.request.urlopen(f"{b}/api/rooms/{r['code']}", timeout=5) as resp:
        assert json.loads(resp.read())["code"] == r["code"]       # the record is shared
    t = Member(a, r["code"], "teacher", r["secret"])
    s = Member(b, r["code"])
    first = frame(s)
    assert first["step"] == 0 and "view" in first and "scenario" in first
    assert t.cmd(op="scheduler", kind="oldest")["type"] == "frame"
    hashes = []
    for _ in range(5):
        ans = t.cmd(op="step")
        hashes.append((ans["step"], ans["state_hash"]))
    # frames may be coalesced (at most 30 a second): each shows the teacher's state at its step,
    # and their records cover every step
    got, recs = {}, []
    while 5 not in got:
        f = frame(s)
        got[f["step"]] = f["state_hash"]
        recs += [x["step"] for x in f.get("skipped_records") or []]
        recs += [f["step_record"]["step"]] if f.get("step_record") else []
    assert all(dict(hashes)[k] == h for k, h in got.items() if k > 0)
    assert recs == [1, 2, 3, 4, 5]
    # the count of students crosses workers too
    t.wait(lambda x: x.get("type") == "room" and x.get("students") == 1)
    # a refused drive on worker B changes nothing on worker A
    err = s.cmd(op="deliver", event="m0")
    assert err["type"] == "error" and "only the teacher drives" in err["message"]
    # a late joiner on B lands on the current state with one full frame
    late = Member(b, r["code"])
    f = frame(late)
    assert (f["step"], f["state_hash"]) == hashes[-1] and "view" in f
    # a predict round answered on B is tallied on A
    t.cmd(op="ask", kind="deadlock")
    rnd = s.wait(lambda x: x.get("type") == "room" and x.get("round"))["round"]
    s.cmd(op="answer", choice="yes")
    late.wait(lambda x: x.get("type") == "room" and x.get("round"))
    late.cmd(op="answer", choice="no")
    tally = t.wait(lambda x: x.get("type") == "room" and (x.get("round") or {}).get("answers")
                   == 2)["round"]["tally"]
    assert tally == {"yes": 1, "no": 1} and rnd["id"] == 1
    for m in (t, s, late):
        m.close()


def test_redis_going_away_and_coming_back(two_workers: tuple[str, str],
                                          redis_server: RedisServer) -> None:
    a, b = two_workers
    r = start_room(a, scenario="datta-fig1", variant="naive", schedule=[], step=0)
    t = Member(a, r["code"], "teacher", r["secret"])
    s = Member(b, r["code"])
    frame(s)
    t.cmd(op="scheduler", kind="oldest")
    t.cmd(op="step")
    frame(s, lambda x: x["step"] == 1)
    t.cmd(op="ask", kind="deadlock")
    s.wait(lambda x: x.get("type") == "room" and x.get("round"))
    s.cmd(op="answer", choice="no")
    t.wait(lambda x: x.get("type") == "room" and (x.get("round") or {}).get("answers") == 1)

    redis_server.stop()
    down_t = t.wait(lambda x: x.get("type") == "room" and x.get("link") == "down", 15)
    down_s = s.wait(lambda x: x.get("type") == "room" and x.get("link") == "down", 15)
    for msg in (down_t, down_s):
        assert "Redis" in msg["notice"] and "cannot be reached" in msg["notice"]
    # the teacher's own session goes on while the class cannot follow
    k = t.cmd(op="step")["step"]
    k = t.cmd(op="step")["step"]
    assert k == 3

    redis_server.start()                      # an empty Redis: nothing survived on its side
    t.wait(lambda x: x.get("type") == "room" and x.get("link") == "up", 20)
    s.wait(lambda x: x.get("type") == "room" and x.get("link") == "up", 20)
    f = frame(s, lambda x: x["step"] == 3, 20)        # a key frame brings the class back
    assert "view" in f
    # the room record is back in Redis: a new student can join on the other worker
    deadline = time.monotonic() + 10
    while True:
        try:
            with urllib.request.urlopen(f"{b}/api/rooms/{r['code']}", timeout=5) as resp:
                assert json.loads(resp.read())["code"] == r["code"]
                break
        except urllib.error.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    late = Member(b, r["code"])
    assert frame(late)["step"] == 3
    # nothing of the room was lost: its open question came back with it, and the answer given
    assert (late.cmd(op="room")["round"] or {}).get("kind") == "deadlock"
    deadline = time.monotonic() + 20
    while (t.cmd(op="room")["round"] or {}).get("tally") != {"yes": 0, "no": 1}:
        assert time.monotonic() < deadline, "the answer given before the outage was lost"
        time.sleep(0.2)
    t.cmd(op="step")
    frame(s, lambda x: x["step"] == 4)
    for m in (t, s, late):
        m.close()


def test_the_first_commands_after_a_restart_do_not_fail(redis_server: RedisServer) -> None:
    """After an outage every idle connection of the command pool leads to the old server. The
    rooms' re-saves are the first commands then, several at once (one per student on a
    worker): each must reach the new server — one that failed once lost an answer."""
    from app.rooms.redisbus import RedisBus

    async def main() -> None:
        bus = RedisBus(redis_server.url)
        heard: list[bool] = []

        async def status(up: bool, sentence: str) -> None:
            heard.append(up)

        async def until(up: bool) -> None:
            for _ in range(400):
                if heard and heard[-1] is up:
                    return
                await asyncio.sleep(0.05)
            raise TimeoutError(f"the bus never said up={up}: {heard}")

        await bus.start(lambda c, m: None, status)
        try:
            await until(True)
            # a busy lesson leaves several idle connections in the pool
            await asyncio.gather(*(bus.hset(f"t:{i}", "a", "x", 60) for i in range(8)))
            await asyncio.to_thread(redis_server.stop)
            await until(False)
            await asyncio.to_thread(redis_server.start)     # empty, as after a crash
            await until(True)
            await asyncio.gather(*(bus.hset(f"t:{i}", "a", "y", 60) for i in range(8)))
            assert [await bus.hgetall(f"t:{i}") for i in range(8)] == [{"a": "y"}] * 8
            assert heard == [True, False, True]       # and no false alarm after the return
        finally:
            await bus.close()

    run_async(main)     # in a thread: Playwright's loop may be running in this one


def stored(redis_server: RedisServer, code: str) -> dict[str, Any] | None:
    """The room record as it is in Redis right now."""
    import redis
    with redis.Redis.from_url(redis_server.url, decode_responses=True) as r:
        text = r.get(f"allocscope:room:{code}")
    return json.loads(text) if text else None


def test_an_outage_loses_no_room_state(two_workers: tuple[str, str],
                                       redis_server: RedisServer) -> None:
    """Every piece of a room survives an empty Redis: the step, branch, selected process and
    chapter (the teacher's record), the open round and experiment, and the answers and outcomes
    — also those of a student who left before the outage (only the teacher's worker still has
    them then)."""
    a, b = two_workers
    r = start_room(a, scenario="datta-fig1", variant="naive", schedule=[], step=0)
    code = r["code"]
    t = Member(a, code, "teacher", r["secret"])
    stay, leave = Member(b, code), Member(b, code)
    frame(stay)
    frame(leave)
    t.cmd(op="scheduler", kind="oldest")
    t.cmd(op="step")
    second = t.cmd(op="step")["event"]
    back = t.cmd(op="back")
    other = next(e["id"] for e in back["enabled"] if e["id"] != second)
    branched = t.cmd(op="deliver", event=other)         # a branch off the recorded future
    assert branched["branch"] != back["branch"]
    t.cmd(op="select", proc="p1")
    t.cmd(op="chapter", chapter=1, title="the token")
    t.cmd(op="ask", kind="deadlock")
    t.cmd(op="experiment", open=True)
    for m in (stay, leave):
        m.wait(lambda x: x.get("type") == "room" and x.get("round")
               and (x.get("experiment") or {}).get("open"))
    stay.cmd(op="answer", choice="no")
    leave.cmd(op="answer", choice="yes")
    stay.cmd(op="run", seed=1)
    leave.cmd(op="run", seed=2)
    for m in (stay, leave):      # both runs at once on worker B (a failure names its error)
        m.wait(lambda x: x.get("type") == "room" and "outcome" in (x.get("my_run") or {}), 30)
    done = t.wait(lambda x: x.get("type") == "room" and (x.get("round") or {}).get("answers") == 2
                  and ((x.get("experiment") or {}).get("histogram") or {}).get("runs") == 2, 30)
    hist = done["experiment"]["histogram"]
    leave.close()                                       # only the teacher's worker has it now
    before = stored(redis_server, code)
    assert before is not None and before["branch"] == branched["branch"]

    redis_server.stop()
    t.wait(lambda x: x.get("type") == "room" and x.get("link") == "down", 15)
    k = t.cmd(op="step")["step"]                          # the teacher goes on meanwhile
    redis_server.start()                                  # empty
    t.wait(lambda x: x.get("type") == "room" and x.get("link") == "up", 20)
    stay.wait(lambda x: x.get("type") == "room" and x.get("link") == "up", 20)

    deadline = time.monotonic() + 20
    while True:
        own = t.cmd(op="room")
        rec = stored(redis_server, code)
        if (own["round"]["tally"] == {"yes": 1, "no": 1} and own["experiment"]["histogram"] == hist
                and rec is not None and rec["step"] == k):
            break
        assert time.monotonic() < deadline, (own["round"], own["experiment"], rec)
        time.sleep(0.2)
    assert (rec["branch"], rec["selected"], rec["chapter"], rec["chapter_title"]) == (
        branched["branch"], "p1", 1, "the token")
    assert rec["round"]["id"] == 1 and rec["experiment"] == {"id": 1, "open": True,
                                                             "from_step": before["step"]}
    assert rec["schedule"][:before["step"]] == before["schedule"]
    # the student still there sees the round with their answer, and their own run
    mine = stay.cmd(op="room")
    assert mine["round"]["id"] == 1 and mine["my_answer"] == "no"
    assert mine["my_run"]["seed"] == 1
    for m in (t, stay):
        m.close()
