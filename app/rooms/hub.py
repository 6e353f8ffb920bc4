"""The rooms of one worker: one subscription per room with people here, fan-out to their sockets.

A room's frames cross the bus once per worker; the hub hands each to the room's local followers
(``RoomConnection.room_frame``), which only forward the text. It also counts this worker's
students per room and tells the teacher (``N`` messages), asks the teacher's worker for a full
frame when someone here needs one (``W``), and, when the bus goes away and comes back, tells
everyone here and re-saves the room records it holds so that a restarted Redis loses no room.

Channel messages (text): ``F<seq>|K|<frame>`` a key frame (a full frame with the scenario, where a
follower may start), ``F<seq>|D|<frame>`` any other frame, ``M<json>`` the room's public info,
``W`` want a key frame, ``N<worker>|<count>``, ``Q`` ask for counts, ``A`` an answer came, ``R`` an
experiment run came, ``T<link>`` a teacher took the room, ``X`` the room ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..limits import Settings
from .bus import Bus, BusDown, InProcessBus
from .model import RoomState, channel, key

if TYPE_CHECKING:
    from .conn import RoomConnection, TeacherLink

log = logging.getLogger("allocscope.rooms")
HEARTBEAT = 10.0      # seconds between a worker's count reports for a room
STALE = 30.0          # a worker's count older than this no longer counts
KEY_WAIT = 1.5        # seconds a joiner waits for the teacher's key frame before building one
RESTORE_TRIES = 20    # attempts of a restoring write while the bus is up ...
RESTORE_GAP = 0.5     # ... this many seconds apart
RESTORE_GRACE = 3.0   # seconds a worker without the teacher leaves the teacher's worker to
                      # restore a room record (the teacher's copy is the newest)


class LocalRoom:
    """What this worker knows of one room: its people here and the last things heard."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.members: set[RoomConnection] = set()
        self.teacher: TeacherLink | None = None
        self.record: RoomState | None = None
        self.meta: dict[str, Any] | None = None       # last public room info heard
        self.counts: dict[str, tuple[int, float]] = {}
        self.want_since: float | None = None
        self.reported = -1

    def students_here(self) -> int:
        return sum(1 for c in self.members if c.role == "student")


class Hub:
    """This worker's rooms; ``app.state.rooms``."""

    def __init__(self, bus: Bus, settings: Settings) -> None:
        self.bus = bus
        self.settings = settings
        self.worker = secrets.token_hex(4)
        self.rooms: dict[str, LocalRoom] = {}
        self.connections = 0
        self.teaching = 0
        self.started = False
        self.down_sentence = ""
        self._lock = asyncio.Lock()
        self._ticker: asyncio.Task | None = None
        self._jobs: set[asyncio.Task] = set()

    @property
    def up(self) -> bool:
        return self.bus.up

    async def start(self) -> None:
        async with self._lock:
            if self.started:
                return
            await self.bus.start(self.on_message, self.on_status)
            self._ticker = asyncio.get_running_loop().create_task(self._tick())
            self.started = True

    async def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
        for job in list(self._jobs):
            job.cancel()
        with contextlib.suppress(Exception):
            await self.bus.close()

    # ------------------------------------------------------------------ records
    async def load_record(self, code: str) -> RoomState | None:
        text = await self.bus.get(key(code))
        if text is None:
            return None
        rec = RoomState.from_json(text)
        lr = self.rooms.get(code)
        if lr is not None:
            lr.record = rec
        return rec

    async def save_record(self, rec: RoomState, only_new: bool = False) -> bool:
        ok = await self.bus.set(key(rec.code), rec.to_json(), self.settings.room_idle_seconds,
                                only_new=only_new)
        lr = self.rooms.get(rec.code)
        if lr is not None and ok:
            lr.record = rec
        return ok

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Run a coroutine beside the caller, holding on to it until it ends."""
        task = asyncio.get_running_loop().create_task(coro)
        self._jobs.add(task)
        task.add_done_callback(self._jobs.discard)

    async def keep_trying(self, write: Callable[[], Awaitable[Any]], what: str) -> bool:
        """Run a write that restores room state until it succeeds; stop while the bus is down
        (its return runs every restore again) or after RESTORE_TRIES attempts."""
        for _ in range(RESTORE_TRIES):
            if not self.bus.up:
                return False
            try:
                await write()
                return True
            except BusDown:
                await asyncio.sleep(RESTORE_GAP)
        log.warning("rooms: could not restore %s after %d attempts", what, RESTORE_TRIES)
        return False

    async def _restore_record(self, code: str) -> None:
        """Put this worker's copy of a room record back into a store that lost it, when the
        room's teacher is not here (after a grace if one is connected elsewhere)."""
        lr = self.rooms.get(code)
        if lr is not None and (lr.meta or {}).get("teacher"):
            await asyncio.sleep(RESTORE_GRACE)
            lr = self.rooms.get(code)
        if lr is None or lr.record is None or lr.teacher is not None:
            return
        rec = lr.record
        await self.keep_trying(lambda: self.save_record(rec, only_new=True), f"room {code}")

    # ------------------------------------------------------------------ membership
    async def attach(self, conn: RoomConnection) -> LocalRoom:
        code = conn.code
        lr = self.rooms.get(code)
        if lr is None:
            lr = self.rooms[code] = LocalRoom(code)
            await self.bus.subscribe(channel(code))
        lr.members.add(conn)
        self.connections += 1
        self.report_count(lr)
        return lr

    async def detach(self, conn: RoomConnection) -> None:
        lr = self.rooms.get(conn.code)
        self.connections -= 1
        if lr is None:
            return
        lr.members.discard(conn)
        if lr.teacher is not None and lr.teacher.conn is conn:
            lr.teacher = None
        self.report_count(lr)
        if not lr.members:
            del self.rooms[conn.code]
            with contextlib.suppress(BusDown):
                await self.bus.unsubscribe(channel(conn.code))

    def report_count(self, lr: LocalRoom, force: bool = False) -> None:
        n = lr.students_here()
        if n == lr.reported and not force:
            return
        lr.reported = n
        lr.counts[self.worker] = (n, time.monotonic())
        self.send(lr.code, f"N{self.worker}|{n}")
        if lr.teacher is not None:
            lr.teacher.counts_changed()

    def students(self, code: str) -> int:
        lr = self.rooms.get(code)
        if lr is None:
            return 0
        now = time.monotonic()
        return sum(n for w, (n, t) in lr.counts.items() if w == self.worker or now - t < STALE)

    # ------------------------------------------------------------------ sending
    def send(self, code: str, message: str) -> None:
        """Publish without waiting (errors are the status listener's business)."""
        asyncio.get_running_loop().create_task(self._send(code, message))

    async def _send(self, code: str, message: str) -> None:
        with contextlib.suppress(BusDown):
            await self.bus.publish(channel(code), message)

    def want_key(self, code: str) -> None:
        """Someone here needs a key frame: ask the teacher's worker (at most every 0.3 s), and
        if no key comes within KEY_WAIT, build one here from the stored record."""
        lr = self.rooms.get(code)
        if lr is None:
            return
        now = time.monotonic()
        if lr.want_since is not None and now - lr.want_since < 0.3:
            return
        first = lr.want_since is None
        lr.want_since = now
        if lr.teacher is not None:
            lr.teacher.want_key()
        else:
            self.send(code, "W")
        if first:
            asyncio.get_running_loop().create_task(self._key_fallback(code))

    async def _key_fallback(self, code: str) -> None:
        await asyncio.sleep(KEY_WAIT)
        lr = self.rooms.get(code)
        if lr is None or lr.want_since is None:
            return
        waiting = [c for c in lr.members if c.awaiting_key()]
        if not waiting:
            lr.want_since = None
            return
        try:
            rec = await self.load_record(code)
        except BusDown:
            rec = lr.record
        if rec is None:
            for c in waiting:
                c.room_ended()
            return
        from .. import offload
        from .conn import local_key_frame
        try:
            text = await offload.run(self.settings, "rebuilding the room's state",
                                     local_key_frame, rec)
        except Exception:    # noqa: BLE001 - a room whose state no longer loads
            log.exception("rooms: cannot rebuild room %s", code)
            return
        lr.want_since = None
        for c in waiting:
            c.room_frame(-1, True, text)

    # ------------------------------------------------------------------ receiving
    def on_message(self, chan: str, message: str) -> None:
        code = chan.rsplit(":", 1)[-1]
        lr = self.rooms.get(code)
        if lr is None or not message:
            return
        kind = message[0]
        if kind == "F":
            head, _, rest = message.partition("|")
            flag, _, text = rest.partition("|")
            seq, is_key = int(head[1:]), flag == "K"
            if is_key:
                lr.want_since = None
            for c in list(lr.members):
                c.room_frame(seq, is_key, text)
        elif kind == "M":
            lr.meta = json.loads(message[1:])
            for c in list(lr.members):
                c.room_meta(lr.meta)
        elif kind == "W":
            if lr.teacher is not None:
                lr.teacher.want_key()
        elif kind == "N":
            worker, _, n = message[1:].partition("|")
            lr.counts[worker] = (int(n), time.monotonic())
            if lr.teacher is not None:
                lr.teacher.counts_changed()
        elif kind == "Q":
            self.report_count(lr, force=True)
        elif kind in "AR":
            if lr.teacher is not None:
                lr.teacher.results_changed()
        elif kind == "T":
            if lr.teacher is not None and lr.teacher.link_id != message[1:]:
                lr.teacher.taken_over()
        elif kind == "X":
            for c in list(lr.members):
                c.room_ended()

    async def on_status(self, up: bool, sentence: str) -> None:
        self.down_sentence = "" if up else sentence
        if up:
            for code, lr in list(self.rooms.items()):
                await self.bus.subscribe(channel(code))
                if lr.teacher is None:               # a restarted Redis gets the room back
                    self.spawn(self._restore_record(code))
                self.report_count(lr, force=True)
        for lr in list(self.rooms.values()):
            if lr.teacher is not None:
                await lr.teacher.bus_status(up)
            for c in list(lr.members):
                c.bus_status(up, sentence)

    async def _tick(self) -> None:
        """Heartbeats: re-report counts, keep rooms with people alive, retry key requests, and
        keep this worker's copy of each record it does not drive current (it is what this
        worker restores after an outage if the teacher has left by then)."""
        while True:
            await asyncio.sleep(HEARTBEAT / 2)
            for code, lr in list(self.rooms.items()):
                try:
                    self.report_count(lr, force=True)
                    if lr.want_since is not None and time.monotonic() - lr.want_since > KEY_WAIT:
                        lr.want_since = None
                        if any(c.awaiting_key() for c in lr.members):
                            self.want_key(code)
                    if lr.teacher is None and self.bus.up:
                        with contextlib.suppress(BusDown):
                            await self.load_record(code)
                except Exception:    # noqa: BLE001 - one room's trouble must not stop the rest
                    log.exception("rooms: heartbeat of room %s failed", code)


def make_bus(settings: Settings) -> Bus:
    if settings.redis_url:
        from .redisbus import RedisBus
        return RedisBus(settings.redis_url)
    return InProcessBus()
