"""Room pages and API: ``POST /api/rooms`` starts a room, ``/r/{code}`` is a student's join page,
``/r/{code}/teach`` the teacher's (the key travels in the URL fragment, never to the server's
logs), ``/r/{code}/qr.svg`` the join link as a QR code drawn by segno, ``/api/rooms/{code}``
the room's public info."""

from __future__ import annotations

import io
import time
from typing import Annotated, Any

import segno
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import offload, rawcheck
from ..commands import EventId
from ..pages import error_page, protocol_of, templates
from ..session import Session, SessionError
from . import rounds
from .bus import BusDown
from .conn import get_hub
from .model import RoomState, new_code, new_secret, norm_code, secret_hash
from .teacher import public_meta

router = APIRouter()


class StartRoom(BaseModel):
    """The state a room starts from: what the teacher's viewer shows."""

    model_config = ConfigDict(extra="forbid")
    scenario: Annotated[str, Field(min_length=1, max_length=200)] | dict[str, Any] | None = None
    variant: Annotated[str, Field(min_length=1, max_length=40)] | None = None
    schedule: list[EventId] | None = Field(default=None, max_length=1_000_000)
    step: Annotated[int, Field(ge=0, le=10_000_000)] | None = None
    lesson: Annotated[str, Field(min_length=1, max_length=80)] | None = None
    chapter: Annotated[int, Field(ge=0, le=1000)] | None = None


def _bad(status: int, message: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status)


def _start_state(body: StartRoom, limits: Any) -> tuple[Session, dict[str, Any] | None]:
    """In a worker thread: the session a new room starts from (a lesson's room opens at its
    chapter's state), and the chapter when it is a lesson's."""
    s = Session(limits)
    rawcheck.check_scenario(body.scenario, limits, body.schedule)   # as the viewer's load does
    if body.lesson is not None:
        chapter = rounds.lesson_chapter(body.lesson, body.chapter or 0)
        s.load(chapter["scenario"], chapter["variant"], chapter["timeline"], chapter["step"])
        return s, chapter
    s.load(body.scenario, body.variant, body.schedule, body.step)
    return s, None


@router.post("/api/rooms")
async def start_room(request: Request) -> Response:
    hub = await get_hub(request.app)
    settings = hub.settings
    try:
        body = StartRoom.model_validate_json(await request.body())
    except ValidationError as exc:
        errs = exc.errors()[:4]
        return _bad(400, "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}"
                                   for e in errs))
    now = time.monotonic()
    hub_created = getattr(hub, "created", {})
    alive = {c: t for c, t in hub_created.items() if now - t < settings.room_idle_seconds}
    if len(alive) >= settings.max_rooms:
        return _bad(429, f"this server already runs {settings.max_rooms} rooms "
                         f"(ALLOCSCOPE_MAX_ROOMS); end one or try again later")
    if body.lesson is None and body.scenario is None:
        return _bad(400, "scenario: give a scenario (gallery id or object), or a lesson")
    try:       # the load replays the schedule: off the event loop, on the work budget
        s, chapter = await offload.run(request.app.state.limits, "loading this scenario",
                                       _start_state, body, request.app.state.limits)
    except SessionError as exc:
        return _bad(400, str(exc))
    except (offload.WorkError, rawcheck.RawError) as exc:
        return _bad(413, str(exc))
    secret = new_secret()
    rec = RoomState(code="", secret_hash=secret_hash(secret),
                    scenario=s.scenario.model_dump(mode="json"), variant=s.sim.variant,
                    schedule=list(s.sim.trace), step=s.sim.step_no, sched_kind=s.sched_kind,
                    sched_seed=s.sched_seed, title=s.scenario.title)
    if chapter is not None:
        rec.lesson, rec.chapter, rec.chapters = body.lesson, body.chapter or 0, chapter["chapters"]
        rec.chapter_title, rec.chapter_text = chapter["title"], chapter["text"]
        rec.chapter_cite = chapter["cite"]
    try:
        for _ in range(20):
            rec.code = new_code()
            if await hub.save_record(rec, only_new=True):
                break
        else:
            return _bad(503, "could not find a free room code; try again")
    except BusDown as exc:
        return _bad(503, f"rooms are unavailable: {exc}")
    alive[rec.code] = now
    hub.created = alive
    base = str(request.base_url).rstrip("/")
    return JSONResponse({"code": rec.code, "secret": secret,
                         "join_url": f"{base}/r/{rec.code}",
                         "teacher_url": f"{base}/r/{rec.code}/teach#key={secret}",
                         "qr_url": f"/r/{rec.code}/qr.svg", "ws": f"/ws/room/{rec.code}"},
                        201)


async def _room(request: Request, code: str) -> tuple[str, RoomState]:
    c = norm_code(code)
    if c is None:
        raise LookupError(400, f"{code[:20]!r} is not a room code: six letters and digits, "
                               f"like K7QM2X")
    hub = await get_hub(request.app)
    try:
        rec = await hub.load_record(c)
    except BusDown as exc:
        raise LookupError(503, f"rooms are unavailable right now: {exc}") from None
    if rec is None:
        mins = hub.settings.room_idle_seconds / 60
        raise LookupError(404, f"There is no room {c}. It may have ended: a room ends after "
                               f"{mins:g} minutes without activity.")
    return c, rec


@router.get("/api/rooms/{code}")
async def room_info(request: Request, code: str) -> Response:
    try:
        c, rec = await _room(request, code)
    except LookupError as exc:
        return _bad(exc.args[0], exc.args[1])
    hub = await get_hub(request.app)
    return JSONResponse(public_meta(rec, max(hub.students(c), rec.students), True))


@router.get("/r/{code}/qr.svg")
async def room_qr(request: Request, code: str) -> Response:
    c = norm_code(code)
    if c is None:
        return _bad(400, "not a room code")
    url = f"{str(request.base_url).rstrip('/')}/r/{c}"
    buf = io.BytesIO()
    segno.make(url, error="m").save(buf, kind="svg", scale=8, border=2, dark="#111",
                                    xmldecl=False, title=f"join room {c}")
    return Response(buf.getvalue(), media_type="image/svg+xml",
                    headers={"Cache-Control": "public, max-age=3600"})


@router.get("/r", response_class=HTMLResponse)
async def join_form(request: Request, code: str = "") -> Response:
    """A box to type the code the teacher shows; a typed code goes to its room."""
    if code:
        c = norm_code(code)
        if c is not None:
            return RedirectResponse(f"/r/{c}", 303)
    return templates.TemplateResponse(request, "room_join.html", {
        "embed": False, "present": False, "code": code[:20],
        "bad": bool(code)})


@router.get("/r/{code}", response_class=HTMLResponse)
async def join_page(request: Request, code: str) -> Response:
    return await _page(request, code, "student")


@router.get("/r/{code}/teach", response_class=HTMLResponse)
async def teach_page(request: Request, code: str) -> Response:
    return await _page(request, code, "teacher")


async def _page(request: Request, code: str, role: str) -> Response:
    try:
        c, rec = await _room(request, code)
    except LookupError as exc:
        way = ("/r", "Type another room code") if role == "student" and exc.args[0] in (400, 404) else None
        return error_page(request, exc.args[0], exc.args[1], way)
    from protocols.scenario import ScenarioError, parse
    try:
        sc = parse(rec.scenario) if isinstance(rec.scenario, dict) else None
    except ScenarioError as exc:
        return error_page(request, 500, f"the room's scenario cannot be read: {exc}")
    if sc is None:
        return error_page(request, 500, "the room's scenario cannot be read")
    base = str(request.base_url).rstrip("/")
    room = {"code": c, "role": role, "ws": f"/ws/room/{c}", "join_url": f"{base}/r/{c}",
            "qr": f"/r/{c}/qr.svg", "title": rec.title}
    return templates.TemplateResponse(request, "room.html", {
        "scenario": sc.model_dump(mode="json"), "scenarios": [], "variant": rec.variant,
        "schedule": [], "step": None, "embed": False, "present": False,
        "protocol": protocol_of(sc), "link": None, "room": room})
