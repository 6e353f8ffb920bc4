"""``WS /ws/room/{code}``: a room member's connection — the teacher who drives, or a student who
follows, forks and rejoins (docs/websocket.md, "Rooms").

A ``RoomConnection`` is a ws.Connection (so a teacher, and a student who forked, have a session
exactly as on ``/ws``) plus the room: a follower has no session at all; the hub hands it the
room's frames as text and it forwards them, after one key frame, checking that none is missing
(a gap or a slow socket means: drop what is queued and ask for a key frame). Students cannot
drive while they follow: every driving command gets an error frame and nothing changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import secrets
from collections import deque
from typing import Any

from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect

from .. import commands as C
from .. import offload, rawcheck
from ..frames import FrameBuilder, encode, error
from ..governor import Governor
from ..limits import Limits
from ..session import Session, SessionError
from ..ws import POLICY, Connection, SessionCount, origin_allowed
from . import ops as O
from . import rounds
from .bus import BusDown
from .hub import Hub, LocalRoom
from .model import RoomState, answers_key, norm_code, runs_key, secret_ok
from .teacher import TeacherLink, key_frame, public_meta

router = APIRouter()
log = logging.getLogger("allocscope.rooms")
ROOM_QUEUE = 32          # room frames waiting for a slow follower before it re-syncs instead
HELLO_SECONDS = 10.0
EXPERIMENT_STEPS = 5000  # steps one student's experiment run may take after the room's state
OFF_LOOP_OPS = ("fork", "chapter", "ask")   # room ops that load or replay: see answer_async


def local_key_frame(rec: RoomState) -> str:
    """A key frame built here from the stored record (the teacher is away)."""
    s = Session()
    s.load(rec.scenario, rec.variant, rec.schedule, rec.step)
    if rec.sched_kind:
        with contextlib.suppress(SessionError):
            s.set_scheduler(rec.sched_kind, rec.sched_seed)
    return encode(key_frame(FrameBuilder(), s))


class RoomConnection(Connection):
    """One member of a room on this worker; see the module doc."""

    def __init__(self, ws: WebSocket, limits: Limits, governor: Governor, hub: Hub, code: str,
                 sessions: SessionCount) -> None:
        self._dirty_v = False
        self.teacher_link: TeacherLink | None = None
        super().__init__(ws, limits, governor)
        self.hub, self.code, self.sessions = hub, code, sessions
        self.role = "student"
        self.mode = "follow"
        self.anon = secrets.token_hex(8)     # answers are kept under this, never a name
        self.local: LocalRoom | None = None
        self.room_out: deque[str] = deque()
        self.note_text: str | None = None
        self.last_seq: int | None = None      # None: waiting for a key frame
        self.my_answers: dict[int, str] = {}
        self.my_runs: dict[int, dict[str, Any]] = {}
        self.link_note = ""
        self.holds_session = False
        self.loading = False
        self.jobs: set[asyncio.Task] = set()

    # play marks the session dirty; a teacher's room follows every such step
    @property
    def dirty(self) -> bool:
        return self._dirty_v

    @dirty.setter
    def dirty(self, value: bool) -> None:
        self._dirty_v = value
        if value and self.teacher_link is not None:
            self.teacher_link.changed()

    def push(self, frame: dict[str, Any] | str) -> None:
        super().push(frame)
        if self.teacher_link is None:
            return
        if isinstance(frame, str):          # a load's answer, built and encoded off the loop
            if frame.startswith('{"type":"frame"'):
                self.teacher_link.changed(load=True)
        elif frame.get("type") == "frame":
            self.teacher_link.changed(load="scenario" in frame)

    async def answer_async(self, text: str) -> dict[str, Any] | str:
        op, rid = O.peek_op(text)
        if op in OFF_LOOP_OPS:
            return await self._room_op_async(text, rid)
        # a teacher's load runs in a worker thread (app/offload.py): the room's publisher must
        # not read the session meanwhile
        self.loading = True
        try:
            return await super().answer_async(text)
        finally:
            self.loading = False

    async def _room_op_async(self, text: str, rid: Any) -> dict[str, Any] | str:
        """fork, chapter and ask: each may load or replay a scenario, which runs in a worker
        thread on the work budget (app/offload.py) as a session's ``load`` does, so a big
        scenario in one room cannot stall the other rooms of this worker."""
        try:
            rawcheck.check_text(text, self.limits.max_depth, "not a JSON command")
            cmd = O.parse(text)
            if cmd.op == "fork":
                if self.role == "teacher":
                    raise SessionError("'fork' is for students")
                return await self._fork(cmd)
            link = self.teacher_link
            if link is None:
                raise SessionError(f"only the teacher can {cmd.op} in this room")
            if cmd.op == "ask":
                await link.ask(cmd)
            else:
                await link.chapter(cmd.lesson, cmd.chapter, cmd.title)
            return self.note(link.meta()[1], reply_to=cmd.id)
        except C.CommandError as exc:
            return error(exc.reply_to, str(exc))
        except (SessionError, offload.WorkError, rawcheck.RawError) as exc:
            return error(rid, str(exc))

    def encoded(self, frame: dict[str, Any], reply_to: Any) -> str:
        """A frame as text within ALLOCSCOPE_MAX_FRAME_BYTES (callable in a worker thread)."""
        cap = self.limits.max_frame_bytes
        text = offload.bounded_encode(frame, cap)
        return self.fit("x" * (cap + 1) if text is None else text, reply_to)

    # ------------------------------------------------------------------ sending
    async def _send_forever(self) -> None:
        while True:
            if self.out:
                text = self.out.popleft()
                self.room.set()
            elif self.note_text is not None:
                text, self.note_text = self.note_text, None
            elif self.room_out:
                text = self.room_out.popleft()
            elif self.dirty and self.session.sim is not None and self.holds_session:
                self.dirty = False
                try:
                    text = encode(self.frames.incremental(self.session, None))
                except Exception as exc:   # noqa: BLE001
                    text = encode(self.internal(None, "while building a play frame", exc))
            else:
                self.wake.clear()
                await self.wake.wait()
                continue
            await self.ws.send_text(text)

    def note(self, meta: dict[str, Any] | None = None, reply_to: Any = None,
             **extra: Any) -> dict[str, Any]:
        """This member's room message: the room's info plus what is this member's own."""
        lr = self.local
        base = meta if meta is not None else (lr.meta if lr and lr.meta else
                                              public_meta(lr.record, self.hub.students(self.code),
                                                          lr.teacher is not None)
                                              if lr and lr.record else {"type": "room",
                                                                        "code": self.code})
        msg = dict(base)
        rnd = msg.get("round")
        msg.update(reply_to=reply_to, role=self.role, mode=self.mode,
                   link="down" if self.link_note else "up",
                   my_answer=self.my_answers.get(rnd["id"]) if rnd else None)
        exp = msg.get("experiment")
        msg["my_run"] = self.my_runs.get(exp["id"]) if exp else None
        if self.link_note:
            msg["notice"] = self.link_note
        msg.update(extra)
        return msg

    def send_note(self, **extra: Any) -> None:
        self.note_text = encode(self.note(**extra))
        self.wake.set()

    # ------------------------------------------------------------------ from the hub
    def awaiting_key(self) -> bool:
        return self.role == "student" and self.mode == "follow" and self.last_seq is None

    def room_frame(self, seq: int, is_key: bool, text: str) -> None:
        if self.role != "student" or self.mode != "follow" or self.closed:
            return
        if is_key:
            if self.last_seq is not None and 0 <= seq <= self.last_seq:
                return                     # a joiner's key frame of a state this one has
            self.room_out.clear()          # a key frame makes everything queued before it moot
        elif self.last_seq is None:
            return
        elif seq != self.last_seq + 1 or len(self.room_out) >= ROOM_QUEUE:
            self.room_out.clear()          # a frame went missing, or this socket is too slow
            self.last_seq = None
            self.hub.want_key(self.code)
            return
        self.last_seq = seq
        self.room_out.append(text)
        self.wake.set()

    def room_meta(self, meta: dict[str, Any]) -> None:
        if self.role == "student":
            self.note_text = encode(self.note(meta))
            self.wake.set()

    def teacher_note(self, own: dict[str, Any]) -> None:
        self.note_text = encode(self.note(own))
        self.wake.set()

    def bus_status(self, up: bool, sentence: str) -> None:
        self.link_note = "" if up else (f"{sentence}. The class is not following right now; "
                                        f"your own view still works.")
        if up and self.awaiting_key():
            self.hub.want_key(self.code)
        if up and self.role == "student" and self.mode == "follow":
            self.last_seq = None
            self.hub.want_key(self.code)
        if up and self.role == "student":   # a restarted Redis gets this student's answers back
            for rid, choice in self.my_answers.items():
                self.spawn(self.hub.keep_trying(
                    lambda rid=rid, choice=choice: self._store_answer(rid, choice), "an answer"))
            for eid, out in self.my_runs.items():
                if not out.get("running"):
                    self.spawn(self.hub.keep_trying(
                        lambda eid=eid, out=out: self._store_run(eid, out), "a run"))
        self.send_note(notice=self.link_note or "the room is connected again")

    def room_ended(self) -> None:
        self.send_note(ended=True, notice=f"room {self.code} has ended")

    def demote(self, why: str) -> None:
        self.teacher_link = None
        self.role = "student"
        self.stop_play()
        self._drop_session()
        self.mode = "follow"
        self.last_seq = None
        self.hub.want_key(self.code)
        self.send_note(notice=why)

    # ------------------------------------------------------------------ commands
    def answer(self, text: str) -> dict[str, Any]:
        op, rid = O.peek_op(text)
        if op in O.ROOM_OPS:
            try:
                cmd = O.parse(text)
                return self.room_op(cmd)
            except C.CommandError as exc:
                return error(exc.reply_to, str(exc))
            except SessionError as exc:
                return error(rid, str(exc))
        if self.role == "student" and self.mode == "follow" and op in O.DRIVING_OPS + (
                "inspect", "history", "effect"):
            return error(rid, "only the teacher drives this room: you are following the "
                              "class (press “explore on my own” to fork your own copy)")
        return super().answer(text)

    def room_op(self, cmd: Any) -> dict[str, Any]:
        op = cmd.op
        if op == "room":
            own = self.teacher_link.meta()[1] if self.teacher_link is not None else None
            return self.note(own, reply_to=cmd.id)
        if op == "hello":
            raise SessionError("already joined")
        if op in O.TEACHER_OPS:
            link = self.teacher_link
            if link is None:
                raise SessionError(f"only the teacher can {op.replace('_', ' ')} in this room")
            if op == "reveal":
                link.reveal()
            elif op == "close_round":
                link.close_round()
            elif op == "experiment":
                link.experiment(cmd.open)
            elif op == "select":
                link.select(cmd.proc)
            else:                        # ask and chapter come by answer_async
                raise SessionError(f"{op!r} is answered off the event loop only")
            own = link.meta()[1]
            return self.note(own, reply_to=cmd.id)
        if self.role == "teacher":
            raise SessionError(f"{op!r} is for students")
        if op == "answer":
            return self._answer(cmd)
        if op == "fork":
            raise SessionError("'fork' is answered off the event loop only")
        if op == "rejoin":
            self.stop_play()
            self._drop_session()
            self.mode = "follow"
            self.last_seq = None
            self.hub.want_key(self.code)
            return self.note(reply_to=cmd.id)
        if op == "run":
            return self._run(cmd)
        return self._submit(cmd)

    def _answer(self, cmd: Any) -> dict[str, Any]:
        meta = self.local.meta if self.local else None
        rnd = meta.get("round") if meta else None
        if rnd is None:
            raise SessionError("no question is open in this room")
        if rnd.get("revealed"):
            raise SessionError("the answers have been revealed: this round is closed")
        if cmd.choice not in {o["id"] for o in rnd["options"]}:
            raise SessionError(f"{cmd.choice!r} is not one of this question's answers: "
                               f"{', '.join(o['id'] for o in rnd['options'])}")
        self.my_answers[rnd["id"]] = cmd.choice
        self.spawn(self._store_answer(rnd["id"], cmd.choice))
        return self.note(reply_to=cmd.id)

    async def _store_answer(self, rid: int, choice: str) -> None:
        ttl = self.hub.settings.room_idle_seconds
        await self.hub.bus.hset(answers_key(self.code, rid), self.anon, choice, ttl)
        await self.hub.bus.publish(self._chan(), "A")

    def _record(self) -> RoomState:
        rec = self.local.record if self.local else None
        if rec is None:
            raise SessionError("the room's state is not known here yet; try again in a moment")
        return rec

    def _copy_off(self, session: Session, frames: FrameBuilder, rec: RoomState,
                  schedule: list[str], step: int | None, reply_to: Any) -> str:
        """In a worker thread: the room's state into ``session`` — the class's scheduler and
        speed with it — and its full frame, encoded."""
        session.load(rec.scenario, rec.variant, schedule, step)
        if rec.sched_kind:
            with contextlib.suppress(SessionError):
                session.set_scheduler(rec.sched_kind, rec.sched_seed)
        if rec.speed:
            session.speed = rec.speed
        return self.encoded(frames.full(session, reply_to, load=True), reply_to)

    async def _fork(self, cmd: Any) -> str:
        if self.mode == "fork":
            raise SessionError("you are already exploring on your own")
        if self.sessions.active >= self.limits.max_sessions:
            raise SessionError(f"server busy: {self.limits.max_sessions} sessions are open "
                               f"(ALLOCSCOPE_MAX_SESSIONS); keep following and try again later")
        rec = self._record()
        schedule = cmd.schedule if cmd.schedule is not None else rec.schedule
        step = cmd.step if cmd.step is not None else (rec.step if cmd.schedule is None else None)
        session, frames = Session(self.limits), FrameBuilder()
        self.sessions.active += 1           # held while the copy loads
        try:
            text = await offload.run(self.limits, "copying the class's state", self._copy_off,
                                     session, frames, rec, schedule, step, cmd.id)
        except BaseException:
            self.sessions.active -= 1
            raise
        if text.startswith('{"type":"error"'):    # over the frame budget: no fork
            self.sessions.active -= 1
            return text
        self.session, self.frames = session, frames
        self.holds_session = True
        self.mode = "fork"
        self.room_out.clear()
        self.last_seq = None
        self.send_note()
        return text

    def _drop_session(self) -> None:
        if self.holds_session:
            self.sessions.active -= 1
            self.holds_session = False
        self.session = Session(self.limits)
        self.frames = FrameBuilder()

    def _run(self, cmd: Any) -> dict[str, Any]:
        meta = self.local.meta if self.local else None
        exp = meta.get("experiment") if meta else None
        if exp is None or not exp.get("open"):
            raise SessionError("no class experiment is open in this room")
        if exp["id"] in self.my_runs:
            raise SessionError("you already ran this experiment")
        rec = self._record()
        seed = cmd.seed if cmd.seed is not None else secrets.randbelow(1_000_000)
        self.my_runs[exp["id"]] = {"running": True, "seed": seed}
        self.spawn(self._do_run(exp["id"], rec, seed))
        return self.note(reply_to=cmd.id)

    async def _do_run(self, exp_id: int, rec: RoomState, seed: int) -> None:
        try:
            fresh = await self.hub.load_record(self.code) or rec
        except BusDown:       # the copy here will do; the outcome is stored when the bus is back
            fresh = rec
        start = (fresh.experiment or {}).get("from_step", fresh.step)
        try:
            out = await offload.run(self.limits, "running the experiment",
                                    rounds.experiment_run, fresh.scenario, fresh.variant,
                                    fresh.schedule[:start], seed, EXPERIMENT_STEPS)
        except Exception as exc:   # noqa: BLE001 - a state that cannot be replayed here
            self.my_runs.pop(exp_id, None)
            self.push(error(None, f"the experiment could not run: {exc}"[:300]))
            return
        self.my_runs[exp_id] = out
        self.send_note()
        await self._store_run(exp_id, out)

    async def _store_run(self, exp_id: int, out: dict[str, Any]) -> None:
        ttl = self.hub.settings.room_idle_seconds
        await self.hub.bus.hset(runs_key(self.code, exp_id), self.anon, json.dumps(out), ttl)
        await self.hub.bus.publish(self._chan(), "R")
        self.send_note()

    def _submit(self, cmd: Any) -> dict[str, Any]:
        meta = self.local.meta if self.local else None
        exp = meta.get("experiment") if meta else None
        if exp is None or not exp.get("open"):
            raise SessionError("no class experiment is open in this room")
        if self.mode != "fork" or self.session.sim is None:
            raise SessionError("explore on your own first: submit sends the outcome of your "
                               "own run")
        from protocols import runner
        rep = runner.report(self.session.sim, self.session.scenario)
        out = {"outcome": rep["outcome"], "steps": self.session.sim.step_no, "seed": None}
        self.my_runs[exp["id"]] = out
        self.spawn(self._store_run(exp["id"], out))
        return self.note(reply_to=cmd.id)

    def spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(self._guard(coro))
        self.jobs.add(task)
        task.add_done_callback(self.jobs.discard)

    async def _guard(self, coro: Any) -> None:
        try:
            await coro
        except BusDown as exc:         # the answer or run stays here and goes when the bus is back
            self.push(error(None, f"not sent yet: {exc}. It is kept and sent when the room "
                                  f"server is back"))

    def _chan(self) -> str:
        from .model import channel
        return channel(self.code)

    # ------------------------------------------------------------------ teacher
    async def become_teacher(self, lr: LocalRoom, rec: RoomState) -> str:
        """Load the room's state into this connection's session (off the event loop, on the
        work budget) and start publishing it; the answer is the teacher's full frame."""
        self.sessions.active += 1            # held while the room's state loads
        try:
            text = await offload.run(self.limits, "loading the room's state", self._copy_off,
                                     self.session, self.frames, rec, rec.schedule, rec.step,
                                     None)
        except BaseException:
            self.sessions.active -= 1
            raise
        self.holds_session = True
        self.room_out.clear()
        if lr.teacher is not None:
            lr.teacher.taken_over()
        link = TeacherLink(self.hub, lr, self, rec)
        lr.teacher = link
        self.teacher_link = link
        self.hub.report_count(lr, force=True)
        return text

    def close_all(self) -> None:
        if self.teacher_link is not None:
            self.teacher_link.stop(gone=True)
            self.teacher_link = None
        self.stop_play()
        if self.holds_session:
            self.sessions.active -= 1
            self.holds_session = False
        for t in list(self.jobs):
            t.cancel()


async def get_hub(app: Any) -> Hub:
    hub: Hub = app.state.rooms
    if not hub.started:
        await hub.start()
    return hub


async def _refuse(ws: WebSocket, reply_to: Any, message: str, code: int = POLICY) -> None:
    with contextlib.suppress(Exception):
        await ws.send_text(encode(error(reply_to, message)))
        await ws.close(code, message[:120])


@router.websocket("/ws/room/{code}")
async def room_socket(ws: WebSocket, code: str) -> None:
    limits: Limits = ws.app.state.limits
    sessions: SessionCount = ws.app.state.sessions
    governor: Governor = ws.app.state.governor
    hub = await get_hub(ws.app)
    settings = hub.settings
    governor.start()
    await ws.accept()
    if not origin_allowed(ws, limits):
        await ws.close(POLICY, "origin not allowed (ALLOCSCOPE_ALLOWED_ORIGINS)")
        return
    room_code = norm_code(code)
    if room_code is None:
        await _refuse(ws, None, f"{code[:20]!r} is not a room code (six letters and digits)")
        return
    if hub.connections >= settings.room_connections:
        await _refuse(ws, None, f"server busy: {settings.room_connections} room connections are "
                                f"open on this server (ALLOCSCOPE_ROOM_CONNECTIONS); try again "
                                f"later")
        return
    try:
        text = await asyncio.wait_for(ws.receive_text(), HELLO_SECONDS)
        op, rid = O.peek_op(text)
        if op != "hello":
            raise C.CommandError(f"say hello first: {{\"op\": \"hello\", \"role\": "
                                 f"\"student\"}}, not {str(op)[:20]!r}", rid)
        hello = O.parse(text)
    except C.CommandError as exc:
        await _refuse(ws, exc.reply_to, str(exc))
        return
    except (TimeoutError, WebSocketDisconnect, KeyError, RuntimeError):
        with contextlib.suppress(Exception):
            await ws.close(POLICY, "no hello")
        return
    try:
        rec = await hub.load_record(room_code)
    except BusDown as exc:
        await _refuse(ws, hello.id, f"rooms are unavailable: {exc}", 1011)
        return
    if rec is None:
        await _refuse(ws, hello.id, f"there is no room {room_code}: it may have ended (a room "
                                    f"ends after {settings.room_idle_seconds / 60:g} minutes "
                                    f"without activity, ALLOCSCOPE_ROOM_IDLE_SECONDS)")
        return
    if hello.role == "teacher":
        if not hello.secret or not secret_ok(rec.secret_hash, hello.secret):
            await _refuse(ws, hello.id, "wrong teacher key for this room: students join "
                                        "without one")
            return
        if sessions.active >= limits.max_sessions:
            await _refuse(ws, hello.id, f"server busy: {limits.max_sessions} sessions are open "
                                        f"(ALLOCSCOPE_MAX_SESSIONS); try again later")
            return
    elif max(hub.students(room_code), rec.students) >= settings.room_max_students:
        await _refuse(ws, hello.id, f"room {room_code} is full: {settings.room_max_students} "
                                    f"students (ALLOCSCOPE_ROOM_MAX_STUDENTS)")
        return
    # watching a lecture is not idling: a member's socket closes only after the room's own
    # idle time without a command (the JS client reconnects and says hello again anyway)
    watch = dataclasses.replace(limits, idle_seconds=max(limits.idle_seconds,
                                                         settings.room_idle_seconds))
    conn = RoomConnection(ws, watch, governor, hub, room_code, sessions)
    if hello.role == "teacher":          # a teacher from the start: never counted, never fed
        conn.role, conn.mode = "teacher", "drive"
    lr = await hub.attach(conn)
    conn.local = lr
    lr.record = lr.record or rec
    sender = asyncio.get_running_loop().create_task(conn.send_loop())
    try:
        if hello.role == "teacher":
            try:
                first = await conn.become_teacher(lr, rec)
            except (SessionError, offload.WorkError) as exc:
                conn.push(error(hello.id, f"the room's state cannot be loaded: {exc}"))
                return
            conn.push(conn.note(conn.teacher_link.meta()[1], reply_to=hello.id))
            conn.push(first)
        else:
            conn.push(conn.note(reply_to=hello.id))
            hub.want_key(room_code)
        await conn.receive_loop()
    except WebSocketDisconnect:
        pass
    except Exception:   # noqa: BLE001
        log.exception("room connection ended by an error")
    finally:
        conn.close_all()
        await hub.detach(conn)
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sender
