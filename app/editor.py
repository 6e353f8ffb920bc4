"""The scenario editor's server side: validation that names the field, and the editor page.

``POST /api/scenarios/validate`` takes raw JSON (anything: the editor posts whatever the user
typed) and answers 200 with ``{"ok": true, "summary": {...}}`` or ``{"ok": false, "errors":
[{"field": "scenario.params.n", "message": "..."}]}``. It validates the model, then builds the
simulator (protocols check their own params there) and replays the scenario's schedule, so an
``ok`` scenario is one the viewer can load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError

from protocols import registry
from protocols.kernel import SimError
from protocols.runner import build
from protocols.scenario import MAX_FILE_BYTES, Scenario, ScenarioError, field_errors, schema

from . import offload
from .limits import current
from .linkstate import MAX_SCHEDULE
from .offload import WorkError, checkpoint
from .rawcheck import RawError, check_scenario

router = APIRouter()
templates = Jinja2Templates(directory=str(Path(__file__).resolve().parent.parent / "templates"))


def _split(message: str) -> list[dict[str, str]]:
    """'scenario.a.b: reason; scenario.c: reason' -> [{"field", "message"}, ...]."""
    out = []
    for part in message.split("; "):
        field, sep, msg = part.partition(": ")
        if sep and field.startswith("scenario") and " " not in field:
            out.append({"field": field, "message": msg})
        else:
            out.append({"field": "scenario", "message": part})
    return out


def validate(data: Any) -> dict[str, Any]:
    """Check a scenario as the viewer would load it; errors name the field."""
    if not isinstance(data, dict):
        return {"ok": False, "errors": [{"field": "scenario", "message":
                                         f"must be a JSON object, not {type(data).__name__}"}]}
    try:
        check_scenario(data, current())          # sizes and nesting, before pydantic
    except RawError as exc:
        field, _, msg = str(exc).partition(": ")
        return {"ok": False, "errors": [{"field": field if field.startswith("scenario") else
                                         "scenario", "message": msg or str(exc)}]}
    try:
        sc = Scenario.model_validate(data)
    except ValidationError as exc:
        errs = [{"field": ".".join(["scenario", *(str(x) for x in e["loc"])]),
                 "message": e["msg"].removeprefix("Value error, ")} for e in exc.errors()[:20]]
        return {"ok": False, "errors": errs}
    typed = field_errors(sc)
    if typed:
        return {"ok": False, "errors": [{"field": f, "message": m} for f, m in typed]}
    try:
        sim = build(sc)
    except ScenarioError as exc:
        msg = str(exc)
        if "variant" in msg and not msg.startswith("scenario."):
            return {"ok": False, "errors": [{"field": "scenario.variant", "message": msg}]}
        return {"ok": False, "errors": _split(msg)}
    except Exception as exc:  # a protocol choking on odd params: still the user's input
        return {"ok": False, "errors": [{"field": "scenario.params", "message":
                                         f"cannot build the scenario ({type(exc).__name__}: {exc})"}]}
    schedule = sc.schedule_for(sim.variant)
    if len(schedule) > MAX_SCHEDULE:
        return {"ok": False, "errors": [{"field": "scenario.schedule", "message":
                                         f"{len(schedule)} events, the limit is {MAX_SCHEDULE}"}]}
    try:
        for i, eid in enumerate(schedule):
            checkpoint()                          # the work budget (app/offload.py)
            try:
                sim.step(eid)
            except SimError as exc:
                raise SimError(f"schedule item {i} ({eid!r}) cannot be applied: {exc}") from None
    except WorkError:
        raise
    except SimError as exc:
        return {"ok": False, "errors": [{"field": "scenario.schedule", "message": str(exc)}]}
    except Exception as exc:
        return {"ok": False, "errors": [{"field": "scenario.schedule", "message":
                                         f"replay failed ({type(exc).__name__}: {exc})"}]}
    return {"ok": True, "errors": [], "summary": {
        "id": sc.id, "protocol": sc.protocol, "variant": sim.variant,
        "processes": len(sim.pids), "schedule": len(schedule), "state_hash": sim.state_hash()}}


@router.post("/api/scenarios/validate")
async def validate_route(request: Request) -> JSONResponse:
    body = await request.body()
    if len(body) > MAX_FILE_BYTES:
        return JSONResponse({"detail": f"scenario larger than {MAX_FILE_BYTES} bytes"}, 413)
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        where = f" ({exc.msg} at line {exc.lineno}, column {exc.colno})" \
            if isinstance(exc, json.JSONDecodeError) else ""
        return JSONResponse({"ok": False, "errors": [
            {"field": "scenario", "message": f"not valid JSON{where}"}]})
    try:                                          # builds and replays: off the loop
        return JSONResponse(await offload.run(request.app.state.limits,
                                              "validating this scenario", validate, data))
    except WorkError as exc:
        return JSONResponse({"ok": False, "errors": [{"field": "scenario",
                                                      "message": str(exc)}]}, 413)


@router.get("/api/schema/{protocol}")
def schema_route(protocol: str) -> JSONResponse:
    """The JSON Schema of a scenario of ``protocol``: the envelope, with its params / topology /
    workload typed by the protocol's ``scenario_model`` (the editor completes and checks with
    it)."""
    if protocol not in registry.available():
        return JSONResponse({"detail": f"unknown protocol {protocol!r}; known: "
                                       f"{', '.join(registry.available())}"}, 404)
    return JSONResponse(schema(protocol))


@router.get("/editor", response_class=HTMLResponse)
def editor_page(request: Request) -> HTMLResponse:
    """The editor; what it edits comes from the query (``scenario``, ``link``) or the fragment,
    read by static/js/editor.js."""
    return templates.TemplateResponse(request, "editor.html", {"embed": False, "present": False})
