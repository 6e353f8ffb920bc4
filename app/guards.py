"""Two small ASGI layers around the whole app: security headers on every HTTP response (the
Host check's 400 and the body bound's 413 included), and a request-body bound that counts bytes
as they arrive instead of reading a body whole before looking at its size."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

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


class _TooLarge(Exception):
    pass


class BodyLimit:
    """413 as soon as a request body passes ``max_bytes`` (by Content-Length, or by counting the
    chunks of a streamed body), naming ALLOCSCOPE_MAX_BODY_BYTES."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def _refuse(self, send: Send) -> None:
        body = json.dumps({"detail": f"request body larger than {self.max_bytes} bytes "
                                     "(ALLOCSCOPE_MAX_BODY_BYTES)"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for k, v in scope.get("headers", []):
            if k == b"content-length":
                try:
                    declared = int(v)
                except ValueError:
                    declared = 0
                if declared > self.max_bytes:
                    await self._refuse(send)
                    return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return msg

        async def watched(msg: Message) -> None:
            nonlocal started
            if msg["type"] == "http.response.start":
                started = True
            await send(msg)
        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if not started:
                await self._refuse(send)
