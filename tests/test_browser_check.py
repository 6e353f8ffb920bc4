"""'Check this scenario' in a real browser: the explorer runs in a server worker, the panel shows
its verdict, and 'replay the counterexample' loads the shortest schedule into the timeline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from protocols.explorer import check
from protocols.scenario import gallery
from tests.test_browser import open_viewer, state, wait_step

from .shots import shoot

pytestmark = pytest.mark.browser


def test_check_finds_the_lossy_deadlock_and_replays_it(page: Any, live_server: str,
                                                        screenshots: Path) -> None:
    expected = check(gallery()["token-ring-lossy"], max_states=200_000)["counterexample"]["schedule"]
    open_viewer(page, live_server, "/sim/token-ring-lossy")
    # While the worker starts, the job runs with no progress yet: the first poll is made to see
    # exactly that (it may or may not happen on its own), and every text the panel shows is kept
    polls: list[str] = []

    def first_poll_starting(route: Any) -> None:
        polls.append(route.request.url)
        if len(polls) == 1 and route.request.method == "GET":
            route.fulfill(json={"job": "x", "state": "running", "progress": {}, "result": None})
        else:
            route.continue_()
    page.route("**/api/check/*", first_poll_starting)
    page.evaluate("""() => { window.__panel = []; new MutationObserver(() => window.__panel.push(
        document.getElementById('check-panel').textContent)).observe(
        document.getElementById('check-panel'), {childList: true, subtree: true}); }""")
    page.click("#btn-check")
    page.wait_for_selector("#btn-replay-cex", timeout=60_000)
    assert "deadlock" in page.text_content("#check-panel")
    assert f"{len(expected)} steps" in page.text_content("#check-panel")
    shown = page.evaluate("() => window.__panel")
    assert any("starting the explorer (a worker process" in t for t in shown), shown
    assert not any(" 0 states" in t for t in shown), shown   # never a count that reads as a result
    page.unroute("**/api/check/*")
    shoot(page, screenshots / "check-found-deadlock.png")
    page.click("#btn-replay-cex")
    # what is on the screen now is said where the button was, over nothing of the figure
    page.wait_for_selector("#cex-notice")
    assert "watching the counterexample" in page.text_content("#check-panel")
    assert not page.is_visible("#fault-hint")
    box, view = page.locator("#cex-notice").bounding_box(), page.locator("#view").bounding_box()
    assert box["y"] + box["height"] <= view["y"], (box, view)
    page.wait_for_function("n => window.allocscope.model.total === n && "
                           "window.allocscope.model.step === 0", arg=len(expected))
    # the light is drawn on the next animation frame after the model took the frame: wait for it
    # (it must turn ok: at step 0 of the counterexample nothing is stuck yet)
    page.wait_for_function("() => document.querySelector('.light[data-monitor=\"deadlock\"]')"
                           ".dataset.state === 'ok'", timeout=10_000)
    page.keyboard.press("End")
    wait_step(page, len(expected))
    page.wait_for_function("() => document.querySelector('.light[data-monitor=\"deadlock\"]')"
                           ".dataset.state !== 'ok'")
    assert state(page)["step"] == len(expected)


def test_check_says_ok_when_no_schedule_fails(page: Any, live_server: str) -> None:
    open_viewer(page, live_server, "/sim/token-ring")
    page.click("#btn-check")
    page.wait_for_function("() => /ok: no violation/.test(document.getElementById('check-panel')"
                           ".textContent)", timeout=60_000)
    assert page.locator("#btn-replay-cex").count() == 0


def test_check_with_partial_order_reduction_does_not_claim_livelock_freedom(
        page: Any, live_server: str) -> None:
    """coterie checks use partial-order reduction by default, which skips the livelock search:
    the panel says so instead of the full 'no livelock' verdict."""
    open_viewer(page, live_server, "/sim/coterie-race-stale-preempt?variant=full")
    # nothing is broken under `full`: the as-printed run's moments are not shown on its timeline
    moments = page.eval_on_selector_all("#bookmarks .moment", "ms => ms.map(m => m.textContent)")
    assert not any("Lemma 1 broken" in m or "used twice" in m for m in moments), moments
    page.click("#btn-check")
    page.wait_for_function("() => /ok: no violation/.test(document.getElementById('check-panel')"
                           ".textContent)", timeout=60_000)
    text = page.text_content("#check-panel")
    assert "livelocks were not searched" in text and "no livelock" not in text
