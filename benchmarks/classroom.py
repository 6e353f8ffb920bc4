"""Classroom load (issue 10): many websocket sessions at once against a real uvicorn on loopback.

    python benchmarks/classroom.py --sessions 200 --seconds 60
    python benchmarks/classroom.py --sessions 500 --seconds 60
    python benchmarks/classroom.py --sessions 200 --speed 10 --seconds 30          # issue 20.3
    python benchmarks/classroom.py --sessions 5 --greedy 4 --seconds 30            # issue 20.3

Each session loads a gallery scenario (round-robin over the gallery), picks the random scheduler,
plays at ``--speed`` steps/s (default 20), and once a second sends a command (alternately ``inspect`` and ``speed``)
whose answer it times (command → frame latency). A session whose play stops (end of run, or a
monitor fired) resets and plays again. Reported: sessions admitted / refused (the server's
``ALLOCSCOPE_MAX_SESSIONS`` with its clear "server busy" error), p50 / p99 latency, unexpected
errors, frames received, the server's peak RSS and its CPU use.
With ``--greedy N`` the first N sessions instead play a 200-process tree at 1,000 steps/s
(started a few seconds before the others), and the report separates the others' numbers: the
fair-CPU governor (app/governor.py) must still admit them and answer them quickly.
Everything is bounded: a fixed number of sessions, a fixed duration, loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import websockets

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.devserver import proc_stats  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]




def big(n: int) -> dict:
    """A kout_tree of n processes that plays for minutes (datta_ring's typed topology stops
    at 64 resources)."""
    return {"id": "big-tree", "title": f"{n}-process tree", "protocol": "kout_tree",
            "topology": {"random": {"n": n, "seed": 1}}, "params": {"ell": 5, "k": 2},
            "workload": {"random": {"requests": 10_000, "seed": 1}}, "steps": 1_000_000}


class Client:
    def __init__(self, url: str, scenario: str | dict, seed: int, until: float,
                 speed: float = 20.0, greedy: bool = False) -> None:
        self.url, self.scenario, self.seed, self.until = url, scenario, seed, until
        self.speed, self.greedy = speed, greedy
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.frames = 0
        self.admitted = False
        self.refused = ""
        self._pending: dict[int, float] = {}
        self._next = 0
        self._playing = False

    async def send(self, ws, cmd: dict, timed: bool = False) -> None:
        self._next += 1
        cmd["id"] = self._next
        if timed:
            self._pending[self._next] = time.perf_counter()
        await ws.send(json.dumps(cmd))

    async def run(self) -> None:
        try:
            async with websockets.connect(self.url, max_size=8 << 20, open_timeout=20) as ws:
                try:
                    await self.send(ws, {"op": "load", "scenario": self.scenario})
                except websockets.ConnectionClosed:
                    pass        # refused at once: its "server busy" frame is still to be read
                first = json.loads(await asyncio.wait_for(ws.recv(), 20))
                if first.get("type") == "error":
                    self.refused = first.get("message", "")
                    return
                self.admitted = True
                nodes = (first.get("view") or {}).get("nodes") or []
                procs = [n["id"] for n in nodes if n.get("id") in set(first.get("pids") or [n["id"]])]
                self.first_proc = procs[0] if procs else "p0"
                await self.send(ws, {"op": "scheduler", "kind": "random", "seed": self.seed})
                await self.send(ws, {"op": "speed", "steps_per_second": self.speed})
                await self.send(ws, {"op": "play"})
                self._playing = True
                reader = asyncio.create_task(self.read(ws))
                tick = 0
                # students do not click in lockstep: spread the timed commands over the second
                await asyncio.sleep((self.seed * 0.618) % 1.0)
                while time.monotonic() < self.until and not reader.done():
                    await asyncio.sleep(1.0)
                    tick += 1
                    if not self._playing:
                        await self.send(ws, {"op": "reset"})
                        await self.send(ws, {"op": "play"})
                        self._playing = True
                    cmd = ({"op": "inspect", "proc": self.first_proc} if tick % 2
                           else {"op": "speed", "steps_per_second": self.speed})
                    await self.send(ws, cmd, timed=True)
                reader.cancel()
        except (TimeoutError, OSError, websockets.WebSocketException) as exc:
            if not self.admitted and not self.refused:
                self.refused = f"{type(exc).__name__}: {exc}"
            elif self.admitted:
                self.errors.append(f"{type(exc).__name__}: {exc}")

    first_proc = "p0"

    async def read(self, ws) -> None:
        async for raw in ws:
            msg = json.loads(raw)
            self.frames += 1
            rid = msg.get("reply_to")
            if rid in self._pending:
                self.latencies.append(time.perf_counter() - self._pending.pop(rid))
            if msg.get("type") == "error":
                self.errors.append(msg.get("message", ""))
            elif msg.get("type") == "frame":
                if "playing" in msg and not msg["playing"] and msg.get("reply_to") is None:
                    self._playing = False
                view = msg.get("view")
                if view and view.get("nodes"):
                    self.first_proc = view["nodes"][0]["id"]


async def load(url: str, scenarios: list[str], sessions: int, seconds: float, speed: float,
               greedy: int = 0) -> list[Client]:
    until = time.monotonic() + seconds
    hogs = [Client(url, big(200), 10_000 + i, until + 3, 1000.0, True) for i in range(greedy)]
    tasks = [asyncio.create_task(c.run()) for c in hogs]
    if hogs:
        await asyncio.sleep(3.0)                # the greedy ones are playing before the class
    clients = [Client(url, scenarios[i % len(scenarios)], i, until, speed)
               for i in range(sessions - greedy)]
    await asyncio.gather(*tasks, *(c.run() for c in clients))
    return hogs + clients


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--speed", type=float, default=20.0, help="steps/s each session plays at")
    ap.add_argument("--greedy", type=int, default=0,
                    help="of the sessions, how many play a 200-process tree at 1,000 steps/s")
    args = ap.parse_args()
    if not 1 <= args.sessions <= 2000 or not 1 <= args.seconds <= 600:
        sys.exit("sessions must be 1..2000 and seconds 1..600")
    port = free_port()
    data = tempfile.mkdtemp(prefix="allocscope-load-")
    env = dict(os.environ, ALLOCSCOPE_DATA=data)
    server = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.main:app", "--host",
                               "127.0.0.1", "--port", str(port), "--log-level", "warning",
                               "--ws-max-size", "1048576"], cwd=ROOT, env=env)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(600):                    # a loaded machine starts slowly
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        with urllib.request.urlopen(base + "/api/scenarios", timeout=5) as r:
            scenarios = [s["id"] for s in json.load(r) if s["protocol"] != "token_ring"
                         and not s["id"].endswith("stress")] or ["token-ring"]
        rss0, cpu0 = proc_stats(server.pid)
        peak = [rss0]
        stop = False

        async def sample() -> None:
            while not stop:
                peak[0] = max(peak[0], proc_stats(server.pid)[0])
                await asyncio.sleep(0.5)

        async def go() -> list[Client]:
            nonlocal stop
            sampler = asyncio.create_task(sample())
            out = await load(f"ws://127.0.0.1:{port}/ws", scenarios, args.sessions, args.seconds,
                             args.speed, args.greedy)
            stop = True
            await sampler
            return out

        t0 = time.perf_counter()
        me0 = resource.getrusage(resource.RUSAGE_SELF)
        clients = asyncio.run(go())
        me1 = resource.getrusage(resource.RUSAGE_SELF)
        wall = time.perf_counter() - t0
        rss1, cpu1 = proc_stats(server.pid)
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
    hogs = [c for c in clients if c.greedy]
    if hogs:
        print(f"greedy sessions (200-process tree at 1,000 steps/s): {len(hogs)}, admitted "
              f"{sum(c.admitted for c in hogs)}; the report below is about the others")
        clients = [c for c in clients if not c.greedy]
    admitted = [c for c in clients if c.admitted]
    refused = [c for c in clients if c.refused]
    lat = sorted(x * 1000 for c in admitted for x in c.latencies)
    errors = [e for c in admitted for e in c.errors]

    def pct(p: float) -> float:
        return lat[min(len(lat) - 1, int(p * len(lat)))] if lat else float("nan")

    print(f"sessions asked {args.sessions}, admitted {len(admitted)}, refused {len(refused)}"
          + (f" (e.g. {refused[0].refused!r})" if refused else ""))
    print(f"duration {wall:.1f} s; timed commands {len(lat)}; frames {sum(c.frames for c in clients)}")
    print(f"command->frame latency p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, "
          f"mean {statistics.fmean(lat) if lat else float('nan'):.1f} ms")
    print(f"unexpected errors {len(errors)}" + (f" (e.g. {errors[0]!r})" if errors else ""))
    print(f"server RSS start {rss0 / 1024:.0f} MiB, peak {peak[0] / 1024:.0f} MiB; "
          f"CPU {cpu1 - cpu0:.1f} s over {wall:.1f} s ({100 * (cpu1 - cpu0) / wall:.0f}% of one core)")
    client_cpu = (me1.ru_utime - me0.ru_utime) + (me1.ru_stime - me0.ru_stime)
    print(f"load generator (this process, same machine) CPU {client_cpu:.1f} s "
          f"({100 * client_cpu / wall:.0f}% of one core)")


if __name__ == "__main__":
    main()
