"""The lesson file format (``protocols/lessons/files/<id>.json``), validated with pydantic.

A lesson tells one story on one gallery scenario: chapters, each showing a step of the lesson's
timeline with a short text in our own words, what to look at, and the claims (predicates) that
must be true there. A chapter may ask a prediction (answered on the figure, judged by the
simulator) or a try-it (deliver events until a goal predicate holds). Errors name the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .predicates import PredicateError, parse, uses_answer

FILES = Path(__file__).parent / "files"
EVENT_ID = r"^[A-Za-z0-9:_.\-=]{1,200}$"


class LessonError(ValueError):
    """A lesson that cannot be used; the message names the file, the field and the reason."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _predicate(v: str) -> str:
    try:
        parse(v)
    except PredicateError as exc:
        raise ValueError(str(exc)) from None
    return v


class Prediction(_Strict):
    """A question answered on the figure; ``check`` (with ``$answer``) decides who is right."""

    question: str = Field(min_length=1, max_length=400)
    answer_on: Literal["node", "message", "choice"]
    choices: list[str] = Field(default_factory=list, max_length=8)
    check: str = Field(min_length=1, max_length=400)
    at: int | None = Field(default=None, ge=0)   # node / choice: the step the check is read at
    explain: str = Field(min_length=1, max_length=1200)

    @field_validator("check")
    @classmethod
    def _check(cls, v: str) -> str:
        return _predicate(v)

    @model_validator(mode="after")
    def _answer_used(self) -> "Prediction":
        # a message answer is judged by delivering it; the others are named by $answer
        if self.answer_on != "message" and not uses_answer(parse(self.check)):
            raise ValueError("check must use $answer (the student's answer)")
        return self


class TryIt(_Strict):
    """A task: deliver events from the chapter's state until ``goal`` holds."""

    task: str = Field(min_length=1, max_length=400)
    goal: str = Field(min_length=1, max_length=400)
    solution: list[str] = Field(min_length=1, max_length=200)   # one way, checked in CI
    hint: str = Field(default="", max_length=400)
    max_steps: int = Field(default=60, ge=1, le=500)

    @field_validator("goal")
    @classmethod
    def _goal(cls, v: str) -> str:
        return _predicate(v)


class Chapter(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,39}$")
    title: str = Field(min_length=1, max_length=120)
    text: list[str] = Field(min_length=1, max_length=6)
    cite: str = Field(min_length=1, max_length=200)        # paper section / figure / line
    step: int | None = Field(default=None, ge=0)
    moment: str | None = Field(default=None, max_length=120)   # "figure" or a bookmark's label
    scenario: str | None = Field(default=None, max_length=80)   # another gallery scenario
    variant: str | None = Field(default=None, max_length=40)
    schedule: list[str] | None = Field(default=None, max_length=2000)   # replaces the lesson's
    highlight: list[str] = Field(default_factory=list, max_length=12)   # node ids, "type:<Msg>"
    claims: list[str] = Field(max_length=12)
    prediction: Prediction | None = None
    try_it: TryIt | None = None

    @model_validator(mode="after")
    def _step_or_moment(self) -> "Chapter":
        if (self.step is None) == (self.moment is None):
            raise ValueError("give exactly one of step (a number) and moment (\"figure\" or a "
                             "bookmark of the scenario)")
        return self

    @field_validator("claims")
    @classmethod
    def _claims(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("a chapter must state at least one claim (a predicate checked in CI)")
        for i, c in enumerate(v):
            try:
                parse(c)
            except PredicateError as exc:
                raise ValueError(f"claim {i}: {exc}") from None
        return v

    @field_validator("text")
    @classmethod
    def _text(cls, v: list[str]) -> list[str]:
        for i, p in enumerate(v):
            if not 1 <= len(p) <= 900:
                raise ValueError(f"paragraph {i}: 1 to 900 characters")
        return v


class Lesson(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,79}$")
    title: str = Field(min_length=1, max_length=160)
    protocol: str = Field(min_length=1, max_length=40)
    order: int = Field(ge=1, le=99)                 # teaching order within the paper
    minutes: int = Field(ge=1, le=90)
    summary: str = Field(min_length=1, max_length=500)
    covers: str = Field(min_length=1, max_length=200)   # the item: figure / failure
    scenario: str = Field(min_length=1, max_length=80)
    variant: str | None = Field(default=None, max_length=40)
    schedule: list[str] | None = Field(default=None, max_length=5000)
    chapters: list[Chapter] = Field(min_length=1, max_length=20)

    @field_validator("chapters")
    @classmethod
    def _unique(cls, v: list[Chapter]) -> list[Chapter]:
        seen: set[str] = set()
        for c in v:
            if c.id in seen:
                raise ValueError(f"duplicate chapter id {c.id!r}")
            seen.add(c.id)
        return v


def format_errors(exc: ValidationError, root: str) -> str:
    parts = []
    for err in exc.errors()[:8]:
        loc = ".".join([root, *(str(x) for x in err["loc"])])
        parts.append(f"{loc}: {err['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def parse_lesson(data: object, source: str) -> Lesson:
    if not isinstance(data, dict):
        raise LessonError(f"{source}: must be a JSON object")
    try:
        return Lesson.model_validate(data)
    except ValidationError as exc:
        raise LessonError(format_errors(exc, source)) from None


def load_file(path: Path) -> Lesson:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise LessonError(f"{path.name}: cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise LessonError(f"{path.name}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    lesson = parse_lesson(data, path.name)
    if lesson.id != path.stem:
        raise LessonError(f"{path.name}: id {lesson.id!r} differs from the file name")
    return lesson
