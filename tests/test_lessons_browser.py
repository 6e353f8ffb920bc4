"""Lessons in a real browser: every prediction answered right and wrong, every try-it solved and
missed, "explore from here" into the viewer at the chapter's exact state and back; the erratum
pages' replay links; screenshots of the first and a middle chapter of every lesson at 1280×800
and in present mode at 1920×1080 (test-output/screenshots/lessons/)."""

from __future__ import annotations

from typing import Any

import pytest

from protocols.lessons import check as lcheck
from protocols.lessons.check import place, step_of

from .shots import SETTLED_JS, shoot

pytestmark = pytest.mark.browser

LESSONS = lcheck.all_lessons()
PREDICTIONS = [(lid, c.id) for lid, x in LESSONS.items() for c in x.chapters if c.prediction]
TRIES = [(lid, c.id) for lid, x in LESSONS.items() for c in x.chapters if c.try_it]


def _chapter(lesson_id: str, chapter_id: str):
    lesson = LESSONS[lesson_id]
    return lesson, next(c for c in lesson.chapters if c.id == chapter_id)


def _open(page: Any, base: str, lesson_id: str, chapter_id: str, step: int) -> None:
    page.goto(f"{base}/lesson/{lesson_id}#{chapter_id}")
    page.wait_for_function(
        "([c, s]) => document.body.dataset.chapter === c && document.body.dataset.step === String(s)"
        " && document.body.dataset.ready === '1'", arg=[chapter_id, step])


def _answer(page: Any, kind: str, value: str) -> None:
    if kind == "choice":
        page.click(f".choice[data-choice='{value}']")
    elif kind == "node":
        page.locator(f"#view g.node[data-id='{value}'] .body").click()   # its shape, not the group's centre
    else:
        page.locator(f"#view g.msg[data-id='{value}'] .msg-shape").click()


COLOURS_JS = """() => Object.fromEntries([...document.querySelectorAll('#view .msg')].map((g) => [
  g.dataset.type, g.querySelector('.msg-shape').getAttribute('fill')]))"""


def _explore_and_return(page: Any, base: str, lesson_id: str, ch: Any, step: int) -> None:
    """Explore from here, then come back by the viewer's visible "back to lesson" link."""
    lesson = LESSONS[lesson_id]
    href = page.get_attribute("#explore", "href")
    assert href == f"{place(lesson, ch).link()}&lesson={lesson_id}&chapter={ch.id}"
    in_lesson = page.evaluate(COLOURS_JS)
    page.click("#explore")
    page.wait_for_url(f"{base}/sim/**")
    page.wait_for_function("s => document.body.dataset.ready === '1' && "
                           "document.body.dataset.step === String(s)", arg=step)
    # a message type has the same colour in the lesson as in the viewer (the lesson drew
    # game-conflict's Info black, the viewer light blue)
    in_viewer = page.evaluate(COLOURS_JS)
    both = set(in_lesson) & set(in_viewer)
    assert {t: in_lesson[t] for t in both} == {t: in_viewer[t] for t in both}
    back = page.locator("#back-to-lesson")
    assert back.is_visible()
    number = lesson.chapters.index(ch) + 1
    assert back.text_content() == f"◀ back to lesson (chapter {number})"
    back.click()
    page.wait_for_url(f"{base}/lesson/{lesson_id}#{ch.id}")
    page.wait_for_function("c => document.body.dataset.chapter === c", arg=ch.id)
    assert page.text_content("#ch-title") == ch.title


@pytest.mark.parametrize("lesson_id, chapter_id", PREDICTIONS)
def test_prediction_wrong_right_explore_and_return(page: Any, live_server: str, lesson_id: str,
                                                   chapter_id: str) -> None:
    lesson, ch = _chapter(lesson_id, chapter_id)
    pr = ch.prediction
    page.set_default_timeout(30_000)       # long timelines (kout-chaos: 600 steps) replay on load
    right = lcheck.right_answers(lesson, ch)
    wrong = next(a for a in lcheck.candidates(lesson, ch) if a not in right)
    _open(page, live_server, lesson_id, chapter_id, step_of(lesson, ch))
    _answer(page, pr.answer_on, wrong)
    page.wait_for_selector("#ch-task[data-correct='false']")
    assert "the simulator says" in page.text_content("#ch-task .verdict")
    assert pr.explain[:40] in page.text_content("#ch-task .explain")
    reveal = lcheck.reveal(lesson, ch, right)
    page.click("#ch-task .reveal")
    page.wait_for_function("s => document.body.dataset.step === String(s)", arg=reveal["step"])
    # a second try needs a fresh start: progress lives in localStorage only
    page.evaluate("localStorage.clear()")
    page.reload()
    page.wait_for_function("s => document.body.dataset.ready === '1' && "
                           "document.body.dataset.step === String(s)", arg=step_of(lesson, ch))
    _answer(page, pr.answer_on, right[0])
    page.wait_for_selector("#ch-task[data-correct='true']")
    saved = page.evaluate(f"JSON.parse(localStorage.getItem('allocscope.lesson.{lesson_id}'))")
    assert saved["answers"][chapter_id]["correct"] is True
    _explore_and_return(page, live_server, lesson_id, ch, step_of(lesson, ch))
    page.wait_for_selector("#ch-task[data-correct='true']")   # the answer was kept


@pytest.mark.parametrize("lesson_id, chapter_id", TRIES)
def test_try_it_missed_solved_explore_and_return(page: Any, live_server: str, lesson_id: str,
                                                 chapter_id: str) -> None:
    page.set_default_timeout(30_000)       # the machine is shared: be patient, not flaky
    lesson, ch = _chapter(lesson_id, chapter_id)
    solution = list(ch.try_it.solution)
    _open(page, live_server, lesson_id, chapter_id, step_of(lesson, ch))
    page.wait_for_selector("#fig-events:not([hidden]) .ev")
    others = [e for e in page.eval_on_selector_all("#fig-events .ev", "bs => bs.map(b => b.dataset.event)")
              if e != solution[0] and not lcheck.try_goal(lesson, ch, [e])["holds"]]
    if others:                                   # a wrong move: the goal does not hold yet
        page.click(f"#fig-events .ev[data-event='{others[0]}']")
        page.wait_for_function("() => document.querySelector('#ch-task .try-status').textContent.includes('not yet')")
        assert page.get_attribute("#ch-task", "data-solved") == "false"
        page.click("#btn-undo")
        page.wait_for_function("s => document.body.dataset.step === String(s)", arg=step_of(lesson, ch))
    for k, eid in enumerate(solution, 1):
        page.click(f"#fig-events .ev[data-event='{eid}']")
        page.wait_for_function("s => document.body.dataset.step === String(s)", arg=step_of(lesson, ch) + k)
    page.wait_for_selector("#ch-task[data-solved='true']")
    _explore_and_return(page, live_server, lesson_id, ch, step_of(lesson, ch))


def test_a_late_answer_to_an_earlier_move_does_not_unsolve_the_task(page: Any,
                                                                    live_server: str) -> None:
    """Each move asks the server whether the goal holds; a busy server can answer out of order.
    The answer to the first of kout's two solving moves ("not yet") is held back until the
    second's ("done") is shown: the task stays solved (it read "not yet" before)."""
    lesson, ch = _chapter("kout-fig1-virtual-ring", "tour")
    first, second = ch.try_it.solution
    _open(page, live_server, lesson.id, ch.id, step_of(lesson, ch))
    page.wait_for_selector("#fig-events:not([hidden]) .ev")
    held = []
    page.route("**/try", lambda route: held.append(route) if not held else route.continue_())
    page.click(f"#fig-events .ev[data-event='{first}']")
    page.wait_for_function("s => document.body.dataset.step === String(s)", arg=step_of(lesson, ch) + 1)
    page.click(f"#fig-events .ev[data-event='{second}']")
    page.wait_for_selector("#ch-task[data-solved='true']")
    assert len(held) == 1 and held[0].request.post_data_json == {"events": [first]}
    with page.expect_event("requestfinished", lambda r: r is held[0].request):
        held[0].continue_()
    page.evaluate(SETTLED_JS)
    page.wait_for_timeout(200)                     # what the late answer would do, it has done
    assert page.get_attribute("#ch-task", "data-solved") == "true"
    assert "Done in 2 events" in page.text_content("#ch-task .try-status")


def test_navigation_keys_hash_and_index_marks(page: Any, live_server: str) -> None:
    lesson = LESSONS["datta-fig1-deadlock"]
    first, second = lesson.chapters[0], lesson.chapters[1]
    _open(page, live_server, lesson.id, first.id, step_of(lesson, first))
    assert page.is_disabled("#btn-prev")
    page.click("#btn-next")
    page.wait_for_function("([c, s]) => location.hash === '#' + c && "
                           "document.body.dataset.step === String(s)", arg=[second.id, step_of(lesson, second)])
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("c => document.body.dataset.chapter === c", arg=first.id)
    for _ in lesson.chapters:
        page.click("#btn-next")
    page.wait_for_url(f"{live_server}/lessons")
    assert page.text_content(f"[data-done='{lesson.id}']") == "✓ done"


def test_embed_mode_hides_the_chrome(page: Any, live_server: str) -> None:
    page.goto(f"{live_server}/lesson/kout-fig1-virtual-ring?embed=1#start")
    page.wait_for_function("() => document.body.dataset.ready === '1'")
    assert not page.is_visible(".topbar")
    assert page.is_visible("#btn-next") and page.is_visible("#view")


def test_erratum_page_replays_open_the_viewer(page: Any, live_server: str) -> None:
    page.goto(f"{live_server}/paper/datta_ring")
    entry = page.locator("[data-entry='D17']")
    assert "deadlock" in entry.locator("a.printed").text_content()
    entry.locator("a.printed").click()
    page.wait_for_url(f"{live_server}/sim/datta-prose-remote-unloop?variant=prose**")
    page.wait_for_function("() => document.body.dataset.ready === '1' && document.body.dataset.step === '16'")
    page.go_back()
    page.locator("[data-entry='D17'] a.repair").click()
    page.wait_for_url(f"{live_server}/sim/datta-prose-remote-unloop?variant=full**")
    page.wait_for_function("() => document.body.dataset.ready === '1' && document.body.dataset.step === '12'")


# A chapter is shown when its own load answered (``loaded`` ends in its step, cleared before
# each chapter) and the figure has drawn that step.
SHOWN_JS = ("([c, s]) => { const d = document.body.dataset; return d.chapter === c && d.ready === '1'"
            " && d.step === String(s) && (d.loaded || '').endsWith(':' + s); }")

# What a shown chapter has drawn, read after the two frames SETTLED_JS waits for (one round
# trip instead of four).
SEEN_JS = ("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r({"
           "nodes: document.querySelectorAll('#view g.node').length,"
           " title: (document.getElementById('ch-title') || {}).textContent,"
           " present: document.body.classList.contains('present')}))))")


@pytest.mark.slow
def test_every_lesson_opens_at_both_sizes(browser: Any, live_server: str, screenshots: Any) -> None:
    """One page per size, both driven at once (while one waits for the server, the other
    draws); each lesson is loaded once per page and its middle chapter is reached through the
    URL's #chapter (the player's own hashchange path, as a link to it does), not by a reload."""
    out = screenshots / "lessons"
    out.mkdir(exist_ok=True)
    pages = []
    for size, query, tag in (({"width": 1280, "height": 800}, "", "1280x800"),
                             ({"width": 1920, "height": 1080}, "?present=1", "present-1920x1080")):
        pg = browser.new_context(viewport=size).new_page()
        pg.set_default_timeout(30_000)
        pages.append((pg, query, tag))
    try:
        for lesson in LESSONS.values():
            first, middle = lesson.chapters[0], lesson.chapters[len(lesson.chapters) // 2]
            for ch in [first] if middle is first else [first, middle]:
                for pg, query, _tag in pages:      # start both, then wait for each
                    if ch is first:
                        pg.evaluate("u => { location.href = u; }",
                                    f"{live_server}/lesson/{lesson.id}{query}#{ch.id}")
                    else:
                        pg.evaluate("h => { const d = document.body.dataset; delete d.loaded; "
                                    "delete d.ready; location.hash = h; }", ch.id)
                for pg, query, tag in pages:
                    if ch is first:
                        pg.wait_for_url(lambda u, i=lesson.id: u.split("#")[0].split("?")[0]
                                        .endswith(f"/lesson/{i}"))
                    pg.wait_for_function(SHOWN_JS, arg=[ch.id, step_of(lesson, ch)])
                    seen = pg.evaluate(SEEN_JS)        # after the frames that drew it
                    assert seen["nodes"] >= 2
                    assert seen["title"] == ch.title
                    assert seen["present"] == bool(query)
                    shoot(pg, out / f"{lesson.id}--{ch.id}--{tag}.png")
    finally:
        for pg, _q, _t in pages:
            pg.context.close()


# On a phone, what a shown chapter's figure is: the view's box, the box of what it drew (nodes),
# the text section's box, and the page's width against the window's.
PHONE_FIGURE_JS = """() => {
  const box = (e) => { const r = e.getBoundingClientRect();
                       return {x: r.x, y: r.y, w: r.width, h: r.height, bottom: r.bottom}; };
  return {view: box(document.getElementById('view')),
          drawn: box(document.querySelector('#view .layer.nodes')),
          text: box(document.querySelector('.lesson-text')),
          scroll: [document.documentElement.scrollWidth, innerWidth]};
}"""


def test_a_phone_shows_each_chapter_s_figure_above_its_text(page: Any, live_server: str,
                                                           screenshots: Any) -> None:
    """Every chapter of every lesson at 390x844: the figure is as wide as the page, above the
    text (it was a column 50 px wide beside the text's 340), and what it draws fills it (at
    least 60 % of its width or height: datta-fig5-6's step 26 was a ring 134 px wide, its
    seekLoop labels on its nodes); no label on another, on another node or cut by the edge,
    except on the scenarios whose phone figure the viewer's test still lists as not clean."""
    from .test_browser_lesson import (
        CLIPPED_JS,
        NODE_OVERLAPS_JS,
        OVERLAPS_JS,
        PHONE_NOT_YET,
        SHAPE_ON_SHAPE_JS,
    )
    page.set_viewport_size({"width": 390, "height": 844})
    page.set_default_timeout(30_000)
    labels = (f"() => [...({OVERLAPS_JS})(), ...({NODE_OVERLAPS_JS})(), ...({CLIPPED_JS})(),"
              f" ...({SHAPE_ON_SHAPE_JS})()]")
    found: dict[str, Any] = {}
    for lesson in LESSONS.values():
        for i, ch in enumerate(lesson.chapters):
            if i == 0:
                page.goto(f"{live_server}/lesson/{lesson.id}#{ch.id}")
            else:      # the player's own hashchange path, as a link to the chapter takes
                page.evaluate("h => { const d = document.body.dataset; delete d.loaded; "
                              "delete d.ready; location.hash = h; }", ch.id)
            page.wait_for_function(SHOWN_JS, arg=[ch.id, step_of(lesson, ch)])
            page.evaluate(SETTLED_JS)
            where = f"{lesson.id}#{ch.id}"
            f = page.evaluate(PHONE_FIGURE_JS)
            view, drawn, txt = f["view"], f["drawn"], f["text"]
            assert view["w"] >= 370 and view["h"] >= 300, (where, view)
            assert txt["y"] >= view["bottom"] - 1, (where, "the text is not under the figure", f)
            assert drawn["w"] >= 0.6 * view["w"] or drawn["h"] >= 0.6 * view["h"], (where, f)
            assert f["scroll"][0] <= f["scroll"][1], (where, f["scroll"])
            if place(lesson, ch).scenario.id not in PHONE_NOT_YET:
                bad = page.evaluate(labels)
                if bad:
                    found[where] = bad[:4]
                elif where in CHAPTERS_PHONE_NOT_YET:
                    found[where] = "clean now: take it off CHAPTERS_PHONE_NOT_YET"
            if i == 0 and lesson.id in ("datta-fig5-6-reorganisation", "game-conflict"):
                shoot(page, screenshots / f"lesson-{lesson.id}-390x844.png", full_page=True)
    assert {w: f for w, f in found.items() if w not in CHAPTERS_PHONE_NOT_YET
            or isinstance(f, str)} == {}, found
    assert set(found) >= CHAPTERS_PHONE_NOT_YET, found


# Chapters whose phone figure still has labels on one another, measured, not hidden (strict).
# (ui9's round found the kout-printed-slips chapters pusher-guard and for-ever, at step 605 of
# kout-random as printed: fifteen processes in a 390 x 320 px figure, five levels 39 px apart,
# p8's RSet row on p14; ui14: a tree whose levels cannot stand a row apart lists its rows
# under the counters on a phone too, as ui13 did at 800x600.)
CHAPTERS_PHONE_NOT_YET: set[str] = set()


# The queue table beside a lesson's ring of three resources: its text size in screen px (the
# font size times the screen pixels per user unit), its right edge's distance from the figure's,
# and the ring's drawn width against the figure's.
TABLE_JS = """() => {
  const v = document.getElementById('view').getBoundingClientRect();
  const rows = [...document.querySelectorAll('#view .qrow')];
  const px = [...document.querySelectorAll('#view .qrow text')].filter((t) => t.textContent.trim())
    .map((t) => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a);
  return {rows: rows.length, px: px.length ? Math.min(...px) : null,
          margin: rows.length ? v.right - Math.max(...rows.map((g) => g.getBoundingClientRect().right)) : null,
          ring: document.querySelector('#view .layer.nodes').getBoundingClientRect().width, view: v.width};
}"""


def test_three_resource_lessons_table_reads_on_a_projector(page: Any, live_server: str,
                                                         screenshots: Any) -> None:
    """Every chapter of the lessons on rings of three resources at 1280x720: the queue table
    beside the ring is 13 px text or more (it was 11 px) and ends at least 16 px inside the
    figure (datta-fig5-6's ended 13 px from it, at x = 1267 of 1280), the ring at least 0.54 of
    the figure's width (it was 424 of 819 px in fig5-6's chapters, 0.52: the larger table must
    not cost the ring), and no label on another, on another node or cut by the edge."""
    from .test_browser_lesson import CLIPPED_JS, NODE_OVERLAPS_JS, OVERLAPS_JS
    page.set_viewport_size({"width": 1280, "height": 720})
    labels = f"() => [...({OVERLAPS_JS})(), ...({NODE_OVERLAPS_JS})(), ...({CLIPPED_JS})()]"
    tables = 0
    for lid in ("datta-fig3-seekloop", "datta-fig5-6-reorganisation", "datta-printed-done"):
        lesson = LESSONS[lid]
        for i, ch in enumerate(lesson.chapters):
            if i == 0:
                page.goto(f"{live_server}/lesson/{lid}#{ch.id}")
            else:
                page.evaluate("h => { const d = document.body.dataset; delete d.loaded; "
                              "delete d.ready; location.hash = h; }", ch.id)
            page.wait_for_function(SHOWN_JS, arg=[ch.id, step_of(lesson, ch)])
            page.evaluate(SETTLED_JS)
            t = page.evaluate(TABLE_JS)
            where = f"{lid}#{ch.id}"
            assert t["ring"] >= 0.54 * t["view"], (where, t)
            if t["rows"]:
                tables += 1
                assert t["px"] >= 13 and t["margin"] >= 16, (where, t)
            assert page.evaluate(labels) == [], where
            if (lid, ch.id) == ("datta-fig5-6-reorganisation", "tail"):
                shoot(page, screenshots / "lesson-datta-fig5-6-tail-1280x720.png")
    assert tables >= 8      # the chapters with a queue to show (not a vacuous pass)
