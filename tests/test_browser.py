"""Real-browser tests: Playwright drives Debian's chromium against a real uvicorn (conftest.py).

Every gallery scenario is opened, stepped, delivered by clicking a message, stepped back and
scrubbed, and what is drawn is compared with the simulator itself (node and message counts, and
the state hash of the same trace replayed in Python). Figure scenarios must show their outcome:
the red wait-for cycle of a deadlock, the livelock marker. Scenario text is shown as text, never
run as markup. Screenshots of every view go to test-output/screenshots/ (gitignored).
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from protocols import registry
from protocols.runner import build
from protocols.scenario import gallery, parse

from .shots import SETTLED_JS, shoot

pytestmark = pytest.mark.browser

SCENARIOS = list(gallery())
EVIL = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'

STATE_JS = """() => {
  const m = window.allocscope.model;
  return {step: m.step, total: m.total, hash: m.stateHash, playing: m.playing,
          nodes: m.view.nodes.size, messages: m.view.messages.size,
          deliverable: Array.from(m.view.messages.values()).filter(x => x.deliverable).map(x => x.id),
          enabled: m.enabled.map(e => e.id), event: m.event,
          trace: m.history.filter(r => r.step <= m.step).map(r => r.event),
          drawnNodes: document.querySelectorAll('#view .layer.nodes > g').length,
          drawnMessages: document.querySelectorAll('#view .layer.messages > g').length};
}"""


def state(page: Any) -> dict[str, Any]:
    return page.evaluate(STATE_JS)


def wait_step(page: Any, k: int) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    try:
        page.wait_for_function(
            "k => document.body.dataset.step === String(k) && window.allocscope.model.step === k",
            arg=k)
    except PlaywrightTimeout:
        s = state(page)
        hint = page.text_content("#fault-hint")
        raise AssertionError(f"the page did not reach step {k}: it shows step {s['step']} of "
                             f"{s['total']}; message: {hint!r}") from None


def open_viewer(page: Any, base: str, path: str) -> dict[str, Any]:
    page.goto(base + path)
    page.wait_for_function("() => document.body.dataset.ready === '1' && "
                           "window.allocscope.model.view.nodes.size > 0")
    # the model can be a frame ahead of the DOM: return once what is drawn is the model's step
    page.wait_for_function("() => { const m = window.allocscope.model, b = document.body.dataset;"
                           " return b.step === String(m.step) && b.total === String(m.total); }")
    return state(page)


def check_drawn(page: Any, scenario_id: str, variant: str | None = None) -> dict[str, Any]:
    """What is drawn matches the model, and the model matches the simulator replayed in Python."""
    page.wait_for_function("() => { const m = window.allocscope.model; return "
                           "document.querySelectorAll('#view .layer.nodes > g').length === m.view.nodes.size &&"
                           "document.body.dataset.step === String(m.step); }")
    s = state(page)
    sim = build(gallery()[scenario_id], variant)
    sim.replay(s["trace"])
    view = sim.protocol.view(sim)
    assert s["nodes"] == len(view["nodes"]) == s["drawnNodes"]
    assert s["messages"] == len(sim.inflight) == s["drawnMessages"]
    assert s["hash"] == sim.state_hash(), "the browser shows another state than the simulator's"
    if s["messages"] <= 40 and s["nodes"] <= 40:      # deliverable messages are named
        unnamed = page.eval_on_selector_all(
            "#view .msg.deliverable", "gs => gs.filter(g => !g.querySelector('.msg-label')"
            ".textContent).map(g => g.dataset.id)")
        assert unnamed == []
    return s


def steps_delivers_goes_back_and_scrubs(page: Any, sid: str, screenshots: Path) -> None:
    """On the viewer already open on ``sid``: → takes a step, a click on an in-flight message
    delivers it, ← goes back to the same state, the timeline scrubs to 0 and End. Every
    gallery scenario goes through it on the page test_browser_lesson's figure-moment test
    has open (one page load per scenario for both)."""
    s = state(page)
    check_drawn(page, sid)
    if not s["enabled"]:                       # opened at a dead end: start from the beginning
        page.keyboard.press("Home")
        wait_step(page, 0)
        s = state(page)

    # → : the scheduler takes one step
    page.keyboard.press("ArrowRight")
    wait_step(page, s["step"] + 1)
    s = check_drawn(page, sid)

    # click an in-flight message (or, if none can be delivered, an event in the side list)
    if not s["deliverable"]:
        page.keyboard.press("Home")
        wait_step(page, 0)
        s = state(page)
    if s["deliverable"]:
        mid = s["deliverable"][0]
        page.click(f'#view .msg.deliverable[data-id="{mid}"] .msg-shape')
        # where the scenario allows faults the click opens deliver / drop / duplicate
        if page.is_visible("#fault-menu"):
            page.click(f'#fault-menu .fm-item.deliver[data-event="{mid}"]')
    else:
        mid = s["enabled"][0]
        page.click(f'#events button[data-event="{mid}"]')
    wait_step(page, s["step"] + 1)
    after = check_drawn(page, sid)
    assert after["event"] == mid
    shoot(page, screenshots / f"{sid}.png")

    # ← : one step back, the same state as before the click
    page.keyboard.press("ArrowLeft")
    wait_step(page, s["step"])
    assert state(page)["hash"] == s["hash"]

    # scrub the timeline to 0, then End
    page.eval_on_selector("#scrub", "e => { e.value = '0'; e.dispatchEvent(new Event('change')); }")
    wait_step(page, 0)
    check_drawn(page, sid)
    page.keyboard.press("End")
    wait_step(page, after["total"])


def _outcomes(kinds: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """(scenario, variant, outcome) for each gallery scenario that expects a monitor finding in
    some variant: the file's variant when it does, else the first variant (in the protocol's
    order) given such an expect. One variant per scenario keeps the browser tests short; that
    every variant reaches its outcome is tests/test_gallery.py's job, this is about drawing it."""
    out = []
    for sid, sc in gallery().items():
        if sc.expect is None:
            continue
        proto = registry.get(sc.protocol)
        base = sc.variant or proto.default_variant
        order = [base] + [v for v in proto.variants if v != base and v in sc.expect.variants]
        for v in order:
            exp = sc.expect.for_variant(v)
            if exp.outcome in kinds:
                out.append((sid, v, exp.outcome))
                break
    return out


FINDINGS = _outcomes(("deadlock", "livelock", "violation"))
LIGHT = {"deadlock": "deadlock", "livelock": "livelock", "violation": "safety"}


def play_until_light(page: Any, monitor: str) -> None:
    page.evaluate("() => window.allocscope.act.speed(1000)")
    page.click("#btn-play")
    page.wait_for_selector(f'.light[data-monitor="{monitor}"][data-state="bad"]', timeout=30_000)
    page.wait_for_function("() => !window.allocscope.model.playing")


@pytest.mark.parametrize(("sid", "variant", "outcome"), FINDINGS,
                         ids=[f"{s}-{v}" for s, v, _ in FINDINGS])
def test_figure_outcomes_are_shown(page: Any, live_server: str, sid: str, variant: str,
                                   outcome: str, screenshots: Path) -> None:
    """Play from step 0 until the monitor fires: its light turns red, play pauses, the timeline
    has its marker, the banner explains it, and the view highlights the wait-for cycle (in red,
    the nodes the paper's figure names) or the culprits."""
    open_viewer(page, live_server, f"/sim/{sid}?variant={variant}")
    page.keyboard.press("Home")
    wait_step(page, 0)
    play_until_light(page, LIGHT[outcome])
    expect = gallery()[sid].expect.for_variant(variant)
    assert page.text_content("#banner").startswith(f"{outcome} at step")
    assert page.locator(f"#markers .marker.{outcome}").count() >= 1
    if outcome == "deadlock":
        cycle = page.evaluate("() => (window.allocscope.model.monitors.deadlock || {}).cycle || []")
        drawn = set(page.eval_on_selector_all("#view .node.in-cycle", "gs => gs.map(g => g.dataset.id)"))
        if expect.cycle:
            assert set(expect.cycle) <= drawn
        assert set(map(str, cycle)) <= drawn
        if len(cycle) > 1:
            assert page.locator("#view .cycle-edge").count() >= len(cycle)
    elif outcome == "livelock":
        assert page.locator("#view .node.culprit").count() >= 1
    shoot(page, screenshots / f"{sid}-{variant}-{outcome}.png")


def test_lossy_ring_deadlock_cycle_and_back(page: Any, live_server: str, screenshots: Path) -> None:
    """The teaching example step by step: the cycle appears with the deadlock, and goes away
    when we step back before it."""
    open_viewer(page, live_server, "/sim/token-ring-lossy")
    page.keyboard.press("Home")
    play_until_light(page, "deadlock")
    s = state(page)
    assert sorted(page.eval_on_selector_all("#view .node.in-cycle", "gs => gs.map(g => g.dataset.id)")) \
        == ["p0", "p1", "p2", "p3"]
    assert page.locator("#view .cycle-edge").count() == 4
    # the banner says the kind once ("deadlock at step 7: deadlock: p0 waits" stuttered)
    said = page.text_content("#banner")
    assert said.startswith("deadlock at step ") and said.count("deadlock") == 1, said
    step = int(page.get_attribute("#markers .marker.deadlock", "data-step"))
    page.keyboard.press("Home")
    wait_step(page, 0)
    assert page.locator("#view .cycle-edge").count() == 0
    assert page.get_attribute('.light[data-monitor="deadlock"]', "data-state") == "ok"
    page.click("#markers .marker.deadlock")
    wait_step(page, step)
    assert page.locator("#view .cycle-edge").count() == 4
    assert s["step"] >= step
    shoot(page, screenshots / "token-ring-lossy-cycle.png")


def test_inspector_spacetime_and_narration(page: Any, live_server: str, screenshots: Path) -> None:
    open_viewer(page, live_server, "/sim/token-ring?scheduler=oldest")
    page.keyboard.press("Home")
    wait_step(page, 0)
    for k in range(1, 7):
        page.keyboard.press("ArrowRight")
        wait_step(page, k)
    # narration: one entry per step, filterable by process
    page.click('.tab[data-tab="log"]')
    assert page.locator("#log li").count() == 6
    assert page.locator("#log li.current").get_attribute("data-step") == "6"
    # the space-time diagram: an arrow per delivered message; clicking one goes there
    s = state(page)
    deliveries = [i + 1 for i, e in enumerate(s["trace"]) if e.startswith("m")]
    assert page.locator("#spacetime .st-msg").count() == len(deliveries)
    if deliveries:
        page.locator("#spacetime .st-msg").first.dispatch_event("click")
        wait_step(page, deliveries[0])
    # the inspector: every guard with its truth value, every variable
    page.click('#view .layer.nodes > g[data-id="p1"]')
    page.wait_for_selector("#inspector .guard")
    assert page.text_content("#inspector h2").startswith("p1")
    # the name and its status stand apart ("p1not waiting" ran together)
    gap = page.evaluate("""() => { const h = document.querySelector('#inspector h2');
      const r = document.createRange(); r.selectNodeContents(h.firstChild);
      return h.querySelector('.insp-status').getBoundingClientRect().left
             - r.getBoundingClientRect().right; }""")
    assert gap >= 4, f"the inspector's name and status are {gap:.1f} px apart"
    assert page.locator("#inspector .vars tr").count() >= 3
    guards = page.locator("#inspector .guard").count()
    assert guards >= 3
    assert page.locator("#inspector .guard.blocked").count() + page.locator("#inspector .guard.holds").count() == guards
    shoot(page, screenshots / "token-ring-inspector.png")
    # readable from the back of a room at 1280x720: the lane names as large as their lanes
    # allow (five lanes of 22 px: 14 px; they were 11) and the diagram's axis line 12 (it was
    # 10); the figure's detail lines: tests/test_browser_rules.py (kout-fig3)
    sizes = page.evaluate("""() => {
      const fs = (sel) => [...document.querySelectorAll(sel)].map((t) => parseFloat(getComputedStyle(t).fontSize));
      return {lanes: fs('#spacetime .lane text'), axis: fs('#spacetime .st-axis')}; }""")
    assert sizes["lanes"] == [14] * 5 and sizes["axis"] == [12], sizes
    page.click('.tab[data-tab="log"]')
    page.select_option("#log-proc", "p1")
    texts = page.eval_on_selector_all("#log li", "ls => ls.map(l => l.textContent)")
    assert texts and all("p1" in t for t in texts)
    shoot(page, screenshots / "token-ring-log.png")


def test_keyboard_play_pause(page: Any, live_server: str) -> None:
    open_viewer(page, live_server, "/sim/token-ring")
    page.keyboard.press("Home")
    wait_step(page, 0)
    page.evaluate("() => window.allocscope.act.speed(20)")
    page.keyboard.press(" ")
    page.wait_for_function("() => window.allocscope.model.step >= 3")
    page.keyboard.press(" ")
    page.wait_for_function("() => !window.allocscope.model.playing")
    k = state(page)["step"]
    page.wait_for_timeout(300)
    assert state(page)["step"] == k
    # with the play button focused (just clicked), space still toggles exactly once
    page.click("#btn-play")
    page.wait_for_function("() => window.allocscope.model.playing")
    page.keyboard.press(" ")
    page.wait_for_function("() => !window.allocscope.model.playing")
    page.wait_for_timeout(300)
    assert not state(page)["playing"]
    # the keyboard help is a modal: a dimmed backdrop over the page, keys do not reach the page
    # behind, Esc and a click outside it close it, and the focus goes back to where it was
    page.focus("#btn-step")
    page.keyboard.press("?")
    help_js = """() => { const h = document.getElementById('help');
      return {modal: h.matches(':modal'), focus: document.activeElement.id,
              backdrop: getComputedStyle(h, '::backdrop').backgroundColor}; }"""
    shown = page.evaluate(help_js)
    assert shown["modal"] and shown["focus"] == "help-close", shown
    alpha = page.evaluate("c => { const m = c.match(/rgba?\\(([^)]*)\\)/); "
                          "const p = m ? m[1].split(/[ ,\\/]+/) : []; "
                          "return p.length > 3 ? +p[3] : (m ? 1 : 0); }", shown["backdrop"])
    assert alpha >= 0.4, shown["backdrop"]
    k = state(page)["step"]
    page.keyboard.press("ArrowRight")                      # behind the modal: nothing happens
    page.wait_for_timeout(200)
    assert state(page)["step"] == k and page.is_visible("#help")
    page.keyboard.press("Escape")
    assert not page.is_visible("#help")
    assert page.evaluate("() => document.activeElement.id") == "btn-step"
    page.click("#btn-help")
    assert page.is_visible("#help")
    page.mouse.click(8, 700)                               # outside the box: on the backdrop
    assert not page.is_visible("#help")
    page.click("#btn-help")
    page.mouse.click(640, 360)                             # inside it: it stays
    assert page.is_visible("#help")


def test_scenario_text_is_never_markup(page: Any, live_server: str, screenshots: Path) -> None:
    data = json.loads((Path(__file__).resolve().parent.parent / "protocols" / "scenarios"
                       / "token-ring.json").read_text())
    data.update(id="evil-text", title="Evil " + EVIL, teaches="Teaches " + EVIL)
    parse(data)   # a valid scenario: only its text is hostile
    req = urllib.request.Request(live_server + "/api/links", method="POST",
                                 data=json.dumps({"scenario": data, "step": 0}).encode(),
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req) as r:
        url = json.loads(r.read())["url"]
    page.goto(live_server + url)
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.__xss") is None
    assert page.text_content("#scn-title") == "Evil " + EVIL
    assert page.text_content("#teaches") == "Teaches " + EVIL
    assert page.locator("header img, #teaches img, main script:not([type])").count() == 0
    shoot(page, screenshots / "evil-text.png")


def test_gallery_cards_and_filter(page: Any, live_server: str, screenshots: Path) -> None:
    page.goto(live_server + "/")
    cards = page.locator(".card")
    assert cards.count() == len(SCENARIOS)
    # the headline paper's figures lead, in figure order (Section IV's departure came first)
    ids = page.eval_on_selector_all(".card", "cs => cs.map(c => c.dataset.id)")
    assert ids[0] == "datta-fig1", ids[:4]
    assert ids.index("datta-fig1") < ids.index("datta-fig3") < ids.index("datta-fig5-6") \
        < ids.index("datta-fairness"), ids
    assert ids.index("kout-fig3") < ids.index("kout-fig3-printed-guard"), ids
    protos = sorted({sc.protocol for sc in gallery().values()})
    page.click(f'.filter[data-protocol="{protos[0]}"]')
    visible = page.locator(".card:not([hidden])").count()
    assert visible == sum(1 for sc in gallery().values() if sc.protocol == protos[0])
    page.click('.filter[data-protocol=""]')
    assert page.locator(".card:not([hidden])").count() == len(SCENARIOS)
    shoot(page, screenshots / "gallery.png", full_page=True)


@pytest.mark.parametrize("mode", ["present", "embed"])
def test_present_and_embed_modes(page: Any, live_server: str, mode: str, screenshots: Path) -> None:
    """Embed: only the figure and the minimal controls. Present mode at the projector's 1280x720
    gives the figure more room than normal mode (327 px high on datta-fig3; present mode had 305,
    with two rows of controls and two of legend, and Fig. 3's nodes too close for their detail
    lines): the controls are one row and every one of them is reachable through "more"."""
    sid = "datta-fig3" if mode == "present" else "token-ring"
    open_viewer(page, live_server, f"/sim/{sid}?{mode}=1")
    assert mode in page.get_attribute("body", "class")
    if mode == "embed":
        assert not page.is_visible("#side")
        assert page.is_visible("#btn-step")
        shoot(page, screenshots / f"{sid}-{mode}.png")
        return
    assert page.is_visible("#side")
    shoot(page, screenshots / f"{sid}-{mode}.png")
    geo = page.evaluate("""() => {
        const shown = [...document.getElementById('controls').children].filter(e => e.offsetParent);
        return {view: document.getElementById('view').getBoundingClientRect().height,
                below: shown.filter(e => e.getBoundingClientRect().top
                    >= Math.min(...shown.map(x => x.getBoundingClientRect().bottom))).length,
                right: Math.max(...shown.map(e => e.getBoundingClientRect().right)),
                details: [...document.querySelectorAll('#view .node .detail')]
                    .filter(t => t.getBoundingClientRect().height > 0).length}; }""")
    assert geo["view"] >= 350, f"present mode's figure is {geo['view']:.0f} px high (normal: 327)"
    assert geo["below"] == 0 and geo["right"] <= 1280, f"controls: {geo}"
    assert geo["details"] >= 6, f"Fig. 3's detail lines are not drawn: {geo}"
    hidden = ["#seed", "#motion", "#btn-compare", "#btn-room", "#share-tools"]
    assert not any(page.is_visible(s) for s in hidden)
    page.click("#btn-more")
    assert all(page.is_visible(s) for s in hidden)
    assert page.get_attribute("#btn-more", "aria-expanded") == "true"
    page.click("#btn-more")
    assert not page.is_visible("#seed")
    # a narrower projector (800x600) wraps the controls rather than push them off the page (the page
    # does not scroll), and on a phone the side panel is no wider than the page
    inside = """() => [...document.getElementById('controls').children].filter(e => e.offsetParent)
        .every(e => e.getBoundingClientRect().right <= innerWidth)
        && document.getElementById('side').getBoundingClientRect().right <= innerWidth"""
    for w, h in ((800, 600), (390, 844)):
        page.set_viewport_size({"width": w, "height": h})
        page.evaluate(SETTLED_JS)
        assert page.evaluate(inside), f"present mode at {w}x{h}: a control or the side panel is off the page"


def test_fault_buttons_and_metrics(page: Any, live_server: str, screenshots: Path) -> None:
    """Arm "drop", click the token in flight: it is lost (a fault step), and the metrics tab
    charts the messages sent by type."""
    open_viewer(page, live_server, "/sim/token-ring")
    page.keyboard.press("Home")
    wait_step(page, 0)
    s = state(page)
    assert s["deliverable"] == ["m0"]
    page.click('#faults button[data-fault="drop"]')
    assert page.is_visible("#fault-hint")
    page.click('#view .msg[data-id="m0"] .msg-shape')
    wait_step(page, 1)
    after = state(page)
    assert after["event"] == "f:drop:m0" and after["messages"] == 0 == after["drawnMessages"]
    page.keyboard.press("ArrowLeft")
    wait_step(page, 0)
    # the drop forked a branch (→ would redo it): back to the recorded run, kept on branch 0
    assert page.is_visible("#branchbar")
    page.select_option("#branch-pick", "0")
    page.wait_for_function("() => window.allocscope.model.branch === 0")
    page.keyboard.press("Home")
    wait_step(page, 0)
    for k in range(1, 9):
        page.keyboard.press("ArrowRight")
        wait_step(page, k)
    page.click('.tab[data-tab="metrics"]')
    page.wait_for_selector("#metrics .chart .bar")
    assert page.locator("#metrics .chart").first.locator(".bar").count() == 1   # only Token
    shoot(page, screenshots / "token-ring-metrics.png")


def test_reconnect_rebuilds_the_same_state(page: Any, live_server: str) -> None:
    """When the socket drops, the page reconnects and rebuilds its session from scenario +
    schedule: same step, same state hash."""
    open_viewer(page, live_server, "/sim/token-ring")
    page.keyboard.press("Home")
    wait_step(page, 0)
    for k in range(1, 6):
        page.keyboard.press("ArrowRight")
        wait_step(page, k)
    before = state(page)
    page.evaluate("() => window.allocscope.socket.ws.close()")
    page.wait_for_function("() => document.getElementById('conn').dataset.state !== 'open'")
    page.wait_for_function("() => document.getElementById('conn').dataset.state === 'open'")
    page.wait_for_function("h => window.allocscope.model.stateHash === h", arg=before["hash"])
    after = state(page)
    assert after["step"] == before["step"] == 5
    assert after["trace"] == before["trace"]


def test_every_control_has_a_tooltip(page: Any, live_server: str) -> None:
    open_viewer(page, live_server, "/sim/token-ring")
    missing = page.evaluate("""() => Array.from(document.querySelectorAll(
        '#controls button, #controls select, #controls input, #timeline input, .tab, '
        + '#faults button, #events button, .logfilter select, .light'))
      .filter(e => !e.title && !(e.closest('label') && e.closest('label').title)
                   && !e.closest('#share-tools, #share-out'))
      .map(e => e.id || e.outerHTML.slice(0, 60))""")
    assert missing == []


def test_variant_choice_reloads_with_that_variant(page: Any, live_server: str) -> None:
    open_viewer(page, live_server, "/sim/token-ring")
    with page.expect_navigation():
        page.select_option("#variant", "lossy")
    page.wait_for_function("() => document.body.dataset.ready === '1' && "
                           "(window.allocscope.model.protocol || {}).variant === 'lossy'")
    assert "variant=lossy" in page.url


def test_unknown_scenario_gets_the_error_page(page: Any, live_server: str) -> None:
    resp = page.goto(live_server + "/sim/no-such-scenario")
    assert resp.status == 404
    assert "no-such-scenario" in page.text_content(".error-message")
    # a schedule the scenario cannot take: the viewer says so in a strip that stays (not a
    # toast that left an empty figure), with a link to the scenario from its start
    page.goto(live_server + "/sim/datta-fig1?variant=naive&schedule=m0,zz")
    strip = page.wait_for_selector("#load-error")
    said = strip.text_content()
    assert "cannot show what its address asks for" in said and "'m0'" in said, said
    assert page.is_hidden("#fault-hint")               # not a toast that goes after 3.5 s
    assert page.get_attribute("#load-error a", "href") == "/sim/datta-fig1?variant=naive"


def _corrupt_scenario_url(base: str) -> str:
    """kout-chaos with corruption allowed (no gallery scenario opts in), stored as a link."""
    data = json.loads((Path(__file__).resolve().parent.parent / "protocols" / "scenarios"
                       / "kout-chaos.json").read_text())
    data.update(id="kout-chaos-corrupt", faults={"corrupt": True})
    parse(data)
    req = urllib.request.Request(base + "/api/links", method="POST",
                                 data=json.dumps({"scenario": data, "step": 0}).encode(),
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())["url"]


RECORD_FAULTS_JS = """() => {
  const s = window.allocscope.socket, orig = s.send.bind(s);
  window.__faults = [];
  s.send = (cmd) => { if (cmd.op === 'fault') window.__faults.push(cmd.event); return orig(cmd); };
}"""


def test_corrupt_picker_lists_the_nodes_corruptions(page: Any, live_server: str,
                                                     screenshots: Path) -> None:
    """⚡corrupt then a click on a process opens a picker of exactly that process's
    `f:corrupt:` events; Escape and cancel send nothing; a choice is applied by the server. No
    browser dialog (window.prompt) is ever opened."""
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(f"{d.type}: {d.message}"), d.dismiss()))
    root = Path(__file__).resolve().parent.parent
    for js in (root / "static" / "js").rglob("*.js"):
        assert "prompt(" not in js.read_text(), f"{js.name} still calls a prompt"
    open_viewer(page, live_server, _corrupt_scenario_url(live_server))
    wait_step(page, 0)
    page.evaluate(RECORD_FAULTS_JS)
    picker = page.locator("#corrupt-picker")
    choices = picker.locator("button.corrupt-choice")

    def open_on(pid: str) -> list[str]:
        page.click('#faults button[data-fault="corrupt"]')
        page.click(f'#view .layer.nodes > g[data-id="{pid}"]')
        picker.wait_for(state="visible")
        return choices.evaluate_all("bs => bs.map(b => b.dataset.event)")

    # exactly the node's corruptions of the current frame, as the simulator has them
    expected = [e for e in state(page)["enabled"] if e.startswith("f:corrupt:p0:")]
    sim = build(parse(json.loads((root / "protocols" / "scenarios" / "kout-chaos.json")
                                 .read_text()) | {"faults": {"corrupt": True}}))
    assert expected == [e.id for e in sim.enabled() if e.id.startswith("f:corrupt:p0:")]
    assert len(expected) >= 5
    assert open_on("p0") == expected
    labels = choices.evaluate_all("bs => bs.map(b => b.textContent)")
    assert all(t.startswith("p0.") and " := " in t for t in labels)
    assert not any("None" in t or "True" in t or "False" in t for t in labels)   # ⊥, true, false
    assert picker.locator("h2").text_content() == "Corrupt a variable of p0"
    assert page.evaluate("() => document.activeElement.classList.contains('corrupt-choice')")
    shoot(page, screenshots / "kout-corrupt-picker.png")

    # Escape closes it and sends nothing; so does cancel
    page.keyboard.press("Escape")
    picker.wait_for(state="hidden")
    assert page.evaluate("() => window.allocscope.ui.armed") is None
    open_on("p1")
    assert page.text_content("#corrupt-picker h2") == "Corrupt a variable of p1"
    picker.locator("button.corrupt-cancel").click()
    picker.wait_for(state="hidden")
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.__faults") == []
    assert state(page)["step"] == 0

    # a choice is sent as the fault event and applied: one step, narrated in the log
    open_on("p0")
    chosen = next(e for e in expected if ":Prio=" in e)
    picker.locator(f'button[data-event="{chosen}"]').click()
    wait_step(page, 1)
    picker.wait_for(state="hidden")
    assert page.evaluate("() => window.__faults") == [chosen]
    assert state(page)["event"] == chosen
    page.click('.tab[data-tab="log"]')
    page.wait_for_selector('#log li[data-step="1"]')
    assert "p0.Prio is corrupted" in page.text_content('#log li[data-step="1"]')
    assert dialogs == []


def test_corrupt_is_not_offered_where_the_scenario_does_not_allow_it(page: Any,
                                                                     live_server: str) -> None:
    """kout-chaos allows no corruption: ⚡corrupt would be a dead button, so it is hidden while
    the faults the viewer can always inject stay."""
    page.on("dialog", lambda d: (d.dismiss(), pytest.fail(f"a browser dialog opened: {d.message}")))
    open_viewer(page, live_server, "/sim/kout-chaos")
    page.wait_for_selector('#faults button[data-fault="drop"]')
    assert page.locator('#faults button[data-fault="corrupt"]').is_hidden()
    assert page.locator('#faults button[data-fault="drop"]').is_visible()


def test_far_jumps_on_a_big_ring_draw_the_simulators_view(page: Any, live_server: str,
                                                           screenshots: Path) -> None:
    """A far jump's frame carries node values by field (``node_fields``): after scrubbing from
    the end of a 40-process ring's run to its middle and back, the browser's nodes equal the
    view of the same trace replayed in Python."""
    sid = "datta-stress"
    s = open_viewer(page, live_server, f"/sim/{sid}")
    page.keyboard.press("End")
    end = state(page)["total"]
    wait_step(page, end)
    for k in (end // 2, 3, end):
        page.eval_on_selector("#scrub", f"e => {{ e.value = '{k}'; "
                              "e.dispatchEvent(new Event('change')); }")
        wait_step(page, k)
        s = check_drawn(page, sid)
        sim = build(gallery()[sid])
        sim.replay(s["trace"])
        want = json.loads(json.dumps({str(n["id"]): n for n in sim.protocol.view(sim)["nodes"]}))
        got = page.evaluate("() => Object.fromEntries(window.allocscope.model.view.nodes)")
        for i, n in want.items():
            drawn = {f: v for f, v in got[i].items()     # "__…": the page's own marks
                     if f not in ("x", "y") and not f.startswith("__")}
            assert drawn == {f: v for f, v in n.items() if f not in ("x", "y")}, (k, i)
    shoot(page, screenshots / "far-jump-datta-stress.png")


def test_a_step_keeps_the_events_rows_and_their_focus(page: Any, live_server: str) -> None:
    """The events list keeps one row per event id between steps (issue 15: rebuilding all its
    rows cost 7-17 ms a step at 500 processes): the row of an event still enabled after a step
    is the same element, so keyboard focus on it survives the step (it was lost on every step
    before), and the rows are the model's enabled events in order."""
    s = open_viewer(page, live_server, "/sim/token-ring")
    requests = [e for e in s["enabled"] if e.startswith("e:") and e.endswith(":request")]
    if len(requests) < 2:
        page.keyboard.press("Home")
        wait_step(page, 0)
        s = state(page)
        requests = [e for e in s["enabled"] if e.startswith("e:") and e.endswith(":request")]
    fire, keep = requests[0], requests[1]
    page.eval_on_selector(f'#events button[data-event="{keep}"]', "b => { b.__probe = 1; b.focus(); }")
    page.evaluate("id => window.allocscope.act.deliver(id)", fire)
    wait_step(page, s["step"] + 1)
    after = state(page)
    assert keep in after["enabled"] and fire not in after["enabled"], after["enabled"]
    focused = page.evaluate("() => [document.activeElement.dataset.event, document.activeElement.__probe]")
    assert focused == [keep, 1], focused
    rows = page.eval_on_selector_all("#events button[data-event]", "bs => bs.map(b => b.dataset.event)")
    assert rows == after["enabled"][:300]


def test_a_lesson_choice_marks_the_pick_and_the_right_answer(page: Any, live_server: str) -> None:
    """(Here, not in the lesson test files another engineer is reshaping this round.) After a
    choice prediction the buttons stay, disabled, with the student's pick and the simulator's
    answer marked on them: all three greyed alike left the class guessing what was chosen."""
    page.goto(f"{live_server}/lesson/datta-fig1-deadlock#unloop")
    page.click(".choice[data-choice='deadlock']")
    page.wait_for_selector(".verdict.wrong")
    marks = page.eval_on_selector_all(".choice", """cs => cs.map(c => [c.dataset.choice,
      c.classList.contains('chosen'), c.classList.contains('right'), c.textContent,
      getComputedStyle(c).opacity, c.disabled])""")
    assert marks == [["ok", False, True, "✓ ok", "1", True],
                     ["deadlock", True, False, "✗ deadlock", "1", True],
                     ["livelock", False, False, "livelock", "0.45", True]], marks
    # The same page's figure, the two-resource ring at step 16, is drawn as the viewer draws it
    # (turned, the queues under R1 and R2): upright, KillLoopACK2's triangle sat on R1's
    # "Q_token" and the messages ran through both queue blocks. No message glyph or label may
    # cover a queue's name or item.
    page.wait_for_function("() => document.body.dataset.step === '16'"
                           " && document.querySelector('#view .layer.messages .msg')")
    page.evaluate(SETTLED_JS)
    assert page.evaluate(MESSAGES_ON_QUEUES_JS) == []


# Message shapes and labels whose box meets a queue's name, item or chip (1 px grace).
MESSAGES_ON_QUEUES_JS = """() => {
  const shown = (sel) => [...document.querySelectorAll(sel)].filter((e) => e.textContent !== ''
    || e.tagName !== 'text').map((e) => [e, e.getBoundingClientRect()]).filter(([, b]) => b.width > 0);
  const hit = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
    && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  const out = [];
  for (const [m, mb] of shown('svg .layer.messages .msg-shape, svg .layer.messages .msg-label'))
    for (const [q, qb] of shown('svg .layer.queues text, svg .layer.queues rect.qchip'))
      if (hit(mb, qb)) out.push([m.closest('.msg').dataset.type, m.getAttribute('class'), q.textContent]);
  return out;
}"""


def test_present_mode_leaves_the_drawing_to_the_figure(page: Any, live_server: str, screenshots: Path) -> None:
    """Present mode at the projector's 1280x720, as a class sees it: the bookmarks keep to one
    row (the current one says its whole label, the others their step: two rows took the
    figure's height), the scheduler menu says "scheduler" on screen (a class cannot see a
    tooltip), the space-time strip (120 px, its lane names too small for the back row) waits
    behind "space-time" and then reads at 16 px or more, and a short message takes the legend's
    row under the figure instead of covering the drawing's bottom 34 px."""
    open_viewer(page, live_server, "/sim/datta-prose-remote-unloop?present=1")
    shoot(page, screenshots / "present-1280x720-prose-remote-unloop.png")
    box = """s => { const b = document.querySelector(s).getBoundingClientRect();
                    return {l: b.left, t: b.top, r: b.right, b: b.bottom, w: b.width, h: b.height}; }"""
    moments = page.eval_on_selector_all("#bookmarks .moment", """ms => ms.map(m => {
        const b = m.getBoundingClientRect();
        return {text: m.textContent, l: b.left, r: b.right, t: Math.round(b.top), here: m.classList.contains('here')}; })""")
    assert len({m["t"] for m in moments}) == 1, f"bookmarks in more than one row: {moments}"
    assert all(a["r"] <= b["l"] for a, b in zip(moments, moments[1:], strict=False)), f"bookmarks overlap: {moments}"
    assert [m["text"] for m in moments if m["here"]] == ["★ 16: deadlock: R1 waits"], moments
    label = page.evaluate(box, ".sched .lbl")
    assert label["w"] > 40 and label["h"] > 10, f"the scheduler menu has no visible label: {label}"
    assert page.text_content(".sched .lbl") == "scheduler"
    view = page.evaluate(box, "#view")
    assert not page.is_visible("#spacetime"), "the space-time strip takes the figure's height"
    assert view["h"] >= 440, f"the figure is {view['h']:.0f} px high"
    # a short message: under the figure, in the legend's row
    page.evaluate("() => window.allocscope.act.deliver('no-such-event')")
    page.wait_for_selector("#fault-hint.error", state="visible")
    view, hint = page.evaluate(box, "#view"), page.evaluate(box, "#fault-hint")
    assert hint["t"] >= view["b"] - 1, f"the message covers the figure: {hint} over {view}"
    shoot(page, screenshots / "present-1280x720-message.png")
    page.evaluate("() => window.allocscope.act.variant('full')")
    page.wait_for_function("() => /variant full/.test(document.getElementById('fault-hint').textContent)")
    view, hint = page.evaluate(box, "#view"), page.evaluate(box, "#fault-hint")
    assert hint["t"] >= view["b"] - 1, f"the variant notice covers the figure: {hint} over {view}"
    # the space-time diagram on request: under "more", then readable
    page.click("#btn-more")
    page.click("#btn-spacetime")
    page.wait_for_selector("#spacetime .lane text")
    page.evaluate(SETTLED_JS)
    lanes = page.eval_on_selector_all("#spacetime .lane text",
                                      "ts => ts.map(t => parseFloat(getComputedStyle(t).fontSize))")
    assert lanes and min(lanes) >= 16, f"lane names {lanes} px"
    assert page.get_attribute("#btn-spacetime", "aria-pressed") == "true"
    shoot(page, screenshots / "present-1280x720-spacetime.png")
    page.click("#btn-spacetime")
    assert not page.is_visible("#spacetime")


def test_bookmarks_only_where_the_run_is_the_variants_own(page: Any, live_server: str) -> None:
    """Switching the variant keeps the schedule (full's run replayed under prose); prose's
    bookmarks describe prose's own run, which parts from it after step 12: "14: R2 breaks the
    cycle" and "16: deadlock: R1 waits" would mark events that do not happen, so only step 11's
    is shown. A fork on the own run hides the bookmarks after the fork the same way."""
    open_viewer(page, live_server, "/sim/datta-prose-remote-unloop?variant=full")
    page.evaluate("() => window.allocscope.act.variant('prose')")
    page.wait_for_function("() => window.allocscope.model.protocol.variant === 'prose' && "
                           "document.body.dataset.step === String(window.allocscope.model.step)")
    page.evaluate(SETTLED_JS)
    steps = page.eval_on_selector_all("#bookmarks .moment", "ms => ms.map(m => +m.dataset.step)")
    assert steps == [11], f"bookmarks shown on full's run under prose: {steps}"
    # prose's own run: all three; then a fork at step 12 keeps only the one before it
    open_viewer(page, live_server, "/sim/datta-prose-remote-unloop")
    assert page.eval_on_selector_all("#bookmarks .moment", "ms => ms.map(m => +m.dataset.step)") == [11, 14, 16]
    page.evaluate("() => window.allocscope.act.goto(12)")
    wait_step(page, 12)
    recorded = gallery()["datta-prose-remote-unloop"].schedule_for("prose")[12]
    other = next(e["id"] for e in page.evaluate("() => window.allocscope.model.enabled") if e["id"] != recorded)
    page.evaluate("id => window.allocscope.act.deliver(id)", other)
    wait_step(page, 13)
    for k in (14, 15, 16):                  # on along the new branch, past the old moments' steps
        page.keyboard.press("ArrowRight")
        wait_step(page, k)
    page.evaluate(SETTLED_JS)
    assert page.eval_on_selector_all("#bookmarks .moment", "ms => ms.map(m => +m.dataset.step)") == [11]


BOX_JS = """s => { const b = document.querySelector(s).getBoundingClientRect();
                   return {l: b.left, t: b.top, r: b.right, b: b.bottom, w: b.width, h: b.height}; }"""


def test_normal_mode_messages_take_the_legends_row(page: Any, live_server: str, screenshots: Path) -> None:
    """Normal mode at 1280x720: an error, a variant notice and the armed-fault hint sit under the
    figure, in the legend's row (they covered the figure's bottom 31 px, 5 px under Fig. 3's
    D=(R2,R3), and the legend), and the figure keeps its size while they show (no refit)."""
    open_viewer(page, live_server, "/sim/datta-fig3")
    page.evaluate(SETTLED_JS)
    view0 = page.evaluate(BOX_JS, "#view")
    page.evaluate("() => window.allocscope.act.deliver('no-such-event')")
    page.wait_for_selector("#fault-hint.error", state="visible")
    page.evaluate(SETTLED_JS)
    view, hint = page.evaluate(BOX_JS, "#view"), page.evaluate(BOX_JS, "#fault-hint")
    assert hint["t"] >= view["b"] - 1, f"the message covers the figure: {hint} over {view}"
    assert abs(view["h"] - view0["h"]) <= 1, f"the figure changed size: {view0} -> {view}"
    shoot(page, screenshots / "normal-1280x720-message.png")
    page.evaluate("() => window.allocscope.act.variant('naive')")
    page.wait_for_function("() => /variant naive/.test(document.getElementById('fault-hint').textContent)")
    view, hint = page.evaluate(BOX_JS, "#view"), page.evaluate(BOX_JS, "#fault-hint")
    assert hint["t"] >= view["b"] - 1, f"the variant notice covers the figure: {hint} over {view}"
    open_viewer(page, live_server, "/sim/token-ring")
    page.click('#faults button[data-fault="drop"]')
    page.wait_for_selector("#fault-hint", state="visible")
    view, hint = page.evaluate(BOX_JS, "#view"), page.evaluate(BOX_JS, "#fault-hint")
    assert hint["t"] >= view["b"] - 1, f"the armed-fault hint covers the figure: {hint} over {view}"
    page.keyboard.press("Escape")
    page.wait_for_selector("#legend", state="visible")
    # an unfolded legend (three rows, 72 px) does not make a message a large empty box
    open_viewer(page, live_server, "/sim/datta-fig3")
    page.click("#legend .lg-more")
    page.evaluate("() => window.allocscope.act.deliver('no-such-event')")
    page.wait_for_selector("#fault-hint.error", state="visible")
    assert page.evaluate(BOX_JS, "#fault-hint")["h"] <= 50


def test_present_mode_says_a_finding_in_one_line(page: Any, live_server: str, screenshots: Path) -> None:
    """Present mode at 1280x720: the deadlock banner of datta-prose-remote-unloop is one line
    (it wrapped to two, 52 px, taking the figure's height), its words at 18 px or more; what
    happened is whole, the parenthesis after it may give way; the whole text is its tooltip and
    a click shows all of it."""
    open_viewer(page, live_server, "/sim/datta-prose-remote-unloop?present=1")
    page.wait_for_selector("#banner", state="visible")
    page.evaluate(SETTLED_JS)
    said = page.text_content("#banner")
    assert said.startswith("deadlock at step 16: ") and "(still enabled" in said, said
    whole = """() => { const w = document.querySelector('#banner .banner-what');
        if (!w) return false;
        const r = document.createRange(); r.selectNodeContents(w);     // the text's own width
        const b = w.getBoundingClientRect();
        return r.getBoundingClientRect().width <= b.width + 0.1 && b.right <= innerWidth; }"""
    geo = page.evaluate("""() => { const b = document.getElementById('banner'), cs = getComputedStyle(b);
        return {h: b.getBoundingClientRect().height, px: parseFloat(cs.fontSize),
                line: parseFloat(cs.lineHeight) || 1.2 * parseFloat(cs.fontSize), title: b.title}; }""")
    assert geo["px"] >= 18, geo
    assert geo["h"] <= geo["line"] * 1.5 + 12, f"the banner is more than one line: {geo}"
    assert page.evaluate(whole), f"what happened is cut: {geo}"
    assert said in geo["title"], geo
    shoot(page, screenshots / "present-1280x720-banner.png")
    # a narrower projector (normal mode): the parenthesis gives way first, what happened stays
    # whole (a shrink shared between the two cut "serve them" to "serve the…")
    page.set_viewport_size({"width": 800, "height": 600})
    open_viewer(page, live_server, "/sim/datta-prose-remote-unloop")
    page.wait_for_selector("#banner .banner-what")
    page.evaluate(SETTLED_JS)
    assert page.evaluate(whole), "what happened is cut at 800x600"
    page.click("#banner")
    assert page.evaluate("() => document.getElementById('banner').getBoundingClientRect().height") >= geo["h"]
    # before the deadlock there is no banner (its one-line layout must not show a hidden one)
    page.keyboard.press("Home")
    wait_step(page, 0)
    page.evaluate(SETTLED_JS)
    assert not page.is_visible("#banner"), "the banner stays at step 0"


# Every shape and text of the figure inside the view, no queue row on a node's name or detail
# lines nor on another row: [what, ...] for each fault.
FITS_JS = """() => {
        const v = document.getElementById('view').getBoundingClientRect(), bad = [];
        const boxes = (sel) => [...document.querySelectorAll(sel)].map(e => [e, e.getBoundingClientRect()])
            .filter(([, b]) => b.width > 0 && b.height > 0);
        for (const [e, b] of boxes('#view .layer.nodes text, #view .layer.queues text, #view .layer.queues rect, '
                                   + '#view .layer.messages .msg-shape, #view .layer.nodes .body')) {
            if (b.top < v.top - 1 || b.bottom > v.bottom + 1 || b.left < v.left - 1 || b.right > v.right + 1)
                bad.push(['outside', e.textContent || e.getAttribute('class'), Math.round(b.bottom), Math.round(v.bottom)]);
        }
        const meet = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
            && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
        const rows = boxes('#view .layer.queues text, #view .layer.queues rect');
        for (const [e, b] of boxes('#view .layer.nodes text')) {
            for (const [q, c] of rows) if (meet(b, c)) bad.push(['meets', e.textContent, q.textContent || 'chip']);
        }
        const groups = boxes('#view .layer.queues > g');
        groups.forEach(([g, b], i) => groups.slice(i + 1).forEach(([h, c]) => {
            if (meet(b, c)) bad.push(['rows meet', g.textContent, h.textContent]); }));
        return {view: [Math.round(v.width), Math.round(v.height)], bad}; }"""


def test_present_mode_fits_the_figure_with_more_and_the_spacetime_strip(
        page: Any, live_server: str, screenshots: Path) -> None:
    """Present mode at 1280x720 with "more" and the space-time strip open leaves the figure
    880x277 px: the two-resource ring's queue rows (under R1 and R2) fell past its bottom
    (Q_token cut) and over C2's detail line. Everything drawn lies inside the view, and no queue
    row meets a node's name or detail lines."""
    open_viewer(page, live_server, "/sim/datta-fig1?present=1")
    page.click("#btn-more")
    page.click("#btn-spacetime")
    page.wait_for_selector("#spacetime .lane text")
    page.wait_for_function("() => document.getElementById('view').getBoundingClientRect().height < 300")
    page.evaluate(SETTLED_JS)
    page.evaluate(SETTLED_JS)
    shoot(page, screenshots / "present-1280x720-more-spacetime-fig1.png")
    out = page.evaluate(FITS_JS)
    assert not out["bad"], out
    # a narrower projector in normal mode (a 460x130 px view): the rows went under R1 and R2 on
    # one another ("Q_strong" over "Q_strong") and C2 on them
    page.set_viewport_size({"width": 800, "height": 600})
    open_viewer(page, live_server, "/sim/datta-prose-remote-unloop")
    page.evaluate(SETTLED_JS)
    page.evaluate(SETTLED_JS)
    out = page.evaluate(FITS_JS)
    assert not out["bad"], out
