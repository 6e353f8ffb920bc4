"""Websocket commands (client -> server) as pydantic models: one class per ``op``.

A discriminated union on ``op`` gives one clear error per bad command; every model forbids extra
fields and bounds its numbers and strings, so nothing a client sends can make the server allocate
or loop without bound before the session's own limits (app/limits.py) are even checked.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

MAX_STEP = 10_000_000
MAX_SEED = 2**63 - 1
ReplyId = Annotated[str, Field(max_length=64)] | Annotated[int, Field(ge=-MAX_SEED, le=MAX_SEED)]
EventId = Annotated[str, Field(min_length=1, max_length=200)]


class CommandError(ValueError):
    """A command that could not be parsed or validated; ``reply_to`` is its id when readable."""

    def __init__(self, message: str, reply_to: Any = None) -> None:
        super().__init__(message)
        self.reply_to = reply_to


class _Cmd(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    id: ReplyId | None = None


class Load(_Cmd):
    op: Literal["load"]
    scenario: Annotated[str, Field(min_length=1, max_length=200)] | dict[str, Any] | None = None
    link: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    variant: Annotated[str, Field(min_length=1, max_length=40)] | None = None
    schedule: list[EventId] | None = Field(default=None, max_length=1_000_000)
    step: Annotated[int, Field(ge=0, le=MAX_STEP)] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> "Load":
        if (self.scenario is None) == (self.link is None):
            raise ValueError("give exactly one of 'scenario' and 'link'")
        return self


class Step(_Cmd):
    op: Literal["step"]


class Deliver(_Cmd):
    op: Literal["deliver"]
    event: EventId


class Back(_Cmd):
    op: Literal["back"]


class Goto(_Cmd):
    op: Literal["goto"]
    step: Annotated[int, Field(ge=0, le=MAX_STEP)]


class Reset(_Cmd):
    op: Literal["reset"]


class Play(_Cmd):
    op: Literal["play"]


class Pause(_Cmd):
    op: Literal["pause"]


class Speed(_Cmd):
    op: Literal["speed"]
    steps_per_second: Annotated[float, Field(ge=0.25, le=1000, allow_inf_nan=False)]


class Scheduler(_Cmd):
    op: Literal["scheduler"]
    kind: Literal["manual", "random", "oldest", "round-robin", "scripted"]
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)] | None = None


class Fault(_Cmd):
    op: Literal["fault"]
    event: Annotated[str, Field(pattern=r"^f:", max_length=200)]


class Branch(_Cmd):
    op: Literal["branch"]
    branch: Annotated[int, Field(ge=0, le=1_000_000)]
    step: Annotated[int, Field(ge=0, le=MAX_STEP)] | None = None


class History(_Cmd):
    op: Literal["history"]
    from_: Annotated[int, Field(ge=0, le=MAX_STEP, alias="from")]
    to: Annotated[int, Field(ge=0, le=MAX_STEP)]


class Inspect(_Cmd):
    op: Literal["inspect"]
    proc: Annotated[str, Field(min_length=1, max_length=80)]


class Effect(_Cmd):
    """What an enabled event would change (a preview), or without one what the last step did."""
    op: Literal["effect"]
    event: EventId | None = None


Command = Annotated[Load | Step | Deliver | Back | Goto | Reset | Play | Pause | Speed | Scheduler
                    | Fault | Inspect | Branch | History | Effect, Field(discriminator="op")]
OPS = ("load", "step", "deliver", "back", "goto", "reset", "play", "pause", "speed", "scheduler",
       "fault", "inspect", "branch", "history", "effect")
_adapter: TypeAdapter = TypeAdapter(Command)


def _load(text: str) -> tuple[Any, str]:
    """json.loads, plus the first NaN / Infinity it met ("" if none): those are not JSON, but
    reading past them lets the error still name the command's id."""
    seen: list[str] = []

    def constant(name: str) -> float:
        seen.append(name)
        return float(name)
    return json.loads(text, parse_constant=constant), (seen[0] if seen else "")


def parse(text: str) -> Any:
    """One command from the text of a websocket message; CommandError says what is wrong."""
    try:
        data, bad = _load(text)
    except ValueError as exc:   # JSONDecodeError, integers with too many digits
        raise CommandError(f"not a JSON command: {exc}") from None
    except RecursionError:
        raise CommandError("not a JSON command: nested too deeply") from None
    if bad:
        rid = _reply_id(data) if isinstance(data, dict) else None
        raise CommandError(f"not a JSON command: {bad} is not a JSON number", rid)
    if not isinstance(data, dict):
        raise CommandError(f"a command must be a JSON object with an \"op\", not "
                           f"{type(data).__name__}")
    reply_to = _reply_id(data)
    op = data.get("op")
    if op not in OPS:
        shown = repr(op)[:40] if op is not None else "missing"
        raise CommandError(f"unknown op {shown}; ops: {', '.join(OPS)}", reply_to)
    try:
        return _adapter.validate_python(data)
    except ValidationError as exc:
        raise CommandError(_describe(exc), reply_to) from None


def _reply_id(data: dict[str, Any]) -> Any:
    """The command's ``id`` if it is a valid one (echoed even when the rest is bad)."""
    rid = data.get("id")
    if isinstance(rid, str) and len(rid) <= 64:
        return rid
    if isinstance(rid, int) and not isinstance(rid, bool) and abs(rid) <= MAX_SEED:
        return rid
    return None


def peek_id(text: str) -> Any:
    """The id of a command without validating the rest (for answers about the connection)."""
    try:
        data, _ = _load(text)
    except (ValueError, RecursionError):
        return None
    return _reply_id(data) if isinstance(data, dict) else None


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:4]:
        loc = [str(x) for x in err["loc"]]
        # drop the union tag pydantic puts first ("load", "function-after[...]")
        loc = [x for x in loc[1:] if not x.startswith("function-")] if loc else loc
        where = ".".join(loc) or "command"
        parts.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
    return "bad command: " + "; ".join(parts)
