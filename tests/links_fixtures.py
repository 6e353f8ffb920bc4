"""Helpers for the link tests: a real uvicorn subprocess on a free loopback port and a data folder.

Only loopback traffic; every process started here is stopped by its own handle.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data: Path, port: int | None = None, workers: int = 1) -> tuple[subprocess.Popen, str]:
    """Start ``uvicorn app.main:app`` with ``ALLOCSCOPE_DATA=data``; wait until /healthz answers."""
    port = port or free_port()
    env = dict(os.environ, ALLOCSCOPE_DATA=str(data), PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1",
           "--port", str(port), "--log-level", "warning"]
    if workers > 1:
        cmd += ["--workers", str(workers)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise RuntimeError(f"server exited with {proc.returncode}: {err.decode()[-2000:]}")
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    stop(proc)
    raise RuntimeError("server did not answer /healthz within 20 s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    for f in (proc.stdout, proc.stderr):
        if f is not None:
            f.close()


@contextmanager
def server(data: Path, workers: int = 1) -> Iterator[str]:
    proc, base = start_server(data, workers=workers)
    try:
        yield base
    finally:
        stop(proc)
