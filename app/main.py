"""The FastAPI application: pages, the JSON API, static files and the websocket.

``uvicorn app.main:app`` (the Procfile, ``allocscope serve``) serves it; ``create_app(limits)``
builds another instance with other limits (tests). Every ``ALLOCSCOPE_*`` variable is read here,
through ``app.limits.Settings``: a malformed one stops the server with a sentence naming it.
Security headers are set on every HTTP response, 500s included: a Content-Security-Policy with
no inline scripts, and the usual hardening headers. Only the ``Host`` names in
``ALLOCSCOPE_ALLOWED_HOSTS`` are answered (DNS rebinding), and request bodies are counted as they
arrive (``ALLOCSCOPE_MAX_BODY_BYTES``), never read whole first.
"""

from __future__ import annotations

import logging
import mimetypes
import sys
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from . import checks, guards, links, offload, pages, rooms, ws
from .governor import Governor
from .limits import Limits, SettingsError

ROOT = Path(__file__).resolve().parent.parent

# ES modules must be served as JavaScript whatever the host's mime.types says.
mimetypes.add_type("text/javascript", ".js")
mimetypes.add_type("text/javascript", ".mjs")
mimetypes.add_type("text/css", ".css")
mimetypes.add_type("image/svg+xml", ".svg")

log = logging.getLogger("allocscope")


def _wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


def _harden(request: Request, response: Response) -> Response:
    """The security headers, set on a response made past the middleware (500s)."""
    for k, v in guards.security_headers(request.url.path, request.url.query):
        response.headers.setdefault(k.decode(), v.decode())
    return response


def create_app(limits: Limits | None = None, governor: Governor | None = None) -> FastAPI:
    """The app; ``governor`` replaces the one built from the limits (tests give one whose
    lateness they hold)."""
    app = FastAPI(title="allocscope", version="0.1.0",
                  description="A browser lab for distributed resource-allocation algorithms.")
    app.state.limits = limits or Limits.from_env()
    app.state.sessions = ws.SessionCount()
    app.state.governor = governor or Governor(app.state.limits.play_cpu_share,
                                              app.state.limits.refuse_lag_ms / 1000)
    offload.share_the_gil()
    guards.quiet_bad_frames()

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> Response:
        # runs in the outermost (server-error) layer, outside SecurityHeaders: harden here
        log.error("internal error on %s", request.url.path, exc_info=exc)
        text = f"internal error: {type(exc).__name__}"
        if _wants_html(request):
            return _harden(request, pages.error_page(request, 500, text))
        return _harden(request, JSONResponse({"detail": text}, 500))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        detail = exc.detail if isinstance(exc.detail, str) else "request failed"
        if exc.status_code == 404:
            detail = f"There is no page at {request.url.path[:200]!r}."
        if _wants_html(request):
            return pages.error_page(request, exc.status_code, detail)
        return JSONResponse({"detail": detail}, exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        errs = exc.errors()[:4]
        text = "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in errs)
        if _wants_html(request):
            return pages.error_page(request, 400, text or "bad request")
        return JSONResponse({"detail": text or "bad request"}, 400)

    app.include_router(pages.router)
    app.include_router(ws.router)
    app.include_router(checks.router)
    app.include_router(links.router)
    rooms.install(app)    # classroom rooms (app/rooms/)
    from . import lessons  # guided lessons and erratum pages (app/lessons.py)
    app.include_router(lessons.router)
    app.mount("/static", StaticFiles(directory=str(ROOT / "static"), check_dir=False),
              name="static")
    lim = app.state.limits
    app.add_middleware(guards.BodyGuard, max_bytes=lim.max_body_bytes, max_depth=lim.max_depth)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(lim.allowed_hosts))
    app.add_middleware(guards.SecurityHeaders)       # the last added is the outermost
    return app


try:
    app = create_app()
except SettingsError as _exc:
    sys.stderr.write(f"allocscope: cannot start: {_exc}\n")
    raise SystemExit(2) from None
