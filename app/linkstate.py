"""What a share link means: a scenario, a variant, a schedule and a step, checked by replaying.

Both link forms (the self-contained fragment of ``app/linkcodec.py`` and the short ``/s/{id}`` of
``app/store.py``) carry the same ``LinkState``. A link also records the protocol's ``version`` and
the ``state_hash`` at its step, so that opening it can prove the replay reached the same state and,
when it did not, say plainly why (the protocol changed, or the link was altered) instead of
silently showing another state.

Scenario references are gallery ids or full scenario objects; a string is never treated as a
file path (``protocols.scenario.resolve`` would), since links come from strangers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from protocols import registry
from protocols.kernel import SimError, Simulator
from protocols.runner import build
from protocols.scenario import Scenario, ScenarioError, format_errors, gallery, parse

from .limits import current
from .offload import WorkError, checkpoint
from .rawcheck import RawError, check_scenario

FORMAT = 1


#: Largest canonical link (bytes of JSON). Over it: 413.
MAX_LINK_BYTES = current().link_max_bytes
#: Longest schedule a link may carry (replaying it is the cost of opening the link).
MAX_SCHEDULE = current().link_max_schedule


class LinkError(ValueError):
    """A link that cannot be made or opened; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LinkRequest(_Strict):
    """The body of ``POST /api/links``: what the viewer knows about its current state."""

    scenario: str | dict[str, Any]
    variant: str | None = Field(default=None, max_length=40)
    schedule: list[str] = Field(default_factory=list)
    step: int | None = Field(default=None, ge=0)
    state_hash: str | None = Field(default=None, max_length=64)   # optional cross-check


class LinkRecord(_Strict):
    """A stored or encoded link: the request, resolved, plus what proves the state."""

    format: int = Field(ge=1, le=FORMAT)
    scenario: str | dict[str, Any]
    variant: str = Field(max_length=40)
    schedule: list[str]
    step: int = Field(ge=0)
    protocol: str = Field(max_length=40)
    version: str = Field(max_length=40)
    state_hash: str = Field(pattern=r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Opened:
    """A link replayed to its step: the simulator there, and a notice for the user (or '')."""

    record: LinkRecord
    scenario: Scenario
    sim: Simulator
    notice: str


def canonical(data: Any) -> bytes:
    """The one JSON serialisation links are hashed, stored and encoded in."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _check_size(record: dict[str, Any]) -> bytes:
    raw = canonical(record)
    if len(raw) > MAX_LINK_BYTES:
        raise LinkError(413, f"link too large: {len(raw)} bytes, the limit is {MAX_LINK_BYTES} "
                             "(ALLOCSCOPE_LINK_MAX_BYTES); share a shorter schedule")
    return raw


def scenario_of(ref: str | dict[str, Any]) -> Scenario:
    """A gallery id or a full scenario object, validated (never a file path)."""
    if isinstance(ref, str):
        found = gallery().get(ref)
        if found is None:
            raise LinkError(404, f"link.scenario: no gallery scenario {ref[:80]!r}")
        return found
    try:
        check_scenario(ref, current(), where="link.scenario")   # sizes, before pydantic
    except RawError as exc:
        raise LinkError(413 if "ALLOCSCOPE_MAX_ITEMS" in str(exc) or "SCHEDULE" in str(exc)
                        else 400, str(exc)) from None
    try:
        return parse(ref)
    except ScenarioError as exc:
        raise LinkError(400, f"link.{exc}") from None


def normal_scenario(ref: str | dict[str, Any], sc: Scenario) -> str | dict[str, Any]:
    """Gallery ids stay ids; objects are re-dumped without defaults (same scenario ⇒ same bytes)."""
    if isinstance(ref, str):
        return ref
    return sc.model_dump(mode="json", exclude_defaults=True)


def _replay(sc: Scenario, variant: str | None, schedule: list[str], step: int | None,
            max_processes: int | None = None) -> Simulator:
    if len(schedule) > MAX_SCHEDULE:
        raise LinkError(413, f"link.schedule: {len(schedule)} events, the limit is {MAX_SCHEDULE} "
                             "(ALLOCSCOPE_LINK_MAX_SCHEDULE)")
    k = len(schedule) if step is None else step
    if k > len(schedule):
        raise LinkError(400, f"link.step: {k} is beyond the schedule's {len(schedule)} events")
    try:
        sim = build(sc, variant)
    except ScenarioError as exc:
        raise LinkError(400, f"link.variant: {exc}" if "variant" in str(exc) else str(exc)) from None
    except Exception as exc:  # a protocol's setup choking on odd params is still bad input
        raise LinkError(400, f"scenario: cannot be built ({type(exc).__name__}: {exc})") from None
    if max_processes is not None and len(sim.pids) > max_processes:
        raise LinkError(413, f"scenario: {len(sim.pids)} processes; this server allows "
                             f"{max_processes} (ALLOCSCOPE_MAX_PROCESSES)")
    try:
        for i, eid in enumerate(schedule):
            checkpoint()                          # the work budget (app/offload.py)
            try:
                sim.step(eid)
            except SimError as exc:
                raise SimError(f"schedule item {i} ({eid!r}) cannot be applied: {exc}") from None
        sim.goto(k)
    except SimError as exc:
        raise LinkError(400, f"link.schedule: {exc}") from None
    except WorkError:
        raise
    except Exception as exc:  # never a 500 for a link: name what failed instead
        raise LinkError(400, f"link.schedule: replay failed at step {sim.step_no} "
                             f"({type(exc).__name__}: {exc})") from None
    return sim


def make(req: LinkRequest, max_processes: int | None = None) -> LinkRecord:
    """Replay a viewer's state and return the link record that reproduces it (a scenario the
    server's sessions would refuse, over ``max_processes``, is refused here too: 413)."""
    sc = scenario_of(req.scenario)
    sim = _replay(sc, req.variant, req.schedule, req.step, max_processes)
    h = sim.state_hash()
    if req.state_hash is not None and req.state_hash != h:
        raise LinkError(400, f"link.state_hash: the server replays this schedule to {h[:12]}…, "
                             f"not {req.state_hash[:12]}…")
    rec = LinkRecord(format=FORMAT, scenario=normal_scenario(req.scenario, sc),
                     variant=sim.variant, schedule=list(req.schedule), step=sim.step_no,
                     protocol=sc.protocol, version=registry.get(sc.protocol).version,
                     state_hash=h)
    _check_size(rec.model_dump())
    return rec


def record_from(data: Any) -> LinkRecord:
    """Validate decoded link JSON; the error names the field."""
    if not isinstance(data, dict):
        raise LinkError(400, f"link: must be a JSON object, not {type(data).__name__}")
    try:
        return LinkRecord.model_validate(data)
    except ValidationError as exc:
        raise LinkError(400, format_errors(exc, "link")) from None


def open_record(rec: LinkRecord) -> Opened:
    """Replay a link and prove it reached the recorded state; otherwise a LinkError saying why.

    409 when the protocol's version changed since the link was made and the replay differs;
    400 when the version is the same but the replay differs (the link was altered, or the
    gallery scenario it names changed).
    """
    _check_size(rec.model_dump())
    sc = scenario_of(rec.scenario)
    if sc.protocol != rec.protocol:
        raise LinkError(400, f"link.protocol: {rec.protocol!r} does not match the scenario's "
                             f"protocol {sc.protocol!r}")
    now = registry.get(sc.protocol).version
    changed = now != rec.version
    why = (f"protocol {sc.protocol} changed since this link was made (version {rec.version} → "
           f"{now})") if changed else ""
    try:
        sim = _replay(sc, rec.variant, rec.schedule, rec.step)
    except LinkError as exc:
        if changed and exc.status == 400:
            raise LinkError(409, f"{why}: its schedule no longer replays ({exc.message})") from None
        raise
    h = sim.state_hash()
    if h != rec.state_hash:
        if changed:
            raise LinkError(409, f"{why}: its schedule now reaches a different state at step "
                                 f"{rec.step} (state_hash {h[:12]}…, the link recorded "
                                 f"{rec.state_hash[:12]}…)")
        raise LinkError(400, f"link.state_hash: the schedule replays to {h[:12]}… at step "
                             f"{rec.step}, not the recorded {rec.state_hash[:12]}… (the link was "
                             "altered, or the scenario changed since it was made)")
    notice = (f"made with {sc.protocol} version {rec.version}, now {now}; it still replays to "
              "the same state") if changed else ""
    return Opened(rec, sc, sim, notice)


def scenario_id(rec: LinkRecord) -> str:
    """The scenario's id (a gallery id, or the id field of a full object)."""
    return rec.scenario if isinstance(rec.scenario, str) else str(rec.scenario.get("id", ""))
