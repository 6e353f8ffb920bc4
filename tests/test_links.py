"""Share links, exports, the editor's validation and thumbnails (issue 8; durability of issue 10).

In-process tests use the real app (``app.main.create_app``) on a private data folder; durability
and multi-process tests start real uvicorn subprocesses on loopback (app/devserver.py).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path
from urllib.parse import unquote

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app import linkcodec, store, thumbs
from app.devserver import ROOT, server, servers, start_server, stop
from app.linkstate import LinkRequest, canonical, make
from app.main import create_app
from protocols import registry
from protocols.kernel import make_scheduler
from protocols.runner import build, run
from protocols.scenario import gallery, parse

GALLERY = sorted(gallery())


def random_schedule(sid: str, variant: str, seed: int, n: int) -> list[str]:
    """Up to ``n`` events chosen by the seeded random scheduler."""
    sim = build(gallery()[sid], variant)
    sched = make_scheduler("random", seed)
    out: list[str] = []
    for _ in range(n):
        eid = sched.choose(sim)
        if eid is None:
            break
        sim.step(eid)
        out.append(eid)
    return out


def hash_at(scenario, variant: str, schedule: list[str], k: int) -> str:
    """The state_hash after the first k events, by a fresh replay (independent of goto)."""
    sc = gallery()[scenario] if isinstance(scenario, str) else scenario
    sim = build(sc, variant)
    sim.replay(schedule[:k])
    return sim.state_hash()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory):
    d = tmp_path_factory.mktemp("links-data")
    old = os.environ.get(store.DATA_ENV)
    os.environ[store.DATA_ENV] = str(d)
    store.reset_stores()
    yield d
    store.reset_stores()
    if old is None:
        os.environ.pop(store.DATA_ENV, None)
    else:
        os.environ[store.DATA_ENV] = old


@pytest.fixture(scope="module")
def client(data_dir: Path) -> TestClient:
    return TestClient(create_app())


LOSSY = ["e:p3:request", "m0", "m1", "m2", "m3", "e:p3:release"]


# ------------------------------------------------------------------ the short-link store
def test_same_content_same_id_and_wal(client: TestClient, data_dir: Path) -> None:
    body = {"scenario": "token-ring-lossy", "schedule": LOSSY, "step": 3}
    a = client.post("/api/links", json=body)
    b = client.post("/api/links", json=body)
    c = client.post("/api/links", json={**body, "step": 4})
    assert a.status_code == b.status_code == c.status_code == 201
    assert a.json()["id"] == b.json()["id"] != c.json()["id"]
    assert store.ID_RE.match(a.json()["id"])
    assert a.json()["state_hash"] == hash_at("token-ring-lossy", "lossy", LOSSY, 3)
    db = data_dir / store.DB_NAME
    assert db.exists()
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert con.execute("SELECT COUNT(*) FROM links").fetchone()[0] >= 2


def test_short_link_redirects_to_the_viewer_at_that_state(client: TestClient) -> None:
    made = client.post("/api/links", json={"scenario": "token-ring-lossy", "schedule": LOSSY,
                                           "step": 2}).json()
    r = client.get(made["url"], follow_redirects=False)
    assert r.status_code == 303
    loc = r.headers["location"]
    assert loc.startswith("/sim/token-ring-lossy?") and f"link={made['id']}" in loc
    assert "step=2" in loc
    page = client.get(loc)
    assert page.status_code == 200
    data = json.loads(page.text.split('id="page-data">')[1].split("</script>")[0])
    assert data["link"] == made["id"]


@pytest.mark.parametrize("lid,status", [
    ("aaaaaaaaaaaaaaaa", 404),             # well-formed, never made
    ("AAAAAAAAAAAAAAAA", 400),             # upper case: not an id
    ("short", 400),
    ("a" * 300, 400),
    ("%3Cscript%3E", 400),
])
def test_bad_short_links_get_a_clear_page(client: TestClient, lid: str, status: int) -> None:
    page = client.get(f"/s/{lid}", headers={"accept": "text/html"})
    assert page.status_code == status
    assert "text/html" in page.headers["content-type"]
    assert ("no link" in page.text) if status == 404 else ("link id" in page.text)
    # the heading says what happened in words (it was only "400" or "404")
    assert ("<h1>Not found" in page.text) if status == 404 else ("<h1>This address cannot be opened" in page.text)
    # a well-formed start that is too short was most likely cut off when it was copied
    assert ("cut off" in page.text) == (lid == "short")
    assert "<script>" not in page.text
    api = client.get(f"/api/links/{lid}")
    assert api.status_code == status and api.json()["detail"]


def test_altered_stored_link_says_so(client: TestClient) -> None:
    """Links are checked by what each step did (issue 20.4): an identical run at an edited step
    is an altered link (400); a run that behaves differently opens anyway, naming the first
    step where the runs differ; a changed state_hash alone (a new serialisation) is no error."""
    req = LinkRequest(scenario="token-ring-lossy", schedule=LOSSY, step=4)
    rec = make(req)
    assert rec.format == 2 and len(rec.trail) == 2 * len(LOSSY) and rec.fingerprint
    st_ = store.get_store()
    moved = rec.model_copy(update={"step": 3})
    r = client.get(f"/s/{st_.put(canonical(moved.model_dump()))}")
    assert r.status_code == 400 and "altered" in r.text
    rehashed = rec.model_copy(update={"state_hash": "0" * 64})
    r1 = client.get(f"/api/links/{st_.put(canonical(rehashed.model_dump()))}")
    assert r1.status_code == 200 and r1.json()["step"] == 4
    assert r1.json()["state_hash"] == rec.state_hash and r1.json()["diverged"] is None
    assert "stored differently" in r1.json()["notice"]
    same = rec.model_copy(update={"version": "0"})   # old version, identical run: a notice
    r3 = client.get(f"/api/links/{st_.put(canonical(same.model_dump()))}")
    assert r3.status_code == 200 and "version 0" in r3.json()["notice"]
    other = rec.trail[:4] + ("00" if rec.trail[4:6] != "00" else "11") + rec.trail[6:]
    changed = rec.model_copy(update={"trail": other, "version": "0"})
    lid = st_.put(canonical(changed.model_dump()))
    r4 = client.get(f"/api/links/{lid}")
    assert r4.status_code == 200 and r4.json()["diverged"]["step"] == 3
    assert r4.json()["step"] == 4 and "first differ at step 3" in r4.json()["notice"]
    page = client.get(f"/s/{lid}", headers={"accept": "text/html"})
    assert page.status_code == 200 and "behaves differently" in page.text
    assert "step 3" in page.text and f"link={lid}" in page.text     # never a blank viewer
    not_enabled = rec.model_copy(update={"schedule": ["m7", *LOSSY], "version": "0"})
    r5 = client.get(f"/api/links/{st_.put(canonical(not_enabled.model_dump()))}")
    assert r5.status_code == 200 and r5.json()["diverged"]["applied"] == 0
    assert "no longer possible" in r5.json()["notice"] and r5.json()["step"] == 0


def test_an_upgrade_adding_a_defaulted_state_field_keeps_every_gallery_link(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every gallery scenario x its variants, linked at a step of its own schedule; then every
    state gains a defaulted field (its serialisation, so its state_hash, changes): each link
    still opens, at the same step, with no divergence."""
    import dataclasses

    from protocols.kernel import canon as canon_mod
    made = []
    for sid, sc in gallery().items():
        for variant in registry.get(sc.protocol).variants[:2]:
            sched = sc.schedule_for(variant)[:40]
            try:
                r = client.post("/api/links", json={"scenario": sid, "variant": variant,
                                                    "schedule": sched})
            except Exception:   # noqa: BLE001
                continue
            if r.status_code == 201:
                made.append((r.json()["id"], r.json()["step"], r.json()["state_hash"]))
    assert len(made) >= len(gallery())
    orig = canon_mod.canon

    def upgraded(value):
        out = orig(value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            out["added_in_an_upgrade"] = 0           # a new field at its default
        return out
    monkeypatch.setattr(canon_mod, "canon", upgraded)
    for lid, step, h in made:
        r = client.get(f"/api/links/{lid}")
        assert r.status_code == 200, (lid, r.text)
        body = r.json()
        assert body["step"] == step and body["diverged"] is None, (lid, body["notice"])
        assert body["state_hash"] != h                # the upgrade did change the hash


def test_bad_link_requests_name_the_field(client: TestClient) -> None:
    cases = [
        ({"scenario": "no-such", "schedule": []}, 404, "no gallery scenario"),
        ({"scenario": "token-ring", "schedule": ["m9"]}, 400, "link.schedule"),
        ({"scenario": "token-ring", "schedule": [], "step": 3}, 400, "link.step"),
        ({"scenario": "token-ring", "variant": "nope"}, 400, "variant"),
        ({"scenario": {"id": "x", "title": "t", "protocol": "token_ring",
                       "params": {"n": 1}}}, 400, "scenario.params.n"),
        ({"scenario": "token-ring", "bogus": 1}, 400, "link.bogus"),
        ({"scenario": "token-ring", "schedule": [], "state_hash": "f" * 64}, 400, "link.state_hash"),
        ("not an object", 400, "JSON object"),
    ]
    for body, status, text in cases:
        r = client.post("/api/links", json=body)
        assert r.status_code == status, (body, r.text)
        assert text in r.json()["detail"], (body, r.text)
    r = client.post("/api/links", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["detail"]


def test_over_the_size_limit_is_413(client: TestClient) -> None:
    from app import linkstate
    big = {"id": "big", "title": "big", "protocol": "token_ring",
           "params": {"n": 3, "note": "x" * (linkstate.MAX_LINK_BYTES + 10)}}
    r = client.post("/api/links", json={"scenario": big})
    assert r.status_code == 413 and "limit" in r.json()["detail"]
    huge = client.post("/api/links", content=b'{"scenario": "' + b"x" * (3 * linkstate.MAX_LINK_BYTES)
                       + b'"}', headers={"content-type": "application/json"})
    assert huge.status_code == 413 and "too large" in huge.json()["detail"]
    long_sched = {"scenario": "token-ring", "schedule": ["m0"] * (linkstate.MAX_SCHEDULE + 1)}
    r3 = client.post("/api/links", json=long_sched)
    assert r3.status_code == 413 and "ALLOCSCOPE_LINK_MAX_SCHEDULE" in r3.json()["detail"]
    many = {"id": "many", "title": "many", "protocol": "token_ring", "params": {"n": 5000}}
    r4 = client.post("/api/links", json={"scenario": many})     # the sessions would refuse it
    assert r4.status_code == 413 and "ALLOCSCOPE_MAX_PROCESSES" in r4.json()["detail"]


# ------------------------------------------------------------------ self-contained links
def test_fragment_truncated_or_tampered_is_400_never_500(client: TestClient) -> None:
    made = client.post("/api/links", json={"scenario": "token-ring-lossy", "schedule": LOSSY,
                                           "step": 5}).json()
    payload = made["fragment_url"].split("#s=")[1]
    assert made["fragment_url"].startswith("/sim/token-ring-lossy#s=")
    ok = client.post("/api/links/decode", json={"fragment": payload})
    assert ok.status_code == 200 and ok.json()["state_hash"] == made["state_hash"]
    statuses = set()
    for cut in range(0, len(payload), max(1, len(payload) // 25)):
        r = client.post("/api/links/decode", json={"fragment": payload[:cut]})
        assert r.status_code == 400, (cut, r.text)
        statuses.add(r.json()["detail"].split(":")[0])
        assert r.json()["detail"].startswith("link fragment")
    for i in range(0, len(payload), max(1, len(payload) // 20)):
        flipped = payload[:i] + ("A" if payload[i] != "A" else "B") + payload[i + 1:]
        r = client.post("/api/links/decode", json={"fragment": flipped})
        assert r.status_code in (400, 404, 409), (i, r.text)
        assert r.json()["detail"]
    for junk in ["!!!", "s=%%", "é", "=" * 10]:
        r = client.post("/api/links/decode", json={"fragment": junk})
        assert r.status_code == 400 and "base64" in r.json()["detail"]
    # a well-formed fragment whose schedule was edited: the replay no longer reaches the hash
    rec = linkcodec.decode(payload).model_copy(update={"step": 4})
    r = client.post("/api/links/decode", json={"fragment": linkcodec.encode(rec)})
    assert r.status_code == 400 and "altered" in r.json()["detail"]
    # a zip bomb is refused before it is inflated
    bomb = base64.urlsafe_b64encode(zlib.compress(b" " * (20 << 20), 9)).decode().rstrip("=")
    r = client.post("/api/links/decode", json={"fragment": bomb})
    assert r.status_code == 413


def test_full_object_scenarios_link_both_ways(client: TestClient) -> None:
    sc = gallery()["token-ring"].model_dump(mode="json")
    sc.update({"id": "my-ring", "title": "My <b>ring</b>", "params": {"n": 3, "requests": 1}})
    sched = random_schedule("token-ring", "reliable", 3, 0) or []
    made = client.post("/api/links", json={"scenario": sc, "schedule": sched}).json()
    assert made["fragment_url"].startswith("/sim/-#s=")
    opened = client.get(f"/api/links/{made['id']}").json()
    assert opened["scenario"]["params"] == {"n": 3, "requests": 1}
    r = client.get(made["url"], follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/sim/-?link={made['id']}"
    page = client.get(r.headers["location"])
    assert page.status_code == 200 and "My &lt;b&gt;ring&lt;/b&gt;" in page.text


# ------------------------------------------------------------------ the property
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_link_roundtrip_property(client: TestClient, data: st.DataObject) -> None:
    """Random gallery scenario + random schedule prefix -> link (both forms) -> load via the API,
    the websocket and a restarted app -> the same state_hash as a fresh replay; the export of
    the link replays to it through the CLI's runner, or says why it cannot."""
    sid = data.draw(st.sampled_from(GALLERY), label="scenario")
    variants = registry.get(gallery()[sid].protocol).variants
    variant = data.draw(st.sampled_from(variants), label="variant")
    sched = random_schedule(sid, variant, data.draw(st.integers(0, 10_000), label="seed"),
                            data.draw(st.integers(0, 30), label="n"))
    k = data.draw(st.integers(0, len(sched)), label="step")
    want = hash_at(sid, variant, sched, k)

    made = client.post("/api/links", json={"scenario": sid, "variant": variant,
                                           "schedule": sched, "step": k})
    assert made.status_code == 201, made.text
    lid, frag = made.json()["id"], made.json()["fragment_url"].split("#s=")[1]
    assert made.json()["state_hash"] == want
    assert client.get(f"/api/links/{lid}").json()["state_hash"] == want
    decoded = client.post("/api/links/decode", json={"fragment": frag}).json()
    assert decoded["state_hash"] == want and decoded["step"] == k

    with client.websocket_connect("/ws") as ws:
        ws.send_json({"op": "load", "link": lid, "id": 1})
        f1 = ws.receive_json()
        ws.send_json({"op": "load", "scenario": decoded["scenario"], "variant": decoded["variant"],
                      "schedule": decoded["schedule"], "step": decoded["step"], "id": 2})
        f2 = ws.receive_json()
    assert f1["type"] == "frame" and f1["step"] == k and f1["state_hash"] == want
    assert f2["type"] == "frame" and f2["step"] == k and f2["state_hash"] == want

    exported = client.get("/api/export", params={"link": lid})
    res = run(parse(exported.json()), scheduler="scripted")      # what `allocscope run` does
    if "x-allocscope-warning" in exported.headers:               # the export says why not
        assert (res["steps"], res["state_hash"]) != (k, want)
    else:
        assert res["steps"] == k and res["state_hash"] == want

    store.reset_stores()                 # a restart: a new app on the same data folder
    again = TestClient(create_app())
    assert again.get(f"/api/links/{lid}").json()["state_hash"] == want


# ------------------------------------------------------------------ durability, several processes
def test_kill_9_during_a_burst_loses_no_answered_link(tmp_path: Path) -> None:
    bodies = [{"scenario": "token-ring", "schedule": random_schedule("token-ring", "reliable", i, 12)}
              for i in range(160)]
    proc, base = start_server(tmp_path)
    answered: list[tuple[str, str]] = []
    lock = threading.Lock()
    stop_flag = threading.Event()

    def writer(seed: int) -> None:
        with httpx.Client(base_url=base, timeout=5) as c:
            for body in bodies[seed::4]:
                if stop_flag.is_set():
                    return
                try:
                    r = c.post("/api/links", json=body)
                except httpx.HTTPError:
                    return            # the server died under us: this POST was not answered
                if r.status_code == 201:
                    with lock:
                        answered.append((r.json()["id"], r.json()["state_hash"]))

    threads = [threading.Thread(target=writer, args=(s,)) for s in range(4)]
    try:
        for t in threads:
            t.start()
        deadline = time.monotonic() + 20
        while len(answered) < 30 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)        # mid-burst, no shutdown of any kind
        proc.wait(5)
    finally:
        stop_flag.set()
        for t in threads:
            t.join(10)
        stop(proc)
    assert 30 <= len(answered) < len(bodies)          # killed mid-burst, not after it
    with server(tmp_path) as base2:
        with httpx.Client(base_url=base2, timeout=5) as c:
            for lid, h in answered:
                r = c.get(f"/api/links/{lid}")
                assert r.status_code == 200, (lid, r.text)
                assert r.json()["state_hash"] == h


def test_two_server_processes_share_one_database(tmp_path: Path) -> None:
    with servers(tmp_path, 2) as (a, b):
        made = httpx.post(f"{a}/api/links", json={"scenario": "token-ring-lossy",
                                                  "schedule": LOSSY, "step": 6}).json()
        r = httpx.get(f"{b}/api/links/{made['id']}")
        assert r.status_code == 200 and r.json()["state_hash"] == made["state_hash"]
        assert httpx.get(f"{b}/s/{made['id']}").status_code == 303
        back = httpx.post(f"{b}/api/links", json={"scenario": "token-ring", "schedule": []}).json()
        assert httpx.get(f"{a}/api/links/{back['id']}").status_code == 200


def test_corrupt_database_stops_start_up_with_a_clear_error(tmp_path: Path) -> None:
    """The app's start-up (what uvicorn runs before serving) opens the store and fails with the
    reason; in a real server that is "Application startup failed" with this sentence."""
    (tmp_path / store.DB_NAME).write_bytes(b"this is not a database " * 100)
    old = os.environ.get(store.DATA_ENV)
    os.environ[store.DATA_ENV] = str(tmp_path)
    try:
        with pytest.raises(store.StoreError, match="not a usable SQLite database"):
            with TestClient(create_app()):
                pass
    finally:
        if old is None:
            os.environ.pop(store.DATA_ENV, None)
        else:
            os.environ[store.DATA_ENV] = old


def test_locked_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / store.DB_NAME
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(store.StoreError, match="locked by another process"):
            store.LinkStore(path, timeout=0.2)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.LinkStore(path).count() == 0    # usable once released


# ------------------------------------------------------------------ exports
def _cli_run(path: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "app.cli", "run", str(path), "--scheduler",
                          "scripted", "--json"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_exports_round_trip_through_the_cli(client: TestClient, tmp_path: Path) -> None:
    checked = 0
    for seed, n in [(1, 9), (2, 20)]:
        sched = random_schedule("token-ring", "reliable", seed, n)
        k = max(1, len(sched) - 2)
        r = client.get("/api/export", params={"scenario": "token-ring", "variant": "reliable",
                                              "schedule": ",".join(sched), "step": k})
        assert r.status_code == 200, r.text
        assert "attachment" in r.headers["content-disposition"]
        assert "x-allocscope-warning" not in r.headers, r.headers.get("x-allocscope-warning")
        f = tmp_path / f"trace-{seed}.json"
        f.write_text(r.text)
        res = _cli_run(f)
        assert res["steps"] == k and res["state_hash"] == hash_at("token-ring", "reliable", sched, k)
        checked += 1
    lid = client.post("/api/links", json={"scenario": "token-ring-lossy", "schedule": LOSSY,
                                          "step": 4}).json()["id"]
    r = client.get("/api/export", params={"link": lid})
    (tmp_path / "lossy.json").write_text(r.text)
    res = _cli_run(tmp_path / "lossy.json")
    assert res["steps"] == 4 and res["state_hash"] == hash_at("token-ring-lossy", "lossy", LOSSY, 4)
    assert checked == 2


def test_export_says_when_the_cli_cannot_stop_there(client: TestClient) -> None:
    """Past the deadlock the runner stops early: the export warns instead of lying."""
    sim = build(gallery()["token-ring-lossy"], "lossy")
    sim.replay(LOSSY)
    sched = list(LOSSY)
    while sim.monitors.first("deadlock") is None:
        sched.append(sim.enabled_ids()[0])
        sim.step(sched[-1])
    j = sim.step_no
    sched.append(sim.enabled_ids()[0])            # one event past the finding
    r = client.post("/api/export", json={"scenario": "token-ring-lossy", "schedule": sched})
    assert r.status_code == 200
    warning = unquote(r.headers["x-allocscope-warning"])
    assert f"`allocscope run` stops this file at step {j}, before step {j + 1}" in warning


# ------------------------------------------------------------------ editor validation, thumbnails
def test_validate_names_the_field(client: TestClient) -> None:
    ok = client.post("/api/scenarios/validate",
                     content=json.dumps(gallery()["token-ring"].model_dump(mode="json")))
    assert ok.json()["ok"] is True and ok.json()["summary"]["processes"] == 5
    bad = {"id": "x", "title": "t", "protocol": "token_ring", "params": {"n": 1}}
    r = client.post("/api/scenarios/validate", content=json.dumps(bad)).json()
    assert r == {"ok": False, "errors": [{"field": "scenario.params.n",
                                          "message": "must be a whole number from 2 to 10000"}]}
    r = client.post("/api/scenarios/validate", content=json.dumps(
        {"id": "x", "title": "t", "protocol": "token_ring", "channels": "lifo"})).json()
    assert r["errors"][0]["field"] == "scenario.channels"
    r = client.post("/api/scenarios/validate", content=json.dumps(
        {"id": "x", "title": "t", "protocol": "token_ring", "schedule": ["m5"]})).json()
    assert r["errors"][0]["field"] == "scenario.schedule" and "m5" in r["errors"][0]["message"]
    r = client.post("/api/scenarios/validate", content="{\"id\": ").json()
    assert r["ok"] is False and "not valid JSON" in r["errors"][0]["message"]
    r = client.post("/api/scenarios/validate", content="[1, 2]").json()
    assert r["errors"][0]["message"].startswith("must be a JSON object")


def test_thumbnails(client: TestClient) -> None:
    for sid in GALLERY:
        r = client.get(f"/api/thumb/{sid}.svg")
        assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
        sim = build(gallery()[sid])
        view = sim.protocol.view(sim)
        assert r.text.count("<circle") + r.text.count("<rect") == len(view["nodes"])
    assert client.get("/api/thumb/nope.svg").status_code == 404
    svg = thumbs.render({"nodes": [{"id": "a", "x": 1, "y": 2}], "edges": []}, "<script>x</script>")
    assert "<script>" not in svg and "&lt;script&gt;" in svg


JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=12)
FIELDS = st.fixed_dictionaries({}, optional={
    "scenario": st.sampled_from(GALLERY) | JSON, "variant": JSON, "step": JSON,
    "schedule": st.lists(st.sampled_from(["m0", "m1", "e:p0:request", "a:p9:x", ""]), max_size=6)
    | JSON, "state_hash": JSON, "format": JSON, "fragment": st.text(max_size=60)})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=FIELDS | JSON, route=st.sampled_from(["/api/links", "/api/links/fragment",
                                                  "/api/links/decode", "/api/export",
                                                  "/api/scenarios/validate"]))
def test_link_routes_answer_garbage_with_a_4xx_never_a_500(client: TestClient, body, route: str) -> None:
    r = client.post(route, content=json.dumps(body), headers={"content-type": "application/json"})
    assert r.status_code < 500, (route, body, r.text)
    if r.status_code >= 400:
        assert r.json()["detail"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lid=st.text(min_size=1, max_size=40), q=st.dictionaries(
    st.sampled_from(["link", "fragment", "scenario", "variant", "schedule", "step"]),
    st.text(max_size=30) | st.sampled_from(GALLERY), max_size=4))
# found by the search once (a 500): a variant longer than LinkRequest allows
@example(lid="x", q={"scenario": "token-ring", "variant": "found-kout-tree-as-printed-extra-resource-token"})
def test_link_pages_and_export_queries_never_500(client: TestClient, lid: str, q: dict) -> None:
    from urllib.parse import quote as q_
    r = client.get(f"/s/{q_(lid, safe='')}", follow_redirects=False)
    assert r.status_code in (303, 400, 404, 409), (lid, r.status_code)
    e = client.get("/api/export", params=q)
    assert e.status_code < 500, (q, e.text)


# ---------------------------------------------------------------- backups that restore (20.2)

def _cli(data: Path, *args: str) -> subprocess.CompletedProcess:
    """``allocscope ARGS`` with ``ALLOCSCOPE_DATA=data``, as docs/deployment.md runs it."""
    env = dict(os.environ, ALLOCSCOPE_DATA=str(data))
    return subprocess.run([sys.executable, "-m", "app.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def _make_links(base: str, start: int, n: int) -> list[str]:
    with httpx.Client(timeout=30) as c:
        return [c.post(f"{base}/api/links", json={"scenario": {
            "id": f"pad-{k}", "title": "one link each", "protocol": "token_ring",
            "params": {"n": 3, "note": str(k)}}}).json()["id"] for k in range(start, start + n)]


def test_a_clean_stop_leaves_every_link_in_the_main_file(tmp_path: Path) -> None:
    proc, base = start_server(tmp_path)
    try:
        ids = _make_links(base, 0, 40)
    finally:
        stop(proc)                                    # SIGTERM: uvicorn's clean shutdown
    wal = tmp_path / (store.DB_NAME + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    alone = tmp_path / "copy.sqlite3"
    alone.write_bytes((tmp_path / store.DB_NAME).read_bytes())   # the main file, nothing else
    con = sqlite3.connect(alone)
    assert {r[0] for r in con.execute("SELECT id FROM links")} == set(ids)
    con.close()


def test_backup_under_write_load_then_restore_into_a_fresh_folder(tmp_path: Path) -> None:
    """docs/deployment.md's steps: `allocscope links backup FILE` while the server writes,
    `allocscope links restore FILE` into a fresh data folder, `allocscope links verify`."""
    live, fresh = tmp_path / "live", tmp_path / "fresh"
    proc, base = start_server(live)
    answered: list[str] = []
    stop_writing = threading.Event()

    def writer() -> None:
        k = 1000
        while not stop_writing.is_set() and k < 1400:     # bounded load
            answered.extend(_make_links(base, k, 5))
            k += 5
    try:
        first = _make_links(base, 0, 100)
        t = threading.Thread(target=writer)
        t.start()
        time.sleep(0.3)
        before_backup = set(first) | set(answered)
        out = _cli(live, "links", "backup", str(tmp_path / "links-backup.sqlite3"))
        assert out.returncode == 0, out.stderr
        backed = json.loads(out.stdout)["links"]
        stop_writing.set()
        t.join()
    finally:
        stop(proc)
    assert backed >= len(before_backup)                     # everything answered before it
    out = _cli(fresh, "links", "restore", str(tmp_path / "links-backup.sqlite3"))
    assert out.returncode == 0, out.stderr and json.loads(out.stdout)["links"] == backed
    out = _cli(fresh, "links", "verify")
    assert out.returncode == 0 and json.loads(out.stdout)["links"] == backed
    proc, base = start_server(fresh)
    try:
        with httpx.Client(timeout=30) as c:
            for lid in sorted(before_backup):
                assert c.get(f"{base}/api/links/{lid}").status_code == 200, lid
    finally:
        stop(proc)


def test_a_damaged_wal_stops_start_up_and_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / store.DB_NAME
    st = store.LinkStore(path)
    st._con.execute("PRAGMA wal_autocheckpoint=0")
    for k in range(300):
        st.put(json.dumps({"k": k}).encode())
    wal = path.with_name(path.name + "-wal")
    data = bytearray(wal.read_bytes())
    st._con.close()                                # as after kill -9: no checkpoint
    wal.write_bytes(bytes(data))
    data[len(data) // 2] ^= 0xFF                   # one flipped byte in the middle
    wal.write_bytes(bytes(data))
    with pytest.raises(store.StoreError, match="damaged: frame .* fails its checksum"):
        store.LinkStore(path)
    out = _cli(tmp_path, "links", "verify")
    assert out.returncode == 2 and "-wal is damaged" in out.stderr
    assert "allocscope links restore" in out.stderr
    wal.write_bytes(bytes(data[: len(data) // 3]))  # half truncated
    with pytest.raises(store.StoreError, match="damaged: it ends in the middle of frame"):
        store.LinkStore(path)
    # what the sentence offers: keep what is intact, restore it into a fresh folder
    saved = tmp_path / "saved.sqlite3"
    out = _cli(tmp_path, "links", "backup", str(saved), "--accept-damaged")
    assert out.returncode == 0, out.stderr
    kept = json.loads(out.stdout)["links"]
    assert 0 < kept < 300
    out = _cli(tmp_path / "fresh", "links", "restore", str(saved))
    assert out.returncode == 0 and json.loads(out.stdout)["links"] == kept


def test_a_lone_frame_header_left_by_kill_9_is_not_damage(tmp_path: Path) -> None:
    """SQLite writes a frame's 24-byte header, then its page: killed in between, the log ends in
    that header (seen in the kill -9 burst test). Its transaction never committed, so starting
    is safe and every stored link is there; a header of another log, or more stray bytes, is
    still damage."""
    path = tmp_path / store.DB_NAME
    st = store.LinkStore(path)
    st._con.execute("PRAGMA wal_autocheckpoint=0")
    ids = [st.put(json.dumps({"k": k}).encode()) for k in range(20)]
    wal = path.with_name(path.name + "-wal")
    data = wal.read_bytes()
    st._con.close()                                # (closing checkpoints: put the log back)
    salts = data[16:24]
    wal.write_bytes(data + b"\0\0\0\x07" + b"\0" * 4 + salts + b"\1" * 8)
    again = store.LinkStore(path)
    assert all(again.get(i) is not None for i in ids)
    again._con.close()
    wal.write_bytes(data + b"\0" * 24)                            # not this log's salts
    with pytest.raises(store.StoreError, match="ends in the middle of frame"):
        store.LinkStore(path)
    wal.write_bytes(data + b"\0\0\0\x07" + b"\0" * 4 + salts + b"\1" * 12)   # 28 bytes
    with pytest.raises(store.StoreError, match="ends in the middle of frame"):
        store.LinkStore(path)


def test_unknown_ids_are_rate_limited_per_client(data_dir: Path) -> None:
    from app.limits import Limits
    c = TestClient(create_app(Limits(link_misses_per_minute=3)))
    made = c.post("/api/links", json={"scenario": "token-ring"}).json()["id"]
    codes = [c.get(f"/api/links/{'a' * 15}{k}").status_code for k in "234567"]
    assert codes[:3] == [404] * 3 and set(codes[3:]) == {429}
    r = c.get(f"/api/links/{made}")
    assert r.status_code == 429 and "ALLOCSCOPE_LINK_MISSES_PER_MINUTE" in r.json()["detail"]
