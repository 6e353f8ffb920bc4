"""Room commands on ``WS /ws/room/{code}`` (docs/websocket.md, "Rooms"): one pydantic model per
op, extra fields refused and everything bounded, like app/commands.py's session commands."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ..commands import MAX_SEED, CommandError, EventId, ReplyId, _describe

Short = Annotated[str, Field(min_length=1, max_length=80)]


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    id: ReplyId | None = None


class Hello(_Op):
    op: Literal["hello"]
    role: Literal["student", "teacher"] = "student"
    secret: Annotated[str, Field(min_length=8, max_length=100)] | None = None


class Answer(_Op):
    op: Literal["answer"]
    choice: Short


class Fork(_Op):
    op: Literal["fork"]
    schedule: list[EventId] | None = Field(default=None, max_length=1_000_000)
    step: Annotated[int, Field(ge=0, le=10_000_000)] | None = None


class Rejoin(_Op):
    op: Literal["rejoin"]


class Run(_Op):
    op: Literal["run"]
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)] | None = None


class Submit(_Op):
    op: Literal["submit"]


class Option(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    id: Short
    label: Annotated[str, Field(max_length=200)] | None = None


class Ask(_Op):
    op: Literal["ask"]
    kind: Literal["next-delivery", "next-cs", "deadlock", "custom", "lesson"]
    question: Annotated[str, Field(min_length=1, max_length=300)] | None = None
    options: list[Option] | None = Field(default=None, max_length=40)
    answer: Short | None = None


class Reveal(_Op):
    op: Literal["reveal"]


class CloseRound(_Op):
    op: Literal["close_round"]


class Experiment(_Op):
    op: Literal["experiment"]
    open: bool


class Select(_Op):
    op: Literal["select"]
    proc: Short | None = None


class Chapter(_Op):
    op: Literal["chapter"]
    chapter: Annotated[int, Field(ge=0, le=1000)] | None
    lesson: Short | None = None
    title: Annotated[str, Field(max_length=200)] = ""


class Status(_Op):
    op: Literal["room"]


RoomOp = Annotated[Hello | Answer | Fork | Rejoin | Run | Submit | Ask | Reveal | CloseRound
                   | Experiment | Select | Chapter | Status, Field(discriminator="op")]
ROOM_OPS = ("hello", "answer", "fork", "rejoin", "run", "submit", "ask", "reveal", "close_round",
            "experiment", "select", "chapter", "room")
TEACHER_OPS = ("ask", "reveal", "close_round", "experiment", "select", "chapter")
DRIVING_OPS = ("load", "step", "deliver", "back", "goto", "reset", "play", "pause", "speed",
               "scheduler", "fault", "branch")
_adapter: TypeAdapter = TypeAdapter(RoomOp)


def peek_op(text: str) -> tuple[Any, Any]:
    """(op, id) of a command's text, without validating it (both None if unreadable)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(data, dict):
        return None, None
    rid = data.get("id")
    if not (isinstance(rid, str) and len(rid) <= 64 or isinstance(rid, int)
            and not isinstance(rid, bool) and abs(rid) <= MAX_SEED):
        rid = None
    return data.get("op"), rid


def parse(text: str) -> Any:
    op, rid = peek_op(text)
    try:
        return _adapter.validate_json(text)
    except ValidationError as exc:
        raise CommandError(_describe(exc), rid) from None
