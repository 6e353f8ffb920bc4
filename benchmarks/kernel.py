"""Kernel benchmark (issues 2, 15): events per second against SimPy, scaling with idle
processes, and the cost of a long jump on the timeline.

    python benchmarks/kernel.py [--events 200000] [--repeat 5] [--baseline DIR]

Times are CPU seconds of this process (``time.process_time``), best of ``--repeat`` runs: the
2-core machine is shared, and wall time under load measures the neighbours. ``--baseline DIR``
(a checkout of an older commit, e.g. ``git worktree add /tmp/before main``) measures the same
rows with that checkout's kernel in a subprocess, interleaved with ours, so that both columns
come from the same run under the same load.

1. The token ring with 100 processes under the random scheduler on the headless kernel
   (``kernel.core.Core``: the per-step checks on, no timeline; a checkout from before the
   core/timeline split has only ``Simulator``, which is then measured in its place) and on
   the ``Simulator`` (core + timeline: trace, narration, snapshots, metrics, livelock memory),
   against the same model on SimPy (processes as generators, the token through Stores, random delays standing in for the
   random scheduler), for the same number of model events (token deliveries, requests, releases).
   The token ring's own handlers and guards alone, with a context that does nothing (no
   kernel), on the same mix of events: the floor any kernel around this protocol code has.
2. Time per event at 100 and at 1,000 processes (an idle process must cost nothing per step).
   The ratio is the median of ``--pairs`` paired ratios: n = 100 and n = 1,000 measured back
   to back (order alternated), so that both sides of each ratio see the same load; a ratio of
   two best-of-3 figures taken a second apart moves by ±0.3 on a loaded 2-core machine. The
   kernel / SimPy ratio is likewise the median of back-to-back pairs (``--pairs`` per repeat).
3. ``goto(k)`` at k = 100,000 on the ``Simulator``: restore the nearest snapshot and replay
   (CPU time too).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protocols.kernel import make_scheduler  # noqa: E402
from protocols.runner import build  # noqa: E402
from protocols.scenario import parse  # noqa: E402

FASTEST = ("kernel", "timeline", "simpy", "protocol")   # rates: best = highest; the rest times


def ring(n: int):
    return build(parse({"id": "bench", "title": "bench", "protocol": "token_ring",
                        "params": {"n": n, "requests": 10**6}}))


def ours(n: int, events: int, seed: int = 1, headless: bool = True) -> float:
    """Events per second of the kernel: the headless core stepped by event (the scheduler
    hands over the ``Event``, ``take`` applies it), or with ``headless=False`` (and on a
    checkout without a core) the timeline ``Simulator`` stepped by id, as a session does."""
    sim = ring(n)
    sched = make_scheduler("random", seed)
    try:
        from protocols.kernel.core import Core
    except ImportError:           # before the core/timeline split: the simulator was the kernel
        headless = False
    if headless:
        core = Core.of(sim)
        choose, take = sched.choose_event, core.take
        t = time.process_time()
        for _ in range(events):
            take(choose(core))
        return events / (time.process_time() - t)
    t = time.process_time()
    for _ in range(events):
        sim.step(sched.choose(sim))
    return events / (time.process_time() - t)


def simpy_ring(n: int, events: int, seed: int = 1) -> float:
    import simpy

    env = simpy.Environment()
    rng = random.Random(seed)
    boxes = [simpy.Store(env) for _ in range(n)]
    wanting = [False] * n
    count = [0]
    done = env.event()

    def tick() -> None:
        count[0] += 1
        if count[0] >= events and not done.triggered:
            done.succeed()

    def proc(i: int):
        while True:
            yield boxes[i].get()
            tick()                                      # the token is delivered
            if wanting[i]:
                wanting[i] = False
                yield env.timeout(rng.random())         # critical section
                tick()                                  # release
            yield env.timeout(rng.random())             # channel delay
            boxes[(i + 1) % n].put("Token")

    def requester(i: int):
        while True:
            yield env.timeout(rng.random() * n)
            if not wanting[i]:
                wanting[i] = True
                tick()                                  # request

    for i in range(n):
        env.process(proc(i))
        env.process(requester(i))
    boxes[0].put("Token")
    t = time.process_time()
    env.run(until=done)
    return count[0] / (time.process_time() - t)


class _NullCtx:
    """A context whose effects only store the process state: what is left of a step when the
    kernel does nothing but call the protocol (the floor for ``protocol_only``); like a
    headless core's, it keeps no narration."""

    narrates = False

    def __init__(self, sim) -> None:
        self.config, self._procs, self._index = sim.config, list(sim.procs), sim.index

    def get(self, pid: str):
        return self._procs[self._index[pid]]

    def put(self, pid: str, state) -> None:
        self._procs[self._index[pid]] = state

    def send(self, *a, **k) -> None:
        return None

    def say(self, *a, **k) -> None:
        return None

    request = enter_cs = exit_cs = cancel = send


def protocol_only(events: int) -> float:
    """Events per second of the token ring's own code alone, on the kernel's event mix (a
    request, the token's arrival, a release), each followed by the touched process's enabled
    actions, with a context that does nothing else: no kernel, no scheduler, no monitors."""
    from protocols.kernel.events import Message
    sim = ring(100)
    proto, cfg, ctx = sim.protocol, sim.config, _NullCtx(sim)
    procs, index = ctx._procs, ctx._index
    t = time.process_time()
    for k in range(events // 3):
        pid = sim.pids[k % 100]
        proto.apply(ctx, pid, "request")
        proto.actions(cfg, pid, procs[index[pid]])
        proto.deliver(ctx, Message(k, "x", pid, "Token", None))
        proto.actions(cfg, pid, procs[index[pid]])
        proto.apply(ctx, pid, "release")
        proto.actions(cfg, pid, procs[index[pid]])
    return (events // 3 * 3) / (time.process_time() - t)


def goto_time(k: int) -> float:
    sim = ring(100)
    sched = make_scheduler("random", 3)
    for _ in range(k):
        sim.step(sched.choose(sim))
    sim.goto(0)
    t = time.process_time()   # CPU time, as the rates: wall time under load is the run queue's
    sim.goto(k - 77)          # not on a snapshot boundary: restore, then replay
    return (time.process_time() - t) * 1000


def paired_ratios(events: int, pairs: int) -> tuple[list[float], list[float], list[float]]:
    """µs per event at n = 100 and n = 1,000, measured back to back ``pairs`` times with the
    order alternated, and each pair's ratio n = 1,000 / n = 100."""
    us100: list[float] = []
    us1000: list[float] = []
    for i in range(pairs):
        got = {n: 1e6 / ours(n, events) for n in ((100, 1000) if i % 2 == 0 else (1000, 100))}
        us100.append(got[100])
        us1000.append(got[1000])
    return us100, us1000, [b / a for a, b in zip(us100, us1000, strict=True)]


def measure(events: int, repeat: int, pairs: int = 5) -> dict:
    """Every row once per repeat, best of the repeats; the kernel and SimPy as ``pairs``
    back-to-back pairs per repeat (order alternated; ``vs_simpy`` holds each pair's ratio),
    the per-event rows likewise (``ratios``)."""
    rows: dict[str, list[float]] = {"kernel": [], "timeline": [], "simpy": [], "protocol": [],
                                    "us100": [], "us1000": [], "goto": []}
    ratios: list[float] = []
    vs_simpy: list[float] = []
    for _ in range(repeat):
        for i in range(pairs):
            got = {}
            for who in (("kernel", "simpy") if i % 2 == 0 else ("simpy", "kernel")):
                got[who] = ours(100, events) if who == "kernel" else simpy_ring(100, events)
                rows[who].append(got[who])
            vs_simpy.append(got["kernel"] / got["simpy"])
        rows["timeline"].append(ours(100, events, headless=False))
        rows["protocol"].append(protocol_only(events))
        a, b, r = paired_ratios(events // 2, pairs)
        rows["us100"] += a
        rows["us1000"] += b
        ratios += r
    rows["goto"].append(goto_time(100_000))
    best: dict = {k: (max(v) if k in FASTEST else min(v)) for k, v in rows.items()}
    best["ratios"], best["vs_simpy"] = ratios, vs_simpy
    return best


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    return (s[(len(s) - 1) // 2] + s[len(s) // 2]) / 2


def show(name: str, b: dict[str, float], events: int) -> None:
    print(f"{name}: token ring, 100 processes, {events} events, random scheduling")
    print(f"  allocscope kernel (headless core) : {b['kernel']:10.0f} events/s")
    print(f"  Simulator (core + timeline)       : {b['timeline']:10.0f} events/s, "
          f"{b['timeline'] / b['simpy']:.2f}x SimPy")
    print(f"  SimPy                             : {b['simpy']:10.0f} events/s")
    v = b["vs_simpy"]
    print(f"  ratio kernel/SimPy: median {_median(v):.2f}x of {len(v)} back-to-back pairs "
          f"(range {min(v):.2f}-{max(v):.2f}x; best/best {b['kernel'] / b['simpy']:.2f}x)")
    print(f"  the protocol's own code alone (no kernel): {b['protocol']:10.0f} events/s, "
          f"{b['protocol'] / b['simpy']:.2f}x SimPy")
    r = b["ratios"]
    print(f"  time per event at n=100: {b['us100']:.2f} us, n=1000: {b['us1000']:.2f} us "
          f"(best of {len(r)} each)")
    print(f"  per-event ratio n=1000 / n=100: median {_median(r):.2f}x of {len(r)} paired "
          f"samples (range {min(r):.2f}-{max(r):.2f}x; best/best {b['us1000'] / b['us100']:.2f}x)"
          f" (goal < 1.3x)")
    print(f"  goto(100000): {b['goto']:.1f} ms (goal < 50 ms)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=5,
                    help="paired n=100 / n=1000 samples per repeat for the per-event ratio")
    ap.add_argument("--baseline", default=None, help="checkout of an older commit to compare")
    args = ap.parse_args()
    if args.baseline is None:
        show("this checkout", measure(args.events, args.repeat, args.pairs), args.events)
        return
    script = Path(args.baseline) / "benchmarks" / "kernel.py"
    here = Path(__file__).resolve()
    mine: list[dict[str, float]] = []
    base: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="kernel_bench_") as tmp:
        shims = {path: _shim(path, Path(tmp) / f"{name}.py")
                 for name, path in (("baseline", script), ("this", here))}
        for _ in range(args.repeat):          # interleaved: both see the same load
            for out, path in ((base, script), (mine, here)):
                res = subprocess.run([sys.executable, str(shims[path]), str(args.events),
                                      str(args.pairs)],
                                     capture_output=True, text=True, check=True)
                out.append(json.loads(res.stdout.strip().splitlines()[-1]))
    for name, runs in (("baseline " + args.baseline, base), ("this checkout", mine)):
        best = {k: (max(r[k] for r in runs) if k in FASTEST
                    else min(r[k] for r in runs)) for k in runs[0]
                if k not in ("ratios", "vs_simpy")}
        for k in ("ratios", "vs_simpy"):
            best[k] = [x for r in runs for x in r[k]]
        show(name, best, args.events)


def _shim(script: Path, tmp: Path) -> Path:
    """A copy of this file's measuring code, written to ``tmp``, run against ``script``'s
    checkout: the baseline may predate ``--json``, so the measurement itself is always this
    file's. (``tmp`` lies in a folder removed after the run.)"""
    root = script.resolve().parents[1]
    code = Path(__file__).read_text().replace(
        "sys.path.insert(0, str(Path(__file__).resolve().parents[1]))",
        f"sys.path.insert(0, {str(root)!r})")
    code = code.replace('if __name__ == "__main__":\n    main()',
                        'if __name__ == "__main__":\n'
                        '    print(json.dumps(measure(int(sys.argv[1]), 1, int(sys.argv[2]))))')
    tmp.write_text(code)
    return tmp


if __name__ == "__main__":
    main()
