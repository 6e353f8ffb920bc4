"""Lessons: every claim, prediction and try-it of every lesson file holds on the real simulator;
bad lesson files get errors naming the problem; the predicate language never evaluates code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from protocols.lessons import check as lcheck
from protocols.lessons.evaluate import check as holds
from protocols.lessons.model import FILES, LessonError, load_file
from protocols.lessons.predicates import PredicateError, parse
from protocols.runner import build
from protocols.scenario import gallery

LESSONS = sorted(p.stem for p in FILES.glob("*.json"))


@pytest.mark.parametrize("lesson_id", LESSONS)
def test_every_claim_prediction_and_try_it_holds(lesson_id: str) -> None:
    assert lcheck.validate(load_file(FILES / f"{lesson_id}.json")) == []


def test_content_covers_the_four_papers() -> None:
    lessons = lcheck.all_lessons()
    assert len(lessons) >= 16
    by_paper = {p: [x for x in lessons.values() if x.protocol == p]
                for p in ("datta_ring", "kout_tree", "coterie", "task_game")}
    assert all(by_paper.values()), {p: len(v) for p, v in by_paper.items()}
    assert sum(1 for x in lessons.values() for c in x.chapters if c.prediction) >= 10
    assert sum(1 for x in lessons.values() for c in x.chapters if c.try_it) >= 7


def _sim(sid: str, variant: str, schedule: list[str]):
    sim = build(gallery()[sid], variant)
    sim.replay(schedule)
    return sim


def test_predicates_read_the_simulator() -> None:
    trace = list(lcheck._default_trace("datta-fig1", "full"))
    sim = _sim("datta-fig1", "full", trace[:10])
    assert holds("cycle == [R2, R1]", sim)          # up to rotation
    assert not holds("cycle == [R1]", sim)
    assert holds("queue(R1, Q_strong) == [C1, C2] and head(R2, Q_strong) == C2", sim)
    assert holds("messages(type=newStrongACK) == 2 and messages(type=newStrongACK, dst=R1) == 1", sim)
    assert holds("not in_cs(C1) and waiting(C1) and monitor == ok", sim)
    assert holds("sent(type=NewRequest) >= 4 and step == 10", sim)
    assert holds("said(seekLoop) == 0 and said(newStrongACK) == 2", sim)   # the log's lines so far
    sim27 = _sim("datta-fig1", "full", trace[:27])
    assert holds("in_cs(C1) and in_cs_count == 1 and cs_entries == 1", sim27)
    assert holds("field($answer, cs) == true", sim27, answer="C1")


@pytest.mark.parametrize("text, words", [
    ("", "empty"),
    ("in_cs(C1", "ends too early"),
    ("__import__('os')", "cannot read"),
    ("open(x) == 1", "unknown function 'open'"),
    ("in_cs(C1) ; rm", "cannot read"),
    ("messages(kind=x) == 1", "unknown filter"),
    ("in_cs(C1, C2)", "takes 1 argument"),
    ("in_cs(C1) == ", "ends too early"),
])
def test_bad_predicates_are_named(text: str, words: str) -> None:
    with pytest.raises(PredicateError, match=words):
        parse(text)


def test_unknown_process_at_evaluation_is_named() -> None:
    sim = _sim("datta-fig1", "full", [])
    with pytest.raises(PredicateError, match="no process 'C9'"):
        holds("in_cs(C9)", sim)
    with pytest.raises(PredicateError, match="has no queue 'Q_nope'"):
        holds("queue(R1, Q_nope) == []", sim)


def _write(tmp_path: Path, data: dict) -> Path:
    p = tmp_path / f"{data['id']}.json"
    p.write_text(json.dumps(data))
    return p


def _base() -> dict:
    return json.loads((FILES / "datta-departure.json").read_text())


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update(scenario="no-such-scenario"), "unknown scenario id 'no-such-scenario'"),
    (lambda d: (d["chapters"][0].pop("moment"), d["chapters"][0].update(step=999)),
     "step: 999 is past the end of the schedule"),
    (lambda d: d["chapters"][0].update(moment="the big bang"),
     "moment: 'the big bang' is not a moment of datta-departure under full; moments: figure,"),
    (lambda d: d["chapters"][0].update(claims=["in_cs(C9)"]), "names unknown process 'C9'"),
    (lambda d: d["chapters"][0].update(highlight=["R7"]), "names unknown process 'R7'"),
    (lambda d: d["chapters"][0].update(highlight=["type:Telegram"]),
     "highlight: unknown message type 'Telegram'; datta_ring sends"),
    (lambda d: d["chapters"][0].update(claims=["cycle == [R1, R2]", "in_cs(C1)"]),
     "'in_cs(C1)' is false at step 10"),
    (lambda d: d["chapters"][1]["prediction"].update(check="monitor == deadlock and $answer == x"),
     "no answer is right"),
])
def test_semantic_errors_name_the_problem(tmp_path: Path, change, words: str) -> None:
    data = _base()
    change(data)
    problems = lcheck.validate(load_file(_write(tmp_path, data)))
    assert any(words in p for p in problems), problems


@pytest.mark.parametrize("change, words", [
    (lambda d: d["chapters"][0].update(claims=[]), "chapters.0.claims: a chapter must state at least one claim"),
    (lambda d: d["chapters"][0].pop("claims"), "chapters.0.claims: Field required"),
    (lambda d: d["chapters"][0].update(colour="red"), "chapters.0.colour: Extra inputs"),
    (lambda d: d["chapters"][0].update(step=3), "give exactly one of step (a number) and moment"),
    (lambda d: d.update(minutes="ten"), "minutes: Input should be a valid integer"),
    (lambda d: d["chapters"][1]["prediction"].update(check="monitor == ok"), "must use $answer"),
    (lambda d: d["chapters"][0].update(claims=["in_cs(C1) or"]), "claims: claim 0:"),
])
def test_bad_fields_are_named(tmp_path: Path, change, words: str) -> None:
    data = _base()
    change(data)
    with pytest.raises(LessonError) as exc:
        load_file(_write(tmp_path, data))
    assert words in str(exc.value)
    assert str(exc.value).startswith("datta-departure.json")


def test_cli_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _base()
    data["chapters"][2]["claims"] = ["waiting(C7)"]
    bad = _write(tmp_path, data)
    assert main(["lessons", "--check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "datta-departure: chapters[dropped]: names unknown process 'C7'" in err
    assert main(["lessons", "--check", str(tmp_path / "missing.json")]) == 2
    good = _write(tmp_path, _base())
    assert main(["lessons", "--check", "--json", str(good)]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True


def test_judge_and_try_it() -> None:
    lesson = lcheck.all_lessons()["datta-fig1-deadlock"]
    ch = {c.id: c for c in lesson.chapters}
    assert lcheck.right_answers(lesson, ch["cycle"]) == ["C1"]
    assert lcheck.judge(lesson, ch["cycle"], "C2") is False
    with pytest.raises(LessonError, match="not an answer"):
        lcheck.judge(lesson, ch["cycle"], "nobody")
    assert lcheck.try_goal(lesson, ch["setup"], ["m0", "m1"])["holds"] is False
    assert lcheck.try_goal(lesson, ch["setup"], ["m0", "m1", "m2", "m3"])["holds"] is True
    with pytest.raises(LessonError, match="not enabled"):
        lcheck.try_goal(lesson, ch["setup"], ["m42"])


def test_explore_link_carries_the_way_back_to_the_chapter() -> None:
    """The viewer opened by "explore from here" links back to that chapter; bad ids are named."""
    from fastapi.testclient import TestClient

    from app.main import create_app
    client = TestClient(create_app())
    data = client.get("/api/lessons/datta-fig1-deadlock").json()
    n, ch = next((i, c) for i, c in enumerate(data["chapters"], 1) if c["id"] == "cycle")
    assert ch["explore"].endswith("&lesson=datta-fig1-deadlock&chapter=cycle")
    page = client.get(ch["explore"], headers={"accept": "text/html"})
    assert page.status_code == 200
    assert ('id="back-to-lesson" href="/lesson/datta-fig1-deadlock#cycle"' in page.text
            and f"back to lesson (chapter {n})" in page.text)
    plain = client.get("/sim/datta-fig1", headers={"accept": "text/html"})
    assert "back-to-lesson" not in plain.text
    embed = client.get(ch["explore"] + "&embed=1", headers={"accept": "text/html"})
    assert 'id="back-to-lesson"' not in embed.text
    for query, words in (("lesson=nope&chapter=cycle", "no lesson 'nope'"),
                         ("lesson=datta-fig1-deadlock&chapter=zzz", "no chapter 'zzz'"),
                         ("lesson=datta-fig1-deadlock", "no chapter ''")):
        bad = client.get(f"/sim/datta-fig1?{query}", headers={"accept": "text/html"})
        assert bad.status_code == 400 and words in bad.text.replace("&#39;", "'"), query


# Issue 18, point 4: one lesson per paper figure and per printed failure (the `covers` line of
# the lesson names the item; the figure's own steps are named in its chapters).
REQUIRED = {
    "datta-fig1-deadlock": "Fig. 1", "datta-fig3-seekloop": "Fig. 3 / Fig. 4",
    "datta-fig5-6-reorganisation": "Fig. 5 / Fig. 6", "datta-fairness-token": "fairness",
    "datta-departure": "departure", "datta-printed-done": "Done slip",
    "datta-prose-gap": "design gap", "kout-fig1-virtual-ring": "Fig. 1",
    "kout-fig2-deadlock": "Fig. 2", "kout-fig3-livelock": "Fig. 3",
    "kout-stabilisation": "arbitrary start", "kout-printed-slips": "guard slips",
    "coterie-fig1-printers": "Fig. 1", "coterie-local-coterie": "local coterie",
    "coterie-preemption": "preemption", "coterie-printed-races": "races",
    "game-phases-tickets": "phases and tickets", "game-conflict": "conflict",
    "game-crash-locality": "locality",
}


def test_every_required_figure_and_failure_has_its_lesson() -> None:
    lessons = lcheck.all_lessons()
    for lid, words in REQUIRED.items():
        assert lid in lessons, f"no lesson {lid} ({words})"
        assert words in lessons[lid].covers, (lid, lessons[lid].covers)
    fig3 = " ".join(t for c in lessons["kout-fig3-livelock"].chapters for t in [c.title, *c.text])
    missing = [c for c in ("(i)", "(ii)", "(iii)", "(iv)", "(v)", "(vi)", "(vii)", "(viii)")
               if c not in fig3]
    assert not missing, f"Fig. 3's configurations without a chapter: {missing}"
    slips = lessons["kout-printed-slips"]
    assert any("K1" in c.cite for c in slips.chapters) and any("K8" in c.cite or "48" in c.cite
                                                               for c in slips.chapters)
