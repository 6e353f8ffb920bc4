"""Share links, exports and thumbnails: one router for ``app/main.py`` to include.

- ``POST /api/links`` {scenario, variant?, schedule?, step?, state_hash?} -> ``{"id", "url",
  "fragment_url", "step", "state_hash"}``: replays the state, stores it (``app/store.py``).
- ``GET /api/links/{id}`` -> the stored link, replayed and verified (what ``load {"link"}`` uses).
- ``POST /api/links/fragment`` (same body) -> ``{"fragment_url", ...}``, storing nothing.
- ``GET /api/scenario-file/{id}`` -> a gallery scenario file as it is (the editor's start).
- ``POST /api/links/decode`` {"fragment"} -> the same for a self-contained ``#s=`` link.
- ``GET /s/{id}`` -> 303 to the viewer at that state (``/sim/<id>?link=<short id>&...``), or an
  HTML page saying what is wrong (400 / 404 / 409 / 413, never a 500).
- ``GET|POST /api/export`` -> the trace as a scenario file ``allocscope run FILE --scheduler
  scripted`` replays (``app/exports.py``).
- ``GET /api/thumb/{scenario_id}.svg`` -> the gallery thumbnail (``app/thumbs.py``).
- the editor's routes (``app/editor.py``).

Every failure is a ``LinkError`` with a status and a sentence naming the problem.
"""

from __future__ import annotations

import json
import time
from collections import deque
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from pydantic import ValidationError

from protocols.scenario import format_errors, gallery

from . import editor, exports, linkcodec, offload, thumbs
from .linkstate import MAX_LINK_BYTES, LinkError, LinkRecord, LinkRequest, Opened, make, open_record
from .store import StoreError, get_store, load_record, reset_stores, save_link


def _open_store_at_startup() -> None:
    """Open (and check) the link store when the server starts, so that a corrupt or locked
    database stops start-up with a sentence saying so, not the first POST with a 503."""
    get_store()


def _checkpoint_at_shutdown() -> None:
    """A clean stop leaves every link in ``links.sqlite3`` itself, not only in its -wal."""
    reset_stores()


router = APIRouter(on_startup=[_open_store_at_startup], on_shutdown=[_checkpoint_at_shutdown])
router.include_router(editor.router)

MAX_BODY = 2 * MAX_LINK_BYTES
SHORT_SCHEDULE_CHARS = 4000   # longer schedules travel by link id, not in the viewer's query


Failure = (LinkError, StoreError, offload.WorkError)


def _json_error(exc: Exception) -> JSONResponse:
    if isinstance(exc, StoreError):
        return JSONResponse({"detail": f"link store unavailable: {exc}"}, 503)
    if isinstance(exc, offload.WorkError):
        return JSONResponse({"detail": str(exc)}, 413)
    return JSONResponse({"detail": exc.message}, exc.status)   # type: ignore[attr-defined]


async def _off(request: Request, what: str, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` off the event loop, on the app's work budget (app/offload.py)."""
    return await offload.run(request.app.state.limits, what, fn, *args)


def _html_error(request: Request, status: int, message: str) -> HTMLResponse:
    return editor.templates.TemplateResponse(
        request, "error.html", {"status": status, "message": message, "embed": False,
                                "present": False}, status_code=status)


async def _body_json(request: Request) -> Any:
    body = await request.body()
    if len(body) > MAX_BODY:
        raise LinkError(413, f"request body too large: {len(body)} bytes, the limit is {MAX_BODY}")
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise LinkError(400, "request body: not valid JSON") from None


def _request(data: Any) -> LinkRequest:
    if not isinstance(data, dict):
        raise LinkError(400, "link: must be a JSON object")
    try:
        return LinkRequest.model_validate(data)
    except ValidationError as exc:
        raise LinkError(400, format_errors(exc, "link")) from None


def _max_processes(request: Request) -> int | None:
    """The sessions' process limit (app/limits.py), when the app has one."""
    return getattr(getattr(request.app.state, "limits", None), "max_processes", None)


def _viewer_url(rec: LinkRecord, lid: str | None) -> str:
    """Where the viewer shows ``rec``: the contract's query params plus ``link`` when stored."""
    if not isinstance(rec.scenario, str):
        return f"/sim/-?{urlencode({'link': lid})}" if lid else linkcodec.url(rec)
    q: dict[str, Any] = {"variant": rec.variant, "step": rec.step}
    if lid:
        q["link"] = lid
    query = urlencode(q)
    # the contract's schedule: ids URL-encoded one by one, joined by literal commas
    sched = ",".join(quote(e, safe="") for e in rec.schedule)
    if sched and len(sched) <= SHORT_SCHEDULE_CHARS:
        query += "&schedule=" + sched
    return f"/sim/{quote(rec.scenario, safe='')}?{query}"


def _described(opened: Opened, lid: str | None = None) -> dict[str, Any]:
    out = opened.record.model_dump()
    for k in ("format", "trail", "fingerprint"):
        out.pop(k, None)
    out["notice"] = opened.notice
    out["diverged"] = opened.diverged
    out["viewer_url"] = _viewer_url(opened.record, lid)
    out["fragment_url"] = linkcodec.url(opened.record)
    if lid:
        out["id"] = lid
        out["url"] = f"/s/{lid}"
    return out


@router.post("/api/links")
async def create_link(request: Request) -> JSONResponse:
    try:
        data = await _body_json(request)
        return await _off(request, "making this link", _create, data, _max_processes(request))
    except Failure as exc:
        return _json_error(exc)


def _create(data: Any, max_processes: int | None) -> JSONResponse:
    # replaying and the fsync of the insert run in a worker thread, off the event loop
    rec = make(_request(data), max_processes)
    lid = save_link(rec)
    return JSONResponse({"id": lid, "url": f"/s/{lid}", "fragment_url": linkcodec.url(rec),
                         "step": rec.step, "state_hash": rec.state_hash}, 201)


@router.post("/api/links/fragment")
async def fragment_link(request: Request) -> JSONResponse:
    """Like ``POST /api/links`` but stores nothing: only the self-contained ``#s=`` link."""
    try:
        data = await _body_json(request)
        rec = await _off(request, "making this link", make, _request(data),
                         _max_processes(request))
    except Failure as exc:
        return _json_error(exc)
    return JSONResponse({"fragment_url": linkcodec.url(rec), "step": rec.step,
                         "state_hash": rec.state_hash, "version": rec.version})


@router.get("/api/scenario-file/{scenario_id}")
def scenario_file(scenario_id: str) -> JSONResponse:
    """A gallery scenario's file as it is (what the editor starts from)."""
    sc = gallery().get(scenario_id)
    if sc is None:
        return JSONResponse({"detail": f"no gallery scenario {scenario_id[:80]!r}"}, 404)
    return JSONResponse(sc.model_dump(mode="json", exclude_defaults=True))


class Misses:
    """Unknown short-link ids asked for, per client, over the last minute: ids are guessable
    from a known state (docs/deployment.md), so probing them in bulk is refused (429)."""

    def __init__(self) -> None:
        self._seen: dict[str, deque[float]] = {}

    def _recent(self, who: str, now: float) -> deque[float]:
        q = self._seen.setdefault(who, deque())
        while q and now - q[0] > 60.0:
            q.popleft()
        if len(self._seen) > 10_000:                 # bounded: forget the quiet clients
            for k in [k for k, v in self._seen.items() if not v][:5000]:
                del self._seen[k]
        return q

    def check(self, request: Request) -> None:
        limit = request.app.state.limits.link_misses_per_minute
        who = request.client.host if request.client else "?"
        if len(self._recent(who, time.monotonic())) >= limit:
            raise LinkError(429, f"too many unknown link ids from this address: at most "
                                 f"{limit} a minute (ALLOCSCOPE_LINK_MISSES_PER_MINUTE)")

    def add(self, request: Request) -> None:
        who = request.client.host if request.client else "?"
        self._recent(who, time.monotonic()).append(time.monotonic())


async def _open_checked(request: Request, lid: str) -> Opened:
    """Open a stored link, counting unknown ids against the client's allowance (per app)."""
    misses = getattr(request.app.state, "link_misses", None)
    if misses is None:
        misses = request.app.state.link_misses = Misses()
    misses.check(request)
    try:
        return await _off(request, "opening this link", _open_stored, lid)
    except LinkError as exc:
        if exc.status == 404:
            misses.add(request)
        raise


@router.get("/api/links/{lid}")
async def read_link(request: Request, lid: str) -> JSONResponse:
    try:
        opened = await _open_checked(request, lid)
        return JSONResponse(_described(opened, lid))
    except Failure as exc:
        return _json_error(exc)


def _open_stored(lid: str) -> Opened:
    return open_record(load_record(lid))


@router.post("/api/links/decode")
async def decode_fragment(request: Request) -> JSONResponse:
    try:
        data = await _body_json(request)
        frag = data.get("fragment") if isinstance(data, dict) else None
        if not isinstance(frag, str):
            raise LinkError(400, 'body: expected {"fragment": "<payload after #s=>"}')
        opened = await _off(request, "opening this link", open_record, linkcodec.decode(frag))
        return JSONResponse(_described(opened))
    except Failure as exc:
        return _json_error(exc)


@router.get("/s/{lid}", response_class=HTMLResponse)
async def open_short(request: Request, lid: str) -> Response:
    try:
        opened = await _open_checked(request, lid)
    except LinkError as exc:
        return _html_error(request, exc.status, exc.message)
    except offload.WorkError as exc:
        return _html_error(request, 413, str(exc))
    except StoreError as exc:
        return _html_error(request, 503, f"the link store is unavailable: {exc}")
    if opened.diverged:        # never a blank viewer: say what changed, offer the stored run
        rec = opened.record
        before = rec.model_copy(update={"step": min(opened.diverged["step"] - 1, rec.step)})
        return editor.templates.TemplateResponse(request, "link_changed.html", {
            "notice": opened.notice, "diverged": opened.diverged, "embed": False,
            "present": False, "viewer_url": _viewer_url(rec, lid),
            "diverge_url": _viewer_url(before, lid)})
    return RedirectResponse(_viewer_url(opened.record, lid), status_code=303)


def _opened_from_query(request: Request) -> Opened:
    q = request.query_params
    if q.get("link"):
        return open_record(load_record(q["link"]))
    if q.get("fragment"):
        return open_record(linkcodec.decode(q["fragment"]))
    if not q.get("scenario"):
        raise LinkError(400, "export: give link=<id>, fragment=<payload>, or scenario=<gallery "
                             "id> with variant, schedule (comma-separated) and step")
    raw_step = q.get("step")
    if raw_step is not None and not raw_step.isdigit():
        raise LinkError(400, f"export.step: must be a whole number, not {raw_step[:20]!r}")
    sched = [e for e in q.get("schedule", "").split(",") if e]
    # (through _request: a field the model refuses, a 41-character variant, is a 400 naming it,
    # not a ValidationError that left as a 500)
    rec = make(_request({"scenario": q["scenario"], "variant": q.get("variant") or None,
                         "schedule": sched, "step": int(raw_step) if raw_step else None}))
    return open_record(rec)


def _export_response(opened: Opened) -> Response:
    data, warning = exports.trace_file(opened)
    name = f"{data.get('id', 'scenario')}-step{opened.record.step}.json"
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    if warning:
        headers["X-Allocscope-Warning"] = quote(warning, safe=" ,.;:()'`-")
    body = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return Response(body, media_type="application/json", headers=headers)


@router.get("/api/export")
async def export_get(request: Request) -> Response:
    try:
        return await _off(request, "exporting this trace", _export_query, request)
    except Failure as exc:
        return _json_error(exc)


def _export_query(request: Request) -> Response:
    return _export_response(_opened_from_query(request))


@router.post("/api/export")
async def export_post(request: Request) -> Response:
    """Body: the same as ``POST /api/links`` (for full scenario objects), or {"fragment"}."""
    try:
        data = await _body_json(request)
        return await _off(request, "exporting this trace", _export_body, data)
    except Failure as exc:
        return _json_error(exc)


def _export_body(data: Any) -> Response:
    if isinstance(data, dict) and set(data) == {"fragment"}:
        opened = open_record(linkcodec.decode(str(data["fragment"])))
    else:
        opened = open_record(make(_request(data)))
    return _export_response(opened)


@router.get("/api/thumb/{name}")
def thumb(name: str) -> Response:
    svg = thumbs.thumbnail(name.removesuffix(".svg")) if name.endswith(".svg") else None
    if svg is None:
        return JSONResponse({"detail": f"no gallery scenario {name.removesuffix('.svg')[:80]!r}"},
                            404)
    return Response(svg, media_type="image/svg+xml",
                    headers={"Cache-Control": "public, max-age=3600"})
