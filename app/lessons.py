"""Guided lessons and the executable erratum in the browser, and ``allocscope lessons --check``.

Routes: ``/lessons`` (the index, in teaching order per paper), ``/lesson/{id}`` (the player;
``#chapter`` in the URL), ``/api/lessons/{id}`` (the lesson with each chapter's place, for the
player), ``POST /api/lessons/{id}/{chapter}/answer`` and ``.../try`` (the simulator judges a
prediction or a try-it), and ``/paper/{protocol}`` (the erratum page). Nothing about a student is
stored on the server: answers are judged and forgotten; progress lives in the browser.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from markupsafe import Markup, escape
from pydantic import BaseModel, ConfigDict, Field

from protocols.kernel import SimError
from protocols.lessons import check as lcheck
from protocols.lessons.model import Chapter, Lesson, LessonError, load_file
from protocols.lessons.predicates import PredicateError

from .pages import error_page, templates

router = APIRouter()
PAPERS = ("datta_ring", "kout_tree", "coterie", "task_game")
PAPER_TITLES = {"datta_ring": "Multi-resource allocation with unknown participants (ring)",
                "kout_tree": "Self-stabilizing k-out-of-ℓ exclusion on trees",
                "coterie": "Local coteries and AllocResource",
                "task_game": "The game of tasks for access to resources"}


def _lessons() -> dict[str, Lesson]:
    return lcheck.all_lessons()


def _find(lesson_id: str, chapter_id: str | None = None) -> tuple[Lesson, Chapter | None]:
    lesson = _lessons().get(lesson_id)
    if lesson is None:
        raise LessonError(f"There is no lesson {lesson_id[:80]!r}.")
    if chapter_id is None:
        return lesson, None
    for ch in lesson.chapters:
        if ch.id == chapter_id:
            return lesson, ch
    raise LessonError(f"lesson {lesson_id!r} has no chapter {chapter_id[:40]!r}")


def lesson_return(lesson_id: str, chapter_id: str | None) -> dict[str, Any]:
    """Where the viewer's "back to lesson" link goes when "explore from here" opened it: the
    lesson's page at that chapter, with the chapter's number (LessonError names a bad id)."""
    from urllib.parse import quote
    lesson, ch = _find(lesson_id, chapter_id or "")
    assert ch is not None
    number = lesson.chapters.index(ch) + 1
    return {"href": f"/lesson/{quote(lesson.id)}#{quote(ch.id)}", "number": number,
            "lesson": lesson.title, "chapter": ch.title}


def explore_link(lesson: Lesson, ch: Chapter) -> str:
    """The viewer at the chapter's exact state, told which lesson and chapter to return to."""
    from urllib.parse import quote
    return (f"{lcheck.place(lesson, ch).link()}&lesson={quote(lesson.id)}"
            f"&chapter={quote(ch.id)}")


def index_entries() -> list[dict[str, Any]]:
    """The lessons grouped by paper, in teaching order, with their time."""
    groups: dict[str, list[dict[str, Any]]] = {p: [] for p in PAPERS}
    for lesson in _lessons().values():
        groups.setdefault(lesson.protocol, []).append({
            "id": lesson.id, "title": lesson.title, "order": lesson.order,
            "minutes": lesson.minutes, "summary": lesson.summary, "covers": lesson.covers,
            "chapters": len(lesson.chapters)})
    out = []
    for proto, items in groups.items():
        items.sort(key=lambda x: (x["order"], x["id"]))
        out.append({"protocol": proto, "title": PAPER_TITLES.get(proto, proto), "lessons": items,
                    "minutes": sum(x["minutes"] for x in items)})
    return out


def lesson_payload(lesson: Lesson) -> dict[str, Any]:
    """The lesson as the player needs it: every chapter with its scenario, variant, schedule."""
    chapters = []
    for ch in lesson.chapters:
        p = lcheck.place(lesson, ch)
        d = ch.model_dump(mode="json")
        if d.get("prediction"):
            # the player must not be able to read the answer: only the question goes out
            pr = d["prediction"]
            d["prediction"] = {"question": pr["question"], "answer_on": pr["answer_on"],
                               "choices": pr["choices"]}
        if d.get("try_it"):
            ti = d["try_it"]
            d["try_it"] = {"task": ti["task"], "hint": ti["hint"], "max_steps": ti["max_steps"]}
        d.update({"step": p.step, "scenario": p.scenario.id, "variant": p.variant, "schedule": p.schedule,
                  "explore": explore_link(lesson, ch)})
        chapters.append(d)
    return {"id": lesson.id, "title": lesson.title, "protocol": lesson.protocol,
            "minutes": lesson.minutes, "summary": lesson.summary, "covers": lesson.covers,
            "chapters": chapters}


@router.get("/lessons", response_class=HTMLResponse)
def lessons_index(request: Request) -> Response:
    try:
        groups = index_entries()
    except LessonError as exc:
        return error_page(request, 500, f"the lessons cannot be read: {exc}")
    return templates.TemplateResponse(request, "lessons.html", {
        "groups": groups, "embed": False, "present": False})


@router.get("/lesson/{lesson_id}", response_class=HTMLResponse)
def lesson_page(request: Request, lesson_id: str) -> Response:
    try:
        lesson, _ = _find(lesson_id)
        payload = lesson_payload(lesson)
    except LessonError as exc:
        return error_page(request, 404, str(exc))
    q = request.query_params
    return templates.TemplateResponse(request, "lesson.html", {
        "lesson": payload, "embed": q.get("embed") == "1", "present": q.get("present") == "1"})


@router.get("/api/lessons")
def api_lessons() -> Response:
    return JSONResponse(index_entries())


@router.get("/api/lessons/{lesson_id}")
def api_lesson(lesson_id: str) -> Response:
    try:
        lesson, _ = _find(lesson_id)
        return JSONResponse(lesson_payload(lesson))
    except LessonError as exc:
        return JSONResponse({"detail": str(exc)}, 404)


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str = Field(min_length=1, max_length=200)


class Attempt(BaseModel):
    model_config = ConfigDict(extra="forbid")
    events: list[str] = Field(max_length=500)


@router.post("/api/lessons/{lesson_id}/{chapter_id}/answer")
def api_answer(lesson_id: str, chapter_id: str, body: Answer) -> Response:
    """Judge a prediction by running the simulator; reveal the explanation either way."""
    try:
        lesson, ch = _find(lesson_id, chapter_id)
        assert ch is not None
        if ch.prediction is None:
            raise LessonError(f"chapter {chapter_id!r} asks no prediction")
        ok = lcheck.judge(lesson, ch, body.answer)
        right = lcheck.right_answers(lesson, ch)
        reveal = lcheck.reveal(lesson, ch, right)
    except (LessonError, PredicateError, SimError) as exc:
        return JSONResponse({"detail": str(exc)}, 400)
    return JSONResponse({"correct": ok, "answer": body.answer, "right": right,
                         "explain": ch.prediction.explain, "reveal": reveal})


@router.post("/api/lessons/{lesson_id}/{chapter_id}/try")
def api_try(lesson_id: str, chapter_id: str, body: Attempt) -> Response:
    """Whether the student's events (from the chapter's state) reach the try-it's goal."""
    try:
        lesson, ch = _find(lesson_id, chapter_id)
        assert ch is not None
        res = lcheck.try_goal(lesson, ch, body.events)
    except (LessonError, PredicateError, SimError) as exc:
        return JSONResponse({"detail": str(exc)}, 400)
    return JSONResponse(res)


# ---------------------------------------------------------------- the CLI subcommand
def cmd_lessons(args: argparse.Namespace) -> int:
    """``allocscope lessons --check [FILE ...]``: validate lesson files against the simulator."""
    if not args.check:
        for g in index_entries():
            for x in g["lessons"]:
                print(f"{g['protocol']:11} {x['order']:2}. {x['id']} ({x['minutes']} min)")
        return 0
    problems: list[str] = []
    if args.files:
        count = len(args.files)
        for f in args.files:
            path = Path(f)
            if not path.is_file():
                print(f"allocscope: {f}: no such lesson file", file=sys.stderr)
                return 2
            try:
                problems += lcheck.validate(load_file(path))
            except LessonError as exc:
                problems.append(str(exc))
    else:
        count, problems = lcheck.check_all()
    if args.json:
        print(json.dumps({"lessons": count, "ok": not problems, "problems": problems}, indent=2))
    else:
        for p in problems:
            print(p, file=sys.stderr)
        print(f"{count} lesson file(s) checked: "
              + ("every claim, prediction and try-it holds" if not problems
                 else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


def add_cli(sub: Any) -> None:
    """Adds the ``lessons`` subcommand to the CLI's subparsers."""
    p = sub.add_parser("lessons", help="list the guided lessons, or --check them")
    p.add_argument("--check", action="store_true",
                   help="check every lesson (or the FILES given) against the simulator")
    p.add_argument("files", nargs="*", help="lesson files (default: protocols/lessons/files)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_lessons)


# ---------------------------------------------------------------- the erratum pages
def _inline(text: str) -> Markup:
    """Markdown's `code` and **bold** only, after escaping everything (never raw HTML)."""
    out = str(escape(text))
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"(?<![*\w])\*([^*\s][^*]*)\*(?!\w)", r"<em>\1</em>", out)
    return Markup(out)


def paper_entries(protocol: str) -> list[dict[str, Any]]:
    """Every erratum entry with its fields and one-click replay links."""
    from protocols.erratum.model import load
    from protocols.erratum.replay import viewer_link
    out = []
    for e in load(protocol).entries():
        d: dict[str, Any] = {"id": e.id, "kind": e.kind, "verification": e.verification,
                             "fields": [(label, _inline(getattr(e, f))) for label, f in (
                                 ("block", "title"), ("where", "where"), ("printed", "printed"),
                                 ("prose / intent", "intent"), ("as-printed does", "as_printed"),
                                 ("we do", "ours")) if getattr(e, f)],
                             "text": _inline(" ".join(e.text)) if e.text else None,
                             "replay": None, "no_replay": e.no_replay,
                             "family": _inline(e.verification.family) if e.verification else ""}
        if e.replay:
            r = e.replay
            d["replay"] = {"scenario": r.scenario, "shows": r.shows, "step": r.step,
                           "printed": {"variant": r.printed.variant, "outcome": r.printed.outcome,
                                       "claims": r.printed.claims,
                                       "link": viewer_link(r, r.printed.variant)},
                           "repair": {"variant": r.repair.variant, "outcome": r.repair.outcome,
                                      "claims": r.repair.claims,
                                      "link": viewer_link(r, r.repair.variant)}}
        out.append(d)
    return out


@router.get("/paper/{protocol}", response_class=HTMLResponse)
def paper_page(request: Request, protocol: str) -> Response:
    from protocols.erratum.model import ErratumError, load
    if protocol not in PAPERS:
        return error_page(request, 404, f"There is no erratum for {protocol[:40]!r}; papers: "
                                        f"{', '.join(PAPERS)}.")
    try:
        er = load(protocol)
        entries = paper_entries(protocol)
    except ErratumError as exc:
        return error_page(request, 500, str(exc))
    lessons = next((g["lessons"] for g in index_entries() if g["protocol"] == protocol), [])
    notes = [_inline("\n".join(sec.markdown)) for sec in er.sections
             if sec.markdown and any(x.strip() for x in sec.markdown)]
    return templates.TemplateResponse(request, "paper.html", {
        "protocol": protocol, "title": er.title, "entries": entries, "lessons": lessons,
        "notes": notes,
        "doc": f"docs/protocols/{protocol}.md", "embed": False, "present": False})
