"""The teacher's side of a room: the session that drives it and what it publishes.

A ``TeacherLink`` lives on the worker of the teacher's websocket. It builds the room's frames from
the teacher's session with a FrameBuilder of its own (so the teacher's own frames are untouched),
at most ``FPS`` a second, each a diff against the previous room frame; a joiner's request (``W``)
makes the next one a key frame. It keeps the room record (scenario, schedule, step, round, ...)
in memory and saves it to the bus — at once after a command, at most once a second during play —
and it publishes the room's public info (students, the round, the experiment, the chapter).

It is also the second keeper of the open round's answers and the experiment's outcomes: it
remembers what it has read of them and puts back whatever an emptied Redis lost, so the tally
survives an outage even when a student has left or their own re-send failed. A save that fails
stays due (a record saved "once" after a reconnection could be lost the same way).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from typing import TYPE_CHECKING, Any

from .. import offload
from ..frames import FrameBuilder, encode
from ..session import SessionError
from . import rounds
from .bus import BusDown
from .model import RoomState, answers_key, runs_key

if TYPE_CHECKING:
    from .conn import RoomConnection
    from .hub import Hub, LocalRoom

log = logging.getLogger("allocscope.rooms")
FPS = 30.0            # room frames a second at most (play at 1000 steps/s is coalesced)
LAG_OK = 0.02         # event-loop lag (s) under which the room gets its FPS; above, fewer frames
SAVE_EVERY = 1.0      # seconds between record saves during play


def key_frame(builder: FrameBuilder, session: Any) -> dict[str, Any]:
    """A full frame a follower can start from: the view, the history and, as after a load, the
    scenario and protocol — but with the event that led to this step."""
    f = builder.full(session, None, load=True)
    sim = session.sim
    k = sim.step_no
    f["event"] = sim.trace[k - 1] if k else None
    return f


class TeacherLink:
    """Publishes one room from its teacher's session; see the module doc."""

    def __init__(self, hub: Hub, lr: LocalRoom, conn: RoomConnection, record: RoomState) -> None:
        self.hub, self.lr, self.conn, self.record = hub, lr, conn, record
        self.code = record.code
        self.link_id = secrets.token_hex(6)
        self.builder = FrameBuilder()
        self.seq = 0
        self.changed_flag = False
        self.force_key = True
        self.joiners = False
        self.meta_dirty = True
        self.results_dirty = True
        self.save_due = True
        self.saved_at = 0.0
        self.last_pub = 0.0
        self.down = False
        self.tally: dict[str, int] = {}
        self.answers_n = 0
        self.hist: dict[str, Any] | None = None
        self.seen: dict[str, dict[str, str]] = {}   # hash key -> the fields last read there
        self.wake = asyncio.Event()
        self.wake.set()
        self._scenario_of: Any = None
        self.task = asyncio.get_running_loop().create_task(self._run())

    # ------------------------------------------------------------------ notifications
    def changed(self, load: bool = False) -> None:
        self.changed_flag = True
        if load:                   # a new scenario: every follower starts from a key frame
            self.force_key = True
        self.wake.set()

    def want_key(self) -> None:
        """Someone joined (or fell behind): a key frame for them, not for the whole class."""
        self.joiners = True
        self.wake.set()

    def counts_changed(self) -> None:
        """A worker reported its count (at least every HEARTBEAT/2 s): also re-read the answers
        and outcomes, so one missed ``A`` / ``R`` (say, around a Redis restart) heals itself."""
        self.meta_dirty = True
        if self.record.round is not None or self.record.experiment is not None:
            self.results_dirty = True
        self.wake.set()

    def results_changed(self) -> None:
        self.results_dirty = True
        self.wake.set()

    def touch_meta(self, save: bool = True) -> None:
        self.meta_dirty = True
        self.save_due = self.save_due or save
        self.wake.set()

    def taken_over(self) -> None:
        self.stop()
        self.conn.demote("the room is now driven from another window; this one follows it")

    async def bus_status(self, up: bool) -> None:
        self.down = not up
        if up:                     # everyone re-syncs; a restarted Redis gets the record back
            self.force_key = self.save_due = self.meta_dirty = self.results_dirty = True
            self.hub.send(self.code, "Q")
            self.wake.set()

    def stop(self, gone: bool = False) -> None:
        """Stop publishing; ``gone``: the teacher left, so the class is told the teacher is away."""
        self.task.cancel()
        if self.lr.teacher is self:
            self.lr.teacher = None
        if gone:                   # the class's state as the teacher left it, even mid-play
            if self.conn.session.sim is not None and not self.conn.loading:
                self._sync_record()
            self.record.students = self.hub.students(self.code)
            rec = self.record
            self.hub.spawn(self.hub.keep_trying(lambda: self.hub.save_record(rec),
                                                f"room {self.code}"))
            pub = public_meta(self.record, self.hub.students(self.code), False)
            pub["round"], pub["experiment"] = self.meta()[0]["round"], self.meta()[0]["experiment"]
            self.hub.send(self.code, "M" + json.dumps(pub, separators=(",", ":")))

    def gap(self) -> float:
        """Seconds between room frames: 1/FPS, longer while the worker's event loop is late
        (the governor's smoothed lag, app/governor.py) — the fan-out is what costs, so the class
        then gets fewer, coalesced frames (every step's record still goes), down to one a
        second, instead of a queue that grows."""
        lag = float(getattr(self.conn.governor, "lag", 0.0) or 0.0)
        if lag <= LAG_OK:
            return 1.0 / FPS
        return min(1.0, max(1.0 / FPS, lag / (LAG_OK * FPS)))

    # ------------------------------------------------------------------ the loop
    async def _run(self) -> None:
        try:
            self.hub.send(self.code, f"T{self.link_id}")
            self.hub.send(self.code, "Q")
            while True:
                await self.wake.wait()
                self.wake.clear()
                wait = self.last_pub + self.gap() - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                try:
                    await self._round()
                    if self.down and self.hub.up:    # a passing failure, over: say so
                        self.down = False
                        self.conn.bus_status(True, "")
                except BusDown as exc:
                    if not self.down:
                        self.down = True
                        self.conn.bus_status(False, str(exc))
                    self.force_key = True         # followers will need a fresh start
                    await asyncio.sleep(0.5)
                    if self.hub.up:
                        self.wake.set()
                except Exception:    # noqa: BLE001 - a frame that cannot be built: say so, go on
                    log.exception("room %s: publishing failed", self.code)
                    await asyncio.sleep(0.5)
        except asyncio.CancelledError:
            pass

    async def _round(self) -> None:
        s = self.conn.session
        if s.sim is None or self.conn.loading:
            return                 # (after a load, its answer's push wakes this loop again)
        if self.force_key or self.changed_flag or self.joiners:
            # Everyone restarts from a key frame after a load or a lost bus; otherwise the class
            # gets the next diff, and joiners a key frame of the same state under the same
            # sequence number (built with a builder of its own), which followers already there
            # ignore: a burst of joiners costs the class nothing.
            texts = []
            if self.force_key:
                f = key_frame(self.builder, s)
                self.seq += 1
                texts.append(f"F{self.seq}|K|{encode(f)}")
            elif self.changed_flag:
                f = self.builder.incremental(s, None)
                self.seq += 1
                texts.append(f"F{self.seq}|D|{encode(f)}")
            else:
                f = None
            if self.joiners and not self.force_key and self.seq > 0:
                texts.append(f"F{self.seq}|K|{encode(key_frame(FrameBuilder(), s))}")
            elif self.joiners and self.seq == 0:
                self.force_key = True           # nothing published yet: start everyone
                self.wake.set()
                return
            self.force_key = self.changed_flag = self.joiners = False
            if f is not None and f.get("branch") is not None:
                self.record.branch = f["branch"]
            self.last_pub = time.monotonic()
            # read the session before the first await: a load may begin in a worker thread then
            self._sync_record()
            self._settle()
            try:
                for text in texts:
                    await self.hub.bus.publish(self._chan(), text)
            except BusDown:
                self.force_key = True
                raise
        if self.results_dirty:
            self.results_dirty = False
            try:
                await self._results()
            except BusDown:
                self.results_dirty = True
                raise
        if self.meta_dirty:
            self.meta_dirty = False
            pub, own = self.meta()
            await self.hub.bus.publish(self._chan(), "M" + json.dumps(pub, separators=(",", ":")))
            self.conn.teacher_note(own)
        now = time.monotonic()
        if now - self.saved_at > self.hub.settings.room_idle_seconds / 4:
            self.save_due = True         # a connected teacher keeps the room alive
        if self.save_due and (not s.playing or now - self.saved_at >= SAVE_EVERY):
            self.save_due = False
            self.saved_at = now
            self.record.students = self.hub.students(self.code)
            try:
                await self.hub.save_record(self.record)
            except BusDown:
                self.save_due = True
                raise
        elif self.save_due:
            asyncio.get_running_loop().call_later(SAVE_EVERY, self.wake.set)

    def _chan(self) -> str:
        from .model import channel
        return channel(self.code)

    def _sync_record(self) -> None:
        s = self.conn.session
        sim = s.sim
        rec = self.record
        if self._scenario_of is not s.scenario:
            self._scenario_of = s.scenario
            rec.scenario = s.scenario.model_dump(mode="json")
            rec.title = s.scenario.title
        rec.variant = sim.variant
        rec.schedule = list(sim.trace)
        rec.step = sim.step_no
        rec.sched_kind, rec.sched_seed = s.sched_kind, s.sched_seed
        if rec.speed != s.speed:        # the class's speed sliders follow the teacher's
            rec.speed = s.speed
            self.meta_dirty = True
        self.save_due = True

    def _settle(self) -> None:
        rnd = self.record.round
        if rnd is None or rnd.get("answer") is not None:
            return
        ans = rounds.settle(self.conn.session, rnd)
        if ans is not None:
            rnd["answer"] = ans
            self.touch_meta()

    async def _results(self) -> None:
        rec = self.record
        keys = []
        if rec.round is not None:
            keys.append(answers_key(self.code, rec.round["id"]))
            got = await self._read_back(keys[-1])
            self.tally = rounds.tally(rec.round, got)
            self.answers_n = sum(self.tally.values())
        if rec.experiment is not None:
            keys.append(runs_key(self.code, rec.experiment["id"]))
            self.hist = rounds.histogram(await self._read_back(keys[-1]))
        self.seen = {k: self.seen[k] for k in keys if k in self.seen}
        self.meta_dirty = True

    async def _read_back(self, key: str) -> dict[str, str]:
        """A hash of answers or outcomes, with the fields this link read there before and the
        store has since lost (an emptied Redis) put back — never over a newer value."""
        got = await self.hub.bus.hgetall(key)
        lost = {f: v for f, v in self.seen.get(key, {}).items() if f not in got}
        if lost:
            await self.hub.bus.hfill(key, lost, self.hub.settings.room_idle_seconds)
            got = {**lost, **got}
        self.seen[key] = got
        return got

    # ------------------------------------------------------------------ room info
    def meta(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(what every student sees, what the teacher sees)."""
        rec = self.record
        base = public_meta(rec, self.hub.students(self.code), True)
        own = json.loads(json.dumps(base))
        if rec.round is not None:
            rnd_pub = base["round"]
            rnd_pub["answers"] = self.answers_n
            own["round"]["answers"] = self.answers_n
            own["round"]["tally"] = self.tally
            own["round"]["answer"] = rec.round.get("answer")
            own["round"]["explain"] = rec.round.get("explain")
            if rec.round.get("revealed"):
                rnd_pub["tally"] = self.tally
                rnd_pub["answer"] = rec.round.get("answer")
                rnd_pub["explain"] = rec.round.get("explain")
        if rec.experiment is not None:
            base["experiment"]["histogram"] = self.hist
            own["experiment"]["histogram"] = self.hist
        return base, own

    # ------------------------------------------------------------------ teacher ops
    async def ask(self, op: Any) -> None:
        rec = self.record
        if op.kind == "lesson":
            if rec.lesson is None or rec.chapter is None:
                raise SessionError("this room follows no lesson chapter: nothing to ask from it")
            labels, step = rounds.where_now(self.conn.session)
            rnd = await offload.run(self.conn.limits, "preparing the chapter's question",
                                    rounds.lesson_round, labels, step, rec.rounds_made + 1,
                                    rec.lesson, rec.chapter)
        else:
            opts = [o.model_dump() for o in op.options] if op.options else None
            rnd = rounds.open_round(self.conn.session, rec.rounds_made + 1, op.kind, op.question,
                                    opts, op.answer)
        rec.rounds_made += 1
        rec.round = rnd
        self.tally = {o["id"]: 0 for o in rec.round["options"]}
        self.answers_n = 0
        self.touch_meta()

    def reveal(self) -> None:
        if self.record.round is not None:
            self.record.round["revealed"] = True
            self._settle()
        self.results_dirty = True
        self.touch_meta()

    def close_round(self) -> None:
        self.record.round = None
        self.touch_meta()

    def experiment(self, open_: bool) -> None:
        rec = self.record
        if open_:
            rec.experiments_made += 1
            sim = self.conn.session.sim
            rec.experiment = {"id": rec.experiments_made, "open": True,
                              "from_step": sim.step_no if sim else 0}
            self.hist = rounds.histogram({})
            self._sync_record()
        elif rec.experiment is not None:
            rec.experiment["open"] = False
        self.touch_meta()

    def select(self, proc: str | None) -> None:
        self.record.selected = proc
        self.touch_meta()

    async def chapter(self, lesson: str | None, chapter: int | None, title: str) -> None:
        """Show a lesson chapter. For a lesson in protocols/lessons the chapter's state is loaded
        into the teacher's session (the class follows it) and its words go to the class; for
        any other player the call only records the chapter and its title (the documented hook).
        Reading the lessons, the load and its full frame run off the event loop on the work
        budget (app/offload.py), so a big chapter cannot stall the other rooms."""
        rec = self.record
        lid = lesson or rec.lesson
        text, cite, count = [], "", rec.chapters
        conn = self.conn
        if lid is not None and chapter is not None and await offload.run(
                conn.limits, "reading the lessons", _known_lesson, lid):
            conn.stop_play()
            conn.loading = True       # the publisher leaves the session alone meanwhile
            try:
                info, frame = await offload.run(conn.limits, "loading this chapter",
                                                self._chapter_off, lid, chapter)
            finally:
                conn.loading = False
            conn.push(frame)
            title, text, cite, count = info["title"], info["text"], info["cite"], info["chapters"]
        rec.lesson, rec.chapter, rec.chapter_title = lid, chapter, title
        rec.chapter_text, rec.chapter_cite, rec.chapters = text, cite, count
        self.touch_meta()


    def _chapter_off(self, lid: str, chapter: int) -> tuple[dict[str, Any], str]:
        """In a worker thread: the chapter's state into the teacher's session, and its full
        frame, encoded."""
        info = rounds.lesson_chapter(lid, chapter)
        conn = self.conn
        conn.session.load(info["scenario"], info["variant"], info["timeline"], info["step"])
        return info, conn.encoded(conn.frames.full(conn.session, None, load=True), None)


def public_meta(rec: RoomState, students: int, teacher: bool) -> dict[str, Any]:
    """The room info every member may see (no answers, no tally before the reveal)."""
    rnd = None
    if rec.round is not None:
        r = rec.round
        rnd = {"id": r["id"], "kind": r["kind"], "question": r["question"],
               "options": r["options"], "step": r["step"], "revealed": r.get("revealed", False),
               "answers": 0}
    exp = None
    if rec.experiment is not None:
        e = rec.experiment
        exp = {"id": e["id"], "open": e["open"], "from_step": e["from_step"], "histogram": None}
    return {"type": "room", "code": rec.code, "title": rec.title, "students": students,
            "teacher": teacher, "round": rnd, "experiment": exp, "selected": rec.selected,
            "lesson": rec.lesson, "chapter": rec.chapter, "chapter_title": rec.chapter_title,
            "chapter_text": rec.chapter_text, "chapter_cite": rec.chapter_cite,
            "chapters": rec.chapters, "branch": rec.branch, "speed": rec.speed}


def _known_lesson(lesson_id: str) -> bool:
    try:
        from protocols.lessons import check as lcheck
        return lesson_id in lcheck.all_lessons()
    except Exception:   # noqa: BLE001 - no lessons here: the chapter is only recorded
        return False


