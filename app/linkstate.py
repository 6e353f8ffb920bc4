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

import hashlib
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

FORMAT = 2          # 2: links carry a behavioural fingerprint (trail + fingerprint)


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
    # what the run *did*, independent of how states are serialised (format 2): per step, two
    # hex digits of the running behaviour hash; and that hash with the step, in full
    trail: str | None = Field(default=None, pattern=r"^[0-9a-f]*$")
    fingerprint: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Opened:
    """A link replayed to its step: the simulator there, and a notice for the user (or '').

    ``diverged`` is None when today's run behaves as the stored one; otherwise ``{"step"``
    (the first step where they differ), ``"applied"`` (how much of the stored schedule still
    applies), ``"of"`` (its length), ``"stored_event"``, ``"now_event"}``, and the link is
    opened anyway, at its step or where the stored schedule stops applying."""

    record: LinkRecord
    scenario: Scenario
    sim: Simulator
    notice: str
    diverged: dict[str, Any] | None = None


def _behaviour(sim: Simulator, eid: str) -> bytes:
    """What one step did, by its observable outcome: the event, who is in a critical section
    with what, which monitors fired, how many messages are in flight, who has crashed."""
    cs = sorted((p, sorted(map(str, r))) for p, r in sim.cs.items())
    fired = sorted({f.kind for f in sim.monitors.findings.values() if f.step == sim.step_no})
    return json.dumps([eid, cs, fired, len(sim.inflight), sorted(sim.crashed)],
                      separators=(",", ":")).encode()


def _seal(running: bytes, step: int) -> str:
    return hashlib.sha256(running + f"@{step}".encode()).hexdigest()


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
            max_processes: int | None = None, trail: list[str] | None = None,
            tolerant: bool = False) -> Simulator:
    """Build and replay; ``trail`` (if given) collects each step's behaviour digest. With
    ``tolerant`` an event that is not enabled ends the replay there instead of raising."""
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
    running = b""
    try:
        for i, eid in enumerate(schedule):
            checkpoint()                          # the work budget (app/offload.py)
            try:
                sim.step(eid)
            except SimError as exc:
                if tolerant:
                    k = min(k, i)
                    break
                raise SimError(f"schedule item {i} ({eid!r}) cannot be applied: {exc}") from None
            if trail is not None:
                running = hashlib.sha256(running + _behaviour(sim, eid)).digest()
                trail.append(running.hex()[:2])
        if trail is not None:
            trail.append(running.hex())           # the last item: the running hash itself
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
    trail: list[str] = []
    sim = _replay(sc, req.variant, req.schedule, req.step, max_processes, trail)
    h = sim.state_hash()
    if req.state_hash is not None and req.state_hash != h:
        raise LinkError(400, f"link.state_hash: the server replays this schedule to {h[:12]}…, "
                             f"not {req.state_hash[:12]}…")
    rec = LinkRecord(format=FORMAT, scenario=normal_scenario(req.scenario, sc),
                     variant=sim.variant, schedule=list(req.schedule), step=sim.step_no,
                     protocol=sc.protocol, version=registry.get(sc.protocol).version,
                     state_hash=h, trail="".join(trail[:-1]),
                     fingerprint=_seal(bytes.fromhex(trail[-1]), sim.step_no))
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
    if rec.fingerprint is not None and rec.trail is not None:
        return _open_by_behaviour(rec, sc)
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


def _open_by_behaviour(rec: LinkRecord, sc: Scenario) -> Opened:
    """Format 2: replay and compare what each step *did*, not how the state is serialised, so
    a harmless upgrade (a defaulted field in a protocol's state) keeps every link opening at
    the same step. A run that now behaves differently opens anyway, as far as the stored
    schedule applies, with the first diverging step named; an identical run at an edited step
    or with an edited fingerprint is an altered link (400)."""
    now = registry.get(sc.protocol).version
    trail: list[str] = []
    sim = _replay(sc, rec.variant, rec.schedule, rec.step, trail=trail, tolerant=True)
    running, steps = trail[-1], trail[:-1]
    stored = [rec.trail[i:i + 2] for i in range(0, len(rec.trail or ""), 2)]
    first = next((i for i, (a, b) in enumerate(zip(stored, steps, strict=False)) if a != b),
                 None)
    if first is None and len(steps) < len(stored):
        first = len(steps)                    # the stored schedule stops applying here
    h = sim.state_hash()
    if first is None:
        if _seal(bytes.fromhex(running), rec.step) != rec.fingerprint or \
                len(stored) != len(rec.schedule):
            raise LinkError(400, f"link.fingerprint: the schedule behaves as recorded but the "
                                 f"link's step or fingerprint does not match it (the link was "
                                 f"altered); its state at step {rec.step} is {h[:12]}…")
        notes = []
        if now != rec.version:
            notes.append(f"made with {sc.protocol} version {rec.version}, now {now}")
        if h != rec.state_hash:
            notes.append("the protocol's state is stored differently now")
        notice = (("; ".join(notes) + "; the run behaves exactly as it did when the link was "
                   "made") if notes else "")
        return Opened(rec.model_copy(update={"state_hash": h}), sc, sim, notice)
    applied = min(len(steps), len(rec.schedule))
    at = sim.step_no
    div = {"step": first + 1, "applied": applied, "of": len(rec.schedule),
           "stored_event": rec.schedule[first] if first < len(rec.schedule) else None,
           "opened_at": at}
    how = (f"its event {div['stored_event']!r} is no longer possible there"
           if first >= len(steps) else f"event {div['stored_event']!r} now has another outcome")
    notice = (f"{sc.protocol} behaves differently since this link was made (version "
              f"{rec.version}, now {now}): the stored run and today's run first differ at "
              f"step {first + 1} ({how}). Shown: today's run of the stored schedule at step "
              f"{at}" + (f", as far as it applies ({applied} of {len(rec.schedule)} events)"
                         if applied < len(rec.schedule) else "") + ".")
    opened = rec.model_copy(update={"schedule": list(rec.schedule[:applied]), "step": at,
                                    "state_hash": h})
    return Opened(opened, sc, sim, notice, div)


def scenario_id(rec: LinkRecord) -> str:
    """The scenario's id (a gallery id, or the id field of a full object)."""
    return rec.scenario if isinstance(rec.scenario, str) else str(rec.scenario.get("id", ""))
