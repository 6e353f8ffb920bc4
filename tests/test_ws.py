"""The websocket: every command, bad commands, replays equal to the CLI, play, limits, Origin.

Parametrised over ``gallery()`` where it makes sense, so protocols that land later are covered.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from app.limits import Limits, TokenBucket
from app.main import create_app
from app.ws import Connection
from protocols import runner
from protocols.scenario import gallery
from tests.aio import run_async

GALLERY = list(gallery())
# token-ring-lossy as it was recorded (a load without "schedule" also opens at its figure moment)
LOSSY = {"schedule": gallery()["token-ring-lossy"].schedule_for("lossy")}


class Peer:
    """A test client that pairs every command with its one answer."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.n = 0

    def cmd(self, op: str, **kw: Any) -> dict[str, Any]:
        self.n += 1
        self.ws.send_text(json.dumps({"op": op, "id": self.n, **kw}))
        f = self.recv()
        assert f["reply_to"] == self.n, f
        return f

    def raw(self, text: str) -> dict[str, Any]:
        self.ws.send_text(text)
        return self.recv()

    def recv(self) -> dict[str, Any]:
        return json.loads(self.ws.receive_text())

    def until_paused(self, limit: int = 100_000) -> list[dict[str, Any]]:
        frames = []
        for _ in range(limit):
            f = self.recv()
            frames.append(f)
            if f["type"] != "frame" or not f["playing"]:
                return frames
        raise AssertionError("play did not stop")


@pytest.fixture(scope="module")
def client() -> TestClient:
    app = create_app(Limits())
    # The load of the machine the tests run on must not refuse sessions here ("server busy");
    # the governor's own behaviour is tested in tests/test_governor.py.
    app.state.governor.observe = lambda lag: None
    return TestClient(app)


@pytest.fixture
def peer(client):
    with client.websocket_connect("/ws") as ws:
        yield Peer(ws)


def cli_trace(sid: str, variant: str | None = None) -> tuple[list[str], dict[str, Any]]:
    """What ``allocscope run`` does for a gallery scenario: its trace and its report."""
    sc = gallery()[sid]
    sim = runner.build(sc, variant)
    runner.drive(sim, runner.scheduler_for(sc, sim.variant), sc.steps)
    return list(sim.trace), runner.report(sim, sc)


def fresh_hash(sid: str, variant: str, trace: list[str]) -> str:
    sim = runner.build(gallery()[sid], variant)
    sim.replay(trace)
    return sim.state_hash()


# ---------------------------------------------------------------------- model of the browser
def view_model(view: dict[str, Any]) -> dict[str, Any]:
    return {"layout": view.get("layout"),
            "nodes": {n["id"]: n for n in view.get("nodes", [])},
            "queues": {(q["node"], q["name"]): q for q in view.get("queues", [])
                       if q.get("items") or not q.get("removed")},
            "edges": view.get("edges", []), "cycles": view.get("cycles", []),
            "extra": view.get("extra"),
            "messages": {m["id"]: m for m in view["messages"]}}


def apply(model: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
    """Apply a frame as the browser does (docs/websocket.md)."""
    if "view" in f:
        return view_model(f["view"])
    p = f["view_patch"]
    for n in p["nodes"]:
        model["nodes"][n["id"]] = n
    by_str = {str(k): k for k in model["nodes"]}
    for field, values in p.get("node_fields", {}).items():
        for nid, v in values.items():
            key = by_str[nid]
            model["nodes"][key] = {**model["nodes"][key], field: v}
    for q in p["queues"]:
        if q.get("removed"):
            model["queues"].pop((q["node"], q["name"]), None)
        else:
            model["queues"][(q["node"], q["name"])] = q
    if p["edges"] is not None:
        model["edges"] = p["edges"]
    model["cycles"] = p["cycles"]
    if p["extra"] is not None:
        model["extra"] = p["extra"]
    for mid in p["messages"]["remove"]:
        del model["messages"][mid]
    for m in p["messages"]["add"] + p["messages"]["update"]:
        model["messages"][m["id"]] = m
    return model


# ---------------------------------------------------------------------- every command
def test_load_gallery_id_answers_a_full_load_frame(peer):
    f = peer.cmd("load", scenario="token-ring-lossy")
    # opens at its figure moment (open_at 7, the deadlock), one step past the recorded schedule:
    # the scenario's own scheduler extended the timeline up to it
    assert f["type"] == "frame" and f["event"] is None and f["step"] == 7 and f["total"] == 7
    assert [x["kind"] for x in f["findings"]] == ["deadlock"] and f["findings"][0]["step"] == 7
    assert f["scenario"]["open_at"] == 7 and f["scenario"]["bookmarks"][-1]["label"] == "deadlock"
    assert f["protocol"]["id"] == "token_ring" and f["protocol"]["variant"] == "lossy"
    assert f["protocol"]["channels"] == "fifo"
    assert f["scenario"]["id"] == "token-ring-lossy"
    assert [r["step"] for r in f["history"]] == [1, 2, 3, 4, 5, 6, 7]
    assert f["history"][1]["kind"] == "deliver" and f["history"][1]["type"] == "Token"
    assert f["view"]["layout"] == "ring" and len(f["view"]["nodes"]) == 4
    assert f["state_hash"] == fresh_hash("token-ring-lossy", "lossy", f["history"] and
                                         [r["event"] for r in f["history"]])


def test_load_full_object_variant_schedule_and_step(peer):
    obj = gallery()["token-ring"].model_dump(mode="json")
    obj["params"] = {"n": 7, "requests": 1}
    f = peer.cmd("load", scenario=obj, variant="lossy", schedule=["e:p0:request", "m0"], step=1)
    assert f["step"] == 1 and f["total"] == 2 and f["protocol"]["variant"] == "lossy"
    assert len(f["view"]["nodes"]) == 7
    assert f["view"]["messages"][0]["deliverable"] is True
    f = peer.cmd("goto", step=2)
    assert f["state_hash"] == _hash_of(obj, "lossy", ["e:p0:request", "m0"])


def _hash_of(obj: dict, variant: str, trace: list[str]) -> str:
    from protocols.scenario import parse
    sim = runner.build(parse(obj), variant)
    sim.replay(trace)
    return sim.state_hash()


def test_step_deliver_and_their_records(peer):
    peer.cmd("load", scenario="token-ring-lossy", schedule=[])
    peer.cmd("scheduler", kind="oldest")
    f = peer.cmd("step")
    assert f["step"] == 1 and "view_patch" in f and "view" not in f and "history" not in f
    rec = f["step_record"]
    assert rec["step"] == 1 and rec["event"] == f["event"] and rec["narration"] == f["narration"]
    m0 = next(e for e in f["enabled"] if e["kind"] == "deliver")
    assert {"src", "dst", "type"} <= set(m0)
    first = f["event"]
    f = peer.cmd("deliver", event=m0["id"])
    assert f["event"] == m0["id"] and f["step_record"]["type"] == m0["type"]
    assert f["step_record"]["sent_step"] == (1 if first == "m0" else 0)
    assert m0["id"] in f["view_patch"]["messages"]["remove"]


def test_manual_scheduler_step_asks_for_a_choice(peer):
    peer.cmd("load", scenario="token-ring", schedule=[])
    f = peer.cmd("scheduler", kind="manual")
    assert f["scheduler"] == {"kind": "manual", "seed": 7}
    f = peer.cmd("step")
    assert f["type"] == "error" and f["message"] == "manual scheduler: choose an event"
    f = peer.cmd("play")
    assert f["type"] == "error" and "manual" in f["message"]


def test_scheduler_seed_changes_the_random_run(peer):
    hashes = []
    for seed in (1, 2, 1):
        peer.cmd("load", scenario="token-ring", schedule=[])
        f = peer.cmd("scheduler", kind="random", seed=seed)
        assert f["scheduler"] == {"kind": "random", "seed": seed}
        for _ in range(12):
            f = peer.cmd("step")
        hashes.append(f["state_hash"])
    assert hashes[0] == hashes[2] != hashes[1]


def test_back_goto_reset(peer):
    peer.cmd("load", scenario="token-ring-lossy", **LOSSY)
    f = peer.cmd("back")
    # time travel answers with a diff, like a step (issue 15, item 4)
    assert f["step"] == 5 and f["total"] == 6 and "view_patch" in f and "history" not in f
    assert f["step_record"] is None
    f = peer.cmd("goto", step=2)
    assert f["step"] == 2 and f["event"] == "m0" and "view" not in f
    f = peer.cmd("reset")
    assert f["step"] == 0 and f["total"] == 0 and f["history"] == []
    f = peer.cmd("back")
    assert f["type"] == "error" and "step 0" in f["message"]
    f = peer.cmd("goto", step=3)
    assert f["type"] == "error" and "between 0 and 0" in f["message"]


def test_fault_drop_and_crash(peer):
    peer.cmd("load", scenario="token-ring", schedule=[])
    f = peer.cmd("fault", event="f:drop:m0")
    assert f["step"] == 1 and f["step_record"]["kind"] == "fault"
    assert f["step_record"]["type"] == "Token" and f["view_patch"]["messages"]["remove"] == ["m0"]
    f = peer.cmd("fault", event="f:crash:p2")
    assert f["step"] == 2
    assert [n for n in f["view_patch"]["nodes"] if n["id"] == "p2"][0]["crashed"] is True
    f = peer.cmd("fault", event="f:crash:p2")
    assert f["type"] == "error" and "not possible" in f["message"]


def test_inspect(peer):
    peer.cmd("load", scenario="token-ring-lossy", **LOSSY)
    f = peer.cmd("inspect", proc="p0")
    assert f["type"] == "inspect" and f["proc"] == "p0"
    assert set(f) == {"type", "reply_to", "proc", "variables", "guards", "in_cs", "waiting",
                      "crashed", "inbox"}
    assert f["variables"]["requests_left"] == 2
    assert all({"name", "holds", "algorithm", "lines", "waiting_for"} <= set(g)
               for g in f["guards"])
    f = peer.cmd("inspect", proc="zz")
    assert f["type"] == "error" and "no process 'zz'" in f["message"]


def test_speed_pause_answer_with_a_frame(peer):
    peer.cmd("load", scenario="token-ring", schedule=[])
    f = peer.cmd("speed", steps_per_second=250)
    assert f["type"] == "frame" and f["step_record"] is None and f["playing"] is False
    f = peer.cmd("pause")
    assert f["type"] == "frame" and f["playing"] is False


def test_commands_before_load_are_errors(peer):
    for op in ("step", "back", "play", "reset"):
        f = peer.cmd(op)
        assert f["type"] == "error" and "load" in f["message"]
    assert peer.cmd("load", scenario="token-ring")["type"] == "frame"


def test_load_link(client, peer):
    sched = ["e:p3:request", "m0", "m1"]
    r = client.post("/api/links", json={"scenario": "token-ring-lossy", "schedule": sched,
                                        "step": 2})
    if r.status_code == 404:
        pytest.skip("share links are not part of this checkout")
    assert r.status_code == 201, r.text
    link = r.json()["id"]
    f = peer.cmd("load", link=link)
    assert f["step"] == 2 and f["total"] == 3 and f["state_hash"] == r.json()["state_hash"]
    f = peer.cmd("load", link="zzzzzzzzzzzzzzzz")
    assert f["type"] == "error" and "zzzzzzzzzzzzzzzz" in f["message"]


# ---------------------------------------------------------------------- bad commands
BAD = [
    ("not json", "not a JSON command"),
    ('{"op": "step"', "not a JSON command"),
    ("[1, 2]", "JSON object"),
    ('"step"', "JSON object"),
    ('{"id": 5}', "unknown op"),
    ('{"op": "fly", "id": 5}', "unknown op"),
    ('{"op": "step", "id": 5, "extra": 1}', "extra"),
    ('{"op": "goto", "id": 5, "step": 100000000000000000000}', "step"),
    ('{"op": "goto", "id": 5, "step": -1}', "step"),
    ('{"op": "goto", "id": 5, "step": "3"}', "step"),
    ('{"op": "goto", "id": 5, "step": 1' + "0" * 5000 + "}", "not a JSON command"),
    ('{"op": "load", "id": 5, "scenario": ' + "[" * 100_000 + "}", "not a JSON command"),
    ('{"op": "load", "id": 5, "scenario": {"id": "a", "params": ' + "{\"a\": " * 400 + "1"
     + "}" * 400 + "}}", "ALLOCSCOPE_MAX_DEPTH"),
    ('{"op": "speed", "id": 5, "steps_per_second": 1e999}', "steps_per_second"),
    ('{"op": "speed", "id": 5, "steps_per_second": NaN}', "NaN is not a JSON number"),
    ('{"op": "speed", "id": 5, "steps_per_second": 5000}', "steps_per_second"),
    ('{"op": "scheduler", "id": 5, "kind": "random", "seed": 1180591620717411303424}', "seed"),
    ('{"op": "scheduler", "id": 5, "kind": "chaos"}', "kind"),
    ('{"op": "deliver", "id": 5, "event": "m999"}', "not enabled"),
    ('{"op": "deliver", "id": 5, "event": ""}', "event"),
    ('{"op": "deliver", "id": 5}', "event"),
    ('{"op": "fault", "id": 5, "event": "m0"}', "event"),
    ('{"op": "fault", "id": 5, "event": "f:explode:p1"}', "not possible"),
    ('{"op": "load", "id": 5}', "scenario"),
    ('{"op": "load", "id": 5, "scenario": "nope"}', "no gallery scenario"),
    ('{"op": "load", "id": 5, "scenario": {"id": "x"}}', "scenario."),
    ('{"op": "load", "id": 5, "scenario": "token-ring", "variant": "zz"}', "variant"),
    ('{"op": "load", "id": 5, "scenario": "token-ring", "schedule": ["m7"]}', "schedule item 0"),
    ('{"op": "load", "id": 5, "scenario": "token-ring", "schedule": [], "step": 3}', "step"),
]


@pytest.mark.parametrize("text, says", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_command_gets_one_error_and_the_session_goes_on(peer, text, says):
    before = peer.cmd("load", scenario="token-ring-lossy", **LOSSY)
    f = peer.raw(text)
    assert f["type"] == "error" and says in f["message"], f
    if '"id": 5' in text and says not in ("not a JSON command", "ALLOCSCOPE_MAX_DEPTH"):
        assert f["reply_to"] == 5
    after = peer.cmd("goto", step=before["step"])     # same session, same state, still answering
    assert after["type"] == "frame" and after["state_hash"] == before["state_hash"]
    assert after["scenario" if "scenario" in after else "step"] is not None


def test_binary_garbage_is_an_error_too(peer):
    peer.ws.send_bytes(b"\xff\xfe\x00")
    f = peer.recv()
    assert f["type"] == "error" and "JSON" in f["message"]
    assert peer.cmd("load", scenario="token-ring")["type"] == "frame"


# ---------------------------------------------------------------------- replays equal the CLI
@pytest.mark.parametrize("sid", GALLERY)
def test_full_replay_over_the_socket_ends_at_the_cli_state_hash(peer, sid):
    trace, rep = cli_trace(sid)
    f = peer.cmd("load", scenario=sid, schedule=trace)
    assert f["type"] == "frame", f
    assert f["step"] == rep["steps"] and f["state_hash"] == rep["state_hash"]
    # the monitors the socket shows are the CLI's
    if rep["deadlock"]:
        assert f["monitors"]["deadlock"]["step"] == rep["deadlock"]["step"]
    if rep["livelock"]:
        assert f["monitors"]["livelock"]["step"] == rep["livelock"]["step"]
    assert f["monitors"]["safety"] == ("violation" if rep["violations"] else "ok")
    assert f["metrics"]["messages"] == rep["messages"]


@pytest.mark.parametrize("sid", GALLERY)
def test_stepping_with_the_scenario_scheduler_follows_the_cli(peer, sid):
    sc = gallery()[sid]
    f = peer.cmd("load", scenario=sid)
    start = f["step"]
    _, rep = cli_trace(sid)
    k = min(rep["steps"], start + 40)
    for _ in range(k - start):
        f = peer.cmd("step")
        assert f["type"] == "frame", f
    assert f["step"] == k
    assert f["state_hash"] == runner.run(sc, steps=k)["state_hash"]


@pytest.mark.parametrize("sid", GALLERY)
def test_back_and_goto_equal_fresh_runs(peer, sid):
    rng = random.Random(sid)
    f = peer.cmd("load", scenario=sid, schedule=[])
    variant = f["protocol"]["variant"]
    peer.cmd("scheduler", kind="random", seed=3)
    trace: list[str] = []
    for _ in range(30):
        f = peer.cmd("step")
        if f["type"] == "error":
            break
        trace.append(f["event"])
    for k in sorted({rng.randint(0, len(trace)) for _ in range(4)} | {0, len(trace)}):
        f = peer.cmd("goto", step=k)
        assert f["step"] == k and f["total"] == len(trace)
        assert f["state_hash"] == fresh_hash(sid, variant, trace[:k])
        h = peer.cmd("history", **{"from": 0, "to": k})
        assert h["type"] == "history" and [r["event"] for r in h["records"]] == trace[:k]
        if k:
            f = peer.cmd("back")
            assert f["state_hash"] == fresh_hash(sid, variant, trace[:k - 1])


@pytest.mark.parametrize("sid", GALLERY)
def test_view_patches_rebuild_the_full_view(client, sid):
    """A browser applying every patch ends with the view a fresh full frame shows."""
    with client.websocket_connect("/ws") as a, client.websocket_connect("/ws") as b:
        pa, pb = Peer(a), Peer(b)
        f = pa.cmd("load", scenario=sid, schedule=[])
        model = view_model(f["view"])
        pa.cmd("scheduler", kind="random", seed=11)
        trace = []
        for _ in range(40):
            f = pa.cmd("step")
            if f["type"] == "error":
                break
            model = apply(model, f)
            trace.append(f["event"])
        full = pb.cmd("load", scenario=sid, schedule=trace)
        assert full["type"] == "frame", full
        assert full["state_hash"] == pa.cmd("goto", step=len(trace))["state_hash"]
        want = view_model(full["view"])
        assert model == want


def test_far_jumps_patch_fields_and_rebuild_the_full_view(client):
    """A far goto sends the changed node values grouped by field; applied as the browser does,
    the patches give the view a fresh full frame of the same step shows."""
    obj = gallery()["token-ring"].model_dump(mode="json")
    obj.update(params={"n": 30, "requests": 50}, scheduler={"kind": "random", "seed": 3})
    from protocols.scenario import parse
    sc = parse(obj)
    sim = runner.build(sc)
    runner.drive(sim, runner.scheduler_for(sc, sim.variant), 300)
    trace = sim.trace
    with client.websocket_connect("/ws") as a, client.websocket_connect("/ws") as b:
        pa, pb = Peer(a), Peer(b)
        f = pa.cmd("load", scenario=obj, schedule=trace)
        model = view_model(f["view"])
        used = 0
        for k in (40, 290, 7, 150, 300, 0, 222):
            f = pa.cmd("goto", step=k)
            assert "view" not in f
            used += "node_fields" in f["view_patch"]
            model = apply(model, f)
            full = pb.cmd("load", scenario=obj, schedule=trace[:k])
            assert full["state_hash"] == f["state_hash"] and model == view_model(full["view"])
        assert used >= 4          # most of these jumps change more than a few nodes


# ---------------------------------------------------------------------- play
def test_play_stops_at_the_deadlock_of_the_lossy_ring(peer):
    _, rep = cli_trace("token-ring-lossy")
    peer.cmd("load", scenario="token-ring-lossy", **LOSSY)
    peer.cmd("speed", steps_per_second=1000)
    f = peer.cmd("play")
    assert f["type"] == "frame" and f["playing"] is True       # play's one answer
    frames = peer.until_paused()
    last = frames[-1]
    assert last["reply_to"] is None and last["playing"] is False
    assert [x["kind"] for x in last["monitors"]["fired"]] == ["deadlock"]
    assert last["step"] == rep["steps"] and last["state_hash"] == rep["state_hash"]
    assert sorted(last["monitors"]["deadlock"]["cycle"]) == ["p0", "p1", "p2", "p3"]
    assert "deadlock" in last["notice"]


def test_play_streams_every_step_record_and_ends_where_the_cli_does(peer):
    _, rep = cli_trace("token-ring")
    peer.cmd("load", scenario="token-ring")
    peer.cmd("speed", steps_per_second=1000)
    start = peer.cmd("play")
    frames = peer.until_paused()
    steps = []
    for f in frames:
        steps += [r["step"] for r in f.get("skipped_records", [])]
        steps.append(f["step_record"]["step"])
    assert steps == list(range(start["step"] + 1, frames[-1]["step"] + 1))
    assert frames[-1]["state_hash"] == rep["state_hash"] and frames[-1]["step"] == rep["steps"]
    assert frames[-1]["notice"] == "every request has been served"


def test_pause_stops_the_stream(peer):
    obj = gallery()["token-ring"].model_dump(mode="json")
    obj["params"] = {"n": 50, "requests": 50}
    peer.cmd("load", scenario=obj)
    peer.cmd("speed", steps_per_second=20)
    peer.cmd("play")
    peer.ws.send_text(json.dumps({"op": "pause", "id": "p"}))
    while True:                       # stream frames may come first; then the answer
        f = peer.recv()
        if f["reply_to"] == "p":
            break
    assert f["playing"] is False
    step = f["step"]
    f = peer.cmd("inspect", proc="p0")   # nothing else was streamed after the pause's answer
    assert f["type"] == "inspect"
    assert peer.cmd("goto", step=step)["step"] == step


class SlowSocket:
    """A browser that takes ``delay`` seconds to take each frame."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.sent: list[dict[str, Any]] = []

    async def send_text(self, text: str) -> None:
        await asyncio.sleep(self.delay)
        self.sent.append(json.loads(text))


def _play_against(sock: SlowSocket, scenario: dict[str, Any], limits: Limits) -> Connection:
    async def go() -> Connection:
        conn = Connection(sock, limits)        # type: ignore[arg-type]
        sender = asyncio.get_running_loop().create_task(conn.send_loop())
        longest = 0
        for cmd in ({"op": "load", "scenario": scenario, "id": 1},
                    {"op": "speed", "steps_per_second": 1000, "id": 2},
                    {"op": "play", "id": 3}):
            conn.push(conn.answer(json.dumps(cmd)))
        for _ in range(2000):
            await asyncio.sleep(0.01)
            longest = max(longest, len(conn.out))
            if conn.play_task.done() and not conn.out and not conn.dirty:
                break
        await asyncio.sleep(sock.delay * 3)
        sender.cancel()
        conn.longest = longest   # type: ignore[attr-defined]
        return conn
    return run_async(go)


def test_a_slow_browser_gets_coalesced_frames_but_every_record_and_the_last_frame():
    obj = gallery()["token-ring"].model_dump(mode="json")
    obj.update(params={"n": 12, "requests": 3}, scheduler={"kind": "random", "seed": 5},
               open_at=None, bookmarks=[])
    sock = SlowSocket(0.03)
    conn = _play_against(sock, obj, Limits())
    frames = [f for f in sock.sent if f["reply_to"] is None]
    end = conn.session.sim.step_no
    assert frames[-1]["step"] == end and frames[-1]["playing"] is False
    assert len(frames) < end / 2, "frames were not coalesced"
    assert conn.longest <= 2          # nothing piled up: at most the answers in flight
    steps = []
    for f in frames:
        steps += [r["step"] for r in f.get("skipped_records", [])] + [f["step_record"]["step"]]
    assert steps == list(range(1, end + 1))


def test_a_slow_browser_still_sees_the_frame_where_the_monitor_fired():
    obj = gallery()["token-ring-lossy"].model_dump(mode="json")
    obj.update(params={"n": 10, "requests": 3, "lossy": "p9"}, schedule=None,
               scheduler={"kind": "random", "seed": 2})
    from protocols.scenario import parse
    rep = runner.run(parse(obj))
    assert rep["deadlock"] is not None
    sock = SlowSocket(0.03)
    _play_against(sock, obj, Limits())
    last = sock.sent[-1]
    assert last["monitors"]["fired"] and last["monitors"]["fired"][0]["kind"] == "deadlock"
    assert last["step"] == rep["steps"] and last["state_hash"] == rep["state_hash"]


def test_play_burst_limit_pauses_with_a_notice():
    client = TestClient(create_app(Limits(play_burst=5)))
    with client.websocket_connect("/ws") as ws:
        p = Peer(ws)
        f = p.cmd("load", scenario="token-ring", schedule=[])
        p.cmd("speed", steps_per_second=1000)
        p.cmd("play")
        last = p.until_paused()[-1]
        assert last["step"] == 5 and "ALLOCSCOPE_PLAY_BURST" in last["notice"]
        assert f["step"] == 0


# ---------------------------------------------------------------------- limits and origin
def test_origin_other_site_is_closed_with_1008(client):
    with pytest.raises(WebSocketDisconnect) as exc:
        with client.websocket_connect("/ws", headers={"origin": "http://evil.example"}) as ws:
            ws.receive_text()
    assert exc.value.code == 1008


def test_origin_same_site_and_allow_list_are_accepted(client):
    with client.websocket_connect("/ws", headers={"origin": "http://testserver"}) as ws:
        assert Peer(ws).cmd("load", scenario="token-ring")["type"] == "frame"
    c2 = TestClient(create_app(Limits(allowed_origins=("https://course.example",))))
    with c2.websocket_connect("/ws", headers={"origin": "https://course.example"}) as ws:
        assert Peer(ws).cmd("load", scenario="token-ring")["type"] == "frame"
    with pytest.raises(WebSocketDisconnect) as exc:
        with c2.websocket_connect("/ws", headers={"origin": "null"}) as ws:
            ws.receive_text()
    assert exc.value.code == 1008


def test_oversized_message_closes_with_1009():
    client = TestClient(create_app(Limits(ws_max_size=1000)))
    with client.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"op": "load", "scenario": "x" * 2000}))
        with pytest.raises(WebSocketDisconnect) as exc:
            ws.receive_text()
        assert exc.value.code == 1009


def test_command_rate_is_limited_per_connection():
    client = TestClient(create_app(Limits(commands_per_second=0.001, command_burst=3)))
    with client.websocket_connect("/ws") as ws:
        p = Peer(ws)
        answers = [p.cmd("load", scenario="token-ring") for _ in range(5)]
        assert [a["type"] for a in answers] == ["frame"] * 3 + ["error"] * 2
        assert "too many commands" in answers[-1]["message"]


def test_token_bucket_refills():
    b = TokenBucket(rate=2.0, burst=2, now=0.0)
    assert [b.take(0.0) for _ in range(3)] == [True, True, False]
    assert b.take(0.5) and not b.take(0.5)


def test_sessions_over_the_limit_are_refused_with_1008():
    client = TestClient(create_app(Limits(max_sessions=1)))
    with client.websocket_connect("/ws") as first:
        assert Peer(first).cmd("load", scenario="token-ring")["type"] == "frame"
        with client.websocket_connect("/ws") as second:
            f = json.loads(second.receive_text())
            assert f["type"] == "error" and "ALLOCSCOPE_MAX_SESSIONS" in f["message"]
            with pytest.raises(WebSocketDisconnect) as exc:
                second.receive_text()
            assert exc.value.code == 1008
    with client.websocket_connect("/ws") as again:          # the slot was given back
        assert Peer(again).cmd("load", scenario="token-ring")["type"] == "frame"


def test_scenario_size_limits():
    client = TestClient(create_app(Limits(max_processes=10, max_schedule=3, max_steps=50,
                                          max_messages=3)))
    obj = gallery()["token-ring"].model_dump(mode="json")
    obj["params"] = {"n": 11, "requests": 1}
    with client.websocket_connect("/ws") as ws:
        p = Peer(ws)
        f = p.cmd("load", scenario=obj)
        assert f["type"] == "error" and "ALLOCSCOPE_MAX_PROCESSES" in f["message"]
        f = p.cmd("load", scenario="token-ring", schedule=["e:p0:request"] * 4)
        assert f["type"] == "error" and "ALLOCSCOPE_MAX_SCHEDULE" in f["message"]
        p.cmd("load", scenario="token-ring", schedule=[])
        p.cmd("fault", event="f:dup:m0")
        p.cmd("fault", event="f:dup:m0")
        f = p.cmd("fault", event="f:dup:m0")
        assert f["type"] == "error" and "ALLOCSCOPE_MAX_MESSAGES" in f["message"]


def test_limits_from_env():
    lim = Limits.from_env({"ALLOCSCOPE_MAX_PROCESSES": "12", "ALLOCSCOPE_ALLOWED_ORIGINS":
                           "https://a.example/, https://b.example",
                           "ALLOCSCOPE_COMMANDS_PER_SECOND": "2.5"})
    assert lim.max_processes == 12 and lim.commands_per_second == 2.5
    assert lim.allowed_origins == ("https://a.example", "https://b.example")
    with pytest.raises(ValueError, match="ALLOCSCOPE_MAX_SESSIONS"):
        Limits.from_env({"ALLOCSCOPE_MAX_SESSIONS": "many"})


# ---------------------------------------------------------------------- the hot-path hash
@pytest.mark.parametrize("sid", GALLERY)
def test_cached_state_hash_equals_the_kernels(sid):
    from app.statehash import StateHasher
    sim = runner.build(gallery()[sid])
    h = StateHasher()
    rng = random.Random(sid)
    for _ in range(120):
        assert h(sim) == sim.state_hash()
        evs = sim.enabled()
        if not evs:
            break
        sim.step(evs[rng.randrange(len(evs))].id)
    sim.goto(sim.step_no // 2)                # restored snapshots hold other objects
    assert h.checked(sim) == sim.state_hash() and h.trusted


def test_cached_state_hash_retires_itself_when_the_kernel_disagrees(monkeypatch):
    from app.statehash import StateHasher
    sim = runner.build(gallery()["token-ring"])
    h = StateHasher()
    monkeypatch.setattr(type(sim), "state_hash", lambda self: "0" * 64)
    assert h.checked(sim) == "0" * 64 and not h.trusted
    assert h(sim) == "0" * 64


# ---------------------------------------------------------------------- lean frames
def test_step_frames_stay_small_at_a_hundred_processes(peer):
    obj = gallery()["token-ring"].model_dump(mode="json")
    obj.update(params={"n": 100, "requests": 50}, scheduler={"kind": "random", "seed": 4})
    peer.cmd("load", scenario=obj)
    sizes = []
    for _ in range(60):
        f = peer.cmd("step")
        sizes.append(len(json.dumps(f["view_patch"], separators=(",", ":"))))
        assert len(f["view_patch"]["nodes"]) <= 3          # only what the step touched
    assert sorted(sizes)[len(sizes) // 2] < 4096


def test_incremental_frames_carry_only_the_newest_per_request_metrics(peer):
    obj = gallery()["token-ring"].model_dump(mode="json")
    obj.update(params={"n": 3, "requests": 100}, scheduler={"kind": "round-robin", "seed": 0},
               steps=1500)
    from protocols.scenario import parse
    sc = parse(obj)
    sim = runner.build(sc)
    runner.drive(sim, runner.scheduler_for(sc, sim.variant), 1200)
    f = peer.cmd("load", scenario=obj, schedule=sim.trace[:-1])
    full = f["metrics"]["per_request"]
    assert len(full) > 60
    f = peer.cmd("deliver", event=sim.trace[-1])
    assert f["metrics"]["served"] > 60 and "per_request" not in f["metrics"]
    # only what was added since the previous frame: the browser appends it
    want = sim.monitors.metrics()["per_request"]
    assert (full + f["metrics"]["per_request_add"])[-len(want):] == want
    f = peer.cmd("back")                              # an earlier run of the list: drop some
    kept = (full + f["metrics"]["per_request_add"])
    kept = kept[:len(kept) - f["metrics"].get("per_request_drop", 0)]
    assert "per_request" not in f["metrics"] and kept[-60:] == full[-60:]
    f = peer.cmd("goto", step=600)                    # far back: the last 60 anew, by column
    cols = f["metrics"]["per_request_cols"]
    assert "per_request" not in f["metrics"]
    then = runner.build(sc)
    then.replay(sim.trace[:600])
    want = then.monitors.metrics()["per_request"][-60:]
    rows = [dict(zip(cols, row, strict=True)) for row in zip(*cols.values(), strict=True)]
    assert len(want) == 60 and rows == want


def test_a_protocol_bug_is_an_error_frame_not_a_dead_connection(peer, monkeypatch):
    from protocols import registry
    proto = registry.get("token_ring")
    peer.cmd("load", scenario="token-ring", schedule=[])

    def broken(sim):
        raise RuntimeError("view exploded")
    monkeypatch.setattr(proto, "view", broken)
    f = peer.cmd("scheduler", kind="oldest")
    f = peer.cmd("step")
    assert f["type"] == "error" and "internal error" in f["message"] and "exploded" in f["message"]
    monkeypatch.undo()
    f = peer.cmd("load", scenario="token-ring", schedule=[])
    assert f["type"] == "frame" and "view" in f


# ---------------------------------------------------------------------- fuzzing
def _fuzz_commands():
    from hypothesis import strategies as st
    ids = st.sampled_from(["m0", "m1", "m2", "m3", "e:p0:request", "e:p1:request", "e:p3:release",
                           "f:drop:m0", "f:crash:p1", "f:corrupt:p2:token=True", "zz", ""])
    nums = st.one_of(st.integers(-5, 12), st.integers(), st.floats(allow_nan=False),
                     st.text(max_size=3), st.none(), st.booleans())
    valid = st.one_of(
        st.fixed_dictionaries({"op": st.just("load"), "scenario": st.sampled_from(GALLERY)}),
        st.fixed_dictionaries({"op": st.just("step")}),
        st.fixed_dictionaries({"op": st.just("deliver"), "event": ids}),
        st.fixed_dictionaries({"op": st.just("fault"), "event": ids}),
        st.fixed_dictionaries({"op": st.sampled_from(["back", "reset", "pause"])}),
        st.fixed_dictionaries({"op": st.just("goto"), "step": nums}),
        st.fixed_dictionaries({"op": st.just("speed"), "steps_per_second": nums}),
        st.fixed_dictionaries({"op": st.just("scheduler"),
                               "kind": st.sampled_from(["manual", "random", "oldest",
                                                        "round-robin", "scripted", "x"]),
                               "seed": nums}),
        st.fixed_dictionaries({"op": st.just("inspect"), "proc": st.sampled_from(["p0", "p9", ""])}),
    )
    junk = st.dictionaries(st.sampled_from(["op", "id", "step", "event", "x"]), nums, max_size=3)
    as_text = st.one_of(valid, junk).map(json.dumps)
    broken = st.one_of(as_text.map(lambda t: t[: max(0, len(t) - 3)]), st.text(max_size=20))
    return st.lists(st.one_of(as_text, as_text, broken), min_size=1, max_size=12)


def test_fuzzed_command_sequences_each_get_exactly_one_answer(client):
    from hypothesis import given, settings

    @settings(max_examples=40, deadline=None)
    @given(_fuzz_commands())
    def run(texts):
        with client.websocket_connect("/ws") as ws:
            p = Peer(ws)
            for i, text in enumerate(texts):
                try:
                    data = json.loads(text)
                except ValueError:
                    data = None
                if isinstance(data, dict):          # tag it so the answer can be paired
                    data["id"] = f"c{i}"
                    text = json.dumps(data)
                f = p.raw(text)
                assert f["type"] in ("frame", "error", "inspect"), f
                if isinstance(data, dict):
                    assert f["reply_to"] == f"c{i}", (text, f)
            assert p.cmd("load", scenario="token-ring")["type"] == "frame"   # still alive
    run()


def test_an_idle_connection_is_closed_with_1001_but_not_while_playing():
    client = TestClient(create_app(Limits(idle_seconds=0.3)))
    with client.websocket_connect("/ws") as ws:
        p = Peer(ws)
        obj = gallery()["token-ring"].model_dump(mode="json")
        obj.update(params={"n": 4, "requests": 2}, open_at=None, bookmarks=[])
        p.cmd("load", scenario=obj)
        p.cmd("speed", steps_per_second=40)
        start = p.cmd("play")["step"]
        frames = p.until_paused()            # no command sent during play
        assert frames[-1]["step"] - start >= 20 and frames[-1]["notice"]   # ≥ 0.5 s at 40/s
        with pytest.raises(WebSocketDisconnect) as exc:
            ws.receive_text()
        assert exc.value.code == 1001


def test_a_view_json_cannot_carry_is_an_error_frame(peer, monkeypatch):
    from protocols import registry
    proto = registry.get("token_ring")
    peer.cmd("load", scenario="token-ring", schedule=[])
    monkeypatch.setattr(proto, "view", lambda sim: {"layout": "ring", "nodes": [], "x": object()})
    f = peer.cmd("goto", step=0)
    assert f["type"] == "error" and "encoding" in f["message"]
    monkeypatch.undo()
    assert "view" in peer.cmd("goto", step=0)


def events(peer, k: int) -> list[str]:
    """The event ids of steps 1..k of the session's current timeline (the history command)."""
    h = peer.cmd("history", **{"from": 0, "to": k})
    assert h["type"] == "history", h
    return [r["event"] for r in h["records"]]


def test_stepping_along_the_recorded_future_keeps_it_and_a_new_event_forks_a_branch(peer):
    f = peer.cmd("load", scenario="token-ring-lossy", **LOSSY)
    trace = [r["event"] for r in f["history"]]
    assert f["branch"] == 0 and [b["id"] for b in f["branches"]] == [0]
    peer.cmd("goto", step=2)
    f = peer.cmd("deliver", event=trace[2])               # the recorded next event
    assert f["step"] == 3 and f["total"] == 6 and "branches" not in f
    f = peer.cmd("goto", step=6)
    assert events(peer, 6) == trace
    assert f["state_hash"] == fresh_hash("token-ring-lossy", "lossy", trace)
    enabled = peer.cmd("goto", step=1)["enabled"]
    other = next(e["id"] for e in enabled if e["id"] != trace[1])
    f = peer.cmd("deliver", event=other)                  # a different event: a new branch
    assert f["total"] == 2 and f["step_record"]["event"] == other and f["forget_after"] == 1
    assert f["branch"] == 1 and "new branch" in f["notice"]
    assert [(b["id"], b["parent"], b["fork"], b["length"]) for b in f["branches"]] == \
        [(0, None, 0, 6), (1, 0, 1, 2)]
    assert events(peer, 2) == [trace[0], other]
    # the old future is still reachable: switch back to it
    f = peer.cmd("branch", branch=0)
    assert f["branch"] == 0 and f["total"] == 6 and f["step"] == 2 and "view_patch" in f
    assert f["forget_after"] == 1 and f["step_record"]["event"] == trace[1]
    assert events(peer, 6) == trace
    assert peer.cmd("goto", step=6)["state_hash"] == fresh_hash("token-ring-lossy", "lossy",
                                                               trace)
    # taking the other event again rejoins branch 1 instead of making a third
    peer.cmd("goto", step=1)
    f = peer.cmd("deliver", event=other)
    assert f["branch"] == 1 and len(f["branches"]) == 2 and f["total"] == 2


def test_stepping_on_from_a_branch_never_hits_the_dead_script(peer):
    """Issue 17 item 4: the scripted schedule no longer applies after a deviation; stepping on
    uses the scenario's next scheduler (never 'schedule item 4 is not enabled')."""
    f = peer.cmd("load", scenario="datta-fig1")
    assert f["scheduler"]["kind"] == "scripted" and f["step"] == 10 and f["total"] == 18
    rec = events(peer, 18)
    peer.cmd("goto", step=3)
    f = peer.cmd("goto", step=3)
    other = next(e["id"] for e in f["enabled"] if e["id"] != rec[3])
    f = peer.cmd("deliver", event=other)
    assert f["branch"] == 1 and f["scheduler"]["kind"] == "oldest" and "oldest" in f["notice"]
    for _ in range(12):
        f = peer.cmd("step")
        assert f["type"] == "frame", f
    assert f["step"] == 16 and f["total"] == 16
    f = peer.cmd("scheduler", kind="scripted")        # asked for again: it says why it stops
    assert "left the recorded schedule at step 4" in f["notice"]
    assert peer.cmd("step")["type"] == "frame"
    f = peer.cmd("branch", branch=0, step=18)         # the recorded run is intact
    assert f["step"] == 18 and f["total"] == 18 and events(peer, 18) == rec
    assert f["state_hash"] == fresh_hash("datta-fig1", "full", rec)


def test_back_and_goto_frames_are_diffs_and_history_comes_by_range(peer):
    f = peer.cmd("load", scenario="datta-stress")
    assert f["step"] == 277 and f["total"] == 292
    f = peer.cmd("back")
    assert "view_patch" in f and "history" not in f and f["step_record"] is None
    f = peer.cmd("goto", step=280)                    # a short jump carries its records
    assert [r["step"] for r in f["skipped_records"]] + [f["step_record"]["step"]] == \
        [277, 278, 279, 280]
    f = peer.cmd("goto", step=10)
    assert "view_patch" in f and "skipped_records" not in f
    f = peer.cmd("goto", step=200)                    # a long one: the browser asks for them
    assert "skipped_records" not in f and f["step_record"] is None
    h = peer.cmd("history", **{"from": 150, "to": 200})
    assert [r["step"] for r in h["records"]] == list(range(151, 201)) and h["total"] == 292
    h = peer.cmd("history", **{"from": 0, "to": 10**6})
    assert h["to"] == 292 and len(h["records"]) == 292


class DeadSocket:
    """A client that sends many commands and is gone before it reads an answer."""

    def __init__(self, commands: list[str]) -> None:
        self.commands = commands
        self.sent = 0

    async def receive(self) -> dict[str, Any]:
        if self.commands:
            return {"type": "websocket.receive", "text": self.commands.pop(0)}
        await asyncio.sleep(3600)
        return {"type": "websocket.disconnect"}

    async def send_text(self, text: str) -> None:
        raise ConnectionResetError("client gone")


def test_a_reader_waiting_for_room_is_released_when_the_socket_dies():
    async def go() -> bool:
        cmds = [json.dumps({"op": "load", "scenario": "token-ring", "id": i}) for i in range(40)]
        conn = Connection(DeadSocket(cmds), Limits())        # type: ignore[arg-type]
        sender = asyncio.get_running_loop().create_task(conn.send_loop())
        try:
            await asyncio.wait_for(conn.receive_loop(), 5)
        finally:
            sender.cancel()
        return conn.closed
    assert run_async(go) is True


@pytest.mark.parametrize("sid", GALLERY)
def test_play_stops_where_the_cli_run_stops(sid):
    """Play's stop rules are `allocscope run`'s: same last step, same state (driven in process,
    without the clock; the socket's play loop only paces these steps)."""
    from app.session import Session
    _, rep = cli_trace(sid)
    s = Session(Limits())
    s.load(sid, step=0)      # from step 0: the run may stop inside the recorded schedule
    s.start_play()
    r = None
    for _ in range(rep["steps"] + 1):
        r = s.play_step()
        if r.status != "ok":
            break
    assert r is not None and r.status != "ok" and not s.playing
    assert s.sim.step_no == rep["steps"] and s.sim.state_hash() == rep["state_hash"], r.notice
