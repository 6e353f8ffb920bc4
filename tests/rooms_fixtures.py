"""Helpers for the room tests: real uvicorn servers (one or two, sharing a real redis-server on a
free loopback port in a temporary folder, stopped after) and a small synchronous room client."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

from app.devserver import server

from .conftest import _free_port

REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"


class RedisServer:
    """A real redis-server on a free loopback port, in a temporary folder, no persistence."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="allocscope-redis-"))
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.dir), "--protected-mode", "yes"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import socket
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.proc = None

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@contextmanager
def uvicorn_server(env_extra: dict[str, str] | None = None) -> Iterator[str]:
    """A real uvicorn (app/devserver.py) on its own temporary data folder."""
    data = tempfile.mkdtemp(prefix="allocscope-data-")
    try:
        with server(Path(data), env_extra) as url:
            yield url
    finally:
        shutil.rmtree(data, ignore_errors=True)


def start_room(base: str, **body: Any) -> dict[str, Any]:
    req = urllib.request.Request(base + "/api/rooms", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


class Member:
    """A room member over the real websocket; keeps every message it received."""

    def __init__(self, base: str, code: str, role: str = "student", secret: str | None = None):
        self._cm = connect(base.replace("http", "ws", 1) + f"/ws/room/{code}", max_size=16 << 20)
        self.ws = self._cm.__enter__()
        self.seen: list[dict[str, Any]] = []
        self.next_id = 0
        hello: dict[str, Any] = {"op": "hello", "role": role}
        if secret:
            hello["secret"] = secret
        self.hello = self.cmd(**hello)

    def send(self, **cmd: Any) -> int:
        self.next_id += 1
        self.ws.send(json.dumps({**cmd, "id": self.next_id}))
        return self.next_id

    def recv(self, timeout: float = 10.0) -> dict[str, Any]:
        msg = json.loads(self.ws.recv(timeout=timeout))
        self.seen.append(msg)
        return msg

    def cmd(self, timeout: float = 10.0, **cmd: Any) -> dict[str, Any]:
        """Send a command and return its answer (other messages are kept in ``seen``)."""
        rid = self.send(**cmd)
        deadline = time.monotonic() + timeout
        while True:
            msg = self.recv(max(0.01, deadline - time.monotonic()))
            if msg.get("reply_to") == rid:
                return msg

    def wait(self, pred: Any, timeout: float = 10.0) -> dict[str, Any]:
        """The first message received from now on for which ``pred`` holds; on a timeout the
        error names the last messages and every error this member was sent."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError
                msg = self.recv(left)
            except TimeoutError:
                errors = [m.get("message") for m in self.seen if m.get("type") == "error"]
                raise TimeoutError(f"no matching message in {timeout} s; last: "
                                   f"{[m.get('type') for m in self.seen[-5:]]}; errors: "
                                   f"{errors}") from None
            if pred(msg):
                return msg

    def close(self) -> None:
        self._cm.__exit__(None, None, None)
