"""Web server benchmark: command -> frame latency over a real websocket, and frame sizes.

Starts uvicorn (``app.main:app``) on a free loopback port in a child process, connects with the
``websockets`` client and, for token rings of n = 10, 100, 500 processes, times each command
from send to the arrival of its answer (p50 / p99), for ``step`` (the hot path), ``deliver``,
``back`` and ``goto``. At n = 100 it also records the bytes of each step's ``view_patch`` and of
the whole frame. Loopback only; every loop is bounded.

    python benchmarks/web_server.py [--steps 400] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parent.parent
SIZES = (10, 100, 500)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    env = dict(os.environ, ALLOCSCOPE_COMMANDS_PER_SECOND="100000",
               ALLOCSCOPE_COMMAND_BURST="100000")
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.main:app", "--host",
                             "127.0.0.1", "--port", str(port), "--log-level", "warning",
                             "--ws-max-size", str(1 << 20)], cwd=ROOT, env=env)
    for _ in range(200):                      # up to 20 s
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("uvicorn did not start")


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


class Client:
    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.n = 0

    def cmd(self, op: str, **kw: Any) -> tuple[float, str, dict[str, Any]]:
        self.n += 1
        text = json.dumps({"op": op, "id": self.n, **kw})
        t0 = time.perf_counter()
        self.ws.send(text)
        raw = self.ws.recv()
        dt = (time.perf_counter() - t0) * 1000
        f = json.loads(raw)
        assert f.get("reply_to") == self.n, f
        return dt, raw, f


def scenario(n: int) -> dict[str, Any]:
    return {"id": f"bench-ring-{n}", "title": f"token ring of {n}", "protocol": "token_ring",
            "variant": "reliable", "params": {"n": n, "requests": 1000}, "channels": "fifo",
            "scheduler": {"kind": "random", "seed": 1}, "steps": 1_000_000}


def bench(url: str, n: int, steps: int) -> dict[str, Any]:
    with connect(url, max_size=None) as ws:
        return _bench(Client(ws), n, steps)


def _bench(c: Client, n: int, steps: int) -> dict[str, Any]:
    t_load, raw, f = c.cmd("load", scenario=scenario(n))
    assert f["type"] == "frame", f
    step_ms, patch_bytes, frame_bytes = [], [], []
    for _ in range(steps):
        dt, raw, f = c.cmd("step")
        assert f["type"] == "frame", f
        step_ms.append(dt)
        patch_bytes.append(len(json.dumps(f["view_patch"], separators=(",", ":"),
                                          ensure_ascii=False).encode()))
        frame_bytes.append(len(raw.encode()))
    deliver_ms = []
    for _ in range(min(100, steps)):
        ev = next((e["id"] for e in f["enabled"] if e["kind"] == "deliver"), f["enabled"][0]["id"])
        dt, raw, f = c.cmd("deliver", event=ev)
        deliver_ms.append(dt)
    total = f["total"]
    back_ms, goto_ms, back_bytes, goto_bytes, scrub_bytes = [], [], [], [], []
    for _ in range(min(50, total)):
        dt, raw, f = c.cmd("back")
        back_ms.append(dt)
        back_bytes.append(len(raw.encode()))
    for i in range(50):                       # far jumps anywhere on the timeline
        dt, raw, f = c.cmd("goto", step=(i * 7919) % (total + 1))
        goto_ms.append(dt)
        goto_bytes.append(len(raw.encode()))
    k = total // 2
    for i in range(100):                      # scrubbing: ±20 steps at a time
        k = max(0, min(total, k + ((i * 37) % 41) - 20))
        _, raw, f = c.cmd("goto", step=k)
        scrub_bytes.append(len(raw.encode()))

    def summary(xs: list[float]) -> dict[str, float]:
        return {"p50": round(pct(xs, 50), 2), "p99": round(pct(xs, 99), 2), "count": len(xs)}

    return {"n": n, "load_ms": round(t_load, 1), "step_ms": summary(step_ms),
            "deliver_ms": summary(deliver_ms), "back_ms": summary(back_ms),
            "goto_ms": summary(goto_ms),
            "view_patch_bytes_median": int(statistics.median(patch_bytes)),
            "frame_bytes_median": int(statistics.median(frame_bytes)),
            "back_frame_bytes_median": int(statistics.median(back_bytes)) if back_bytes else 0,
            "goto_far_frame_bytes_median": int(statistics.median(goto_bytes)),
            "goto_scrub_frame_bytes_median": int(statistics.median(scrub_bytes))}


def cpu(n: int, steps: int) -> dict[str, Any]:
    """Server CPU time per command in process (thread CPU time, so other load on the machine
    does not count): a step with its incremental frame encoded, and a back with its full frame."""
    sys.path.insert(0, str(ROOT))
    from app.frames import FrameBuilder, encode
    from app.session import Session
    s = Session()
    s.load(scenario(n))
    fb = FrameBuilder()
    encode(fb.full(s, None))
    step_ms, back_ms = [], []
    for _ in range(steps):
        t0 = time.thread_time()
        s.step()
        encode(fb.incremental(s, None))
        step_ms.append((time.thread_time() - t0) * 1000)
    for _ in range(min(50, steps)):
        t0 = time.thread_time()
        s.back()
        encode(fb.incremental(s, None, jump=True))
        back_ms.append((time.thread_time() - t0) * 1000)
    return {"n": n, "step_cpu_ms": {"p50": round(pct(step_ms, 50), 2),
                                    "p99": round(pct(step_ms, 99), 2)},
            "back_cpu_ms": {"p50": round(pct(back_ms, 50), 2), "p99": round(pct(back_ms, 99), 2)}}


def play(url: str, n: int, seconds: float, read_delay: float) -> dict[str, Any]:
    """Play at 1000 steps/s for ``seconds`` with a client that sleeps ``read_delay`` s per frame,
    then pause and read what is left: steps taken, frames received, whether every step's record
    arrived (in ``step_record`` or ``skipped_records``). A slow reader first fills the loopback
    socket buffers; after that the server coalesces."""
    with connect(url, max_size=None) as ws:
        c = Client(ws)
        c.cmd("load", scenario=scenario(n))
        c.cmd("speed", steps_per_second=1000)
        _, _, start = c.cmd("play")
        frames, records = 0, []
        t_end = time.perf_counter() + seconds
        while time.perf_counter() < t_end:
            try:
                f = json.loads(ws.recv(timeout=2.0))
            except TimeoutError:             # play stopped by itself: nothing more comes
                break
            frames += 1
            records += [r["step"] for r in f.get("skipped_records", [])]
            if f.get("step_record"):
                records.append(f["step_record"]["step"])
            if read_delay:
                time.sleep(read_delay)
        ws.send(json.dumps({"op": "pause", "id": "stop"}))
        while True:                              # drain what was in flight, up to the answer
            f = json.loads(ws.recv(timeout=30.0))
            frames += 1
            records += [r["step"] for r in f.get("skipped_records", [])]
            if f.get("step_record"):
                records.append(f["step_record"]["step"])
            if f.get("reply_to") == "stop":
                break
        steps = f["step"] - start["step"]
        complete = records == list(range(start["step"] + 1, f["step"] + 1))
    return {"n": n, "read_delay_ms": read_delay * 1000, "seconds": seconds, "steps": steps,
            "frames": frames, "steps_per_frame": round(steps / max(1, frames), 2),
            "records_complete": complete}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    steps = max(10, min(args.steps, 5000))
    port = free_port()
    server = start_server(port)
    try:
        url = f"ws://127.0.0.1:{port}/ws"
        rows = [bench(url, n, steps) for n in SIZES]
        plays = [play(url, 100, 4.0, 0.0), play(url, 100, 4.0, 0.2)]
        cpus = [cpu(n, steps) for n in SIZES]
    finally:
        server.terminate()
        server.wait(timeout=10)
    if args.json:
        print(json.dumps({"commands": rows, "play": plays, "cpu": cpus}, indent=2))
        return
    print(f"token ring, random scheduler, {steps} steps per size, loopback websocket")
    print("| n | step p50 / p99 ms | deliver p50 / p99 ms | back p50 / p99 ms | goto p50 / p99 ms "
          "| view_patch bytes (median) | step frame bytes (median) | back frame bytes (median) "
          "| goto frame bytes: scrub ±20 / far (median) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        def pp(k: str, r: dict[str, Any] = r) -> str:
            return f"{r[k]['p50']} / {r[k]['p99']}"
        print(f"| {r['n']} | {pp('step_ms')} | {pp('deliver_ms')} | {pp('back_ms')} | "
              f"{pp('goto_ms')} | {r['view_patch_bytes_median']} | {r['frame_bytes_median']} | "
              f"{r['back_frame_bytes_median']} | {r['goto_scrub_frame_bytes_median']} / "
              f"{r['goto_far_frame_bytes_median']} |")
    print()
    print("server CPU per command, in process (thread CPU time)")
    print("| n | step + incremental frame p50 / p99 ms | back + its diff frame p50 / p99 ms |")
    print("|---|---|---|")
    for r in cpus:
        print(f"| {r['n']} | {r['step_cpu_ms']['p50']} / {r['step_cpu_ms']['p99']} | "
              f"{r['back_cpu_ms']['p50']} / {r['back_cpu_ms']['p99']} |")
    print()
    print("play at 1000 steps/s, n = 100, 4 s, then pause")
    print("| reader | steps | frames | steps per frame | every record arrived |")
    print("|---|---|---|---|---|")
    for p in plays:
        who = "as fast as it can" if not p["read_delay_ms"] else \
            f"sleeps {p['read_delay_ms']:g} ms per frame"
        print(f"| {who} | {p['steps']} | {p['frames']} | {p['steps_per_frame']} | "
              f"{p['records_complete']} |")


if __name__ == "__main__":
    main()
