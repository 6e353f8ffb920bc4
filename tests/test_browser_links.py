"""Links, fork and the editor in the real browser (Playwright on Debian's chromium).

The fixtures (``page``, ``live_server``) are the front-end's (tests/conftest.py); the restart test
starts its own server on its own data folder (app/devserver.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.devserver import ROOT, server
from protocols import registry
from protocols.scenario import gallery

from .shots import shoot
from .test_links import GALLERY, hash_at, random_schedule

pytestmark = pytest.mark.browser

READY = ("k => document.body.dataset.ready === '1' && window.allocscope && "
         "window.allocscope.model.step === k && window.allocscope.model.stateHash !== ''")


def shown(page: Any, base: str, path: str, k: int) -> dict[str, Any]:
    page.goto(base + path)
    page.wait_for_function(READY, arg=k)
    return page.evaluate("() => ({step: window.allocscope.model.step, "
                         "hash: window.allocscope.model.stateHash, "
                         "title: document.getElementById('scn-title').textContent, "
                         "notice: (document.getElementById('link-notice') || {}).hidden === false ? "
                         "document.getElementById('link-notice').textContent : ''})")


@st.composite
def viewer_states(draw: st.DrawFn) -> tuple[str, str, list[str], int]:
    """A random gallery scenario and variant, a random-scheduler schedule, a step in it."""
    sid = draw(st.sampled_from(GALLERY))
    variant = draw(st.sampled_from(registry.get(gallery()[sid].protocol).variants))
    sched = random_schedule(sid, variant, draw(st.integers(0, 999)), draw(st.integers(1, 25)))
    return sid, variant, sched, draw(st.integers(0, len(sched)))


@settings(max_examples=1, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(cases=st.lists(viewer_states(), min_size=4, max_size=4))
def test_links_open_in_the_browser_at_the_same_state_after_a_restart(
        page: Any, tmp_path_factory: pytest.TempPathFactory, cases: list) -> None:
    """Both link forms of random states open at the same state_hash, before and after the
    server restarts on the same data folder (one restart for all cases: starting is slow)."""
    folder = tmp_path_factory.mktemp("restart")
    made = []
    with server(folder) as base:
        for sid, variant, sched, k in cases:
            m = httpx.post(f"{base}/api/links", json={"scenario": sid, "variant": variant,
                                                      "schedule": sched, "step": k}).json()
            made.append((m, k, hash_at(sid, variant, sched, k)))
        m, k, want = made[0]
        assert shown(page, base, m["url"], k)["hash"] == want
    with server(folder) as base:              # a new process on the same data folder
        for m, k, want in made:
            assert shown(page, base, m["url"], k)["hash"] == want
            frag = shown(page, base, m["fragment_url"], k)
            assert frag["hash"] == want and frag["notice"] == ""


def test_share_button_and_full_object_fragment(page: Any, live_server: str) -> None:
    lossy = ["e:p3:request", "m0", "m1", "m2"]
    made = httpx.post(f"{live_server}/api/links", json={"scenario": "token-ring-lossy",
                                                        "schedule": lossy, "step": 3}).json()
    s = shown(page, live_server, made["url"], 3)
    page.click("#share-tools >> text=share")
    page.wait_for_function("() => document.getElementById('share-short').value !== ''")
    short = page.input_value("#share-short")
    fragment = page.input_value("#share-fragment")
    assert short.startswith(live_server + "/s/") and "#s=" in fragment
    assert shown(page, "", short, 3)["hash"] == s["hash"]
    assert shown(page, "", fragment, 3)["hash"] == s["hash"]

    sc = gallery()["token-ring"].model_dump(mode="json")
    sc.update({"id": "tiny-ring", "title": "Tiny <i>ring</i>", "params": {"n": 3, "requests": 1}})
    obj = httpx.post(f"{live_server}/api/links", json={"scenario": sc, "schedule": ["e:p0:request"]}).json()
    assert obj["fragment_url"].startswith("/sim/-#s=")
    got = shown(page, live_server, obj["fragment_url"], 1)
    assert got["hash"] == obj["state_hash"] and got["title"] == "Tiny <i>ring</i>"
    assert page.evaluate("() => window.allocscope.model.view.nodes.size") == 3


def test_bad_fragment_is_explained_in_the_page(page: Any, live_server: str) -> None:
    made = httpx.post(f"{live_server}/api/links", json={"scenario": "token-ring",
                                                        "schedule": []}).json()
    page.goto(live_server + made["fragment_url"][:-6])      # truncated
    page.wait_for_function("() => document.getElementById('link-notice') && "
                           "!document.getElementById('link-notice').hidden")
    text = page.text_content("#link-notice")
    assert "cannot be opened" in text and "link fragment" in text


def test_editor_names_the_field_and_saves_a_link(page: Any, live_server: str,
                                                 tmp_path: Path) -> None:
    page.goto(f"{live_server}/editor?scenario=token-ring")
    page.wait_for_function("() => document.getElementById('ed-status').textContent.startsWith('valid')")
    page.fill('input[data-field="scenario.params.n"]', "1")
    page.wait_for_function("() => document.getElementById('ed-errors').textContent.includes('scenario.params.n')")
    assert "must be a whole number" in page.text_content("#ed-errors")
    assert "invalid" in page.get_attribute('input[data-field="scenario.params.n"]', "class")
    page.fill("#ed-add-key", "n")                      # a knob added from the form
    page.fill("#ed-add-value", "3")
    page.click("#ed-add")
    page.wait_for_function("() => document.getElementById('ed-status').textContent.includes('3 processes')")
    page.click('[data-edtab="json"]')
    assert json.loads(page.input_value("#ed-json"))["params"]["n"] == 3
    page.fill("#ed-json", '{"id": "x", "title": "t", "protocol": "token_ring", "channels": "lifo"')
    page.wait_for_function("() => document.getElementById('ed-errors').textContent.includes('not valid JSON')")
    page.fill("#ed-json", '{"id": "x", "title": "t", "protocol": "token_ring", "channels": "lifo"}')
    page.wait_for_function("() => document.getElementById('ed-errors').textContent.includes('scenario.channels')")
    page.fill("#ed-json", '{"id": "three", "title": "Three", "protocol": "token_ring", "params": {"n": 3}}')
    page.wait_for_function("() => document.getElementById('ed-status').textContent.startsWith('valid')")
    page.click("#ed-save")
    page.wait_for_function("() => document.getElementById('ed-short').value !== ''")
    short = page.input_value("#ed-short")
    assert shown(page, "", short, 0)["title"] == "Three"
    assert page.evaluate("() => window.allocscope.model.view.nodes.size") == 3
    # upload a file with an error: it lands in the raw tab with the error named
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": "u", "title": "u", "protocol": "token_ring", "params": {"n": "five"}}')
    page.goto(f"{live_server}/editor?scenario=token-ring")
    page.wait_for_function("() => document.getElementById('ed-status').textContent.startsWith('valid')")
    page.set_input_files("#ed-upload", str(bad))
    page.wait_for_function("() => document.getElementById('ed-errors').textContent.includes('scenario.params.n')")


def test_fork_from_the_viewer_keeps_the_state(page: Any, live_server: str) -> None:
    lossy = ["e:p3:request", "m0", "m1", "m2", "m3"]
    made = httpx.post(f"{live_server}/api/links", json={"scenario": "token-ring-lossy",
                                                        "schedule": lossy, "step": 4}).json()
    shown(page, live_server, made["url"], 4)
    page.click("#share-tools >> text=fork")
    page.wait_for_url("**/editor?**")
    page.wait_for_function("() => document.getElementById('ed-status').textContent.startsWith('valid')")
    assert "at step 4" in page.text_content("#ed-source")
    assert page.text_content("#ed-schedule-len") == "4"
    page.click("#ed-open")
    page.wait_for_url("**/sim/**")
    page.wait_for_function(READY, arg=4)
    assert page.evaluate("() => window.allocscope.model.stateHash") == made["state_hash"]


def test_exports_from_the_viewer(page: Any, live_server: str, tmp_path: Path) -> None:
    """The trace button's file replays through the CLI to the shown state; the SVG buttons give
    standalone SVG documents of what is drawn."""
    sched = random_schedule("token-ring", "reliable", 11, 15)
    made = httpx.post(f"{live_server}/api/links", json={"scenario": "token-ring",
                                                        "schedule": sched, "step": 9}).json()
    s = shown(page, live_server, made["url"], 9)
    with page.expect_download() as dl:
        page.click("#share-tools >> text=trace")
    trace = tmp_path / dl.value.suggested_filename
    dl.value.save_as(trace)
    out = subprocess.run([sys.executable, "-m", "app.cli", "run", str(trace), "--scheduler",
                          "scripted", "--json"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    res = json.loads(out.stdout)
    assert res["steps"] == 9 and res["state_hash"] == s["hash"]
    for label, svg_id in (("view.svg", "view"), ("space-time.svg", "spacetime")):
        with page.expect_download() as dl:
            page.click(f"#share-tools >> text={label}")
        f = tmp_path / label
        dl.value.save_as(f)
        root = ET.parse(f).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        drawn = page.evaluate(f"() => document.getElementById('{svg_id}').querySelectorAll('*').length")
        assert len(list(root.iter())) >= drawn      # everything drawn, plus the inlined <style>


def test_browser_codec_matches_the_server(page: Any, live_server: str) -> None:
    """static/js/links.js (CompressionStream 'deflate') and app/linkcodec.py (zlib) read each
    other's fragments."""
    made = httpx.post(f"{live_server}/api/links", json={
        "scenario": "token-ring-lossy", "schedule": ["e:p3:request", "m0", "m1"], "step": 2}).json()
    payload = made["fragment_url"].split("#s=")[1]
    page.goto(f"{live_server}/editor")
    got = page.evaluate("""async (payload) => {
        const L = await import('/static/js/links.js');
        const rec = await L.decodeFragment(payload);
        rec.step = 1;
        const again = await L.encodeFragment(rec);
        return {rec, again};
    }""", payload)
    assert got["rec"]["state_hash"] == made["state_hash"] and got["rec"]["format"] == 2
    r = httpx.post(f"{live_server}/api/links/decode", json={"fragment": got["again"]})
    assert r.status_code == 400 and "altered" in r.json()["detail"]   # step 1 ≠ recorded
    ok = httpx.post(f"{live_server}/api/links/fragment", json={
        "scenario": "token-ring-lossy", "schedule": ["e:p3:request", "m0", "m1"], "step": 1}).json()
    rec1 = page.evaluate("async (p) => (await import('/static/js/links.js')).decodeFragment(p)",
                         ok["fragment_url"].split("#s=")[1])
    js = page.evaluate("async (r) => (await import('/static/js/links.js')).encodeFragment(r)", rec1)
    assert httpx.post(f"{live_server}/api/links/decode",
                      json={"fragment": js}).json()["state_hash"] == ok["state_hash"]


def test_editor_shows_scenario_text_as_text(page: Any, live_server: str) -> None:
    evil = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
    sc = gallery()["token-ring"].model_dump(mode="json")
    sc.update({"id": "evil", "title": evil, "teaches": evil,
               "params": {"n": 3, "requests": 1, "note": evil}})
    made = httpx.post(f"{live_server}/api/links", json={"scenario": sc}).json()
    page.goto(f"{live_server}/editor?link={made['id']}")
    page.wait_for_function("() => document.getElementById('ed-status').textContent.startsWith('valid')")
    assert page.input_value('input[name="title"]') == f"Fork of {evil}"
    assert page.input_value('input[data-field="scenario.params.note"]') == evil
    assert page.evaluate("() => window.__xss === undefined && !document.querySelector('#editor img')")


def test_a_link_whose_protocol_changed_opens_on_a_page_that_says_so(
        page: Any, tmp_path: Path, screenshots: Path) -> None:
    """Issue 20.4: a stored run that behaved differently at step 3 — the page names the step,
    and its link opens the viewer on a real state, never a blank one."""
    from app import store as store_mod
    from app.linkstate import LinkRequest, canonical, make
    with server(tmp_path) as base:
        rec = make(LinkRequest(scenario="token-ring-lossy",
                               schedule=["e:p3:request", "m0", "m1", "m2"], step=4))
        other = rec.trail[:4] + ("00" if rec.trail[4:6] != "00" else "11") + rec.trail[6:]
        raw = canonical(rec.model_copy(update={"trail": other, "version": "0"}).model_dump())
        st_ = store_mod.LinkStore(tmp_path / store_mod.DB_NAME)
        lid = st_.put(raw)
        st_._con.close()
        page.goto(f"{base}/s/{lid}")
        assert "behaves differently" in page.inner_text("h1")
        assert "step 3" in page.inner_text(".diverged-step")
        shoot(page, screenshots / "link-protocol-changed.png")
        page.click("a.open-anyway")
        page.wait_for_url(f"**/sim/token-ring-lossy?**link={lid}**")
        page.wait_for_function("() => /\\b4\\b/.test(document.body.innerText)")
        shoot(page, screenshots / "link-protocol-changed-viewer.png")



def test_a_draw_before_the_links_frame_is_not_a_changed_state(page: Any,
                                                              live_server: str) -> None:
    """A draw of the page before the link's frame has arrived (the model still empty at step 0,
    e.g. a refit while it loads) is no evidence that the state changed: the fresh-clone run met
    "the replay reached …" with no hash at all on a step-0 link. Draws are announced every few
    milliseconds from the page's start, so one surely falls between the decode and the frame."""
    m = httpx.post(f"{live_server}/api/links", json={"scenario": "coterie-disjoint",
                                                     "variant": "as-printed",
                                                     "schedule": ["e:u4:request"],
                                                     "step": 0}).json()
    page.add_init_script("setInterval(() => window.dispatchEvent("
                         "new CustomEvent('allocscope:drawn', {detail: {step: 0}})), 3)")
    page.goto(live_server + m["fragment_url"])
    page.wait_for_function(READY, arg=0)
    page.wait_for_timeout(200)
    notice = page.evaluate("() => { const b = document.getElementById('link-notice');"
                           " return b && !b.hidden ? b.textContent : ''; }")
    assert notice == ""
    assert page.evaluate("() => window.allocscope.model.stateHash") == m["state_hash"]
