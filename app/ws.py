"""``WS /ws``: one connection drives one Session (docs/websocket.md).

Three cooperating coroutines per connection, all on the event loop's one thread (so the session
is never touched concurrently):

- the receive loop parses each command, answers it with exactly one frame or error, built at
  once (so the answer shows the state the command produced);
- the sender sends answers in order from a short bounded queue, and otherwise, when play has
  moved the state on, builds one frame from the *latest* state. A slow browser thus makes the
  sender wait on the socket while play goes on: intermediate steps are coalesced into the next
  frame (their records ride along in ``skipped_records``) and nothing piles up;
- the play loop steps at the chosen speed. The frame of the step that ends play (a monitor fired,
  the run ended, a limit) is built at once and queued, so it is never skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import deque
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect

from . import commands as C
from . import offload, rawcheck
from .effects import effect_frame
from .frames import FrameBuilder, encode, error, history_frame, inspect_frame
from .governor import FIRST_COST, Governor
from .limits import Limits, TokenBucket
from .linkstate import LinkError
from .session import Session, SessionError
from .store import StoreError, get_link

router = APIRouter()
log = logging.getLogger("allocscope.ws")

OUT_QUEUE = 16          # answers waiting to be sent; the receive loop waits when it is full
PLAY_BATCH = 256        # steps play may take before it yields to the sender and the commands
PLAY_SLICE = 0.02       # seconds of stepping before play yields, whatever the batch
POLICY = 1008           # close codes: policy violation
TOO_BIG = 1009          # message too big
IDLE = 1001             # going away: no command for ALLOCSCOPE_IDLE_SECONDS
_keys = itertools.count()


class _Deferred:
    """A ``load`` handed back by dispatch, to be done off the event loop (answer_async)."""

    def __init__(self, cmd: Any) -> None:
        self.cmd = cmd


class SessionCount:
    """Counts one app's live sessions in this worker (the ALLOCSCOPE_MAX_SESSIONS limit);
    kept on ``app.state.sessions``."""

    def __init__(self) -> None:
        self.active = 0


def origin_allowed(ws: WebSocket, limits: Limits) -> bool:
    """Same origin (the Origin's host:port equals the Host header), or listed in
    ALLOCSCOPE_ALLOWED_ORIGINS. No Origin header means no browser (a script or a test client),
    which cannot carry a user's cookies across sites, so it is let in."""
    origin = ws.headers.get("origin")
    if origin is None:
        return True
    origin = origin.strip().rstrip("/")
    allowed = limits.allowed_origins
    if "*" in allowed or origin in allowed:
        return True
    host = ws.headers.get("host", "").lower()
    try:
        netloc = urlsplit(origin).netloc.lower()
    except ValueError:
        return False
    return bool(host) and netloc == host


def resolve_link(link_id: str) -> dict[str, Any]:
    """A short link's scenario, variant, schedule, step and notice, replayed and verified by the
    links store (``app.store.get_link``); SessionError with the store's sentence otherwise."""
    try:
        return get_link(link_id)
    except LinkError as exc:
        raise SessionError(exc.message) from None
    except StoreError as exc:
        raise SessionError(f"the link store is unavailable: {exc}") from None


class Connection:
    """The per-connection state: the session, the frame builder, the outgoing queue."""

    def __init__(self, ws: WebSocket, limits: Limits, governor: Governor | None = None) -> None:
        self.ws = ws
        self.limits = limits
        self.governor = governor or Governor()
        self.session = Session(limits)
        self.frames = FrameBuilder()
        self.out: deque[str] = deque()
        self.wake = asyncio.Event()
        self.room = asyncio.Event()
        self.dirty = False            # play moved the state on since the last frame built
        self.closed = False           # the sender stopped (the socket is gone)
        self.play_task: asyncio.Task | None = None
        self.key = next(_keys)            # this player's name in the governor
        self.cost = FIRST_COST            # measured seconds of CPU per played step
        self.frame_cpu = 0.0              # seconds spent building play frames, not yet charged
        loop = asyncio.get_running_loop()
        self.bucket = TokenBucket(limits.commands_per_second, limits.command_burst, loop.time())

    # ------------------------------------------------------------------ outgoing
    def push(self, frame: dict[str, Any] | str) -> None:
        if isinstance(frame, str):          # encoded off the loop (a load's answer)
            self.dirty = False              # play was stopped before the load
            self.out.append(frame)
            self.wake.set()
            return
        try:
            text = self.fit(encode(frame), frame.get("reply_to"))
        except Exception as exc:   # noqa: BLE001 - e.g. a view value JSON cannot carry
            frame = self.internal(frame.get("reply_to"), "while encoding a frame", exc)
            text = encode(frame)
        if frame.get("type") == "frame":
            self.dirty = False        # this frame shows the latest state
        self.out.append(text)
        self.wake.set()

    async def send_loop(self) -> None:
        try:
            await self._send_forever()
        finally:                      # the socket is gone: never leave the reader waiting
            self.closed = True
            self.room.set()

    async def _send_forever(self) -> None:
        while True:
            if self.out:
                text = self.out.popleft()
                self.room.set()
            elif self.dirty and self.session.sim is not None:
                self.dirty = False
                t0 = time.perf_counter()
                try:
                    text = self.fit(encode(self.frames.incremental(self.session, None)), None)
                except Exception as exc:   # noqa: BLE001
                    text = encode(self.internal(None, "while building a play frame", exc))
                self.frame_cpu += time.perf_counter() - t0   # play's cost, charged to play
            else:
                self.wake.clear()
                await self.wake.wait()
                continue
            await self.ws.send_text(text)

    # ------------------------------------------------------------------ incoming
    async def receive_loop(self) -> None:
        loop = asyncio.get_running_loop()
        idle = self.limits.idle_seconds
        while True:
            try:
                msg = await asyncio.wait_for(self.ws.receive(), idle)
            except TimeoutError:
                if self.session.playing:        # watching a long play is not idling
                    continue
                await self.ws.close(IDLE, f"idle for {idle:g} s (ALLOCSCOPE_IDLE_SECONDS)")
                return
            if msg["type"] == "websocket.disconnect":
                return
            text = msg.get("text")
            if text is None:
                data = msg.get("bytes") or b""
                if len(data) > self.limits.ws_max_size:
                    await self.ws.close(TOO_BIG, "message too big")
                    return
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    text = "\ufffd"          # answered below as "not a JSON command"
            if len(text) > self.limits.ws_max_size:
                await self.ws.close(TOO_BIG, f"message larger than {self.limits.ws_max_size} "
                                             f"bytes (ALLOCSCOPE_WS_MAX_SIZE)")
                return
            while len(self.out) >= OUT_QUEUE and not self.closed:   # a client that floods
                self.room.clear()                                    # waits for its answers
                await self.room.wait()
            if self.closed:
                return
            if not self.bucket.take(loop.time()):
                self.push(error(C.peek_id(text), f"too many commands: this server allows "
                                                f"{self.limits.commands_per_second:g} a second "
                                                f"(ALLOCSCOPE_COMMANDS_PER_SECOND)"))
                continue
            self.push(await self.answer_async(text))

    async def answer_async(self, text: str) -> dict[str, Any] | str:
        """As :meth:`answer`, but a ``load`` (building, replaying, opening a link and encoding
        its full frame) runs off the event loop on a budget (app/offload.py)."""
        try:
            rawcheck.check_text(text, self.limits.max_depth, "not a JSON command")
        except rawcheck.RawError as exc:
            return error(None, str(exc))
        self._defer_load = True         # dispatch hands a load back instead of doing it
        try:
            answer = self.answer(text)  # (subclasses, e.g. rooms, answer their own ops here)
        finally:
            self._defer_load = False
        if not isinstance(answer, _Deferred):
            return answer
        cmd = answer.cmd
        self.stop_play()
        self.dirty = False
        try:
            return await offload.run(self.limits, "loading this scenario", self._load_off, cmd)
        except (offload.WorkError, rawcheck.RawError) as exc:
            return error(cmd.id, str(exc))

    def _load_off(self, cmd: Any) -> dict[str, Any] | str:
        """In a worker thread: raw size checks, then load, then the frame, encoded here."""
        if isinstance(cmd.scenario, dict):
            rawcheck.check_scenario(cmd.scenario, self.limits, cmd.schedule)
        elif cmd.schedule is not None:
            rawcheck.check_scenario({}, self.limits, cmd.schedule)
        answer = self.answer_cmd(cmd)
        cap = self.limits.max_frame_bytes
        try:
            text = offload.bounded_encode(answer, cap)
        except Exception as exc:   # noqa: BLE001 - e.g. a view value JSON cannot carry
            return self.internal(cmd.id, "while encoding a frame", exc)
        return self.fit("x" * (cap + 1) if text is None else text, cmd.id)

    def fit(self, text: str, reply_to: Any) -> str:
        """The encoded frame, or an error naming the limit when it is over the frame budget."""
        cap = self.limits.max_frame_bytes
        if len(text) <= cap:
            return text
        return encode(error(reply_to, f"the answer would be a frame of more than {cap} bytes, "
                                      f"this server's limit (ALLOCSCOPE_MAX_FRAME_BYTES): "
                                      f"load a smaller scenario"))

    def answer(self, text: str) -> dict[str, Any]:
        """Exactly one frame or error for one command; the session survives every error."""
        try:
            cmd = C.parse(text)
        except C.CommandError as exc:
            return error(exc.reply_to, str(exc))
        return self.answer_cmd(cmd)

    def answer_cmd(self, cmd: Any) -> dict[str, Any]:
        """The answer to a parsed command (errors become error frames)."""
        try:
            return self.dispatch(cmd)
        except SessionError as exc:
            return error(cmd.id, str(exc))
        except Exception as exc:   # noqa: BLE001 - a protocol bug must not end the connection
            return self.internal(cmd.id, f"while handling {cmd.op!r}", exc)

    def internal(self, reply_to: Any, where: str, exc: BaseException) -> dict[str, Any]:
        """An error frame for a bug (logged with its traceback); the next full frame rebuilds
        the browser's view from scratch, since the session may have moved half a step."""
        log.exception("internal error %s", where)
        self.session.playing = False
        self.frames = FrameBuilder()
        return error(reply_to, f"internal error {where}: {type(exc).__name__}: {exc}"[:500])

    def dispatch(self, cmd: Any) -> dict[str, Any]:
        s = self.session
        rid = cmd.id
        op = cmd.op
        if op == "load":
            self.stop_play()
            if getattr(self, "_defer_load", False):
                self._defer_load = False
                return _Deferred(cmd)   # type: ignore[return-value]  # done off the loop
            if cmd.link is not None:
                ln = resolve_link(cmd.link)
                s.load(ln["scenario"], cmd.variant or ln.get("variant"),
                       cmd.schedule if cmd.schedule is not None else ln.get("schedule"),
                       cmd.step if cmd.step is not None else ln.get("step"))
                return self.frames.full(s, rid, load=True, notice=ln.get("notice") or "")
            s.load(cmd.scenario, cmd.variant, cmd.schedule, cmd.step)
            return self.frames.full(s, rid, load=True)
        if op == "inspect":
            return inspect_frame(s, rid, cmd.proc)
        if s.sim is None:
            raise SessionError("no scenario loaded: send {\"op\": \"load\", ...} first")
        if op == "history":
            return history_frame(s, rid, cmd.from_, cmd.to)
        if op == "effect":
            return effect_frame(s, rid, cmd.event)
        if op == "step":
            s.step()
        elif op == "deliver":
            s.deliver(cmd.event)
        elif op == "fault":
            s.fault(cmd.event)
        elif op in ("back", "goto", "branch"):
            # time travel answers with a diff like a step (docs/websocket.md, "Branches")
            self.stop_play()
            if op == "back":
                s.back()
            elif op == "goto":
                s.goto(cmd.step)
            else:
                s.switch_branch(cmd.branch, cmd.step)
            return self.frames.incremental(s, rid, jump=True)
        elif op == "reset":
            self.stop_play()
            s.reset()
            return self.frames.full(s, rid)
        elif op == "play":
            s.start_play()
            self.stop_task()
            self.play_task = asyncio.get_running_loop().create_task(self.play_loop())
        elif op == "pause":
            self.stop_play()
        elif op == "speed":
            s.speed = cmd.steps_per_second
        elif op == "scheduler":
            s.set_scheduler(cmd.kind, cmd.seed)
        return self.frames.incremental(s, rid)

    # ------------------------------------------------------------------ play
    def stop_play(self) -> None:
        self.session.playing = False
        self.stop_task()

    def stop_task(self) -> None:
        if self.play_task is not None and not self.play_task.done():
            self.play_task.cancel()
        self.play_task = None

    async def play_loop(self) -> None:
        """Step at ``session.speed`` steps a second until play stops; see the module doc."""
        try:
            await self._play()
        finally:
            self.governor.leave(self.key)

    async def _play(self) -> None:
        loop = asyncio.get_running_loop()
        s = self.session
        await asyncio.sleep(0)                      # the answer to `play` goes first
        gov = self.governor
        # ``last`` is when the latest step was due; the effective speed is the session's speed
        # capped by its fair share of the CPU (app/governor.py), asked afresh every round.
        last = loop.time() - 1.0 / gov.ask(self.key, s.speed, self.cost)   # first step now
        while s.playing:
            speed = gov.ask(self.key, s.speed, self.cost)
            now = loop.time()
            due = int((now - last) * speed)
            if due <= 0:
                await asyncio.sleep(max(0.0, last + 1.0 / speed - now))
                continue
            if now - last > 1.0 + PLAY_BATCH / speed:  # far behind: drop the debt, do not burst
                last, due = now - 1.0 / speed, 1
            start = time.perf_counter()
            done = 0
            for _ in range(min(due, PLAY_BATCH)):
                try:
                    r = s.play_step()
                except Exception as exc:   # noqa: BLE001 - a protocol bug during play
                    self.push(self.internal(None, "during play", exc))
                    return
                last += 1.0 / speed
                done += 1
                if r.status != "ok":
                    try:
                        self.push(self.frames.incremental(s, None, notice=r.notice))
                    except Exception as exc:   # noqa: BLE001
                        self.push(self.internal(None, "while building a play frame", exc))
                    return
                self.dirty = True
                if time.perf_counter() - start > PLAY_SLICE:
                    break
            spent = time.perf_counter() - start + self.frame_cpu
            self.frame_cpu = 0.0
            self.cost = max(1e-6, 0.7 * self.cost + 0.3 * spent / max(done, 1))
            self.wake.set()
            await asyncio.sleep(0)


@router.websocket("/ws")
async def websocket_endpoint(ws: WebSocket) -> None:
    limits: Limits = ws.app.state.limits
    sessions: SessionCount = ws.app.state.sessions
    governor: Governor = ws.app.state.governor
    governor.start()
    await ws.accept()
    if not origin_allowed(ws, limits):
        await ws.close(POLICY, "origin not allowed (ALLOCSCOPE_ALLOWED_ORIGINS)")
        return
    if sessions.active >= limits.max_sessions:
        await ws.send_text(encode(error(None, f"server busy: {limits.max_sessions} sessions "
                                              f"are open (ALLOCSCOPE_MAX_SESSIONS); try again "
                                              f"later")))
        await ws.close(POLICY, "too many sessions")
        return
    if not governor.accepting:
        await ws.send_text(encode(error(None, governor.busy_message())))
        await ws.close(POLICY, "server busy")
        return
    sessions.active += 1
    conn = Connection(ws, limits, governor)
    sender = asyncio.get_running_loop().create_task(conn.send_loop())
    try:
        await conn.receive_loop()
    except WebSocketDisconnect:
        pass
    except Exception:   # noqa: BLE001 - the socket failed under us; nothing left to answer
        log.exception("websocket session ended by an error")
    finally:
        sessions.active -= 1
        conn.stop_play()
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sender
