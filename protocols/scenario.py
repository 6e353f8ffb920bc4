"""Scenario files: the JSON that fixes a run, validated with pydantic. Nothing in one is executed.

A bad file raises ``ScenarioError`` whose message names the field and the reason, e.g.
``scenario.scheduler.kind: Input should be 'manual', 'random', ...``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

GALLERY = Path(__file__).parent / "scenarios"
MAX_FILE_BYTES = 1_000_000

Outcome = Literal["all-served", "deadlock", "livelock", "violation", "incomplete"]
SchedulerKind = Literal["manual", "random", "oldest", "round-robin", "scripted"]


class ScenarioError(ValueError):
    """A scenario that cannot be used; the message names the field and the reason."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PaperRef(_Strict):
    file: str = Field(max_length=200)
    figure: str | None = Field(default=None, max_length=200)
    section: str | None = Field(default=None, max_length=200)


class SchedulerSpec(_Strict):
    kind: SchedulerKind = "oldest"
    seed: int = Field(default=0, ge=0, le=2**63 - 1)
    then: SchedulerKind | None = "oldest"   # what a scripted schedule hands over to when it ends


class Faults(_Strict):
    """Which faults the explorer and the random scheduler may inject (opt-in)."""

    drop: bool = False
    duplicate: bool = False
    crash: bool = False
    corrupt: bool = False
    rate: float = Field(default=0.0, ge=0.0, le=1.0)

    @property
    def any(self) -> bool:
        return self.drop or self.duplicate or self.crash or self.corrupt


class Expect(_Strict):
    outcome: Outcome
    cycle: list[str] | None = None        # the deadlock's wait-for cycle, as a set of nodes
    period: int | None = Field(default=None, ge=1)
    notes: str = Field(default="", max_length=4000)
    variants: dict[str, "Expect"] = Field(default_factory=dict)

    def for_variant(self, variant: str) -> "Expect":
        return self.variants.get(variant, self)


class Bookmark(_Strict):
    """A named moment of a scenario's timeline (drawn as a labelled marker by the viewer)."""

    step: int = Field(ge=0, le=1_000_000)
    label: str = Field(min_length=1, max_length=120)
    variants: list[str] | None = None      # only on these variants (default: every variant)


class Scenario(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,79}$")
    title: str = Field(min_length=1, max_length=200)
    protocol: str = Field(min_length=1, max_length=40)
    variant: str | None = Field(default=None, max_length=40)
    paper: PaperRef | None = None
    teaches: str = Field(default="", max_length=1000)
    params: dict[str, Any] = Field(default_factory=dict)
    topology: dict[str, Any] = Field(default_factory=dict)
    workload: dict[str, Any] = Field(default_factory=dict)
    channels: Literal["fifo", "unordered"] | None = None
    scheduler: SchedulerSpec = Field(default_factory=SchedulerSpec)
    schedule: list[str] | dict[str, list[str]] | None = None
    steps: int = Field(default=2000, ge=1, le=1_000_000)
    faults: Faults = Field(default_factory=Faults)
    expect: Expect | None = None
    symmetry: list[list[str]] = Field(default_factory=list)   # interchangeable processes
    # The step that *is* the paper's figure (the viewer opens there), per variant when a dict
    # ("default" for the others); and named moments the ``teaches`` line talks about.
    open_at: int | dict[str, int] | None = None
    bookmarks: list[Bookmark] = Field(default_factory=list, max_length=40)

    @field_validator("protocol")
    @classmethod
    def _known_protocol(cls, v: str) -> str:
        from .registry import available
        names = available()
        if v not in names:
            raise ValueError(f"unknown protocol {v!r}; known: {', '.join(names)}")
        return v

    @field_validator("open_at")
    @classmethod
    def _open_at_range(cls, v: int | dict[str, int] | None) -> int | dict[str, int] | None:
        for k in ([v] if isinstance(v, int) else (v or {}).values()):
            if not 0 <= k <= 1_000_000:
                raise ValueError(f"a step from 0 to 1000000, not {k}")
        return v

    def open_at_for(self, variant: str) -> int | None:
        """The figure moment of ``variant`` (None: the end of the recorded schedule)."""
        if isinstance(self.open_at, dict):
            return self.open_at.get(variant, self.open_at.get("default"))
        return self.open_at

    def bookmarks_for(self, variant: str) -> list[Bookmark]:
        return [b for b in self.bookmarks if b.variants is None or variant in b.variants]

    def schedule_for(self, variant: str) -> list[str]:
        if self.schedule is None:
            return []
        if isinstance(self.schedule, dict):
            return list(self.schedule.get(variant, []))
        return list(self.schedule)


# ---- typed params / topology / workload ---------------------------------------------------
class Fields(_Strict):
    """Base of a protocol's ``scenario_model``: its typed ``params``, ``topology`` and
    ``workload`` (each a ``_Strict`` model, so an unknown key is an error naming it)."""


Section = _Strict   # base of one typed section (params, topology or workload): unknown keys fail


class Empty(_Strict):
    """A section the protocol does not use: it must be empty."""


def whole(lo: int, hi: int, about: str = "") -> Any:
    """An int field from lo to hi whose error reads like the protocols' own checks
    ("must be a whole number from 2 to 10000"); booleans are not numbers here."""
    def check(v: Any) -> Any:
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise ValueError(f"must be a whole number from {lo} to {hi}")
        return v
    return Annotated[int, BeforeValidator(check),
                     Field(json_schema_extra={"minimum": lo, "maximum": hi}, description=about)]


def scenario_model(protocol: str) -> type[BaseModel] | None:
    """The protocol's typed model of params / topology / workload (None: free-form)."""
    from .registry import get
    return get(protocol).scenario_model


def check_fields(sc: "Scenario") -> BaseModel | None:
    """Validate ``sc.params / topology / workload`` with the protocol's model; ScenarioError
    names the field path (``scenario.params.n: ...``)."""
    model = scenario_model(sc.protocol)
    if model is None:
        return None
    try:
        return model.model_validate({"params": sc.params, "topology": sc.topology,
                                     "workload": sc.workload})
    except ValidationError as exc:
        raise ScenarioError(format_errors(exc)) from None


def field_errors(sc: "Scenario", limit: int = 20) -> list[tuple[str, str]]:
    """(field path, reason) for each problem the protocol's model finds in ``sc``."""
    try:
        check_fields(sc)
    except ScenarioError:
        model = scenario_model(sc.protocol)
        try:
            model.model_validate({"params": sc.params, "topology": sc.topology,
                                  "workload": sc.workload})
        except ValidationError as exc:
            return errors_of(exc)[:limit]
    return []


def schema(protocol: str) -> dict[str, Any]:
    """The JSON Schema of a scenario of ``protocol``: the envelope with its params / topology /
    workload typed by the protocol's model (what /api/schema/{protocol} serves)."""
    out = Scenario.model_json_schema()
    model = scenario_model(protocol)
    if model is not None:
        typed = model.model_json_schema(ref_template="#/$defs/{model}")
        out.setdefault("$defs", {}).update(typed.pop("$defs", {}))
        for key in ("params", "topology", "workload"):
            if key in typed.get("properties", {}):
                out["properties"][key] = typed["properties"][key]
    out["properties"]["protocol"] = {**out["properties"]["protocol"], "const": protocol}
    from .registry import get
    proto = get(protocol)
    out["properties"]["variant"] = {**out["properties"]["variant"],
                                    "enum": [*proto.variants, None]}
    if proto.variant_table is not None:     # each variant's features, with their reasons
        out["x-variants"] = proto.variant_table.describe()
    out["title"] = f"Scenario of {protocol}"
    return out


def errors_of(exc: ValidationError, root: str = "scenario") -> list[tuple[str, str]]:
    """(field path, reason) of each error pydantic found, the path rooted at ``root``."""
    return [(".".join([root, *(str(x) for x in err["loc"])]),
             err["msg"].removeprefix("Value error, ")) for err in exc.errors()]


def format_errors(exc: ValidationError, root: str = "scenario") -> str:
    parts = [f"{loc}: {msg}" for loc, msg in errors_of(exc, root)[:8]]
    more = len(exc.errors()) - 8
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def parse(data: Any) -> Scenario:
    """Validate a scenario given as parsed JSON."""
    if not isinstance(data, dict):
        raise ScenarioError(f"scenario: must be a JSON object, not {type(data).__name__}")
    try:
        sc = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(format_errors(exc)) from None
    check_fields(sc)
    return sc


def parse_text(text: str, source: str = "scenario") -> Scenario:
    if len(text) > MAX_FILE_BYTES:
        raise ScenarioError(f"{source}: larger than {MAX_FILE_BYTES} bytes")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{source}: not valid JSON ({exc.msg} at line {exc.lineno}, "
                            f"column {exc.colno})") from None
    return parse(data)


def load_file(path: str | Path) -> Scenario:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError(f"{p}: not UTF-8 text") from None
    return parse_text(text, str(p))


_gallery: dict[str, Scenario] | None = None


def gallery() -> dict[str, Scenario]:
    """The gallery scenarios by id, in file-name order (loaded once)."""
    global _gallery
    if _gallery is None:
        found: dict[str, Scenario] = {}
        for f in sorted(GALLERY.glob("*.json")):
            sc = load_file(f)
            if sc.id in found:
                raise ScenarioError(f"{f.name}: duplicate gallery id {sc.id!r}")
            found[sc.id] = sc
        _gallery = found
    return _gallery


def resolve(ref: str) -> Scenario:
    """A gallery id or a path to a scenario file."""
    g = gallery()
    if ref in g:
        return g[ref]
    p = Path(ref)
    if p.suffix == ".json" or p.exists():
        return load_file(p)
    raise ScenarioError(f"no gallery scenario {ref!r} and no such file; "
                        f"gallery ids: {', '.join(g) or 'none'}")
