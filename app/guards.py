"""Two small ASGI layers around the whole app: security headers on every HTTP response (the
Host check's 400 and the body guard's 413 included), and a request-body guard that counts bytes
as they arrive instead of reading a body whole before looking at its size, and refuses JSON
nested too deep before any parser sees it."""

from __future__ import annotations

import json
import logging
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .rawcheck import RawError, check_text

# No inline script anywhere (page data travels in <script type="application/json">, which is not
# executed); inline style attributes are allowed because the SVG views set them.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors {ancestors}")


def security_headers(path: str, query: str) -> list[tuple[bytes, bytes]]:
    """The headers every response carries; the viewer and lessons with embed=1 may sit in any iframe."""
    embed = path.startswith(("/sim/", "/lesson/")) and parse_qs(query).get("embed") == ["1"]
    return [(b"content-security-policy", CSP.format(ancestors="*" if embed else "'self'").encode()),
            (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin")]


class SecurityHeaders:
    """Adds :func:`security_headers` to every HTTP response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = security_headers(scope.get("path", ""), scope.get("query_string", b"").decode(
            "latin-1"))

        async def send_hardened(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                have = {k.lower() for k, _ in msg.get("headers", [])}
                msg = dict(msg)
                msg["headers"] = list(msg.get("headers", [])) + [
                    (k, v) for k, v in extra if k not in have]
            await send(msg)
        await self.app(scope, receive, send_hardened)


class BodyGuard:
    """Reads a request body in chunks up to ``max_bytes`` (413 as soon as the Content-Length or
    the bytes received pass it, ALLOCSCOPE_MAX_BODY_BYTES) and refuses JSON nested deeper than
    ``max_depth`` before anything parses it (400, ALLOCSCOPE_MAX_DEPTH); then hands the body on."""

    def __init__(self, app: ASGIApp, max_bytes: int, max_depth: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth

    @staticmethod
    async def _refuse(send: Send, status: int, detail: str) -> None:
        body = json.dumps({"detail": detail}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        too_big = (413, f"request body larger than {self.max_bytes} bytes "
                        "(ALLOCSCOPE_MAX_BODY_BYTES)")
        for k, v in scope.get("headers", []):
            if k == b"content-length" and v.isdigit() and int(v) > self.max_bytes:
                await self._refuse(send, *too_big)
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            msg = await receive()
            if msg["type"] != "http.request":
                return                                  # the client went away
            chunk = msg.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(send, *too_big)
                return
            chunks.append(chunk)
            if not msg.get("more_body", False):
                break
        body = b"".join(chunks)
        if body.lstrip()[:1] in (b"{", b"["):
            try:
                check_text(body, self.max_depth)
            except RawError as exc:
                await self._refuse(send, 400, str(exc))
                return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()
        await self.app(scope, replay, send)


class QuietBadFrames(logging.Filter):
    """uvicorn logs every websocket text frame that is not UTF-8 with a full traceback (the
    client gets close code 1007, correctly); one line is enough, so a client sending many
    cannot flood the log with tracebacks."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and "Invalid UTF-8" in str(record.msg):
            record.exc_info = None
            record.exc_text = None
        return True


def quiet_bad_frames() -> None:
    """Install :class:`QuietBadFrames` on uvicorn's error logger (once)."""
    lg = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, QuietBadFrames) for f in lg.filters):
        lg.addFilter(QuietBadFrames())
