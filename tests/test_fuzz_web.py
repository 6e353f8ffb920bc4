"""Fuzzing the web surface (issue 10): websocket command sequences of every kind, and every
REST route of the OpenAPI schema with generated parameters and bodies.

The server must answer every websocket command with exactly one frame or one error (or close
cleanly), keep the session usable, and never answer a REST request with a 5xx.
"""

from __future__ import annotations

import json
import string

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.main import app
from protocols.scenario import gallery

GALLERY = sorted(gallery())
OPS = ["load", "step", "deliver", "back", "goto", "reset", "play", "pause", "speed",
       "scheduler", "fault", "inspect"]

scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20))
values = st.recursive(scalars, lambda i: st.lists(i, max_size=3)
                      | st.dictionaries(st.text(max_size=6), i, max_size=3), max_leaves=6)


@st.composite
def commands(draw) -> str:
    """A command as the text a client sends: valid, nearly valid, or garbage."""
    kind = draw(st.sampled_from(["valid", "mutated", "garbage", "truncated"]))
    op = draw(st.sampled_from(OPS + ["", "explode"]))
    cmd: dict = {"op": op}
    if op == "load":
        cmd["scenario"] = draw(st.sampled_from(GALLERY))
    elif op in ("deliver", "fault"):
        cmd["event"] = draw(st.sampled_from(["m0", "m1", "e:p0:request", "f:drop:m0",
                                             "f:crash:p1", "zz"]))
    elif op == "goto":
        cmd["step"] = draw(st.integers(-5, 50))
    elif op == "speed":
        cmd["steps_per_second"] = draw(st.floats(0, 2000))
    elif op == "scheduler":
        cmd["kind"] = draw(st.sampled_from(["manual", "random", "oldest", "round-robin",
                                            "scripted", "chaos"]))
        cmd["seed"] = draw(st.integers(-1, 2**64))
    elif op == "inspect":
        cmd["proc"] = draw(st.sampled_from(["p0", "r1", "a", "c1", "nobody"]))
    if draw(st.booleans()):
        cmd["id"] = draw(st.integers(0, 10**6) | st.text(max_size=80))
    if kind == "mutated":
        cmd[draw(st.sampled_from(["op", "event", "step", "extra", "scenario", "seed"]))] = \
            draw(values)
    text = json.dumps(cmd)
    if kind == "garbage":
        return draw(st.text(alphabet=string.printable, max_size=60))
    if kind == "truncated":
        return text[: draw(st.integers(0, max(0, len(text) - 1)))]
    return text


@pytest.fixture(scope="module")
def client():
    with TestClient(app) as c:
        yield c


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(commands(), min_size=1, max_size=12))
def test_every_command_gets_one_answer_and_the_session_survives(client, seq):
    with client.websocket_connect("/ws") as ws:
        for text in seq:
            ws.send_text(text)
            answer = json.loads(ws.receive_text())
            assert answer["type"] in ("frame", "error", "inspect")
            if answer["type"] == "error":
                assert answer["message"]
            if answer["type"] == "frame" and answer.get("playing"):
                ws.send_text(json.dumps({"op": "pause", "id": "stop"}))
                while json.loads(ws.receive_text()).get("reply_to") != "stop":
                    pass
        # the session still works after whatever came before
        ws.send_text(json.dumps({"op": "load", "scenario": "token-ring", "id": "final"}))
        final = json.loads(ws.receive_text())
        assert final["type"] == "frame" and final["reply_to"] == "final"
        assert (final["step"], final["state_hash"]) == _fresh_load(client)


_fresh: list = []


def _fresh_load(client) -> tuple:
    """(step, state_hash) of loading token-ring on a new connection (where a load opens)."""
    if not _fresh:
        with client.websocket_connect("/ws") as ws:
            ws.send_text(json.dumps({"op": "load", "scenario": "token-ring"}))
            f = json.loads(ws.receive_text())
            _fresh.append((f["step"], f["state_hash"]))
    return _fresh[0]


def _routes():
    out = []
    for path, item in app.openapi()["paths"].items():
        for method, op in item.items():
            params = [p["name"] for p in op.get("parameters", []) if p["in"] == "path"]
            out.append((method.upper(), path, params, "requestBody" in op))
    return out


ROUTES = _routes()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(route=st.sampled_from(ROUTES), data=st.data())
def test_rest_routes_never_answer_5xx(client, route, data):
    method, path, params, has_body = route
    url = path
    for name in params:
        value = data.draw(st.sampled_from(GALLERY + ["", "..", "%00", "x" * 300, "a/b"])
                          | st.text(alphabet=string.ascii_letters + string.digits + "-_.~",
                                    min_size=1, max_size=40), label=name)
        url = url.replace("{" + name + "}", value or "x")
    query = data.draw(st.dictionaries(st.sampled_from(["variant", "schedule", "step", "embed",
                                                       "present", "link", "scenario"]),
                                      st.text(max_size=30), max_size=3), label="query")
    kwargs = {"params": query}
    if has_body:
        body = data.draw(values | st.fixed_dictionaries(
            {"scenario": st.sampled_from(GALLERY) | values, "schedule": values,
             "step": st.integers(-3, 10**9) | values}), label="body")
        if data.draw(st.booleans(), label="raw"):
            kwargs["content"] = data.draw(st.binary(max_size=200), label="bytes")
        else:   # json.dumps writes NaN / Infinity as Python does: the server must cope
            kwargs["content"] = json.dumps(body)
            kwargs["headers"] = {"content-type": "application/json"}
    r = client.request(method, url, **kwargs)
    assert r.status_code < 500, (method, url, r.status_code, r.text[:300])


# ---------------------------------------------------------------- nesting and huge scenarios (20)

def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [40, 255, 100_000])
@pytest.mark.parametrize("route", ["/api/links", "/api/links/fragment", "/api/export",
                                   "/api/check", "/api/links/decode",
                                   "/api/scenarios/validate"])
def test_deep_nesting_is_a_4xx_with_a_sentence_everywhere(client, route, depth):
    body = ('{"scenario": {"id": "deep", "title": "t", "protocol": "token_ring", "params": '
            '{"n": 3, "note": ' + _nested(depth) + '}}, "fragment": "x"}')
    r = client.post(route, content=body, headers={"content-type": "application/json"})
    assert 400 <= r.status_code < 500, (route, depth, r.status_code, r.text[:200])
    assert "ALLOCSCOPE_MAX_DEPTH" in r.text
    assert r.headers["x-content-type-options"] == "nosniff"
    assert "content-security-policy" in r.headers


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(depth=st.integers(33, 3000), where=st.sampled_from(["params", "topology", "workload"]),
       items=st.integers(1001, 8000), kind=st.sampled_from(["deep", "wide", "long-schedule"]))
def test_nested_and_huge_scenarios_over_the_socket_are_refused_by_name(client, depth, where,
                                                                        items, kind):
    sc = {"id": "huge", "title": "t", "protocol": "task_game",
          "topology": {"agents": ["A1"], "pools": {"P1": {"agent": "A1", "units": 1}}},
          "workload": {"tasks": [{"id": "T0", "agent": "A1", "interest": ["P1"]}]}}
    if kind == "deep":
        text = json.dumps({"op": "load", "id": 9, "scenario": {**sc, where: {}}})
        text = text.replace(f'"{where}": {{}}', f'"{where}": {{"x": {_nested(depth)}}}')
        want = "ALLOCSCOPE_MAX_DEPTH"
    elif kind == "wide":
        sc["workload"] = {"tasks": [{"id": f"T{i}", "agent": "A1", "interest": ["P1"]}
                                    for i in range(items)]}
        text, want = json.dumps({"op": "load", "id": 9, "scenario": sc}), "ALLOCSCOPE_MAX_ITEMS"
    else:
        text = json.dumps({"op": "load", "id": 9, "scenario": "token-ring",
                           "schedule": ["m0"] * (50_001 + items)})
        want = "ALLOCSCOPE_MAX_SCHEDULE"
    with client.websocket_connect("/ws") as ws:
        ws.send_text(text)
        f = json.loads(ws.receive_text())
        assert f["type"] == "error" and want in f["message"], f["message"]
        ws.send_text(json.dumps({"op": "load", "scenario": "token-ring", "id": "after"}))
        assert json.loads(ws.receive_text())["reply_to"] == "after"    # the session goes on
