"""Classroom rooms under load (issue 19): teachers step, whole classes follow, on loopback.

    python benchmarks/classroom_rooms.py --config one   --students 200 --seconds 60
    python benchmarks/classroom_rooms.py --config five  --students 100 --seconds 60   # 5 rooms
    python benchmarks/classroom_rooms.py --config redis --students 200 --seconds 60   # 2 workers

Each teacher drives the gallery's ``datta-stress`` ring (38 processes, ≈ 4 KB a frame) with the
random scheduler at 10 steps a second (one ``step`` command every 0.1 s; a run that ends is
reset). Students join in batches of 20, wait for their key frame, then the measurement runs for
``--seconds``. Fan-out latency = the time a student receives a frame showing step k minus the time
its teacher sent the command that made step k (one clock: every client is in this process); the
baseline measured in the same run is the teacher's own answer time for the same commands.
Reported: students joined, frames and steps seen, latency p50 / p99 / max, errors (error frames,
missing steps, closed sockets, a final state_hash that differs from the teacher's), and each
server process's CPU use and peak RSS (from /proc), redis-server's too.

``one``: one uvicorn worker, in-process rooms. ``five``: the same worker, five rooms of
``--students`` each. ``redis``: two uvicorn processes sharing a real redis-server (started here
on a free loopback port in a temporary folder, stopped after): the teacher on the first, the
students split evenly over both. Everything is bounded: fixed clients, fixed duration, loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import websockets

ROOT = Path(__file__).resolve().parents[1]
STEP_RE = re.compile(r'"step":(\d+)')
HASH_RE = re.compile(r'"state_hash":"([0-9a-f]+)"')
SCENARIO = "datta-stress"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_stats(pid: int) -> tuple[int, float]:
    """(RSS in KiB, user+system CPU seconds) of a process, from /proc."""
    rss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return rss, (int(fields[11]) + int(fields[12])) / ticks


@contextmanager
def server(env_extra: dict[str, str]):   # noqa: ANN201 - yields (url, pid)
    port = free_port()
    data = tempfile.mkdtemp(prefix="allocscope-bench-")
    env = dict(os.environ, ALLOCSCOPE_DATA=data, PYTHONPATH=str(ROOT), **env_extra)
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.main:app", "--host",
                             "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        yield url, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        shutil.rmtree(data, ignore_errors=True)


@contextmanager
def redis_server():   # noqa: ANN201 - yields (url, pid)
    port = free_port()
    folder = tempfile.mkdtemp(prefix="allocscope-bench-redis-")
    proc = subprocess.Popen([shutil.which("redis-server") or "/usr/bin/redis-server", "--port",
                             str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                             "no", "--dir", folder], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0", proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


def start_room(base: str) -> dict[str, Any]:
    req = urllib.request.Request(base + "/api/rooms", method="POST",
                                 data=json.dumps({"scenario": SCENARIO, "schedule": [],
                                                  "step": 0}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.loads(r.read())


def ws_url(base: str, code: str) -> str:
    return base.replace("http", "ws", 1) + f"/ws/room/{code}"


class Teacher:
    def __init__(self, base: str, room: dict[str, Any]) -> None:
        self.base, self.room = base, room
        self.sent: dict[int, float] = {}        # step -> when the command that made it was sent
        self.sent_at: dict[int, float] = {}     # command id -> when it was sent
        self.answer_ms: list[float] = []        # the baseline: command -> the teacher's answer
        self.measuring = False
        self.hash: dict[int, str] = {}
        self.errors: list[str] = []
        self.step = 0
        self.resets = 0
        self.stop = False

    async def run(self, rate: float) -> None:
        async with websockets.connect(ws_url(self.base, self.room["code"]), max_size=64 << 20,
                                      open_timeout=30, ping_interval=None) as ws:
            await ws.send(json.dumps({"op": "hello", "role": "teacher",
                                      "secret": self.room["secret"], "id": 0}))
            await ws.send(json.dumps({"op": "scheduler", "kind": "random", "seed": 7, "id": 1}))
            nid = 2
            reader = asyncio.get_running_loop().create_task(self._read(ws))
            next_at = time.perf_counter()
            while not self.stop:
                next_at += 1.0 / rate
                self.sent_at[nid] = time.perf_counter()
                await ws.send(json.dumps({"op": "step", "id": nid}))
                nid += 1
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
            await asyncio.sleep(1.0)
            reader.cancel()

    async def _read(self, ws: Any) -> None:
        async for text in ws:
            m = json.loads(text)
            if m.get("type") == "frame" and m.get("reply_to") in self.sent_at:
                self.step = m["step"]
                self.sent[m["step"]] = self.sent_at.pop(m["reply_to"])
                if self.measuring:
                    self.answer_ms.append((time.perf_counter() - self.sent[m["step"]]) * 1000)
                self.hash[m["step"]] = m["state_hash"]
            elif m.get("type") == "error":
                if "nothing to do" in m["message"] or "no event" in m["message"]:
                    self.resets += 1
                    await ws.send(json.dumps({"op": "reset"}))
                else:
                    self.errors.append(m["message"])


class Student:
    def __init__(self, base: str, code: str, teacher: Teacher) -> None:
        self.base, self.code, self.teacher = base, code, teacher
        self.got: list[tuple[int, float]] = []      # (step, when received) of measured frames
        self.frames = 0
        self.errors: list[str] = []
        self.last_step: int | None = None
        self.last_hash = ""
        self.ready = asyncio.Event()
        self.measuring = False

    async def run(self, until: asyncio.Event) -> None:
        try:
            async with websockets.connect(ws_url(self.base, self.code), max_size=64 << 20,
                                          open_timeout=60, ping_interval=None) as ws:
                await ws.send(json.dumps({"op": "hello", "id": 1}))
                reader = asyncio.get_running_loop().create_task(self._read(ws))
                await until.wait()
                await asyncio.sleep(1.5)              # the last frames arrive
                reader.cancel()
        except Exception as exc:   # noqa: BLE001 - counted, reported
            self.errors.append(f"socket: {type(exc).__name__}: {exc}")
        finally:
            self.ready.set()

    async def _read(self, ws: Any) -> None:
        async for text in ws:
            now = time.perf_counter()
            head = text[:120]
            if head.startswith('{"type":"room"'):
                continue
            if head.startswith('{"type":"error"'):
                self.errors.append(json.loads(text)["message"])
                continue
            self.frames += 1
            k = int(STEP_RE.search(head).group(1))
            h = HASH_RE.search(text)
            self.last_hash = h.group(1) if h else ""
            full = '"view_patch":' not in text
            if self.last_step is None:
                self.last_step = k
                self.ready.set()
                continue
            steps = [k]
            if full:                       # a key frame: its history covers the steps it skips
                if self.measuring and k > self.last_step:
                    self.got += [(s, now) for s in range(self.last_step + 1, k + 1)]
                self.last_step = k
                continue
            if '"skipped_records"' in text:
                m = json.loads(text)
                steps = [r["step"] for r in m["skipped_records"]] + [k]
            if k < self.last_step:                   # a reset: the timeline starts again
                self.last_step = k
                continue
            if steps[0] != self.last_step + 1 and k != self.last_step:
                self.errors.append(f"missing steps {self.last_step + 1}..{steps[0] - 1}")
            self.last_step = k
            if self.measuring:
                for s in steps:
                    self.got.append((s, now))


async def measure(config: str, students: int, seconds: float) -> dict[str, Any]:
    with ExitStack() as stack:
        env: dict[str, str] = {"ALLOCSCOPE_MAX_SESSIONS": "1000",
                               "ALLOCSCOPE_COMMANDS_PER_SECOND": "1000",
                               "ALLOCSCOPE_ROOM_MAX_STUDENTS": "1000"}
        pids: dict[str, int] = {}
        if config == "redis":
            rurl, rpid = stack.enter_context(redis_server())
            env["ALLOCSCOPE_REDIS_URL"] = rurl
            pids["redis-server"] = rpid
            a, pa = stack.enter_context(server(env))
            b, pb = stack.enter_context(server(env))
            pids["uvicorn A"], pids["uvicorn B"] = pa, pb
            bases = [a, b]
        else:
            a, pa = stack.enter_context(server(env))
            pids["uvicorn"] = pa
            bases = [a]
        rooms = 5 if config == "five" else 1
        teachers = []
        for _ in range(rooms):
            teachers.append(Teacher(a, start_room(a)))
        done = asyncio.Event()
        klass: list[Student] = []
        tasks = []
        for t in teachers:
            tasks.append(asyncio.get_running_loop().create_task(t.run(10.0)))
        for t in teachers:
            for i in range(students):
                klass.append(Student(bases[i % len(bases)], t.room["code"], t))
        for i in range(0, len(klass), 20):               # join in batches of 20
            batch = klass[i:i + 20]
            for s in batch:
                tasks.append(asyncio.get_running_loop().create_task(s.run(done)))
            await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in batch)), 60)
        joined = sum(1 for s in klass if s.last_step is not None)
        await asyncio.sleep(1.0)
        stats0 = {k: proc_stats(p) for k, p in pids.items()}
        peak = {k: v[0] for k, v in stats0.items()}
        t0 = time.perf_counter()
        for s in klass:
            s.measuring = True
        for t in teachers:
            t.measuring = True
        while time.perf_counter() - t0 < seconds:
            await asyncio.sleep(1.0)
            for k, p in pids.items():
                peak[k] = max(peak[k], proc_stats(p)[0])
        wall = time.perf_counter() - t0
        stats1 = {k: proc_stats(p) for k, p in pids.items()}
        for s in klass:
            s.measuring = False
        for t in teachers:
            t.stop = True
        done.set()
        await asyncio.gather(*tasks, return_exceptions=True)
    lat = []
    for s in klass:
        sent = s.teacher.sent
        lat += [(when - sent[k]) * 1000 for k, when in s.got if k in sent]
    lat.sort()
    base = sorted(x for t in teachers for x in t.answer_ms)
    errors = sum(len(s.errors) for s in klass) + sum(len(t.errors) for t in teachers)
    hash_off = sum(1 for s in klass if s.last_hash != s.teacher.hash.get(s.last_step, ""))
    sample = next((e for s in klass for e in s.errors), "") or next(
        (e for t in teachers for e in t.errors), "")
    return {
        "config": config, "rooms": rooms, "students": len(klass), "joined": joined,
        "seconds": round(wall, 1), "steps": sum(len(t.sent) for t in teachers),
        "frames": sum(s.frames for s in klass), "latencies": len(lat),
        "teacher_resets": sum(t.resets for t in teachers),
        "p50_ms": round(statistics.median(lat), 1) if lat else None,
        "p99_ms": round(lat[int(len(lat) * 0.99) - 1], 1) if lat else None,
        "max_ms": round(lat[-1], 1) if lat else None,
        "teacher_answer_p50_ms": round(statistics.median(base), 1) if base else None,
        "teacher_answer_p99_ms": round(base[int(len(base) * 0.99) - 1], 1) if base else None,
        "errors": errors, "final_hash_differs": hash_off, "first_error": sample[:200],
        "cpu_percent": {k: round(100 * (stats1[k][1] - stats0[k][1]) / wall, 1) for k in pids},
        "rss_peak_mib": {k: round(v / 1024, 1) for k, v in peak.items()},
        "load_average": os.getloadavg(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", choices=["one", "five", "redis"], default="one")
    ap.add_argument("--students", type=int, default=200, help="students per room (≤ 1000)")
    ap.add_argument("--seconds", type=float, default=60.0, help="measured seconds (≤ 600)")
    args = ap.parse_args()
    if not 1 <= args.students <= 1000 or not 1 <= args.seconds <= 600:
        ap.error("--students 1..1000 and --seconds 1..600 keep the load bounded")
    print(json.dumps(asyncio.run(measure(args.config, args.students, args.seconds)), indent=1))


if __name__ == "__main__":
    main()
