"""Rooms in a real browser (Playwright on Debian's chromium): one teacher and three students.

The class follows steps, play, a branch (back, then a different event) and a lesson chapter; one
student forks, explores and rejoins; a predict round tallies three answers (two given with the
answer buttons, one by clicking the message on the figure); a student trying to drive gets an
error frame and nothing changes anywhere.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from .conftest import CHROMIUM_ARGS, VIEWPORT  # noqa: F401 - the browser fixtures live there
from .shots import shoot

pytestmark = pytest.mark.browser

STATE = """() => { const m = window.allocscope.model;
  return {step: m.step, total: m.total, hash: m.stateHash, playing: m.playing,
          enabled: m.enabled.map(e => e.id),
          trace: m.history.filter(r => r.step <= m.total).map(r => r.event)}; }"""


def st(p: Any) -> dict[str, Any]:
    return p.evaluate(STATE)


def new_page(browser: Any, errors: list[str]) -> Any:
    ctx = browser.new_context(viewport=VIEWPORT)
    p = ctx.new_page()
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.set_default_timeout(15_000)
    return p


def same_as(students: list[Any], teacher: Any) -> None:
    """Every student shows the teacher's step, timeline and state hash."""
    t = st(teacher)
    for s in students:
        s.wait_for_function(
            "([k, h, n]) => { const m = window.allocscope.model; "
            "return m.step === k && m.stateHash === h && m.total === n; }",
            arg=[t["step"], t["hash"], t["total"]])


def start_room_from(teacher: Any) -> str:
    """Click "start a room" on an open viewer; wait until the teacher drives; the join code."""
    teacher.click("#btn-room")
    teacher.wait_for_url(re.compile(r"/r/[A-Z0-9]{6}/teach$"))
    code = teacher.url.rsplit("/", 2)[-2]
    teacher.wait_for_function("() => document.body.dataset.roomMode === 'drive' && "
                              "document.body.dataset.ready === '1'")
    return code


def join(browser: Any, errors: list[str], live_server: str, code: str, n: int,
         typed: int = 0) -> list[Any]:
    """n students follow: the first ``typed`` type the code into the join box at /r (as a
    student in class does), the others open the join link."""
    students = []
    for i in range(n):
        s = new_page(browser, errors)
        if i < typed:
            type_the_code(s, live_server, code)
        else:
            s.goto(f"{live_server}/r/{code}")
        s.wait_for_function("() => document.body.dataset.roomMode === 'follow' && "
                            "document.body.dataset.ready === '1'")
        students.append(s)
    return students


def type_the_code(s: Any, live_server: str, code: str) -> None:
    """The join box starts empty, with no example code inside it that reads like one already
    entered (a placeholder): the example is a hint line under it; a typed code joins."""
    s.goto(f"{live_server}/r")
    box = "#room-code-input"
    assert s.input_value(box) == "" and s.get_attribute(box, "placeholder") is None
    hint = s.locator("#" + s.get_attribute(box, "aria-describedby"))
    assert hint.is_visible() and "K7QM2X" in hint.text_content()
    below = s.evaluate("""() => { const a = document.getElementById('room-code-input').getBoundingClientRect();
      const h = document.getElementById('room-code-hint').getBoundingClientRect();
      return h.top >= a.bottom; }""")
    assert below, "the hint is not under the box"
    s.fill(box, f"{code[:3].lower()} {code[3:].lower()}")
    s.keyboard.press("Enter")
    s.wait_for_url(f"**/r/{code}")


def test_teacher_and_three_students(browser: Any, live_server: str, screenshots: Any) -> None:
    errors: list[str] = []
    teacher = new_page(browser, errors)
    teacher.goto(f"{live_server}/sim/datta-fig3?variant=naive&schedule=&step=0")
    teacher.wait_for_function("() => document.body.dataset.ready === '1'")
    code = start_room_from(teacher)
    assert "key=" not in teacher.url            # the secret left the address bar

    students = join(browser, errors, live_server, code, 3, typed=1)
    teacher.wait_for_function("() => document.body.dataset.roomStudents === '3'")
    assert teacher.inner_text("#room-count") == "3 students"
    same_as(students, teacher)
    # a follower has no greyed "check" alone on a second row: the controls are one row high
    assert not students[0].is_visible("#btn-check")
    assert students[0].locator("#controls").bounding_box()["height"] < 56

    # follow through steps
    teacher.select_option("#scheduler", "oldest")
    teacher.wait_for_function("() => window.allocscope.model.scheduler.kind === 'oldest'")
    for _ in range(3):
        k = st(teacher)["step"]
        teacher.click("#btn-step")
        teacher.wait_for_function(f"() => window.allocscope.model.step === {k + 1}")
    same_as(students, teacher)

    # play, then pause: everyone ends where the teacher stopped
    teacher.evaluate("() => window.allocscope.act.speed(20)")
    k0 = st(teacher)["step"]
    teacher.click("#btn-play")
    students[1].wait_for_function(f"() => window.allocscope.model.step >= {k0 + 3}")
    teacher.click("#btn-play")
    teacher.wait_for_function("() => !window.allocscope.model.playing")
    same_as(students, teacher)

    # a branch: two steps back, then an event other than the recorded one
    played = st(teacher)["trace"]
    for _ in range(2):
        k = st(teacher)["step"]
        teacher.click("#btn-back")
        teacher.wait_for_function(f"() => window.allocscope.model.step === {k - 1}")
    t = st(teacher)
    recorded = played[t["step"]]
    other = next(e for e in t["enabled"] if e != recorded)
    teacher.evaluate(f"() => window.allocscope.act.deliver({other!r})")
    teacher.wait_for_function(f"() => window.allocscope.model.event === {other!r}")
    same_as(students, teacher)
    assert st(students[2])["trace"][-1] == other
    assert st(students[2])["total"] == t["step"] + 1      # the recorded future was left

    # a lesson chapter (the hook a lesson player calls)
    teacher.evaluate("() => window.allocscope.room.chapter(2, 'The cycle closes')")
    for s in students:
        s.wait_for_function("() => document.body.dataset.roomChapter === '2'")
        assert "chapter 3: The cycle closes" in s.inner_text("#room-mode")

    # a student trying to drive: an error frame, and nothing changes anywhere
    before = st(teacher)
    msg = students[0].evaluate(
        "() => window.allocscope.socket.send({op: 'step'}).then(() => 'accepted', e => e.message)")
    assert "only the teacher drives" in msg
    msg = students[0].evaluate(
        "() => window.allocscope.socket.send({op: 'ask', kind: 'deadlock'})"
        ".then(() => 'accepted', e => e.message)")
    assert "only the teacher" in msg
    students[0].wait_for_timeout(300)
    assert st(teacher) == before
    assert st(students[0])["hash"] == before["hash"]

    # the teacher loads a scenario afresh (the recorded Fig. 3 run): the class follows
    k = teacher.evaluate("() => window.allocscope.socket.send({op: 'load', scenario: "
                         "'datta-fig3', variant: 'naive'}).then(f => f.step)")
    teacher.wait_for_function(f"() => window.allocscope.model.event === null && "
                              f"window.allocscope.model.step === {k}")
    same_as(students, teacher)

    # a predict round: 2 + 1 answers, tallied live on the teacher's page
    teacher.select_option("#room-ask", "next-delivery")
    for s in students:
        s.wait_for_selector(".room-option")
    options = [b.get_attribute("data-choice") for b in students[0].query_selector_all(".room-option")]
    assert len(options) >= 2, options
    a, b = options[0], options[1]
    students[0].click(f".room-option[data-choice='{a}']")
    students[1].click(f".room-option[data-choice='{a}']")
    students[2].click(f"#view g.msg[data-id='{b}'] .msg-hit", force=True)   # on the figure
    teacher.wait_for_function(
        f"() => {{ const g = document.querySelector('#room-card .bar[data-id=\"{a}\"]'); "
        f"const h = document.querySelector('#room-card .bar[data-id=\"{b}\"]'); "
        f"return g && h && g.dataset.n === '2' && h.dataset.n === '1'; }}")
    assert students[0].query_selector("#room-card .room-chart") is None   # no tally before reveal
    shoot(teacher, screenshots / "room-teacher-tally.png")
    teacher.click(".room-reveal")
    students[2].wait_for_selector(f"#room-card .bar.mine[data-id='{b}']")
    assert students[2].get_attribute(f"#room-card .bar[data-id='{a}']", "data-n") == "2"
    shoot(students[2], screenshots / "room-student-revealed.png")

    # one student forks, explores, rejoins
    fork = students[1]
    fork.click(".room-fork")
    fork.wait_for_function("() => document.body.dataset.roomMode === 'fork'")
    assert fork.is_enabled("#btn-check") and fork.is_visible("#btn-check")   # exploring: it may
    k = st(fork)["step"]
    fork.click("#btn-step")
    fork.wait_for_function(f"() => window.allocscope.model.step === {k + 1}")
    fork.click("#btn-step")
    fork.wait_for_function(f"() => window.allocscope.model.step === {k + 2}")
    assert st(teacher)["step"] == k and st(students[0])["step"] == k
    shoot(fork, screenshots / "room-student-forked.png")
    teacher.click("#btn-step")                   # the class moves on meanwhile
    teacher.wait_for_function(f"() => window.allocscope.model.step === {k + 1}")
    fork.click(".room-rejoin")
    fork.wait_for_function("() => document.body.dataset.roomMode === 'follow'")
    same_as(students, teacher)
    shoot(students[0], screenshots / "room-student-following.png")
    assert not errors, errors


def test_a_room_follows_a_lesson(browser: Any, live_server: str, screenshots: Any) -> None:
    """The teacher walks a lesson's chapters; the class sees each chapter's state and words, and
    answers the chapter's own prediction by clicking a process on the figure."""
    import json
    import urllib.request
    errors: list[str] = []
    req = urllib.request.Request(f"{live_server}/api/rooms", method="POST",
                                 data=json.dumps({"lesson": "coterie-fig1-printers"}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        room = json.loads(r.read())
    teacher = new_page(browser, errors)
    teacher.goto(room["teacher_url"])
    teacher.wait_for_function("() => document.body.dataset.roomMode === 'drive' && "
                              "document.body.dataset.ready === '1'")
    student = new_page(browser, errors)
    student.goto(room["join_url"])
    student.wait_for_function("() => document.body.dataset.roomChapter === '0'")
    for k in (1, 2):
        teacher.click(".room-ch-next")
        student.wait_for_function(f"() => document.body.dataset.roomChapter === '{k}'")
    same_as([student], teacher)
    assert "Chapter 3 of 4: c must wait for y" in student.inner_text("#room-card")
    teacher.click(".room-ch-ask")
    student.wait_for_selector(".room-option[data-choice='c']")
    student.dispatch_event("#view g[data-id='c']", "click")     # the answer, on the figure
    teacher.wait_for_function("() => document.querySelector(\"#room-card .bar[data-id='c']\")"
                              "?.dataset.n === '1'")
    teacher.click(".room-reveal")
    student.wait_for_selector("#room-card .bar.right.mine[data-id='c']")
    assert "UNLOCK" in student.inner_text("#room-card .room-explain")
    shoot(teacher, screenshots / "room-lesson-teacher.png")
    shoot(student, screenshots / "room-lesson-student.png")
    assert not errors, errors


def test_a_class_experiment(browser: Any, live_server: str, screenshots: Any) -> None:
    """Issue 19 §5: how often does `naive` deadlock on Fig. 3? The teacher opens an experiment;
    two students run it with their own random seed, one submits the outcome of their own
    exploration; the histogram on the teacher's page (and the students') counts exactly the
    outcomes those seeds and that exploration give. The teacher's speed slider is mirrored."""
    from protocols import runner
    from protocols.scenario import gallery
    errors: list[str] = []
    teacher = new_page(browser, errors)
    teacher.goto(f"{live_server}/sim/datta-fig3?variant=naive&schedule=&step=0")
    teacher.wait_for_function("() => document.body.dataset.ready === '1'")
    code = start_room_from(teacher)
    students = join(browser, errors, live_server, code, 3)

    # the teacher's play speed shows on the followers' sliders
    teacher.evaluate("() => window.allocscope.act.speed(50)")
    shown = teacher.inner_text("#speed-out")
    for s in students:
        s.wait_for_function("(t) => document.getElementById('speed-out').textContent === t",
                            arg=shown)
    assert shown == "50/s" and students[0].input_value("#speed") == teacher.input_value("#speed")

    # from the start (the page opened at the figure's moment): every run is a whole run
    teacher.evaluate("() => window.allocscope.act.goto(0)")
    teacher.wait_for_function("() => window.allocscope.model.step === 0")
    same_as(students, teacher)
    teacher.click(".room-exp")
    for s in students:
        s.wait_for_selector(".room-run")
    runners, explorer = students[:2], students[2]
    for s in runners:
        s.click(".room-run")
    runs = []
    for s in runners:
        s.wait_for_function("() => { const r = window.allocscope.room.info().my_run; "
                            "return r && !r.running; }", timeout=30_000)
        runs.append(s.evaluate("() => window.allocscope.room.info().my_run"))
        assert f"seed {runs[-1]['seed']}" in s.inner_text(".room-mine")
    # the third explores on their own (two steps of the oldest-first scheduler) and submits
    explorer.click(".room-fork")
    explorer.wait_for_function("() => document.body.dataset.roomMode === 'fork'")
    explorer.select_option("#scheduler", "oldest")
    explorer.wait_for_function("() => window.allocscope.model.scheduler.kind === 'oldest'")
    for k in (1, 2):
        explorer.click("#btn-step")
        explorer.wait_for_function(f"() => window.allocscope.model.step === {k}")
    explorer.click(".room-submit")
    explorer.wait_for_function("() => { const r = window.allocscope.room.info().my_run; "
                               "return r && r.outcome; }")
    own = explorer.evaluate("() => window.allocscope.room.info().my_run")
    assert (own["outcome"], own["steps"], own["seed"]) == ("incomplete", 2, None)

    # what those seeds give, computed here without the server
    sc = gallery()["datta-fig3"]
    expect = {"all-served": 0, "deadlock": 0, "livelock": 0, "violation": 0, "incomplete": 1}
    for r in runs:
        rep = runner.run(sc, "naive", steps=5000, scheduler="random", seed=r["seed"])
        assert (r["outcome"], r["steps"]) == (rep["outcome"], rep["steps"])
        expect[rep["outcome"]] += 1
    bars = ("() => Object.fromEntries([...document.querySelectorAll("
            "'#room-card .room-exp-box .bar')].map(g => [g.dataset.id, +g.dataset.n]))")
    for page in (teacher, runners[0]):
        page.wait_for_function(f"(e) => JSON.stringify(({bars})()) === JSON.stringify(e)",
                               arg=expect)
    foot = teacher.inner_text("#room-card .room-exp-box .room-foot")
    steps = sorted([r["steps"] for r in runs] + [2])
    assert foot.startswith("3 runs") and f"min {steps[0]}" in foot and f"max {steps[-1]}" in foot
    shoot(teacher, screenshots / "room-experiment-teacher.png")
    shoot(runners[0], screenshots / "room-experiment-student.png")

    # closing it: the heading says so and nobody can run any more
    teacher.click(".room-exp")
    runners[1].wait_for_function("() => document.querySelector('#room-card .room-exp-box h3')"
                                 "?.textContent === 'Class experiment (closed)'")
    assert runners[1].query_selector(".room-run") is None
    assert not errors, errors


def test_the_room_page_gives_the_figure_room(browser: Any, live_server: str,
                                             screenshots: Any) -> None:
    """At 1280x720 under the room bar, a three-resource ring (Fig. 3) is drawn at least as
    large as on the plain viewer, with no two labels overlapping, on the teacher's page and a
    follower's, at the figure's moment and four other steps; the space-time diagram keeps a
    lane for each of the six processes."""
    from .test_browser_lesson import OVERLAPS_JS
    errors: list[str] = []
    side = ("() => { const a = document.querySelector('#view .node[data-id=\"R2\"]')"
            ".getBoundingClientRect(), b = document.querySelector('#view .node[data-id=\"R3\"]')"
            ".getBoundingClientRect(); return Math.hypot(a.x - b.x, a.y - b.y); }")
    teacher = new_page(browser, errors)
    teacher.goto(f"{live_server}/sim/datta-fig3")
    teacher.wait_for_function("() => document.body.dataset.ready === '1'")
    teacher.wait_for_timeout(300)
    plain = teacher.evaluate(side)
    code = start_room_from(teacher)
    [student] = join(browser, errors, live_server, code, 1)
    here = st(teacher)["step"]
    for k in (here, 3, 9, 21, 27):
        teacher.evaluate("k => window.allocscope.act.goto(k)", k)
        same_as([student], teacher)
        for page in (teacher, student):
            page.wait_for_timeout(200)
            assert page.evaluate(OVERLAPS_JS) == [], (k, page.url)
            assert page.evaluate(side) >= plain, (k, page.url, plain)
        if k == here:
            # the legend beside the figure lists what the figure uses, not two items and
            # "+11 more" (the two-row clamp of a legend under the figure took it for rows)
            shown = teacher.evaluate("""() => { const b = document.getElementById('legend');
              const r = b.getBoundingClientRect();
              return {more: !!b.querySelector('.lg-more'), all: b.querySelectorAll('.lg').length,
                      seen: [...b.querySelectorAll('.lg')].filter((i) => { const q = i.getBoundingClientRect();
                        return q.height > 0 && q.top >= r.top - 1 && q.bottom <= r.bottom + 1; }).length}; }""")
            assert not shown["more"] and shown["seen"] >= min(8, shown["all"]), shown
            shoot(teacher, screenshots / "room-ring-teacher.png")
            shoot(student, screenshots / "room-ring-student.png")
    lanes = student.evaluate("() => [...document.querySelectorAll('#spacetime .lane text')]"
                             ".map(t => t.textContent)")
    assert sorted(lanes) == ["C1", "C2", "C3", "R1", "R2", "R3"], lanes
    assert not errors, errors
