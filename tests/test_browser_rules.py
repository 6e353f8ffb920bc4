"""The inspector of the two protocols turned into rules tables (issue 16), in a real browser: what
it ticks is exactly what the events panel offers for that process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_browser import open_viewer, wait_step

from .shots import shoot


def _inspect(page: Any, pid: str) -> tuple[list[str], list[str]]:
    """(ticked guard names, the event ids they list) of ``pid`` in the inspector."""
    # the click goes to the node itself (a message drawn over it may cover its centre)
    page.locator(f'#view .layer.nodes > g[data-id="{pid}"]').dispatch_event("click")
    page.wait_for_function("p => document.querySelector('#inspector h2')?.textContent"
                           ".startsWith(p)", arg=pid)
    page.wait_for_selector("#inspector .guard")
    ticked = page.eval_on_selector_all("#inspector .guard.holds .gname",
                                       "els => els.map(e => e.textContent)")
    events = page.eval_on_selector_all("#inspector .guard.holds .gdeliver",
                                       "els => els.map(e => e.textContent.trim())")
    return ticked, events


@pytest.mark.parametrize("sid, steps, pids", [("kout-fig3", 8, ("r", "a", "b")),
                                              ("game-conflict", 12, ("T1", "P1", "A1"))])
def test_the_inspector_ticks_exactly_the_events_of_the_process(
        page: Any, live_server: str, screenshots: Path, sid: str, steps: int,
        pids: tuple[str, ...]) -> None:
    open_viewer(page, live_server, f"/sim/{sid}")
    page.keyboard.press("Home")
    wait_step(page, 0)
    for k in range(1, steps + 1):
        page.keyboard.press("ArrowRight")
        wait_step(page, k)
    enabled = page.evaluate("() => window.allocscope.model.enabled.filter(e => e.kind !== 'fault').map(e => [e.id, e.proc])")
    for pid in pids:
        ticked, events = _inspect(page, pid)
        mine = sorted(i for i, p in enabled if p == pid)
        assert sorted(events) == mine, (sid, pid, ticked, events, mine)
        assert bool(ticked) == bool(mine), (sid, pid, ticked, mine)
    shoot(page, screenshots / f"{sid}-rules-inspector.png")


def test_the_inspector_calls_local_actions_enabled_and_receives_deliverable(
        page: Any, live_server: str, screenshots: Path) -> None:
    """A guard that is not a receive (A1 creating a task, a request) lists its events as
    "enabled:", never as "deliverable:"; a receive guard's messages stay "deliverable:"."""
    open_viewer(page, live_server, "/sim/game-conflict")
    page.keyboard.press("Home")
    wait_step(page, 0)
    _inspect(page, "A1")
    li = page.locator("#inspector .guard.holds", has_text="create a task")
    assert li.locator(".gevents").text_content().startswith("enabled: ")
    assert li.locator(".gdeliver").first.get_attribute("title").startswith("take ")
    shoot(page, screenshots / "inspector-enabled-local-action.png")
    open_viewer(page, live_server, "/sim/datta-fig1")        # opens at Fig. 1's moment
    _inspect(page, "R1")
    labels = page.eval_on_selector_all(
        "#inspector .guard.holds", "els => els.filter(e => e.querySelector('.gevents'))"
        ".map(e => [e.querySelector('.gname').textContent, e.querySelector('.gevents').firstChild.textContent])")
    assert ["receive newStrongACK → seekLoop", "deliverable: "] in labels, labels
    for name, label in labels:
        assert label == ("deliverable: " if name.startswith("receive") else "enabled: "), labels


COVERED_JS = """nid => {
  // points of the node's body that a click would not reach (something else is on top there)
  const g = document.querySelector(`#view .layer.nodes > g[data-id="${nid}"]`);
  const r = (g.querySelector('circle.body') || g.querySelector('circle')).getBoundingClientRect();
  const cx = r.left + r.width / 2, cy = r.top + r.height / 2, out = [];
  for (let i = 1; i < 8; i++) for (let j = 1; j < 8; j++) {
    const x = r.left + r.width * i / 8, y = r.top + r.height * j / 8;
    if (Math.hypot(x - cx, y - cy) > r.width * 0.45) continue;
    const e = document.elementFromPoint(x, y);
    if (!e || !g.contains(e)) out.push([i, j, e ? e.getAttribute('class') : null]);
  }
  return out;
}"""


def test_messages_never_swallow_a_click_on_a_node(page: Any, live_server: str,
                                                   screenshots: Path) -> None:
    """Issue 17 item 6: at every step of kout-fig3 (messages pass right by b at step 8) every
    point of every node's body reaches the node, and a real mouse click on b at step 8 inspects b."""
    open_viewer(page, live_server, "/sim/kout-fig3")
    total = page.evaluate("() => window.allocscope.model.total")
    page.keyboard.press("Home")
    wait_step(page, 0)
    covered = {}
    for k in range(total + 1):
        if k:
            page.keyboard.press("ArrowRight")
            wait_step(page, k)
        page.wait_for_timeout(120)                       # let a delivery's motion finish
        for pid in ("r", "a", "b"):
            if pts := page.evaluate(COVERED_JS, pid):
                covered[(k, pid)] = pts[:3]
    assert covered == {}, covered
    page.keyboard.press("Home")
    wait_step(page, 0)
    for k in range(1, 9):
        page.keyboard.press("ArrowRight")
        wait_step(page, k)
    page.locator('#view .layer.nodes > g[data-id="b"] circle.body').click()   # a real click
    page.wait_for_function("() => document.querySelector('#inspector h2')?.textContent.startsWith('b')")
    shoot(page, screenshots / "kout-fig3-step8-click-b.png")
    # the detail lines under the nodes ("State=Req Need=2", ...) are 14 screen pixels at
    # 1280x720, readable from the back of a room (they were 12: a line's box was 14 px tall)
    boxes = page.evaluate("() => [...document.querySelectorAll('#view .node .detail')]"
                          ".filter((t) => t.textContent.trim())"
                          ".map((t) => t.getBoundingClientRect().height)")
    assert len(boxes) >= 3 and min(boxes) >= 15.5, boxes
