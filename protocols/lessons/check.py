"""Checks lessons against the real simulator: scenario ids, steps, process names, every claim,
every prediction's right and wrong answers and every try-it's solution.

Also the helpers the web player uses: the simulator at a chapter's state, the judge of an
answer and of a try-it. Everything is rebuilt from scenario + variant + schedule (deterministic).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from protocols import registry, runner
from protocols.kernel import SimError, Simulator
from protocols.scenario import Scenario, ScenarioError, gallery

from .evaluate import Facts, holds
from .model import FILES, Chapter, Lesson, LessonError, load_file
from .predicates import PredicateError, parse, process_names


@lru_cache(maxsize=64)
def _default_trace(scenario_id: str, variant: str) -> tuple[str, ...]:
    """The scenario's own run (its recorded schedule, then its scheduler) as event ids."""
    sc = gallery()[scenario_id]
    sim = runner.build(sc, variant)
    runner.drive(sim, runner.scheduler_for(sc, sim.variant), sc.steps)
    return tuple(sim.trace)


@dataclass(frozen=True)
class Place:
    """Where a chapter stands: scenario, variant, the timeline and the step on it."""

    scenario: Scenario
    variant: str
    timeline: tuple[str, ...]
    step: int

    @property
    def schedule(self) -> list[str]:
        return list(self.timeline[: self.step])

    def sim(self) -> Simulator:
        s = runner.build(self.scenario, self.variant)
        s.replay(self.schedule)
        return s

    def link(self) -> str:
        """The viewer at exactly this state ("explore from here")."""
        from urllib.parse import quote
        ids = ",".join(quote(e, safe="") for e in self.schedule)
        return (f"/sim/{self.scenario.id}?variant={quote(self.variant)}&schedule={ids}"
                f"&step={self.step}")


def place(lesson: Lesson, chapter: Chapter) -> Place:
    """The chapter's place; LessonError names a bad scenario, variant or step."""
    sid = chapter.scenario or lesson.scenario
    sc = gallery().get(sid)
    if sc is None:
        field = f"chapters[{chapter.id}].scenario" if chapter.scenario else "scenario"
        raise LessonError(f"{lesson.id}: {field}: unknown scenario id {sid!r}")
    if sc.protocol != lesson.protocol:
        raise LessonError(f"{lesson.id}: protocol: the scenario {sc.id!r} runs {sc.protocol}, "
                          f"not {lesson.protocol}")
    proto = registry.get(sc.protocol)
    variant = chapter.variant or lesson.variant or sc.variant or proto.default_variant
    where = f"{lesson.id}: chapters[{chapter.id}]"
    if variant not in proto.variants:
        raise LessonError(f"{where}: variant {variant!r} is not one of {', '.join(proto.variants)}")
    explicit = chapter.schedule if chapter.schedule is not None else (
        lesson.schedule if not chapter.scenario else None)
    timeline = tuple(explicit) if explicit is not None else _default_trace(sc.id, variant)
    step = chapter.step if chapter.step is not None else _moment(sc, variant, chapter, where)
    if step > len(timeline):
        raise LessonError(f"{where}.step: {step} is past the end of the schedule "
                          f"({len(timeline)} events under {variant})")
    return Place(sc, variant, timeline, step)


def _moment(sc: Scenario, variant: str, chapter: Chapter, where: str) -> int:
    """A named figure moment of the scenario: "figure" (its open_at) or a bookmark's label."""
    if chapter.moment == "figure":
        at = sc.open_at_for(variant)
        if at is None:
            raise LessonError(f"{where}.moment: scenario {sc.id!r} has no figure step (open_at) "
                              f"for {variant}")
        return at
    marks = sc.bookmarks_for(variant)
    for b in marks:
        if b.label == chapter.moment:
            return b.step
    raise LessonError(f"{where}.moment: {chapter.moment!r} is not a moment of {sc.id} under "
                      f"{variant}; moments: figure, {', '.join(repr(b.label) for b in marks)}")


def step_of(lesson: Lesson, chapter: Chapter) -> int:
    return place(lesson, chapter).step


def chapter_sim(lesson: Lesson, chapter: Chapter) -> Simulator:
    p = place(lesson, chapter)
    try:
        return p.sim()
    except SimError as exc:
        raise LessonError(f"{lesson.id}: chapters[{chapter.id}].schedule: {exc}") from None


def _at(lesson: Lesson, chapter: Chapter, step: int) -> Simulator:
    p = place(lesson, chapter)
    if step > len(p.timeline):
        raise LessonError(f"{lesson.id}: chapters[{chapter.id}].prediction.at: {step} is past "
                          f"the end of the schedule ({len(p.timeline)} events)")
    return Place(p.scenario, p.variant, p.timeline, step).sim()


def candidates(lesson: Lesson, chapter: Chapter, sim: Simulator | None = None) -> list[str]:
    """What a student may answer: processes, deliverable messages, or the listed choices."""
    pr = chapter.prediction
    assert pr is not None
    if pr.answer_on == "choice":
        return list(pr.choices)
    sim = sim or chapter_sim(lesson, chapter)
    if pr.answer_on == "node":
        return list(sim.pids)
    return [e for e in sim.enabled_ids() if e.startswith("m")]


def judge(lesson: Lesson, chapter: Chapter, answer: str) -> bool:
    """Whether ``answer`` is right, decided by running the simulator."""
    pr = chapter.prediction
    if pr is None:
        raise LessonError(f"chapter {chapter.id!r} asks no prediction")
    if answer not in candidates(lesson, chapter):
        raise LessonError(f"{answer[:40]!r} is not an answer to this question")
    if pr.answer_on == "message":
        sim = chapter_sim(lesson, chapter)
        sim.step(answer)
    else:
        sim = _at(lesson, chapter, pr.at if pr.at is not None else step_of(lesson, chapter))
    try:
        return holds(parse(pr.check), Facts(sim, answer))
    except PredicateError:
        if pr.answer_on != "node":
            raise
        return False      # a field that only some kinds of node have: not this answer


def right_answers(lesson: Lesson, chapter: Chapter) -> list[str]:
    return [a for a in candidates(lesson, chapter) if judge(lesson, chapter, a)]


def reveal(lesson: Lesson, chapter: Chapter, right: list[str]) -> dict[str, Any]:
    """Where the figure goes to show the answer: the step the check reads (node / choice), or
    the chapter's state plus one right message delivered."""
    pr = chapter.prediction
    assert pr is not None
    p = place(lesson, chapter)
    if pr.answer_on == "message":
        sched = p.schedule + right[:1]
    else:
        sched = list(p.timeline[: pr.at if pr.at is not None else p.step])
    return {"scenario": p.scenario.id, "variant": p.variant, "schedule": sched,
            "step": len(sched)}


def try_goal(lesson: Lesson, chapter: Chapter, events: list[str]) -> dict[str, Any]:
    """Replays the student's events from the chapter's state; says whether the goal holds."""
    ti = chapter.try_it
    if ti is None:
        raise LessonError(f"chapter {chapter.id!r} has no try-it")
    if len(events) > ti.max_steps:
        raise LessonError(f"more than {ti.max_steps} events: start again from the chapter")
    sim = chapter_sim(lesson, chapter)
    try:
        sim.replay(events)
    except SimError as exc:
        raise LessonError(str(exc)) from None
    return {"holds": holds(parse(ti.goal), Facts(sim)), "step": sim.step_no}


def claim_results(sim: Simulator, claims: list[str]) -> list[tuple[str, bool]]:
    facts = Facts(sim)
    return [(c, holds(parse(c), facts)) for c in claims]


def validate(lesson: Lesson) -> list[str]:
    """Every problem of one lesson against the simulator (empty when it is sound)."""
    problems: list[str] = []
    for ch in lesson.chapters:
        where = f"{lesson.id}: chapters[{ch.id}]"
        try:
            sim = chapter_sim(lesson, ch)
        except (LessonError, ScenarioError) as exc:
            problems.append(str(exc))
            continue
        names = [h for h in ch.highlight if not h.startswith("type:")]
        kinds = registry.get(lesson.protocol).message_kinds()
        for h in ch.highlight:
            if h.startswith("type:") and kinds and h[5:] not in kinds:
                problems.append(f"{where}.highlight: unknown message type {h[5:]!r}; "
                                f"{lesson.protocol} sends {', '.join(kinds)}")
        texts = [*ch.claims] + ([ch.try_it.goal] if ch.try_it else []) + (
            [ch.prediction.check] if ch.prediction else [])
        for t in texts:
            names += process_names(parse(t))
        known = set(sim.pids) | {str(n["id"]) for n in Facts(sim).view["nodes"]}
        for n in names:
            if n not in known:
                problems.append(f"{where}: names unknown process {n!r}; processes: "
                                f"{', '.join(sim.pids)}")
        if any(n not in known for n in names):
            continue
        try:
            for c, ok in claim_results(sim, list(ch.claims)):
                if not ok:
                    problems.append(f"{where}.claims: {c!r} is false at step {sim.step_no}")
        except PredicateError as exc:
            problems.append(f"{where}.claims: {exc}")
            continue
        problems += _validate_prediction(lesson, ch, where)
        problems += _validate_try(lesson, ch, where)
    return problems


def _validate_prediction(lesson: Lesson, ch: Chapter, where: str) -> list[str]:
    pr = ch.prediction
    if pr is None:
        return []
    if pr.answer_on == "choice" and len(pr.choices) < 2:
        return [f"{where}.prediction.choices: give at least two choices"]
    try:
        cands = candidates(lesson, ch)
        right = [a for a in cands if judge(lesson, ch, a)]
    except (LessonError, PredicateError, SimError) as exc:
        return [f"{where}.prediction: {exc}"]
    if not right:
        return [f"{where}.prediction: no answer is right (of {', '.join(cands)})"]
    if len(right) == len(cands):
        return [f"{where}.prediction: every answer is right; the question teaches nothing"]
    return []


def _validate_try(lesson: Lesson, ch: Chapter, where: str) -> list[str]:
    ti = ch.try_it
    if ti is None:
        return []
    try:
        if try_goal(lesson, ch, [])["holds"]:
            return [f"{where}.try_it.goal: already holds before the student acts"]
        if not try_goal(lesson, ch, list(ti.solution))["holds"]:
            return [f"{where}.try_it.solution: does not reach the goal {ti.goal!r}"]
    except (LessonError, PredicateError) as exc:
        return [f"{where}.try_it: {exc}"]
    return []


def all_lessons() -> dict[str, Lesson]:
    """Every lesson file, by id; LessonError names the first bad file."""
    out: dict[str, Lesson] = {}
    for f in sorted(FILES.glob("*.json")):
        lesson = load_file(f)
        out[lesson.id] = lesson
    return out


def check_all() -> tuple[int, list[str]]:
    """(number of lessons, problems) for ``allocscope lessons --check``."""
    problems: list[str] = []
    count = 0
    for f in sorted(FILES.glob("*.json")):
        count += 1
        try:
            lesson = load_file(f)
        except LessonError as exc:
            problems.append(str(exc))
            continue
        problems += validate(lesson)
    return count, problems
