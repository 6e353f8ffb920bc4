"""Work that can take more than a few milliseconds runs here, off the event loop, on a budget.

Loading a scenario and replaying its schedule, opening a link, validating, exporting: each runs
in a worker thread (:func:`run`), at most ``ALLOCSCOPE_MAX_WORK`` at once per server worker, so
the event loop keeps answering ``/healthz`` and every other session meanwhile. The work calls
:func:`checkpoint` between steps; past ``ALLOCSCOPE_WORK_SECONDS`` of wall time, or when the
process has grown by more than ``ALLOCSCOPE_WORK_MEMORY_MB`` since the work began, the
checkpoint raises :class:`WorkError`, a sentence naming the limit (the work is abandoned and its
memory freed). A single protocol's setup cannot be interrupted halfway, which is why the raw
size checks (``app/rawcheck.py``) run first and bound it.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread

T = TypeVar("T")
EVERY = 64                     # steps between two memory readings (a reading costs ~10 µs)
_local = threading.local()
_gates: dict[int, threading.BoundedSemaphore] = {}
_gates_lock = threading.Lock()


# A worker thread holding the GIL makes the event loop wait up to one switch interval each time
# it wakes (the default 5 ms, dozens of wake-ups an HTTP request): 0.5 ms keeps /healthz and the
# other sessions quick while a heavy load runs, for a few per cent more switching overhead.
SWITCH_INTERVAL = 0.0005


def share_the_gil() -> None:
    """Make the interpreter hand the GIL between threads often (called by create_app)."""
    sys.setswitchinterval(SWITCH_INTERVAL)


class WorkError(RuntimeError):
    """Work stopped by its budget; the message names the limit."""


class Budget:
    """A deadline and a memory allowance for one piece of work."""

    def __init__(self, seconds: float, memory_mb: int, what: str) -> None:
        self.what = what
        self.seconds = seconds
        self.memory_mb = memory_mb
        self.deadline = time.monotonic() + seconds
        self.rss0 = rss_bytes()
        self.calls = 0

    def check(self) -> None:
        self.calls += 1
        if time.monotonic() > self.deadline:
            raise WorkError(f"{self.what} took longer than {self.seconds:g} s, this server's "
                            f"limit (ALLOCSCOPE_WORK_SECONDS); try a smaller scenario or a "
                            f"shorter schedule")
        if self.calls % EVERY == 0 and rss_bytes() - self.rss0 > self.memory_mb << 20:
            raise WorkError(f"{self.what} needed more than {self.memory_mb} MiB of memory, "
                            f"this server's limit (ALLOCSCOPE_WORK_MEMORY_MB); try a smaller "
                            f"scenario or a shorter schedule")


def rss_bytes() -> int:
    """This process's resident memory now (Linux /proc; 0 where it cannot be read)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def checkpoint() -> None:
    """Called by long work between steps: raises WorkError when the budget is spent (a no-op
    outside :func:`run`, e.g. in the CLI or the tests)."""
    b = getattr(_local, "budget", None)
    if b is not None:
        b.check()


def _gate(limit: int) -> threading.BoundedSemaphore:
    with _gates_lock:
        g = _gates.get(limit)
        if g is None:
            g = _gates[limit] = threading.BoundedSemaphore(limit)
        return g


def call(limits: Any, what: str, fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn(*args)`` here, on the budget of ``limits`` (in a worker thread: see run)."""
    with _gate(limits.max_work):
        _local.budget = Budget(limits.work_seconds, limits.work_memory_mb, what)
        try:
            return fn(*args)
        finally:
            _local.budget = None


async def run(limits: Any, what: str, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread on a budget; the event loop stays free meanwhile."""
    return await anyio.to_thread.run_sync(call, limits, what, fn, *args)


class _Frames(json.JSONEncoder):
    """JSON as app.frames.encode writes it, but chunk by chunk in Python (never one long C call
    holding the GIL) so that a frame's size can be checked as it grows."""

    def __init__(self) -> None:
        super().__init__(separators=(",", ":"), ensure_ascii=False)

    def default(self, o: Any) -> Any:
        from .frames import _plain
        return _plain(o)


def bounded_encode(frame: dict[str, Any], cap: int) -> str | None:
    """``app.frames.encode(frame)``, or None as soon as it grows past ``cap`` characters."""
    from .frames import RawJSON
    raw = [(k, v) for k, v in frame.items() if isinstance(v, RawJSON)]
    size = sum(len(k) + len(v.text) + 4 for k, v in raw)
    parts: list[str] = []
    for chunk in _Frames().iterencode({k: v for k, v in frame.items()
                                       if not isinstance(v, RawJSON)}):
        size += len(chunk)
        if size > cap:
            return None
        parts.append(chunk)
    text = "".join(parts)
    return text[:-1] + "".join(f",{json.dumps(k)}:{v.text}" for k, v in raw) + "}" if raw \
        else text
