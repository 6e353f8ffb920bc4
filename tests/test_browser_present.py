"""Every gallery scenario as a class sees it on a projector: present mode at 1280x720 (also with
"more" and the space-time strip open), and the top bar of smaller projectors (800x600, 1024x768).

The figure test of test_browser_lesson.py sweeps every scenario in normal mode with its label
checks; present mode had only screenshots, and what they showed (a queue name cut by the
figure's edge, a node's name on a queue row, the monitor lights over the variant menu) was
found by eye, one scenario at a time. Here the same checks run over every scenario: one page
load per scenario and one evaluate for all its sampled steps, so the sweep costs seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .shots import SETTLED_JS, shoot
from .test_browser import FITS_JS, open_viewer
from .test_browser_lesson import LABEL_CHECKS_JS, QUIET_JS, SCENARIOS, sweep

pytestmark = pytest.mark.browser

# What the projector shows of the figure: the label checks of the normal-mode sweep (no label
# on another, on another node, cut by the edge; the space-time strip when shown), plus
# test_browser.py's fit (every shape inside the view, no queue row on a node's name or
# detail lines, no two queue rows on each other).
PRESENT_CHECKS_JS = (f"() => [...({LABEL_CHECKS_JS})(),"
                     f" ...({FITS_JS})().bad.map((b) => b.map(String))]")

# The top bar's items (the brand, the title, the protocol chip, the variant menu, the paper
# reference, each monitor light, the connection) on one another or past the bar's edge, and
# the title narrower than 90 px (a title cut with "…" is fine; its whole text is a click
# away). At 800x600 the lights lay over the variant menu and hid it from a click.
TOPBAR_JS = """() => {
  const items = [...document.querySelectorAll('.topbar > a, .topbar .scn > *, .topbar .lights > *')]
    .map((e) => [e.className || e.tagName, e.getBoundingClientRect()])
    .filter(([, r]) => r.width > 0 && r.height > 0);
  const out = [];
  for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
    const a = items[i][1], b = items[j][1];
    if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
        && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1) out.push([items[i][0], items[j][0]]);
  }
  const bar = document.querySelector('.topbar').getBoundingClientRect();
  for (const [c, r] of items) if (r.right > bar.right + 1 || r.left < bar.left - 1) out.push([c, 'past the bar']);
  const title = document.querySelector('.scn-title').getBoundingClientRect().width;
  if (title < 90) out.push(['the title', `${Math.round(title)} px wide`]);
  return out;
}"""

# The top bar in normal and present mode on the page open now: the bar's layout is CSS alone,
# so toggling the body's class and reading the boxes (which lays the page out again) shows
# what a load in the other mode shows, without a second load.
TOPBAR_BOTH_MODES_JS = f"""() => {{
  const present = document.body.classList.contains('present'), out = {{}};
  for (const p of [present, !present]) {{
    document.body.classList.toggle('present', p);
    const found = ({TOPBAR_JS})();
    if (found.length) out[p ? 'present' : 'normal'] = found;
  }}
  document.body.classList.toggle('present', present);
  return out;
}}"""

# Scenarios whose present-mode figure at 1280x720 still has labels on one another at a sampled
# step: measured, not hidden (strict: once one is clean the test says to take it off).
# kout-random: sixteen processes on a tree drawn in 516 px: the RSet label of a requesting
# process and its reserved-token chip lie on its neighbours (p0, p2, p3) and two node names on
# one another (p2 / p3) at steps 16-161; the same crowd as on a phone (PHONE_NOT_YET).
# game-restricted-locality-3: nine pools of one node in one row: their queue names and rows
# on one another at steps 97-124 (PHONE_NOT_YET too).
PRESENT_NOT_YET: set[str] = set()

# The same with "more" and the space-time strip open (the figure 880x277 px), at the figure
# moment: what is found there. kout trees (kout-chaos, kout-fig2, kout-random, found-kout-tree-
# as-printed-extra-resource-token): RSet labels, chips, node names and detail lines on their
# neighbours, rows of RSet under neighbouring processes on each other; game pools
# (game-locality-chain, game-restricted-locality-3): queue rows on each other; coterie's
# local-variable rows X_u1 / X_u2 / X_u3 on each other (coterie-race-stale-preempt,
# -stale-update) and "W=c" on y (coterie-fig1). The rings of datta_ring (ui7's fix) and the
# other scenarios are clean there.
# (ui9: game-locality-chain's rows go a level lower, coterie's X_v rows go to the table beside
# a flat figure: both measured clean; game-restricted-locality-3's nine pools still need more
# than the three levels the 277 px allow.)
# (ui11: game-restricted-locality-3 left: where the game's rows meet at present mode's size
# they are drawn smaller, 1.3 times normal mode's, on two levels.)
MORE_SPACETIME_NOT_YET: set[str] = set()


# The rows the controls bar wraps to: its items in order of their tops, a new row wherever one
# starts below the bottom of the row before (items of one row differ in height by a few px).
CONTROL_ROWS_JS = """() => {
  const items = [...document.querySelectorAll('#controls > *')].map((e) => e.getBoundingClientRect())
    .filter((r) => r.width > 0 && r.height > 0).sort((a, b) => a.top - b.top);
  let rows = 0, bottom = -Infinity;
  for (const r of items) {
    if (r.top >= bottom - 2) { rows += 1; bottom = r.bottom; } else bottom = Math.max(bottom, r.bottom);
  }
  return rows;
}"""

# Present mode at 1024x768 (an older projector: the figure 624 px wide beside the 400 px side
# panel), the sweep of the 1280x720 test: what is still wrong there, measured (ui9's round:
# 11 scenarios before its tree layout, 5 after (the kout trees' counters go under a tree this
# narrow), 3 once message labels kept inside the figure: datta-fig3's and datta-fig5-6's
# NewRequest labels were cut by its edge). coterie-random: u4's QRY message labels on each
# other and on u4 at step 11; datta-fairness: C1's name on C1's message label and D=(R1,R2) on
# a queue chip; datta-stress: thirty clients on a 624 px ring, C18 on C28 and C22 on C26.
# (ui10: kout-random is back, found by the new check of messages on queue rows: at step 113
# the ctrl token on the short link p3 to p7 lies on p12's RSet row, as in normal mode;
# coterie-random left: a deliverable message's label with no free place anywhere is left out,
# not put on u4 and the other QRY labels; datta-fairness left: in a figure 600-760 px wide the
# two-resource ring's rows put their names over their chips, half as wide, clear of C1.)
# (ui11: kout-random left: its tree, with the counters under it, kept 130 px each side for
# rows, so it was drawn in 442 px and then smaller still, rows 70 px apart; 60 px a side gives
# 86, and a row may sit mid-gap between two rows of nodes, saying whose it is; datta-stress
# left: its queue table goes under the ring when that draws the ring a quarter larger, 250 px
# across instead of 170, the table's 370 px no longer taken from the ring's width.)
PRESENT_1024_NOT_YET: set[str] = set()


def sample_steps(step: int, total: int) -> list[int]:
    """The figure moment, then five steps spread over the run (as the normal-mode sweep)."""
    return [step] + sorted({max(0, min(total, round(total * f))) for f in (.1, .3, .5, .7, .9)}
                           - {step})[:5]


def expect_clean(sid: str, found: Any, not_yet: set[str], what: str) -> None:
    if sid in not_yet:     # strict: once it is clean, take it off the list
        assert found, f"{sid} is clean {what} now: take it off its not-yet list"
    else:
        assert not found, f"{sid} {what}: {found}"


def present_sweep(page: Any, live_server: str, out: Path, sid: str, size: tuple[int, int],
                  not_yet: set[str], suffix: str) -> dict[str, Any]:
    """Open ``sid`` in present mode at ``size``, shoot it, and sweep the figure moment and five
    steps spread over the run with the present checks and the top bar's; a scenario outside
    ``not_yet`` must be clean. Returns the opened scenario's step and total."""
    out.mkdir(exist_ok=True)
    w, h = size
    page.set_viewport_size({"width": w, "height": h})
    s = open_viewer(page, live_server, f"/sim/{sid}?present=1")
    page.evaluate(SETTLED_JS)
    shoot(page, out / f"{sid}-{w}x{h}{suffix}.png")
    found = sweep(page, sample_steps(s["step"], s["total"]),
                  f"() => [...({PRESENT_CHECKS_JS})(), ...({TOPBAR_JS})()]", settle=True,
                  always_go=False)
    expect_clean(sid, found, not_yet, f"in present mode at {w}x{h}")
    return s


@pytest.mark.parametrize("sid", SCENARIOS)
def test_present_mode_reads_on_a_projector(page: Any, live_server: str, screenshots: Path,
                                           sid: str) -> None:
    """Present mode at 1280x720, at the figure moment and five steps spread over the run: no
    label on another or on another node, nothing past the figure's edge, no queue row on a
    node's name or on another row; the top bar's items apart. At the figure moment with
    "more" and the space-time strip open: the same. The top bar at 800x600 and 1024x768, in
    present and normal mode."""
    out = screenshots / "present"
    s = present_sweep(page, live_server, out, sid, (1280, 720), PRESENT_NOT_YET, "")
    # back at the figure moment, "more" and the space-time strip open
    page.evaluate("k => window.allocscope.act.goto(k)", s["step"])
    page.click("#btn-more")
    page.click("#btn-spacetime")
    page.wait_for_selector("#spacetime .lane text")
    assert page.evaluate(QUIET_JS, 720)       # refitted to the smaller view and drawn
    assert page.evaluate("() => document.body.dataset.step") == str(s["step"])
    shoot(page, out / f"{sid}-1280x720-more-spacetime.png")
    expect_clean(sid, page.evaluate(PRESENT_CHECKS_JS), MORE_SPACETIME_NOT_YET,
                 "in present mode with more and space-time open")
    # smaller projectors: the top bar, and the controls (with "more" open) in two rows at most:
    # they wrapped to three at 1024x768 and four at 800x600, the figure 56 px high there
    bars, rows = {}, {}
    for w, h in ((800, 600), (1024, 768)):
        page.set_viewport_size({"width": w, "height": h})
        if found := page.evaluate(TOPBAR_BOTH_MODES_JS):
            bars[f"{w}x{h}"] = found
        rows[f"{w}x{h}"] = page.evaluate(CONTROL_ROWS_JS)
    shoot(page, out / f"{sid}-1024x768.png")
    assert bars == {}, f"{sid}: the top bar's items on one another {bars}"
    assert max(rows.values()) <= 2, f"{sid}: the controls wrap to {rows} rows with more open"


@pytest.mark.parametrize("sid", SCENARIOS)
def test_present_mode_reads_on_an_older_projector(page: Any, live_server: str, screenshots: Path,
                                                  sid: str) -> None:
    """Present mode at 1024x768, at the figure moment and five steps spread over the run: the
    checks of the 1280x720 sweep (labels, nodes, edges, queue rows, the top bar)."""
    present_sweep(page, live_server, screenshots / "present", sid, (1024, 768),
                  PRESENT_1024_NOT_YET, "-figure")


# The tree's counters box and the room either side of the drawing, in present mode: the box's
# left edge from the figure's (px), and the empty band right of the drawing (the nodes and
# their RSet rows).
TREE_MARGINS_JS = """() => {
  const v = document.getElementById('view').getBoundingClientRect();
  const c = document.querySelector('#view .counters').getBoundingClientRect();
  const rs = [...document.querySelectorAll('#view .layer.nodes > g, #view .layer.queues > g')]
    .map((g) => g.getBoundingClientRect()).filter((r) => r.width > 0);
  return {box: c.left - v.left, right: v.right - Math.max(...rs.map((r) => r.right))};
}"""


@pytest.mark.parametrize("sid", ["kout-random", "kout-chaos", "kout-fig2"])
def test_present_mode_tree_keeps_a_margin_and_no_empty_band(page: Any, live_server: str,
                                                            screenshots: Path, sid: str) -> None:
    """Present mode at 1280x720, the figure moment: the counters ("tokens / 3-out-of-4 / ResT:
    4/4 ...") stand clear of the figure's left edge (they touched it: 0-3 px), and the tree
    leaves no wide empty band on its right (116-120 px were kept there for RSet rows that
    mostly go elsewhere: kout-random, kout-chaos)."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_viewer(page, live_server, f"/sim/{sid}?present=1")
    page.evaluate(SETTLED_JS)
    shoot(page, screenshots / "present" / f"{sid}-1280x720-margins.png")
    m = page.evaluate(TREE_MARGINS_JS)
    assert m["box"] >= 8, f"{sid}: the counters {m['box']:.0f} px from the figure's edge"
    assert m["right"] <= 80, f"{sid}: {m['right']:.0f} px empty right of the tree"


# The figure's width and what of the side panel does not fit it (its tabs' labels cut, an
# event's text wider than its button, the page scrolling sideways).
SIDE_800_JS = """() => {
  const out = {figure: Math.round(document.getElementById('view').getBoundingClientRect().width), cut: []};
  for (const e of document.querySelectorAll('#side .tab, #side .ev')) {
    if (e.offsetParent && e.scrollWidth > e.clientWidth + 1) out.cut.push(e.textContent.trim());
  }
  if (document.documentElement.scrollWidth > innerWidth) out.cut.push('the page scrolls sideways');
  return out;
}"""


AT_800 = [(sid, "present") for sid in ("kout-random", "datta-fig3")] + \
    [(sid, "normal") for sid in ("kout-random", "datta-fig3", "coterie-fig1", "game-locality-chain")]


@pytest.mark.parametrize("sid,mode", AT_800)
def test_a_800x600_projector_gives_the_figure_the_room(page: Any, live_server: str,
                                                       screenshots: Path, sid: str,
                                                       mode: str) -> None:
    """At 800x600 the figure was 400 px wide beside a 400 px side panel in present mode (460
    beside 340 in normal mode), so every layout drew it as a phone's; the side panel narrows
    there and the figure gets 600 px or more (a projector's layout), the panel's tabs and
    events still whole. In normal mode (a small projector, not switched to present mode) the
    figure moment also passes the present sweep's checks and the controls take two rows, not
    three (the figure was 202 px high with the space-time strip)."""
    page.set_viewport_size({"width": 800, "height": 600})
    open_viewer(page, live_server, f"/sim/{sid}" + ("?present=1" if mode == "present" else ""))
    page.evaluate(SETTLED_JS)
    shoot(page, screenshots / "present" / (f"{sid}-800x600" + ("-normal" if mode == "normal"
                                                                 else "") + ".png"))
    m = page.evaluate(SIDE_800_JS)
    assert m["figure"] >= 600 and m["cut"] == [], f"{sid} at 800x600, {mode} mode: {m}"
    if mode == "normal":
        assert page.evaluate(PRESENT_CHECKS_JS) == [], f"{sid} at 800x600, normal mode"
        assert page.evaluate(CONTROL_ROWS_JS) <= 2, f"{sid} at 800x600: the controls wrap to 3 rows"


# Each queue row drawn in the figure (not the queue table) beside its node: its box at most
# 40 px from its node's circle, and no other node's nearer, unless its name says whose it is
# ("p12's RSet": then up to 60 px, under the node's own lines: kout-chaos at 1024x768, p3's
# row under "2 ResT"). (A row between two rows of nodes may be nearer another node:
# kout-random at 1024x768, p12's row between p3 and p7, at 0 px from p3 and 5 from p12.)
ROWS_BESIDE_JS = """() => {
  const nodes = new Map();
  for (const g of document.querySelectorAll('#view .layer.nodes > g[data-id]')) {
    const b = (g.querySelector('circle, rect, path') || g).getBoundingClientRect();
    nodes.set(g.dataset.id, {x: b.left + b.width / 2, y: b.top + b.height / 2, r: b.width / 2});
  }
  const out = [];
  for (const g of document.querySelectorAll('#view .layer.queues > g.queue:not(.qrow)')) {
    const node = String(g.__key).split('|')[0], own = nodes.get(node);
    if (!own) continue;
    const b = g.getBoundingClientRect();
    const gap = (n) => Math.max(0, Math.hypot(Math.max(b.left - n.x, 0, n.x - b.right),
                                              Math.max(b.top - n.y, 0, n.y - b.bottom)) - n.r);
    const d = gap(own), says = ((g.querySelector('.qname') || {}).textContent || '').includes(node);
    if (d > (says ? 60 : 40)) out.push([node, `${Math.round(d)} px from it`]);
    for (const [id, n] of nodes) {
      if (id !== node && gap(n) < d && !says) out.push([node, `nearer ${id}`, Math.round(gap(n)), Math.round(d)]);
    }
  }
  return out;
}"""


# Measured, not hidden (strict). (ui11: kout-chaos in present mode at 1024x768, step 28: eight
# tokens about p3, and its row went unnamed between p3 and p5, 32 px from p3 and 29 from p5;
# ui12: "p3's RSet" under p3 was 10 px past the margin, and now moves left to end there.)
BESIDE_NOT_YET: set[tuple[str, str]] = set()


@pytest.mark.parametrize("sid", ["kout-fig3", "kout-random", "kout-chaos"])
def test_a_tree_rows_stand_beside_their_node(page: Any, live_server: str, sid: str) -> None:
    """At 1280x720 and 1024x768, in normal and present mode, at the figure moment and five
    steps spread over the run: every RSet row near its own node and nearer it than any other,
    or named for it."""
    found = {}
    for w, h in ((1280, 720), (1024, 768)):
        for mode in ("", "?present=1"):
            page.set_viewport_size({"width": w, "height": h})
            s = open_viewer(page, live_server, f"/sim/{sid}{mode}")
            page.evaluate(SETTLED_JS)
            f = sweep(page, sample_steps(s["step"], s["total"]), ROWS_BESIDE_JS, settle=True,
                      always_go=False)
            if (sid, f"{w}x{h}{mode}") in BESIDE_NOT_YET:
                assert f, f"{sid} at {w}x{h}{mode} is clean now: take it off BESIDE_NOT_YET"
            elif f:
                found[f"{w}x{h}{mode}"] = f
    assert found == {}, f"{sid}: RSet rows away from their node {found}"


# Normal mode at the smaller projectors' sizes (no sweep covered them: only the figure moment
# at 800x600 was tested): kout-fig3 at 800x600, step 10, had the in-flight PushT star on r's
# detail lines, and kout-random at 1024x768, step 113, the ctrl token on p12's RSet row.
# Measured, not hidden (strict): (scenario, size) pairs still failing. (ui13: kout-random at
# 800x600, the figure 610 x 253 px with the space-time strip, had queue rows on nodes' names at
# steps 48, 80 and 113, p8's row on p2, p12's on p10: a tree whose levels cannot stand a row
# apart there lists its rows under the counters.)
SMALL_NORMAL_NOT_YET: set[tuple[str, str]] = set()


@pytest.mark.parametrize("sid", ["kout-fig3", "kout-fig2", "kout-chaos", "kout-random"])
def test_normal_mode_trees_at_small_projectors_keep_messages_off_text(page: Any, live_server: str,
                                                                      sid: str) -> None:
    """At 800x600 and 1024x768 in normal mode, at the figure moment, five steps spread over
    the run (and kout-random's step 113): the present sweep's checks, which see a message's
    shape or label on a node's detail lines and on queue rows."""
    found = {}
    for w, h in ((800, 600), (1024, 768)):
        page.set_viewport_size({"width": w, "height": h})
        s = open_viewer(page, live_server, f"/sim/{sid}")
        page.evaluate(SETTLED_JS)
        steps = sample_steps(s["step"], s["total"]) + ([113] if sid == "kout-random" else [])
        f = sweep(page, steps, PRESENT_CHECKS_JS, settle=True, always_go=False)
        if (sid, f"{w}x{h}") in SMALL_NORMAL_NOT_YET:
            assert f, f"{sid} at {w}x{h} is clean now: take it off SMALL_NORMAL_NOT_YET"
        elif f:
            found[f"{w}x{h}"] = f
    assert found == {}, f"{sid}: labels or messages on text {found}"


LISTED_JS = """() => ({
  rows: document.querySelectorAll('#view .layer.queues > g').length,
  counters: [...document.querySelectorAll('#view .counters text')].map((t) => t.textContent),
})"""


def test_a_dense_tree_in_a_short_figure_lists_its_rows_under_the_counters(page: Any, live_server: str) -> None:
    """kout-random at 800x600 in normal mode (the figure 610 x 253 px with the space-time
    strip): its five levels stand too close for a row of chips between them, so the RSet rows
    are lines under the counters, none round the nodes; at 1024x768 (the counters under the
    tree, rows stretched apart) and for kout-fig3's two levels the rows stay by their nodes."""
    page.set_viewport_size({"width": 800, "height": 600})
    open_viewer(page, live_server, "/sim/kout-random")
    page.evaluate("k => window.allocscope.act.goto(k)", 113)
    page.evaluate(SETTLED_JS)
    got = page.evaluate(LISTED_JS)
    assert got["rows"] == 0 and "RSet" in got["counters"] and "p12: p2 p2" in got["counters"], got
    page.set_viewport_size({"width": 1024, "height": 768})
    page.evaluate(SETTLED_JS)
    got = page.evaluate(LISTED_JS)
    assert got["rows"] > 0 and "RSet" not in got["counters"], got
    page.set_viewport_size({"width": 800, "height": 600})
    open_viewer(page, live_server, "/sim/kout-fig3")
    page.evaluate("k => window.allocscope.act.goto(k)", 10)
    page.evaluate(SETTLED_JS)
    got = page.evaluate(LISTED_JS)
    assert got["rows"] > 0 and "RSet" not in got["counters"], got


def test_a_listed_rset_row_is_a_button_for_its_node(page: Any, live_server: str,
                                                    screenshots: Path) -> None:
    """kout-chaos at 800x600 in normal mode, step 28: its RSet rows are listed under the
    counters ("p2: p1", "p3: p2 p5"), away from their nodes, and were plain text that did
    nothing on a click. A listed row does what its node does (the node's handler): a click
    inspects p2; Enter on the focused row of p3 inspects p3, Space on it again lets it go; it
    says so (a button, focusable, a pointer, a tooltip naming its node)."""
    page.set_viewport_size({"width": 800, "height": 600})
    open_viewer(page, live_server, "/sim/kout-chaos")
    page.evaluate("k => window.allocscope.act.goto(k)", 28)
    page.wait_for_function("() => document.body.dataset.step === '28'")
    page.evaluate(SETTLED_JS)
    rows = page.locator("#view .counters .listed-row")
    assert rows.count() == 2, page.evaluate(LISTED_JS)
    p2, p3 = (page.locator(f"#view .counters .listed-row[data-node='{n}']") for n in ("p2", "p3"))
    assert p2.text_content().startswith("p2: p1") and p3.text_content().startswith("p3: p2 p5")
    assert (p3.get_attribute("role"), p3.get_attribute("tabindex")) == ("button", "0")
    assert "click to inspect p3" in p3.locator("title").text_content()
    assert p3.evaluate("g => getComputedStyle(g).cursor") == "pointer"
    selected = "() => window.allocscope.ui.selected"
    title = "() => (document.querySelector('#inspector .insp-title') || {}).textContent || ''"
    p2.locator("text").click()
    page.wait_for_function(f"() => ({selected})() === 'p2' && ({title})().startsWith('p2')")
    shoot(page, screenshots / "present" / "kout-chaos-800x600-listed-row-clicked.png")
    p3.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => ({selected})() === 'p3' && ({title})().startsWith('p3')")
    p3.focus()   # (again: a redraw of the counters replaces the row's element)
    page.keyboard.press(" ")
    page.wait_for_function(f"() => ({selected})() === null")
