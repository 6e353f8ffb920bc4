"""A real ``uvicorn app.main:app`` in a subprocess on a free loopback port with its own data
folder, for the tests and the benchmarks that need a server as `allocscope serve` runs it.

Only loopback traffic; every process started here is stopped by its own handle. Needs httpx
(a test dependency).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
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


def spawn(data: Path, port: int | None = None, env_extra: dict[str, str] | None = None,
          args: list[str] | None = None) -> tuple[subprocess.Popen, str]:
    """Start ``uvicorn app.main:app`` with ``ALLOCSCOPE_DATA=data``, ``env_extra`` and extra
    uvicorn ``args`` (not yet waited for). Its output goes to an unnamed temporary file, never a
    pipe nobody reads: a server that logs a lot in a long run must not block on a full pipe."""
    port = port or free_port()
    env = dict(os.environ, ALLOCSCOPE_DATA=str(data), PYTHONUNBUFFERED="1", **(env_extra or {}))
    cmd = [sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1",
           "--port", str(port), "--log-level", "warning", *(args or [])]
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    proc.log = log    # type: ignore[attr-defined] - read by wait_ready, closed by stop
    return proc, f"http://127.0.0.1:{port}"


def output(proc: subprocess.Popen, limit: int = 2000) -> str:
    """The last ``limit`` characters the server wrote."""
    log = getattr(proc, "log", None)
    if log is None or log.closed:
        return ""
    log.seek(0)
    return log.read().decode(errors="replace")[-limit:]


def wait_ready(proc: subprocess.Popen, base: str, timeout: float = 60) -> None:
    """Until /healthz answers; RuntimeError with the server's output if it exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {output(proc)}")
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    stop(proc)
    raise RuntimeError(f"server did not answer /healthz within {timeout} s")


def start_server(data: Path) -> tuple[subprocess.Popen, str]:
    proc, base = spawn(data)
    wait_ready(proc, base)
    return proc, base


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    for f in (proc.stdout, proc.stderr, getattr(proc, "log", None)):
        if f is not None:
            f.close()


@contextmanager
def running(data: Path, n: int = 1, env_extra: dict[str, str] | None = None,
            args: list[str] | None = None) -> Iterator[list[tuple[subprocess.Popen, str]]]:
    """``n`` server processes on one data folder, started side by side: (process, URL) each
    (a benchmark reads the process's CPU and memory)."""
    procs = [spawn(data, env_extra=env_extra, args=args) for _ in range(n)]
    try:
        for proc, base in procs:
            wait_ready(proc, base)
        yield procs
    finally:
        for proc, _ in procs:
            stop(proc)


@contextmanager
def servers(data: Path, n: int = 1,
            env_extra: dict[str, str] | None = None) -> Iterator[list[str]]:
    """``n`` server processes on one data folder, started side by side."""
    with running(data, n, env_extra) as procs:
        yield [base for _, base in procs]


@contextmanager
def server(data: Path, env_extra: dict[str, str] | None = None) -> Iterator[str]:
    with servers(data, 1, env_extra) as (base,):
        yield base


def proc_stats(pid: int) -> tuple[int, float]:
    """(RSS in KiB, user+system CPU seconds) of a process, from /proc: what the benchmarks
    report of the servers they start."""
    rss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return rss, (int(fields[11]) + int(fields[12])) / ticks
