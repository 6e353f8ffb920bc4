"""Predict rounds and class experiments: what a question offers, when the simulator has answered
it, and one student's experiment run.

A round asks about what happens *next* from the teacher's current state, and the simulator — not
the teacher — settles it as the teacher steps or plays on: the next delivery is the first message
delivered after the round's step, the next critical section is the next entry the monitors record,
and "will it deadlock from here" is settled by the deadlock monitor (yes) or a run that ends with
everyone served (no). A lesson's own prediction comes as a ``custom`` round with its options and,
optionally, its answer.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from protocols import runner
from protocols.kernel import DELIVER
from protocols.scenario import parse

from ..session import Session, SessionError

KINDS = ("next-delivery", "next-cs", "deadlock", "custom", "lesson")
QUESTIONS = {
    "next-delivery": "Which message will be delivered next?",
    "next-cs": "Which process enters its critical section next?",
    "deadlock": "Will it deadlock from here?",
}
MAX_OPTIONS = 40
OUTCOMES = ("all-served", "deadlock", "livelock", "violation", "incomplete")


def lesson_chapter(lesson_id: str, index: int) -> dict[str, Any]:
    """A lesson chapter's place and words (protocols/lessons), for a room that follows a lesson;
    SessionError names a lesson or chapter that does not exist."""
    from protocols.lessons import check as lcheck
    from protocols.lessons.model import LessonError
    try:
        lesson = lcheck.all_lessons().get(lesson_id)
    except LessonError as exc:
        raise SessionError(f"the lessons cannot be read: {exc}") from None
    if lesson is None:
        raise SessionError(f"there is no lesson {lesson_id[:80]!r}")
    if not 0 <= index < len(lesson.chapters):
        raise SessionError(f"lesson {lesson.id!r} has chapters 0 to {len(lesson.chapters) - 1}, "
                           f"not {index}")
    ch = lesson.chapters[index]
    try:
        place = lcheck.place(lesson, ch)
    except LessonError as exc:
        raise SessionError(str(exc)) from None
    return {"lesson": lesson, "chapter": ch, "scenario": place.scenario, "variant": place.variant,
            "timeline": list(place.timeline), "step": place.step, "title": ch.title,
            "text": list(ch.text), "cite": ch.cite, "chapters": len(lesson.chapters)}


def where_now(session: Session) -> tuple[dict[str, str], int]:
    """(labels of the enabled events, step) of a session: what a lesson round shows of it."""
    if session.sim is None:
        return {}, 0
    return ({e.id: e.as_dict().get("label") or e.id for e in session.sim.enabled()},
            session.sim.step_no)


def lesson_round(labels: dict[str, str], step: int, rid: int, lesson_id: str,
                 index: int) -> dict[str, Any]:
    """The chapter's own prediction as a round: its question, its candidates, and the answers
    the lesson checker finds right (more than one may be). Replays the chapter (so it runs off
    the event loop), reading nothing of the teacher's session but ``where_now``'s answer."""
    from protocols.lessons import check as lcheck
    info = lesson_chapter(lesson_id, index)
    lesson, ch = info["lesson"], info["chapter"]
    if ch.prediction is None:
        raise SessionError(f"chapter {index + 1} ({ch.title}) asks no prediction")
    opts = [{"id": c, "label": labels.get(c, c)} for c in lcheck.candidates(lesson, ch)]
    right = lcheck.right_answers(lesson, ch)
    return {"id": rid, "kind": "lesson", "question": ch.prediction.question,
            "options": opts[:MAX_OPTIONS], "step": step,
            "served_at": 0, "answer": right, "revealed": False,
            "explain": ch.prediction.explain}


def open_round(session: Session, rid: int, kind: str, question: str | None = None,
               options: list[dict[str, str]] | None = None,
               answer: str | None = None) -> dict[str, Any]:
    """A new round on the session's current state; SessionError when it cannot be asked."""
    sim = session.sim
    if sim is None:
        raise SessionError("load a scenario before asking")
    if kind == "next-delivery":
        opts = [{"id": e.id, "label": e.as_dict().get("label") or e.id}
                for e in sim.enabled() if e.kind == DELIVER]
        if not opts:
            raise SessionError("no message can be delivered now: nothing to predict")
    elif kind == "next-cs":
        waiting = sorted(sim.waiting) or list(sim.pids)
        opts = [{"id": p, "label": p} for p in waiting]
    elif kind == "deadlock":
        opts = [{"id": "yes", "label": "yes, it deadlocks"}, {"id": "no", "label": "no"}]
    else:
        if not question or not options:
            raise SessionError("a custom round needs a question and its options")
        opts = [{"id": str(o["id"])[:80], "label": str(o.get("label", o["id"]))[:200]}
                for o in options]
        if answer is not None and answer not in {o["id"] for o in opts}:
            raise SessionError(f"the answer {answer!r} is not one of the options")
    if len(opts) > MAX_OPTIONS:
        opts = opts[:MAX_OPTIONS]
    return {"id": rid, "kind": kind, "question": question or QUESTIONS.get(kind, ""),
            "options": opts, "step": sim.step_no, "served_at": len(sim.monitors.served),
            "answer": answer if kind == "custom" else None, "revealed": False}


def settle(session: Session, rnd: dict[str, Any]) -> str | None:
    """The round's answer if the simulator has given it by now (None while it is open)."""
    if rnd.get("answer") is not None or rnd["kind"] in ("custom", "lesson"):
        return rnd.get("answer")
    sim = session.sim
    k0 = rnd["step"]
    if sim is None or sim.step_no <= k0:
        return None
    if rnd["kind"] == "next-delivery":
        for k in range(k0, sim.step_no):
            eid = sim.trace[k]
            if eid[:1] == "m" and eid[1:].isdigit():
                return eid
        return None
    if rnd["kind"] == "next-cs":
        served = sim.monitors.served
        return served[rnd["served_at"]][0] if len(served) > rnd["served_at"] else None
    dl = sim.monitors.first("deadlock")
    if dl is not None and dl.step > k0:
        return "yes"
    proto = sim.protocol
    if proto.served_all(sim) or not sim.enabled():
        return "no"
    return None


def tally(rnd: dict[str, Any], answers: dict[str, str]) -> dict[str, int]:
    """Answers per option, in the options' order (answers outside them are ignored)."""
    counts = Counter(answers.values())
    return {o["id"]: counts.get(o["id"], 0) for o in rnd["options"]}


def experiment_run(scenario: Any, variant: str | None, schedule: list[str], seed: int,
                   max_steps: int) -> dict[str, Any]:
    """One student's run: the room's state, then the random scheduler with the student's seed
    until the run ends (as ``allocscope run`` stops) or ``max_steps`` more steps."""
    sc = parse(scenario) if isinstance(scenario, dict) else scenario
    s = Session()
    s.load(sc, variant, schedule)
    sim = s.sim
    sched = runner.scheduler_for(s.scenario, sim.variant, "random", seed)
    runner.drive(sim, sched, sim.step_no + max_steps)
    rep = runner.report(sim, s.scenario)
    return {"outcome": rep["outcome"], "steps": sim.step_no - len(schedule), "seed": seed}


def histogram(runs: dict[str, str]) -> dict[str, Any]:
    """Outcomes of the class's runs: counts per outcome and the steps each took."""
    import json
    counts = Counter()
    steps: list[int] = []
    for text in runs.values():
        try:
            r = json.loads(text)
        except ValueError:
            continue
        if r.get("outcome") in OUTCOMES:
            counts[r["outcome"]] += 1
            steps.append(int(r.get("steps", 0)))
    steps.sort()
    return {"counts": {o: counts.get(o, 0) for o in OUTCOMES}, "runs": sum(counts.values()),
            "steps": {"min": steps[0], "median": steps[len(steps) // 2], "max": steps[-1]}
            if steps else None}
