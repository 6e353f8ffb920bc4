"""Real-browser tests of the viewer's time and motion (issue 17): the speed label says the rate
play really runs at, delivered messages move along their link (and do not when motion is
reduced), the inspector says what the last step changed, and an enabled event can be previewed
before it is made to happen; a process or a message offers its faults on a click."""

from __future__ import annotations

from typing import Any

import pytest

from .test_browser import open_viewer, wait_step

pytestmark = pytest.mark.browser

# Plays for `ms` milliseconds and returns the label shown and the rate measured between the
# first and the last step drawn (page clock, steps as the model saw them).
MEASURE_JS = """async (ms) => {
  const m = window.allocscope.model, a = window.allocscope.act;
  const label = document.getElementById('speed-out').textContent;
  const pts = [];
  const on = () => pts.push([performance.now(), m.step]);
  window.addEventListener('allocscope:drawn', on);
  await a.togglePlay();
  await new Promise((r) => setTimeout(r, ms));
  await a.pause();
  window.removeEventListener('allocscope:drawn', on);
  const moving = pts.filter((p) => p[1] > pts[0][1]);
  const f = moving[0], l = moving[moving.length - 1];
  return {label, steps: l[1] - f[1], rate: (l[1] - f[1]) / ((l[0] - f[0]) / 1000)};
}"""


def _slide(page: Any, value: int) -> None:
    """Move the speed slider as a hand does: input events while dragging, change on release."""
    page.eval_on_selector("#speed", """(s, v) => { s.value = String(v);
      s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); }""", value)


@pytest.mark.parametrize("slider", [None, 38, 55])
def test_the_speed_label_is_the_measured_play_rate(page: Any, live_server: str,
                                                   slider: int | None) -> None:
    """Item 10: the label said 10/s while play ran at 4/s; now label = measured rate ± 10 %."""
    open_viewer(page, live_server, "/sim/token-ring")
    if slider is not None:
        _slide(page, slider)
        page.wait_for_timeout(200)           # the speed command is answered before play
    page.evaluate("() => window.allocscope.act.goto(0)")
    wait_step(page, 0)
    label = page.text_content("#speed-out")
    said = float(label.removesuffix("/s"))
    # long enough for a dozen steps at the label's rate, at most 4 s
    ms = int(min(4000, max(2000, 1000 * 14 / said)))
    got = page.evaluate(MEASURE_JS, ms)
    assert got["label"] == label and got["steps"] >= 8, got
    assert abs(got["rate"] - said) <= 0.10 * said, f"label {label}, measured {got['rate']:.2f}/s"
