"""Rooms on one worker (the in-process bus), through the real websocket of a real uvicorn: late
joiners, refused drives, predict rounds settled by the simulator, class experiments, fork and
submit, expiry and limits; plus the parts that need no server."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from app.limits import Settings, SettingsError
from app.rooms.bus import InProcessBus
from app.rooms.model import norm_code
from app.rooms.ops import DRIVING_OPS
from protocols import runner
from protocols.scenario import gallery

from .rooms_fixtures import Member, start_room, uvicorn_server


def frame(m: Member, pred: Any = lambda f: True, timeout: float = 10) -> dict[str, Any]:
    return m.wait(lambda x: x.get("type") == "frame" and pred(x), timeout)


def room_msg(m: Member, pred: Any = lambda f: True, timeout: float = 10) -> dict[str, Any]:
    return m.wait(lambda x: x.get("type") == "room" and pred(x), timeout)


def test_codes_and_settings() -> None:
    assert norm_code(" k7qm-2x ") == "K7QM2X"                  # as typed from a projector
    assert norm_code("k7qm2") is None                          # too short
    assert norm_code("abcdef") == "ABCDEF"
    assert norm_code("abcde0") is None                         # 0 is not in the alphabet
    assert Settings.from_env({}).redis_url == ""
    with pytest.raises(SettingsError, match="ALLOCSCOPE_ROOM_MAX_STUDENTS='many': must be a "):
        Settings.from_env({"ALLOCSCOPE_ROOM_MAX_STUDENTS": "many"})
    with pytest.raises(SettingsError, match="ALLOCSCOPE_REDIS_URL=.*is not a redis://"):
        Settings.from_env({"ALLOCSCOPE_REDIS_URL": "localhost:6379"})
    assert Settings.from_env({"ALLOCSCOPE_ROOM_IDLE_SECONDS": "60"}).room_idle_seconds == 60
    assert Settings.from_env({"ALLOCSCOPE_REDIS_URL": "redis://127.0.0.1:6379/0"}).redis_url


def test_in_process_bus_expires_keys_and_delivers_after_the_turn() -> None:
    now = [0.0]
    bus = InProcessBus(clock=lambda: now[0])
    got: list[tuple[str, str]] = []

    async def main() -> None:
        async def status(up: bool, s: str) -> None:
            return None
        await bus.start(lambda c, m: got.append((c, m)), status)
        assert await bus.set("k", "v", 10, only_new=True)
        assert not await bus.set("k", "w", 10, only_new=True)
        await bus.hset("h", "a", "1", 10)
        now[0] = 9.0
        await bus.expire(["k", "h"], 10)                     # activity: both live 10 s more
        now[0] = 15.0
        assert await bus.get("k") == "v" and await bus.hgetall("h") == {"a": "1"}
        now[0] = 19.5
        assert await bus.get("k") is None and await bus.hgetall("h") == {}
        await bus.subscribe("c")
        await bus.publish("c", "x")
        await bus.publish("other", "y")
        assert got == []                                     # not inside the publisher's turn
        await asyncio.sleep(0)
        assert got == [("c", "x")]
    # in a thread of its own: a browser test's loop may be running in this one
    failed: list[BaseException] = []
    th = threading.Thread(target=lambda: _catch(failed, lambda: asyncio.run(main())))
    th.start()
    th.join(10)
    assert not failed, failed


def _catch(into: list[BaseException], fn: Any) -> None:
    try:
        fn()
    except BaseException as exc:   # noqa: BLE001 - handed back to the test
        into.append(exc)


def test_start_room_api_and_qr(live_server: str) -> None:
    req = urllib.request.Request(live_server + "/api/rooms", data=b'{"scenario": "nope"}',
                                 headers={"Content-Type": "application/json"}, method="POST")
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(req, timeout=10)
    assert exc.value.code == 400 and "no gallery scenario 'nope'" in exc.value.read().decode()
    # an inline scenario over the size limits is refused by name before anything is built
    wide = {"protocol": "token_ring", "topology": {"n": 3, "extra": list(range(5000))}}
    req = urllib.request.Request(live_server + "/api/rooms",
                                 data=json.dumps({"scenario": wide}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(req, timeout=10)
    assert exc.value.code == 413
    assert "scenario.topology.extra: 5000 entries" in exc.value.read().decode()
    r = start_room(live_server, scenario="token-ring")
    assert norm_code(r["code"]) == r["code"] and r["secret"] not in r["join_url"]
    with urllib.request.urlopen(live_server + r["qr_url"], timeout=10) as resp:
        assert resp.headers["content-type"].startswith("image/svg+xml")
        assert b"<svg" in resp.read()
    with urllib.request.urlopen(live_server + f"/r/{r['code'].lower()}", timeout=10) as resp:
        page = resp.read().decode()
    assert r["code"] in page and r["secret"] not in page
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(live_server + "/r/ABCDEF", timeout=10)
    said = exc.value.read().decode()
    assert exc.value.code == 404 and "There is no room ABCDEF" in said
    # a student with a mistyped code is offered the join box again, not only the gallery
    assert '<a class="error-way" href="/r">Type another room code</a>' in said


def test_hello_rules(live_server: str) -> None:
    r = start_room(live_server, scenario="token-ring")
    from websockets.sync.client import connect
    ws_url = live_server.replace("http", "ws", 1)
    with connect(f"{ws_url}/ws/room/{r['code']}") as ws:
        ws.send(json.dumps({"op": "hello", "role": "teacher", "secret": "not-the-key-at-all"}))
        assert "wrong teacher key" in json.loads(ws.recv(timeout=5))["message"]
    with connect(f"{ws_url}/ws/room/{r['code']}") as ws:
        ws.send(json.dumps({"op": "step"}))
        assert "say hello first" in json.loads(ws.recv(timeout=5))["message"]
    with connect(f"{ws_url}/ws/room/QQQQQQ") as ws:
        ws.send(json.dumps({"op": "hello"}))
        assert "there is no room QQQQQQ" in json.loads(ws.recv(timeout=5))["message"]


def test_late_joiner_gets_one_full_frame_at_the_current_state(live_server: str) -> None:
    r = start_room(live_server, scenario="datta-fig3", variant="naive", schedule=[], step=0)
    t = Member(live_server, r["code"], "teacher", r["secret"])
    t.cmd(op="scheduler", kind="round-robin")
    for _ in range(7):
        last = t.cmd(op="step")
    late = Member(live_server, r["code"])
    f = frame(late)
    assert (f["step"], f["state_hash"], f["event"]) == (7, last["state_hash"], last["event"])
    assert "view" in f and f["scenario"]["id"] == "datta-fig3" and len(f["history"]) == 7
    assert f["reply_to"] is None
    nxt = t.cmd(op="step")
    g = frame(late)
    assert "view_patch" in g and (g["step"], g["state_hash"]) == (8, nxt["state_hash"])
    t.close()
    assert room_msg(late, lambda x: x.get("teacher") is False)["code"] == r["code"]
    # with the teacher away, a joiner's worker builds the key frame from the stored record
    later = Member(live_server, r["code"])
    h = frame(later)
    assert (h["step"], h["state_hash"], h["event"]) == (8, nxt["state_hash"], nxt["event"])
    late.close()
    later.close()


def test_a_following_student_cannot_drive(live_server: str) -> None:
    r = start_room(live_server, scenario="token-ring")
    t = Member(live_server, r["code"], "teacher", r["secret"])
    s = Member(live_server, r["code"])
    other = Member(live_server, r["code"])
    frame(s)
    frame(other)
    before = t.cmd(op="scheduler", kind="oldest")
    cmds: dict[str, dict[str, Any]] = {
        "load": {"scenario": "datta-fig1"}, "deliver": {"event": "m0"},
        "fault": {"event": "f:crash:p0"}, "goto": {"step": 0}, "speed": {"steps_per_second": 9},
        "scheduler": {"kind": "random", "seed": 3}}
    for op in DRIVING_OPS + ("ask", "reveal", "experiment", "select", "chapter"):
        extra = cmds.get(op, {})
        if op == "ask":
            extra = {"kind": "deadlock"}
        elif op == "experiment":
            extra = {"open": True}
        elif op == "chapter":
            extra = {"chapter": 1}
        ans = s.cmd(op=op, **extra)
        assert ans["type"] == "error", (op, ans)
        assert "only the teacher" in ans["message"], ans["message"]
    now = t.cmd(op="room")
    assert now["round"] is None and now["experiment"] is None and now["chapter"] is None
    assert t.cmd(op="pause")["state_hash"] == before["state_hash"]
    seen = []                           # what the class saw: the teacher's state only
    with pytest.raises(TimeoutError):
        while True:
            seen.append(frame(other, timeout=0.6))
    assert {(f["step"], f["state_hash"]) for f in seen} <= {(before["step"],
                                                              before["state_hash"])}
    for m in (t, s, other):
        m.close()


def test_predict_round_is_tallied_and_settled_by_the_simulator(live_server: str) -> None:
    r = start_room(live_server, scenario="datta-fig3", variant="naive")
    t = Member(live_server, r["code"], "teacher", r["secret"])
    students = [Member(live_server, r["code"]) for _ in range(3)]
    t.cmd(op="scheduler", kind="oldest")
    own = t.cmd(op="ask", kind="next-delivery")["round"]
    ids = [o["id"] for o in own["options"]]
    assert len(ids) >= 2 and own["tally"] == {i: 0 for i in ids}
    for s, choice in zip(students, [ids[0], ids[1], ids[1]], strict=True):
        rnd = room_msg(s, lambda x: x.get("round"))["round"]
        assert "tally" not in rnd                                   # hidden until the reveal
        assert s.cmd(op="answer", choice=choice)["my_answer"] == choice
    bad = students[0].cmd(op="answer", choice="m999")
    assert bad["type"] == "error" and "not one of this question's answers" in bad["message"]
    got = room_msg(t, lambda x: (x.get("round") or {}).get("answers") == 3)["round"]
    assert got["tally"] == {ids[0]: 1, ids[1]: 2, **{i: 0 for i in ids[2:]}}
    t.cmd(op="reveal")
    pub = room_msg(students[2], lambda x: (x.get("round") or {}).get("revealed"))
    assert pub["round"]["tally"][ids[1]] == 2 and pub["my_answer"] == ids[1]
    assert pub["round"]["answer"] is None                  # the simulator has not answered yet
    chosen = t.cmd(op="deliver", event=ids[1])
    assert chosen["event"] == ids[1]
    done = room_msg(students[0], lambda x: (x.get("round") or {}).get("answer") is not None)
    assert done["round"]["answer"] == ids[1]
    late = students[0].cmd(op="answer", choice=ids[0])
    assert "revealed" in late["message"]
    for m in (t, *students):
        m.close()


def test_class_experiment_histogram(live_server: str) -> None:
    r = start_room(live_server, scenario="datta-fig3", variant="naive", schedule=[], step=0)
    t = Member(live_server, r["code"], "teacher", r["secret"])
    students = [Member(live_server, r["code"]) for _ in range(3)]
    t.cmd(op="experiment", open=True)
    seeds = [1, 2, 3]
    for s, seed in zip(students, seeds, strict=True):
        room_msg(s, lambda x: (x.get("experiment") or {}).get("open"))
        s.cmd(op="run", seed=seed)
    sc = gallery()["datta-fig3"]
    expect: dict[str, int] = {}
    for seed in seeds:
        out = runner.run(sc, "naive", steps=5000, scheduler="random", seed=seed)["outcome"]
        expect[out] = expect.get(out, 0) + 1
    h = room_msg(t, lambda x: ((x.get("experiment") or {}).get("histogram") or {})
                 .get("runs") == 3, 30)["experiment"]["histogram"]
    assert {k: v for k, v in h["counts"].items() if v} == expect
    again = students[0].cmd(op="run")
    assert "already ran" in again["message"]
    # a forked student submits the outcome of their own run
    extra = Member(live_server, r["code"])
    room_msg(extra, lambda x: x.get("experiment"))
    frame(extra)
    fork = extra.cmd(op="fork")
    assert fork["type"] == "frame" and fork["step"] == 0
    extra.cmd(op="scheduler", kind="oldest")
    extra.cmd(op="step")
    extra.cmd(op="submit")
    h = room_msg(t, lambda x: ((x.get("experiment") or {}).get("histogram") or {})
                 .get("runs") == 4, 30)["experiment"]["histogram"]
    assert h["counts"]["incomplete"] >= 1
    for m in (t, *students, extra):
        m.close()


def test_rooms_expire_and_refuse_beyond_their_limits() -> None:
    env = {"ALLOCSCOPE_ROOM_IDLE_SECONDS": "1.5", "ALLOCSCOPE_ROOM_MAX_STUDENTS": "2",
           "ALLOCSCOPE_MAX_ROOMS": "2"}
    with uvicorn_server(env) as base:
        r = start_room(base, scenario="token-ring")
        start_room(base, scenario="token-ring")
        with pytest.raises(urllib.error.HTTPError) as exc:
            start_room(base, scenario="token-ring")
        assert exc.value.code == 429 and "ALLOCSCOPE_MAX_ROOMS" in exc.value.read().decode()
        a, b = Member(base, r["code"]), Member(base, r["code"])
        from websockets.sync.client import connect
        with connect(base.replace("http", "ws", 1) + f"/ws/room/{r['code']}") as ws:
            ws.send(json.dumps({"op": "hello"}))
            msg = json.loads(ws.recv(timeout=5))["message"]
        assert "is full: 2 students (ALLOCSCOPE_ROOM_MAX_STUDENTS)" in msg
        a.close()
        b.close()
        import time
        time.sleep(2.0)                                  # no activity: the room ends
        with pytest.raises(urllib.error.HTTPError) as exc:
            urllib.request.urlopen(f"{base}/api/rooms/{r['code']}", timeout=5)
        assert exc.value.code == 404 and "may have ended" in exc.value.read().decode()


def test_the_join_box_sends_a_typed_code_to_its_room(live_server: str) -> None:
    with urllib.request.urlopen(f"{live_server}/r", timeout=10) as resp:
        assert "the room code your teacher shows" in resp.read().decode()
    r = start_room(live_server, scenario="token-ring")
    typed = r["code"].lower()[:3] + " " + r["code"].lower()[3:]
    with urllib.request.urlopen(f"{live_server}/r?code={typed.replace(' ', '+')}",
                                timeout=10) as resp:
        assert resp.url.endswith(f"/r/{r['code']}")
    with urllib.request.urlopen(f"{live_server}/r?code=%3Cb%3E", timeout=10) as resp:
        page = resp.read().decode()
    assert "is not a room code" in page and "<b>" not in page


def test_the_teachers_speed_is_mirrored_to_the_class(live_server: str) -> None:
    r = start_room(live_server, scenario="datta-fig3", variant="naive", schedule=[], step=0)
    t = Member(live_server, r["code"], "teacher", r["secret"])
    s = Member(live_server, r["code"])
    frame(s)
    assert room_msg(s, lambda x: x.get("speed") is not None)["speed"] == 4    # the default
    t.cmd(op="speed", steps_per_second=50)
    room_msg(s, lambda x: x.get("speed") == 50)
    # a follower cannot change it, and a late joiner is told the class's speed at once
    assert "only the teacher drives" in s.cmd(op="speed", steps_per_second=1)["message"]
    late = Member(live_server, r["code"])
    assert late.hello["speed"] == 50
    assert t.cmd(op="room")["speed"] == 50
    t.cmd(op="speed", steps_per_second=0.5)
    for m in (s, late):
        room_msg(m, lambda x: x.get("speed") == 0.5)
    for m in (t, s, late):
        m.close()


def test_a_big_load_in_one_room_does_not_stall_another(live_server: str) -> None:
    """A fork replays the room's whole timeline and encodes its full frame (≈ 11,500 steps of the
    38-process ring here): that runs in a worker thread on the work budget (app/offload.py),
    so a teacher in another room on the same worker keeps getting quick answers meanwhile (9
    in 10 within half a fork's time: this machine is shared, single answers can be late)."""
    from protocols import service
    from protocols.scenario import parse
    # datta-stress with eighteen requests per client (≈ 11,500 steps): the kernel got fast enough
    # that forks of the gallery run (≈ 70 ms), then of six requests a client (≈ 3,000 steps,
    # ≈ 85 ms since the explorer rounds of 2026-11-27), were too short to tell a stall from load
    big = gallery()["datta-stress"].model_dump(mode="json")
    big["workload"]["generate"]["requests"] = 18
    run = service.Run(parse(big), None, "random", 1, 20000)
    run.drive()
    trace = list(run.sim.trace)
    assert len(trace) > 8000
    heavy = start_room(live_server, scenario=big, schedule=trace, step=len(trace))
    light = start_room(live_server, scenario="datta-fig3", variant="naive", schedule=[], step=0)
    t = Member(live_server, light["code"], "teacher", light["secret"])
    t.cmd(op="scheduler", kind="round-robin")
    # twelve forks, so that the window holds well over ten of the teacher's answers
    forkers = [Member(live_server, heavy["code"]) for _ in range(12)]
    for s in forkers:
        frame(s, timeout=30)
    took: list[float] = []

    def fork_all() -> None:
        for s in forkers:
            t0 = time.perf_counter()
            ans = s.cmd(op="fork", timeout=60)
            took.append(time.perf_counter() - t0)
            assert ans["type"] == "frame" and ans["step"] == len(trace), ans

    worker = threading.Thread(target=fork_all)
    worker.start()
    waits: list[float] = []
    k = 0
    while worker.is_alive():
        t0 = time.perf_counter()
        ans = t.cmd(op="step" if k < 20 else "reset")       # (the run ends at step 25)
        waits.append(time.perf_counter() - t0)
        k = ans.get("step", 0)
        assert ans["type"] == "frame", ans
        time.sleep(0.02)
    worker.join()
    # (on the event loop: 5 steps got through three forks, the slowest after 1.6 s)
    waits.sort()
    assert len(took) == len(forkers) and len(waits) >= 10, (took, waits)
    assert waits[int(0.9 * len(waits))] < 0.5 * sorted(took)[1], (waits[-5:], took)
    for m in (t, *forkers):
        m.close()
