"""Running a coroutine from a test, whatever the thread's state."""

from __future__ import annotations

import asyncio
import threading
from typing import Any


def run_async(make: Any) -> Any:
    """asyncio.run(make()) in a thread of its own: the browser tests' Playwright keeps an event
    loop running in the main thread for the whole session."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = asyncio.run(make())
        except BaseException as exc:   # noqa: BLE001 - re-raised in the test's thread
            out["error"] = exc
    t = threading.Thread(target=target)
    t.start()
    t.join(60)
    if "error" in out:
        raise out["error"]
    return out["value"]
