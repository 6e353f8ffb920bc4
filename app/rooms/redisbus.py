"""The Redis implementation of the room bus (``ALLOCSCOPE_REDIS_URL``), on redis-py's asyncio API.

One client for commands and one pub/sub connection per worker, whatever the number of rooms and
students: a room's frames cross Redis once per worker, and the worker fans them out to its own
websockets. When Redis goes away the reader notices (the socket closes or a ping fails), tells the
rooms (``on_status(False, ...)``), and retries every half second; when it is back it subscribes
again to every channel and says so (``on_status(True, ...)``), and the rooms re-save what they
hold and ask for a full frame.

The command client's pool keeps idle connections; after a restart each of them is a socket the
old server closed, and redis-py fails the first command sent on one ("Connection closed by
server"). Such a failure once lost a student's answer on its way back into an emptied Redis, so
the pool's idle connections are dropped when the reader reconnects, and a command that meets a
closed connection anyway is retried once on a fresh one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from .bus import Bus, BusDown, Handler, StatusListener

log = logging.getLogger("allocscope.rooms")
PREFIX = "allocscope:"
ALWAYS = PREFIX + "workers"     # one channel always subscribed, so the reader always has a socket
RETRY = 0.5                     # seconds between reconnection attempts
PING = 2.0                      # seconds of silence after which the reader pings


class RedisBus(Bus):
    """Rooms over a real Redis server; errors become ``BusDown`` with a sentence."""

    kind = "redis"

    def __init__(self, url: str) -> None:
        self.url = url
        self.up = False
        # one retry, on a closed connection only (a timeout is not retried: it would double
        # the wait before the rooms hear that Redis is gone)
        once = Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,))
        opts = {"socket_timeout": 2.0, "socket_connect_timeout": 2.0, "decode_responses": True}
        self._client = aioredis.Redis.from_url(url, retry=once, **opts)
        # the reader's own client never retries: every failure of its socket must reach
        # _read_forever, which tells the rooms (a silent reconnection would skip their re-save)
        self._sub_client = aioredis.Redis.from_url(url, **opts)
        self._channels: set[str] = {ALWAYS}
        self._pubsub = None
        self._reader: asyncio.Task | None = None
        self._handler: Handler | None = None
        self._status: StatusListener | None = None

    def _down_sentence(self, exc: BaseException | None = None) -> str:
        why = f" ({type(exc).__name__})" if exc is not None else ""
        return f"the room server (Redis) cannot be reached{why}; retrying every {RETRY:g} s"

    async def start(self, on_message: Handler, on_status: StatusListener) -> None:
        self._handler, self._status = on_message, on_status
        self._reader = asyncio.get_running_loop().create_task(self._read_forever())

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        with contextlib.suppress(Exception):
            if self._pubsub is not None:
                await self._pubsub.aclose()
        for client in (self._client, self._sub_client):
            with contextlib.suppress(Exception):
                await client.aclose()

    # ------------------------------------------------------------------ the reader
    async def _connect(self) -> None:
        ps = self._sub_client.pubsub(ignore_subscribe_messages=True)
        await ps.subscribe(*sorted(self._channels))
        self._pubsub = ps

    async def _read_forever(self) -> None:
        first = True
        while True:
            try:
                await self._connect()
            except (RedisError, OSError) as exc:
                if self.up or first:
                    await self._set_up(False, self._down_sentence(exc))
                first = False
                await asyncio.sleep(RETRY)
                continue
            first = False
            # idle connections of the command pool may lead to the server that went away
            with contextlib.suppress(Exception):
                await self._client.connection_pool.disconnect(inuse_connections=False)
            await self._set_up(True, "the room server (Redis) is reachable again")
            try:
                await self._pump()
            except (RedisError, OSError) as exc:
                await self._set_up(False, self._down_sentence(exc))
            finally:
                ps, self._pubsub = self._pubsub, None
                with contextlib.suppress(Exception):
                    await ps.aclose()
            await asyncio.sleep(RETRY)

    async def _pump(self) -> None:
        ps = self._pubsub
        quiet = 0.0
        while True:
            msg = await ps.get_message(ignore_subscribe_messages=True, timeout=0.5)
            if msg is None:
                quiet += 0.5
                if quiet >= PING:      # a half-open socket says nothing: ask
                    quiet = 0.0
                    await self._client.ping()
                continue
            quiet = 0.0
            if msg.get("type") == "message" and self._handler is not None:
                try:
                    self._handler(msg["channel"], msg["data"])
                except Exception:    # noqa: BLE001 - one bad message must not stop the reader
                    log.exception("room message handler failed")

    async def _set_up(self, up: bool, sentence: str) -> None:
        was = self.up
        self.up = up
        if up != was and self._status is not None:
            if not up:
                log.warning("rooms: %s", sentence)
            try:
                await self._status(up, sentence)
            except Exception:        # noqa: BLE001
                log.exception("room status listener failed")

    # ------------------------------------------------------------------ commands
    async def _do(self, coro):   # noqa: ANN001, ANN202 - any redis command
        try:
            return await coro
        except (RedisError, OSError) as exc:
            raise BusDown(self._down_sentence(exc)) from None

    async def subscribe(self, channel: str) -> None:
        self._channels.add(channel)
        ps = self._pubsub
        if ps is not None:
            with contextlib.suppress(RedisError, OSError):   # the reader resubscribes anyway
                await ps.subscribe(channel)

    async def unsubscribe(self, channel: str) -> None:
        self._channels.discard(channel)
        ps = self._pubsub
        if ps is not None:
            with contextlib.suppress(RedisError, OSError):
                await ps.unsubscribe(channel)

    async def publish(self, channel: str, message: str) -> None:
        await self._do(self._client.publish(channel, message))

    async def get(self, key: str) -> str | None:
        return await self._do(self._client.get(PREFIX + key))

    async def set(self, key: str, value: str, ttl: float, only_new: bool = False) -> bool:
        ok = await self._do(self._client.set(PREFIX + key, value, px=max(1, int(ttl * 1000)),
                                             nx=only_new))
        return bool(ok)

    async def hset(self, key: str, field: str, value: str, ttl: float) -> None:
        async with self._client.pipeline(transaction=True) as p:
            p.hset(PREFIX + key, field, value)
            p.pexpire(PREFIX + key, max(1, int(ttl * 1000)))
            await self._do(p.execute())

    async def hgetall(self, key: str) -> dict[str, str]:
        return await self._do(self._client.hgetall(PREFIX + key))

    async def hfill(self, key: str, fields: dict[str, str], ttl: float) -> None:
        async with self._client.pipeline(transaction=True) as p:
            for f, v in fields.items():
                p.hsetnx(PREFIX + key, f, v)
            p.pexpire(PREFIX + key, max(1, int(ttl * 1000)))
            await self._do(p.execute())

    async def delete(self, *keys: str) -> None:
        if keys:
            await self._do(self._client.delete(*(PREFIX + k for k in keys)))

    async def expire(self, keys: list[str], ttl: float) -> None:
        async with self._client.pipeline(transaction=False) as p:
            for k in keys:
                p.pexpire(PREFIX + k, max(1, int(ttl * 1000)))
            await self._do(p.execute())
