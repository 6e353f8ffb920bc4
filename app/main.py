"""The FastAPI application: pages, the JSON API, static files and the websocket.

``uvicorn app.main:app`` (the Procfile, ``allocscope serve``) serves it; ``create_app(limits)``
builds another instance with other limits (tests). Security headers are set on every HTTP
response: a Content-Security-Policy with no inline scripts, and the usual hardening headers.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from . import checks, pages, rooms, ws
from .governor import Governor
from .limits import Limits

ROOT = Path(__file__).resolve().parent.parent

# ES modules must be served as JavaScript whatever the host's mime.types says.
mimetypes.add_type("text/javascript", ".js")
mimetypes.add_type("text/javascript", ".mjs")
mimetypes.add_type("text/css", ".css")
mimetypes.add_type("image/svg+xml", ".svg")

# No inline script anywhere (page data travels in <script type="application/json">, which is not
# executed); inline style attributes are allowed because the SVG views set them.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors {ancestors}")


def _wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


def create_app(limits: Limits | None = None) -> FastAPI:
    app = FastAPI(title="allocscope", version="0.1.0",
                  description="A browser lab for distributed resource-allocation algorithms.")
    app.state.limits = limits or Limits.from_env()
    app.state.sessions = ws.SessionCount()
    app.state.governor = Governor()

    @app.middleware("http")
    async def security_headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        response: Response = await call_next(request)
        # the viewer with embed=1 is meant to sit in an iframe on a course page
        embed = request.url.path.startswith("/sim/") and request.query_params.get("embed") == "1"
        response.headers.setdefault("Content-Security-Policy",
                                    CSP.format(ancestors="*" if embed else "'self'"))
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response

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
    rooms.install(app)    # classroom rooms (app/rooms/)
    try:
        from . import links  # the share-links router (app/links.py), when present
    except ImportError:
        links = None          # type: ignore[assignment]
    if links is not None:
        app.include_router(links.router)
    app.mount("/static", StaticFiles(directory=str(ROOT / "static"), check_dir=False),
              name="static")
    return app


app = create_app()
