"""Page routes: the gallery ``/`` and the viewer ``/sim/{scenario_id}`` (Jinja2, autoescaped),
plus ``/api/scenarios``. Bad input gets a clear HTML page with a 4xx status, never a 500.

Template context (web contract): ``scenario`` (the Scenario as a dict), ``scenarios`` (list),
``variant``, ``schedule`` (list of ids), ``step`` (int or None), ``embed``, ``present``,
``protocol`` ({id, title, variants, view_kind, fault_kinds}), ``link`` (short id or None) and
``from_lesson`` (the lesson chapter "explore from here" came from: href, number, titles; or None).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import jinja2
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.templating import Jinja2Templates

from protocols import registry
from protocols.scenario import Scenario, ScenarioError, gallery, parse

from .limits import Limits
from .linkstate import LinkError
from .store import StoreError, load_record

ROOT = Path(__file__).resolve().parent.parent
# autoescape everywhere (not only *.html): scenario text is never markup
templates = Jinja2Templates(env=jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(ROOT / "templates")), autoescape=True))
router = APIRouter()

MAX_EVENT_ID = 200


class PageError(ValueError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_page(request: Request, status: int, message: str,
               way: tuple[str, str] | None = None) -> HTMLResponse:
    """The error page; ``way`` (href, words) is a way on offered before "Back to the gallery"
    (a student whose room code is wrong wants the join box, not the gallery)."""
    return templates.TemplateResponse(
        request, "error.html", {"status": status, "message": message, "embed": False,
                                "present": False, "way": way}, status_code=status)


def protocol_of(sc: Scenario) -> dict[str, Any]:
    from .frames import message_styles
    p = registry.get(sc.protocol)
    return {"id": p.id, "title": p.title, "variants": list(p.variants),
            "view_kind": p.view_kind, "fault_kinds": list(p.fault_kinds),
            "message_styles": message_styles(p)}


def summary(sc: Scenario) -> dict[str, Any]:
    """One gallery entry as ``/api/scenarios`` and the gallery page show it."""
    p = registry.get(sc.protocol)
    return {"id": sc.id, "title": sc.title, "protocol": sc.protocol, "variant": sc.variant,
            "variants": list(p.variants), "paper": sc.paper.model_dump() if sc.paper else None,
            "teaches": sc.teaches, "view": p.view_kind}


def _gallery() -> dict[str, Scenario]:
    try:
        return gallery()
    except ScenarioError as exc:
        raise PageError(500, f"the scenario gallery cannot be read: {exc}") from None


@router.get("/healthz")
def healthz() -> dict[str, bool]:
    return {"ok": True}


@router.get("/api/scenarios")
def api_scenarios() -> Response:
    try:
        return JSONResponse([summary(sc) for sc in _gallery().values()])
    except PageError as exc:
        return JSONResponse({"detail": exc.message}, exc.status)


PAGE_ORDER = ("datta_ring", "kout_tree", "coterie", "task_game", "token_ring")


def _card_order(sc: Scenario) -> tuple[int, int, int, int, int, int]:
    """The papers' protocols first, the headline one leading, the teaching ring last; within a
    protocol the paper's figures first, in figure order, the figure itself (a bare "Fig. 1") and
    its protocol's own variant before the runs built on it; the rest in the gallery's order
    (a teacher landing on / met "Section IV: a client leaves" before Fig. 1)."""
    rank = PAGE_ORDER.index(sc.protocol) if sc.protocol in PAGE_ORDER else len(PAGE_ORDER)
    label = (sc.paper.figure or "") if sc.paper else ""
    fig = re.match(r"Figs?\.\s*(\d+)", label)
    if not fig:
        return (rank, 1, 0, 0, 0, 0)
    own = sc.variant in (None, registry.get(sc.protocol).default_variant)
    printed = "printed" in (sc.variant or "")     # the paper's misprints after its figures
    return (rank, 0, int(fig.group(1)), len(label), int(not own), int(printed))


@router.get("/", response_class=HTMLResponse)
def gallery_page(request: Request) -> Response:
    try:
        found = list(_gallery().values())
    except PageError as exc:
        return error_page(request, exc.status, exc.message)
    found.sort(key=_card_order)
    scenarios = [summary(sc) for sc in found]
    return templates.TemplateResponse(request, "gallery.html", {
        "scenarios": scenarios, "embed": False, "present": False})


@router.get("/sim/{scenario_id}", response_class=HTMLResponse)
def viewer_page(request: Request, scenario_id: str) -> Response:
    try:
        ctx = _viewer_context(request, scenario_id)
    except PageError as exc:
        return error_page(request, exc.status, exc.message)
    return templates.TemplateResponse(request, "viewer.html", ctx)


def _viewer_context(request: Request, scenario_id: str) -> dict[str, Any]:
    limits: Limits = request.app.state.limits
    q = request.query_params
    link = q.get("link")
    sc: Scenario | None = None
    if link:
        sc = _link_scenario(link)
    if sc is None:
        sc = _gallery().get(scenario_id)
        if sc is None and scenario_id == "-":
            sc = _shared_placeholder()
        if sc is None:
            raise PageError(404, f"There is no scenario {scenario_id[:80]!r} in the gallery.")
    proto = protocol_of(sc)
    variant = q.get("variant") or None
    if variant is not None and variant not in proto["variants"]:
        raise PageError(400, f"variant: {variant[:40]!r} is not one of {proto['id']}'s variants "
                             f"({', '.join(proto['variants'])})")
    schedule = _schedule(request, limits)
    step = _int(q.get("step"), "step")
    if step is not None and schedule and step > len(schedule):
        raise PageError(400, f"step: {step} is past the end of the schedule "
                             f"({len(schedule)} events)")
    return {"scenario": sc.model_dump(mode="json"), "scenarios": [], "variant": variant,
            "schedule": schedule, "step": step, "embed": q.get("embed") == "1",
            "present": q.get("present") == "1", "protocol": proto, "link": link or None,
            "from_lesson": _from_lesson(q.get("lesson"), q.get("chapter"))}


def _from_lesson(lesson_id: str | None, chapter_id: str | None) -> dict[str, Any] | None:
    """The lesson chapter that opened this viewer ("explore from here"), for the way back."""
    if lesson_id is None:
        return None
    from protocols.lessons.model import LessonError

    from .lessons import lesson_return
    try:
        return lesson_return(lesson_id, chapter_id)
    except LessonError as exc:
        raise PageError(400, f"lesson: {exc}") from None


@router.get("/compare/{scenario_id}", response_class=HTMLResponse)
def compare_page(request: Request, scenario_id: str) -> Response:
    """Two variants side by side on one schedule (issue 17 item 9): each half is the embedded
    viewer at the same step, and the page says where the two runs part."""
    try:
        sc = _gallery().get(scenario_id)
        if sc is None:
            raise PageError(404, f"There is no scenario {scenario_id[:80]!r} in the gallery.")
        proto = protocol_of(sc)
        q = request.query_params
        a = q.get("a") or sc.variant or proto["variants"][0]
        b = q.get("b") or next(v for v in proto["variants"] if v != a)
        for name, v in (("a", a), ("b", b)):
            if v not in proto["variants"]:
                raise PageError(400, f"{name}: {v[:40]!r} is not one of {proto['id']}'s variants "
                                     f"({', '.join(proto['variants'])})")
        # the longer of the two recorded schedules when one extends the other: where the
        # shorter run stops is often exactly where the variants part (naive vs full, Fig. 1)
        sa, sb = sc.schedule_for(a), sc.schedule_for(b)
        own = sb if len(sb) > len(sa) and sb[:len(sa)] == sa else sa
        given = _schedule(request, request.app.state.limits)
        schedule = own if not given or own[:len(given)] == given else given
        step = _int(q.get("step"), "step")
        step = min(len(schedule), sc.open_at_for(a) or len(schedule)) if step is None else step
        if step > len(schedule):
            raise PageError(400, f"step: {step} is past the end of the schedule "
                                 f"({len(schedule)} events)")
        parted, takes = _divergence(sc, a, b, schedule)
    except PageError as exc:
        return error_page(request, exc.status, exc.message)
    halves = [{"variant": v, "schedule": ",".join(schedule[:n]), "step": min(step, n),
               "stops": n if n < len(schedule) else None} for v, n in zip((a, b), takes, strict=True)]
    return templates.TemplateResponse(request, "compare.html", {
        "scenario": sc.model_dump(mode="json"), "protocol": proto, "a": a, "b": b,
        "schedule": ",".join(schedule), "step": step, "parted": parted, "halves": halves,
        "embed": False, "present": q.get("present") == "1"})


def _divergence(sc: Scenario, a: str, b: str,
                schedule: list[str]) -> tuple[dict[str, Any] | None, list[int]]:
    """The first step where the two variants' runs of ``schedule`` differ (one cannot take the
    event, or the two say different things about it), None if never; and how many events of
    the schedule each variant can take."""
    from protocols import runner
    from protocols.kernel import SimError
    sims = [runner.build(sc, v) for v in (a, b)]
    takes = [len(schedule), len(schedule)]
    parted = None
    for i, eid in enumerate(schedule):
        said: list[tuple[str, ...] | None] = []
        for j, sim in enumerate(sims):
            if takes[j] < i + 1 and takes[j] != len(schedule):
                said.append(None)
                continue
            try:
                said.append(tuple(n.text for n in sim.step(eid)))
            except SimError:
                said.append(None)
                takes[j] = min(takes[j], i)
        if parted is None and said[0] != said[1]:
            why = [("cannot take " + eid) if x is None else "; ".join(x) for x in said]
            parted = {"step": i + 1, "event": eid, "a": why[0], "b": why[1]}
        if takes[0] <= i and takes[1] <= i:
            break
    return parted, takes


def _shared_placeholder() -> Scenario | None:
    """``/sim/-#s=...`` (app/linkcodec.py): a self-contained link to a scenario given as a full
    object. The fragment never reaches the server; static/js/share.js reads it and loads the
    scenario over the socket. Until then the page stands on the first gallery scenario, untitled."""
    first = next(iter(_gallery().values()), None)
    if first is None:
        return None
    return first.model_copy(update={"id": "-", "title": "Shared scenario", "teaches": "",
                                    "paper": None})


def _link_scenario(link: str) -> Scenario | None:
    """The scenario a short link names (the viewer loads the link itself over the socket)."""
    try:
        rec = load_record(link)
    except LinkError as exc:
        raise PageError(exc.status, exc.message) from None
    except StoreError as exc:
        raise PageError(503, f"the link store is unavailable: {exc}") from None
    ref = rec.scenario
    if isinstance(ref, str):
        found = _gallery().get(ref)
        if found is None:
            raise PageError(404, f"the link names scenario {ref[:80]!r}, which is not in the "
                                 f"gallery")
        return found
    try:
        return parse(ref)
    except ScenarioError as exc:
        raise PageError(400, f"link.{exc}") from None


def _schedule(request: Request, limits: Limits) -> list[str]:
    """``schedule`` = comma-separated, each id URL-encoded: split the raw query before decoding,
    so an id may itself contain an (encoded) comma."""
    raw = request.scope.get("query_string", b"").decode("latin-1")
    for part in raw.split("&"):
        name, _, value = part.partition("=")
        if unquote(name) != "schedule":
            continue
        if not value:
            return []
        ids = [unquote(x.replace("+", " ")) for x in value.split(",")]
        if len(ids) > limits.max_schedule:
            raise PageError(400, f"schedule: {len(ids)} events; this server allows "
                                 f"{limits.max_schedule} (ALLOCSCOPE_MAX_SCHEDULE)")
        for i, eid in enumerate(ids):
            if not eid or len(eid) > MAX_EVENT_ID:
                raise PageError(400, f"schedule item {i}: an event id of 1 to {MAX_EVENT_ID} "
                                     f"characters")
        return ids
    return []


def _int(value: str | None, name: str) -> int | None:
    if value is None or value == "":
        return None
    if not value.isdigit() or len(value) > 9:
        raise PageError(400, f"{name}: must be a whole number from 0 to 999999999, "
                             f"not {value[:20]!r}")
    return int(value)
