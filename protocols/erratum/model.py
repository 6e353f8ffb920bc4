"""The erratum file format, validated with pydantic; errors name the field.

A file is the protocol's faithfulness notes as an ordered list of sections. A section is either
plain Markdown (the mapping, modelling choices, view data: facts that are not entries) or a block
of **entries** drawn as a table or a list. An entry is one discrepancy, slip, gap, race or repair:
where in the paper, what is printed, what is wrong or what the prose intends, what the printed
variant does, what we do instead, how we know (a replay: scenario + schedule under the printed
variant and under the repair, each with the outcome it must have) and how the repair was verified.
An entry with nothing to run (pure wording or notation) says so in ``no_replay``, with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

FILES = Path(__file__).parent / "files"
Outcome = Literal["all-served", "deadlock", "livelock", "violation", "incomplete"]
FIELDS = ("id", "title", "where", "printed", "intent", "as_printed", "ours")


class ErratumError(ValueError):
    """An erratum file that cannot be used; the message names the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Run(_Strict):
    """One side of a replay: a variant and the outcome it must reach (plus optional claims)."""

    variant: str = Field(min_length=1, max_length=40)
    outcome: Outcome
    claims: list[str] = Field(default_factory=list, max_length=6)   # lesson predicates at the end
    # Run the scenario's recorded schedule for this side's own variant instead of the replay's:
    # for a failure the other variant reaches by an event this one does not have (restricted's
    # ``a:T:win``), so the same crash needs its own path there.
    recorded: bool = False


class Replay(_Strict):
    """The counterexample: ``schedule`` (default: the scenario's recorded schedule for the printed
    variant) run under the printed variant, and the same schedule — followed as long as its events
    are enabled, then the scenario's scheduler — under the repair."""

    scenario: str = Field(min_length=1, max_length=80)
    schedule: list[str] | None = Field(default=None, max_length=5000)
    # Stop after this many events of the schedule and judge there: for a behaviour that is a
    # moment of the run (a message sent, a guard taken), not the way the run ends.
    step: int | None = Field(default=None, ge=1, le=5000)
    printed: Run
    repair: Run
    shows: str = Field(min_length=1, max_length=600)     # what the replay shows, in one sentence


class Verification(_Strict):
    status: Literal["exhaustive", "exhaustive-bounded", "random", "replayed", "reading",
                    "not-repaired"]
    family: str = Field(default="", max_length=600)      # the instance family it was checked on


class Entry(_Strict):
    id: str = Field(min_length=1, max_length=40)
    kind: Literal["slip", "discrepancy", "gap", "race", "repair", "reading", "guard",
                  "stuck-schedule"]
    title: str = Field(default="", max_length=400)
    where: str = Field(default="", max_length=400)
    printed: str = Field(default="", max_length=1000)
    intent: str = Field(default="", max_length=1000)
    as_printed: str = Field(default="", max_length=600)
    ours: str = Field(default="", max_length=1000)
    text: list[str] = Field(default_factory=list, max_length=40)   # an entry drawn as a list item
    replay: Replay | None = None
    # Why nothing can be run for this entry (a name, a notation, a proof's wording): the
    # erratum says so explicitly instead of leaving the entry without a replay.
    no_replay: str | None = Field(default=None, min_length=20, max_length=400)
    verification: Verification | None = None

    @model_validator(mode="after")
    def _replay_or_reason(self) -> "Entry":
        if self.replay is not None and self.no_replay is not None:
            raise ValueError(f"entry {self.id}: a replay and a no_replay reason exclude each other")
        return self


class Table(_Strict):
    columns: list[tuple[str, Literal["id", "title", "where", "printed", "intent", "as_printed",
                                     "ours"]]] = Field(min_length=1, max_length=8)


class ListStyle(_Strict):
    marker: Literal["1.", "-", "*"]
    bold_title: bool = False       # "**{id} — {title}.** text" / "**{title}** text"


class Section(_Strict):
    markdown: list[str] | None = None
    table: Table | None = None
    listing: ListStyle | None = None
    entries: list[Entry] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_kind(self) -> "Section":
        kinds = [k for k in (self.markdown is not None, self.table, self.listing) if k]
        if len(kinds) != 1:
            raise ValueError("a section is exactly one of markdown, table or listing")
        if self.markdown is not None and self.entries:
            raise ValueError("a markdown section has no entries")
        return self


class Erratum(_Strict):
    protocol: str = Field(min_length=1, max_length=40)
    title: str = Field(min_length=1, max_length=200)
    sections: list[Section] = Field(min_length=1)

    def entries(self) -> list[Entry]:
        return [e for s in self.sections for e in s.entries]

    @model_validator(mode="after")
    def _unique(self) -> "Erratum":
        ids = [e.id for e in self.entries()]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"duplicate entry ids: {', '.join(dup)}")
        return self


def load(protocol: str) -> Erratum:
    path = FILES / f"{protocol}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ErratumError(f"{path.name}: {exc}") from None
    try:
        return Erratum.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        raise ErratumError(f"{path.name}: {loc}: {err['msg']}") from None


def protocols() -> list[str]:
    return sorted(p.stem for p in FILES.glob("*.json"))


def coverage(protocol: str | None = None) -> dict[str, list[str]]:
    """Entries by how they are shown: ``replayable``, ``not-applicable`` (a stated reason why
    nothing runs) and ``missing`` (neither yet), as ``protocol:id``."""
    out: dict[str, list[str]] = {"replayable": [], "not-applicable": [], "missing": []}
    for p in [protocol] if protocol else protocols():
        for e in load(p).entries():
            key = "replayable" if e.replay else "not-applicable" if e.no_replay else "missing"
            out[key].append(f"{p}:{e.id}")
    return out
