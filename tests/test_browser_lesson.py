"""Real-browser tests of a lesson (issue 17): every gallery scenario opens at its figure moment
with its named moments on the timeline and the view shows what the caption says; delivering by
hand forks a branch that keeps the old future; screenshots at the projector, present-mode and
phone sizes go to test-output/screenshots/lesson/ (gitignored) to be looked at.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from protocols.scenario import gallery

from .test_browser import open_viewer, state, wait_step

pytestmark = pytest.mark.browser

SCENARIOS = list(gallery())

# What each scenario's figure moment must show, checked on the page's own model and drawing:
# ("cycle", nodes): the dependency / wait-for cycle drawn in red through exactly these nodes;
# ("monitor", kind): that monitor's light is red and its banner explains it;
# ("cs", names): these processes are in their critical sections; ("crashed", name);
# ("say", text): the narration of that step says it.
CAPTIONS: dict[str, tuple[str, Any]] = {
    "datta-fig1": ("cycle", ["R1", "R2"]),
    "datta-fig3": ("cycle", ["R1", "R2", "R3"]),
    "datta-fig5-6": ("cycle", ["R1", "R2", "R3"]),
    "datta-departure": ("cycle", ["R1", "R2"]),
    "datta-fairness": ("say", "starts the unloop of C1"),
    "datta-printed-done": ("monitor", "deadlock"),
    "datta-prose-remote-unloop": ("monitor", "deadlock"),
    "datta-stress": ("cycle", ["R3", "R7", "R8", "R4"]),
    "found-datta-ring-as-printed-second-token": ("monitor", "violation"),
    "found-kout-tree-as-printed-extra-resource-token": ("monitor", "violation"),
    "kout-fig1": ("say", "requests 1 unit"),
    "kout-fig2": ("monitor", "deadlock"),
    "kout-fig3": ("monitor", "livelock"),
    "kout-chaos": ("say", "erases its tokens (reset)"),
    "kout-random": ("cycle", ["p1", "p7"]),
    "coterie-fig1": ("cs", ["a", "b"]),
    "coterie-preempt": ("say", "sends PREEMPT to u3"),
    "coterie-race-stale-preempt": ("monitor", "violation"),
    "coterie-race-stale-update": ("monitor", "violation"),
    "coterie-repeated-preemption": ("say", "sends PREEMPT to u3"),
    "coterie-disjoint": ("cs", ["u1", "u4"]),
    "coterie-example4": ("cycle", ["u2", "u4", "u3"]),
    "coterie-random": ("cycle", ["u1", "u5", "u3"]),
    "game-conflict": ("cycle", ["T2", "T1"]),
    "game-fault": ("crashed", "T1"),
    "game-lost-winning": ("say", "winning form is lost"),
    "game-three-nodes": ("cycle", ["T5", "T3", "T1"]),
    "token-ring": ("cs", ["p0"]),
    "token-ring-lossy": ("monitor", "deadlock"),
}

MODEL_JS = """() => {
  const m = window.allocscope.model;
  return {cycles: m.view.cycles, monitors: m.monitors,
          narration: m.narration.map(n => n.text).join(' | '),
          nodes: Array.from(m.view.nodes.values()).map(n => ({id: String(n.id), cs: !!n.cs,
                 crashed: !!n.crashed})),
          inCycle: Array.from(document.querySelectorAll('#view .node.in-cycle')).map(g => g.dataset.id),
          cycleEdges: document.querySelectorAll('#view .cycle-edge').length,
          moments: Array.from(document.querySelectorAll('#bookmarks .moment')).map(b => ({
            step: +b.dataset.step, text: b.textContent, figure: b.classList.contains('figure'),
            here: b.classList.contains('here')}))};
}"""


def test_every_gallery_scenario_has_a_figure_moment() -> None:
    for sid, sc in gallery().items():
        variant = sc.variant or "default"
        assert sc.open_at_for(sc.variant or variant) is not None, f"{sid} has no open_at"
        assert sc.bookmarks, f"{sid} has no bookmarks"
        assert sid in CAPTIONS, f"{sid}: say what its figure moment shows in CAPTIONS"


def check_caption(page: Any, sid: str) -> dict[str, Any]:
    kind, what = CAPTIONS[sid]
    m = page.evaluate(MODEL_JS)
    if kind == "cycle":
        assert any(sorted(c) == sorted(what) for c in m["cycles"]), (sid, m["cycles"])
        assert set(what) <= set(m["inCycle"]) and m["cycleEdges"] >= len(what)
    elif kind == "monitor":
        light = page.get_attribute(f'.light[data-monitor="{"safety" if what == "violation" else what}"]',
                                   "data-state")
        assert light not in (None, "ok"), (sid, light)
        assert page.text_content("#banner").startswith(f"{what} at step")
    elif kind == "cs":
        assert set(what) <= {n["id"] for n in m["nodes"] if n["cs"]}, (sid, m["nodes"])
    elif kind == "crashed":
        assert what in {n["id"] for n in m["nodes"] if n["crashed"]}
    else:
        assert what in m["narration"], (sid, m["narration"])
    return m


@pytest.mark.parametrize("sid", SCENARIOS)
def test_opens_at_the_figure_moment_with_its_markers(page: Any, live_server: str, sid: str,
                                                     screenshots: Path) -> None:
    sc = gallery()[sid]
    out = screenshots / "lesson"
    out.mkdir(exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    s = open_viewer(page, live_server, f"/sim/{sid}")
    variant = page.evaluate("() => window.allocscope.model.protocol.variant")
    want = sc.open_at_for(variant)
    assert s["step"] == want, f"{sid} opened at step {s['step']}, its figure is step {want}"
    m = check_caption(page, sid)
    marks = [b for b in sc.bookmarks_for(variant) if b.step <= s["total"]]
    drawn = {x["step"]: x for x in m["moments"]}
    for b in marks:
        assert b.label in drawn[b.step]["text"]
    assert drawn[want]["figure"] and drawn[want]["here"]
    page.screenshot(path=str(out / f"{sid}-1280x800.png"))
    # a bookmark is a button: it takes the timeline there
    other = next((b.step for b in marks if b.step != want), None)
    if other is not None:
        page.click(f'#bookmarks .moment[data-step="{other}"]')
        wait_step(page, other)
    # the projector in present mode, and a phone
    page.set_viewport_size({"width": 1920, "height": 1080})
    open_viewer(page, live_server, f"/sim/{sid}?present=1")
    page.screenshot(path=str(out / f"{sid}-1920x1080-present.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    open_viewer(page, live_server, f"/sim/{sid}")
    page.screenshot(path=str(out / f"{sid}-390x844.png"), full_page=True)


def test_delivering_by_hand_forks_a_branch_and_keeps_the_old_future(page: Any, live_server: str,
                                                                    screenshots: Path) -> None:
    s = open_viewer(page, live_server, "/sim/datta-fig1")
    assert (s["step"], s["total"]) == (10, 18)
    recorded = gallery()["datta-fig1"].schedule_for("full")
    page.keyboard.press("Home")
    wait_step(page, 0)
    for k in range(3):
        page.keyboard.press("ArrowRight")       # → follows the recorded timeline
        wait_step(page, k + 1)
    s = state(page)
    assert s["total"] == 18 and s["trace"] == recorded[:3]
    nxt = "m1"                                  # recorded: m1; deliver m2 instead
    assert recorded[3] == nxt and "m2" in s["deliverable"]
    page.click('#view .msg.deliverable[data-id="m2"] .msg-shape')
    wait_step(page, 4)
    s = state(page)
    assert s["total"] == 4 and s["trace"] == recorded[:3] + ["m2"]
    assert page.is_visible("#branchbar")
    assert page.locator("#markers .marker.fork").count() == 1
    # stepping on uses the scheduler the user picks, never the dead script
    assert page.input_value("#scheduler") == "oldest"
    for k in range(5, 9):
        page.keyboard.press("ArrowRight")
        wait_step(page, k)
    assert "not enabled" not in (page.text_content("#fault-hint") or "")
    page.screenshot(path=str(screenshots / "datta-fig1-branch.png"))
    # the old future is one click away: the fork marker switches to the recorded run
    page.click("#markers .marker.fork")
    page.wait_for_function("() => window.allocscope.model.branch === 0")
    page.keyboard.press("End")
    wait_step(page, 18)
    page.wait_for_function("() => window.allocscope.model.need === null")
    got = page.evaluate("() => window.allocscope.model.history.map(r => r.event)")
    assert got == recorded
    assert page.evaluate("() => window.allocscope.model.stateHash") == s_hash("datta-fig1", recorded)


def s_hash(sid: str, trace: list[str]) -> str:
    from protocols.runner import build
    sim = build(gallery()[sid], None)
    sim.replay(trace)
    return sim.state_hash()
