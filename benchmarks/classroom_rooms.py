"""Classroom rooms under load (issue 19): teachers step, whole classes follow, on loopback.

    python benchmarks/classroom_rooms.py --config one   --students 200 --seconds 60
    python benchmarks/classroom_rooms.py --config five  --students 100 --seconds 60   # 5 rooms
    python benchmarks/classroom_rooms.py --config redis --students 200 --seconds 60   # 2 workers

Each teacher drives the gallery's ``datta-stress`` ring (38 processes, ≈ 4 KB a frame) with the
random scheduler at 10 steps a second (one ``step`` command every 0.1 s; a run that ends is
reset). Students join in batches of 20, wait for their key frame, then the measurement runs for
``--seconds``. The students live in ``--procs`` processes of their own (4), so that the load
generator is not what limits the numbers. Fan-out latency = the time a student receives a frame showing step k minus the time
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
import multiprocessing as mp
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
sys.path.insert(0, str(ROOT))

from app.devserver import free_port, proc_stats, running  # noqa: E402

STEP_RE = re.compile(r'"step":(\d+)')
HASH_RE = re.compile(r'"state_hash":"([0-9a-f]+)"')
SCENARIO = "datta-stress"




DEFLATE = True     # --no-deflate: uvicorn --ws-per-message-deflate false


@contextmanager
def servers(n: int, env_extra: dict[str, str]):   # noqa: ANN201 - yields [(url, pid)]
    """``n`` uvicorn processes as `allocscope serve` runs them (app/devserver.py), on one
    temporary data folder."""
    data = tempfile.mkdtemp(prefix="allocscope-bench-")
    try:
        with running(Path(data), n, env_extra,
                     ["--ws-per-message-deflate", str(DEFLATE).lower()]) as procs:
            yield [(base, proc.pid) for proc, base in procs]
    finally:
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
        try:
            await self._run(rate)
        except Exception as exc:   # noqa: BLE001 - counted, reported
            self.errors.append(f"teacher socket: {type(exc).__name__}: {exc}")

    async def _run(self, rate: float) -> None:
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
    def __init__(self, base: str, code: str) -> None:
        self.base, self.code = base, code
        self.got: list[tuple[int, float]] = []      # (step, when received), once measuring
        self.frames = 0
        self.errors: list[str] = []
        self.last_step: int | None = None
        self.last_hash = ""
        self.last_at = 0.0
        self.ready = asyncio.Event()
        self.measuring = False

    async def run(self, until: asyncio.Event) -> None:
        try:
            async with websockets.connect(ws_url(self.base, self.code), max_size=64 << 20,
                                          open_timeout=60, ping_interval=None) as ws:
                await ws.send(json.dumps({"op": "hello", "id": 1}))
                reader = asyncio.get_running_loop().create_task(self._read(ws))
                await until.wait()
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
            self.last_at = now
            k = int(STEP_RE.search(head).group(1))
            h = HASH_RE.search(text)
            self.last_hash = h.group(1) if h else ""
            full = '"view_patch":' not in text
            if self.last_step is None:
                self.last_step = k
                self.ready.set()
                continue
            if full:                       # a key frame: its history covers the steps it skips
                if self.measuring and k > self.last_step:
                    self.got += [(s, now) for s in range(self.last_step + 1, k + 1)]
                self.last_step = k
                continue
            steps = [k]
            if '"skipped_records"' in text:
                steps = [r["step"] for r in json.loads(text)["skipped_records"]] + [k]
            if k < self.last_step:                   # a reset: the timeline starts again
                self.last_step = k
                continue
            if steps[0] != self.last_step + 1 and k != self.last_step:
                self.errors.append(f"missing steps {self.last_step + 1}..{steps[0] - 1}")
            self.last_step = k
            if self.measuring:
                self.got += [(s, now) for s in steps]


def class_process(targets: list[tuple[str, str]], joined: Any, start: Any, stop: Any,
                  out: Any) -> None:
    """One load-generating process: its share of the students (a process of its own, so that
    the clients are not the bottleneck), joined in batches of 20; reports when all have their
    key frame, measures from ``start``, and after ``stop`` waits until no frame came for 5 s."""
    async def go() -> list[dict[str, Any]]:
        done = asyncio.Event()
        klass = [Student(b, c) for b, c in targets]
        tasks = []
        for i in range(0, len(klass), 20):
            batch = klass[i:i + 20]
            tasks += [asyncio.get_running_loop().create_task(s.run(done)) for s in batch]
            try:
                await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in batch)), 120)
            except TimeoutError:
                pass
        with joined.get_lock():
            joined.value += sum(1 for s in klass if s.last_step is not None)
        while not start.is_set():
            await asyncio.sleep(0.05)
        for s in klass:
            s.measuring = True
        while not stop.is_set():
            await asyncio.sleep(0.1)
        t_stop = time.perf_counter()      # drain: until 5 s without a frame (at most 30 s)
        while time.perf_counter() - max(s.last_at for s in klass) < 5.0 and \
                time.perf_counter() - t_stop < 30.0:
            await asyncio.sleep(0.2)
        done.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        return [{"code": s.code, "got": s.got, "frames": s.frames, "errors": s.errors,
                 "last_step": s.last_step, "last_hash": s.last_hash} for s in klass]
    out.put(asyncio.run(go()))


async def measure(config: str, students: int, seconds: float, procs: int) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    with ExitStack() as stack:
        env: dict[str, str] = {"ALLOCSCOPE_MAX_SESSIONS": "1000",
                               "ALLOCSCOPE_COMMANDS_PER_SECOND": "1000",
                               "ALLOCSCOPE_ROOM_MAX_STUDENTS": "1000"}
        pids: dict[str, int] = {}
        if config == "redis":
            rurl, rpid = stack.enter_context(redis_server())
            env["ALLOCSCOPE_REDIS_URL"] = rurl
            pids["redis-server"] = rpid
            (a, pa), (b, pb) = stack.enter_context(servers(2, env))
            pids["uvicorn A"], pids["uvicorn B"] = pa, pb
            bases = [a, b]
        else:
            [(a, pa)] = stack.enter_context(servers(1, env))
            pids["uvicorn"] = pa
            bases = [a]
        rooms = 5 if config == "five" else 1
        teachers = [Teacher(a, start_room(a)) for _ in range(rooms)]
        by_code = {t.room["code"]: t for t in teachers}
        tasks = [asyncio.get_running_loop().create_task(t.run(10.0)) for t in teachers]
        targets = [(bases[i % len(bases)], t.room["code"]) for t in teachers
                   for i in range(students)]
        joined, start, stop, out = ctx.Value("i", 0), ctx.Event(), ctx.Event(), ctx.Queue()
        workers = [ctx.Process(target=class_process, args=(targets[i::procs], joined, start,
                                                           stop, out)) for i in range(procs)]
        for w in workers:
            w.start()
        t_join = time.perf_counter()
        while joined.value < len(targets) and time.perf_counter() - t_join < 300:
            if all(not w.is_alive() for w in workers):
                break
            await asyncio.sleep(0.5)
            with joined.get_lock():
                pass
        join_s = time.perf_counter() - t_join
        await asyncio.sleep(1.0)
        stats0 = {k: proc_stats(p) for k, p in pids.items()}
        peak = {k: v[0] for k, v in stats0.items()}
        for t in teachers:
            t.measuring = True
        t0 = time.perf_counter()
        start.set()
        while time.perf_counter() - t0 < seconds:
            await asyncio.sleep(1.0)
            for k, p in pids.items():
                peak[k] = max(peak[k], proc_stats(p)[0])
        t1 = time.perf_counter()
        stats1 = {k: proc_stats(p) for k, p in pids.items()}
        for t in teachers:
            t.stop = True
            t.measuring = False
        stop.set()
        results: list[dict[str, Any]] = []
        for _ in workers:
            results += await asyncio.to_thread(out.get, True, 120)
        for w in workers:
            w.join(10)
        await asyncio.gather(*tasks, return_exceptions=True)
    lat = []
    for r in results:
        sent = by_code[r["code"]].sent
        lat += [(when - sent[k]) * 1000 for k, when in r["got"] if t0 <= sent.get(k, 0) <= t1]
    lat.sort()
    base = sorted(x for t in teachers for x in t.answer_ms)
    errors = sum(len(r["errors"]) for r in results) + sum(len(t.errors) for t in teachers)
    hash_off = sum(1 for r in results
                   if r["last_hash"] != by_code[r["code"]].hash.get(r["last_step"], "")
                   or r["last_step"] != by_code[r["code"]].step)
    sample = next((e for r in results for e in r["errors"]), "") or next(
        (e for t in teachers for e in t.errors), "")
    wall = t1 - t0
    return {
        "config": config, "deflate": DEFLATE, "rooms": rooms, "students": len(targets),
        "joined": sum(1 for r in results if r["last_step"] is not None),
        "join_seconds": round(join_s, 1), "client_processes": procs,
        "seconds": round(wall, 1), "steps": sum(len(t.sent) for t in teachers),
        "frames": sum(r["frames"] for r in results), "latencies": len(lat),
        "teacher_resets": sum(t.resets for t in teachers),
        "p50_ms": round(statistics.median(lat), 1) if lat else None,
        "p99_ms": round(lat[int(len(lat) * 0.99) - 1], 1) if lat else None,
        "max_ms": round(lat[-1], 1) if lat else None,
        "teacher_answer_p50_ms": round(statistics.median(base), 1) if base else None,
        "teacher_answer_p99_ms": round(base[int(len(base) * 0.99) - 1], 1) if base else None,
        "errors": errors, "final_state_differs": hash_off, "first_error": sample[:200],
        "cpu_percent": {k: round(100 * (stats1[k][1] - stats0[k][1]) / wall, 1) for k in pids},
        # contention-proof: server CPU per step made in the window, per follower
        "cpu_us_per_step_per_student": round(
            1e6 * sum(stats1[k][1] - stats0[k][1] for k in pids if k != "redis-server")
            / max(1, sum(1 for t in teachers for k in t.sent.values() if t0 <= k <= t1))
            / max(1, students)),
        "rss_peak_mib": {k: round(v / 1024, 1) for k, v in peak.items()},
        "load_average": [round(x, 1) for x in os.getloadavg()],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", choices=["one", "five", "redis"], default="one")
    ap.add_argument("--students", type=int, default=200, help="students per room (≤ 1000)")
    ap.add_argument("--seconds", type=float, default=60.0, help="measured seconds (≤ 600)")
    ap.add_argument("--procs", type=int, default=4, help="load-generating processes (1..16)")
    ap.add_argument("--no-deflate", action="store_true",
                    help="serve without per-message deflate (browsers ask for it by default)")
    args = ap.parse_args()
    if not 1 <= args.students <= 1000 or not 1 <= args.seconds <= 600 or not 1 <= args.procs <= 16:
        ap.error("--students 1..1000, --seconds 1..600, --procs 1..16 keep the load bounded")
    global DEFLATE
    DEFLATE = not args.no_deflate
    print(json.dumps(asyncio.run(measure(args.config, args.students, args.seconds, args.procs)),
                     indent=1))


if __name__ == "__main__":
    main()
