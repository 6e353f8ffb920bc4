"""Room pub/sub and the little key-value state rooms keep: one interface, two implementations.

``InProcessBus`` (the default: one worker, nothing to install) and ``RedisBus``
(``ALLOCSCOPE_REDIS_URL``, app/rooms/redisbus.py) so that a teacher on one worker and students on
another share a room. A bus carries short text messages on named channels and stores strings and
hashes that expire; nothing else. Status changes (the broker went away, came back) go to the
listener given to ``start`` so rooms can tell people and recover.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

Handler = Callable[[str, str], None]            # (channel, message) -> None, runs on the loop
StatusListener = Callable[[bool, str], Awaitable[None]]   # (up, sentence)


class BusDown(RuntimeError):
    """The broker cannot be reached; the message says so in a sentence for the user."""


class Bus:
    """What rooms need from a broker: publish / subscribe and expiring keys and hashes."""

    kind = "abstract"
    up = True

    async def start(self, on_message: Handler, on_status: StatusListener) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def subscribe(self, channel: str) -> None:
        raise NotImplementedError

    async def unsubscribe(self, channel: str) -> None:
        raise NotImplementedError

    async def publish(self, channel: str, message: str) -> None:
        raise NotImplementedError

    async def get(self, key: str) -> str | None:
        raise NotImplementedError

    async def set(self, key: str, value: str, ttl: float, only_new: bool = False) -> bool:
        """Store ``value`` for ``ttl`` seconds; with ``only_new`` only if the key is absent."""
        raise NotImplementedError

    async def hset(self, key: str, field: str, value: str, ttl: float) -> None:
        raise NotImplementedError

    async def hgetall(self, key: str) -> dict[str, str]:
        raise NotImplementedError

    async def hfill(self, key: str, fields: dict[str, str], ttl: float) -> None:
        """Put back fields a hash has lost (an emptied broker), never over a newer value."""
        raise NotImplementedError

    async def delete(self, *keys: str) -> None:
        raise NotImplementedError

    async def expire(self, keys: list[str], ttl: float) -> None:
        raise NotImplementedError


class InProcessBus(Bus):
    """Everything in this worker's memory: channels deliver on the event loop, keys expire on a
    monotonic clock. Subscribers are this worker's only, which is all one worker needs."""

    kind = "in-process"

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._subs: set[str] = set()
        self._handler: Handler | None = None
        self._values: dict[str, tuple[float, str]] = {}
        self._hashes: dict[str, tuple[float, dict[str, str]]] = {}

    async def start(self, on_message: Handler, on_status: StatusListener) -> None:
        self._handler = on_message

    async def close(self) -> None:
        self._subs.clear()

    async def subscribe(self, channel: str) -> None:
        self._subs.add(channel)

    async def unsubscribe(self, channel: str) -> None:
        self._subs.discard(channel)

    async def publish(self, channel: str, message: str) -> None:
        if channel in self._subs and self._handler is not None:
            # as Redis does, delivery happens after the publisher's turn, never inside it
            asyncio.get_running_loop().call_soon(self._handler, channel, message)

    def _alive(self, table: dict, key: str):   # noqa: ANN202 - either table's entry
        entry = table.get(key)
        if entry is None:
            return None
        if entry[0] <= self._clock():
            del table[key]
            return None
        return entry

    async def get(self, key: str) -> str | None:
        entry = self._alive(self._values, key)
        return entry[1] if entry else None

    async def set(self, key: str, value: str, ttl: float, only_new: bool = False) -> bool:
        if only_new and self._alive(self._values, key) is not None:
            return False
        self._values[key] = (self._clock() + ttl, value)
        return True

    async def hset(self, key: str, field: str, value: str, ttl: float) -> None:
        entry = self._alive(self._hashes, key)
        table = entry[1] if entry else {}
        table[field] = value
        self._hashes[key] = (self._clock() + ttl, table)

    async def hgetall(self, key: str) -> dict[str, str]:
        entry = self._alive(self._hashes, key)
        return dict(entry[1]) if entry else {}

    async def hfill(self, key: str, fields: dict[str, str], ttl: float) -> None:
        entry = self._alive(self._hashes, key)
        table = entry[1] if entry else {}
        for f, v in fields.items():
            table.setdefault(f, v)
        self._hashes[key] = (self._clock() + ttl, table)

    async def delete(self, *keys: str) -> None:
        for k in keys:
            self._values.pop(k, None)
            self._hashes.pop(k, None)

    async def expire(self, keys: list[str], ttl: float) -> None:
        until = self._clock() + ttl
        for k in keys:
            for table in (self._values, self._hashes):
                entry = self._alive(table, k)
                if entry is not None:
                    table[k] = (until, entry[1])
