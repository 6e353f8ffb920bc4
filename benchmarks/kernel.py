"""Kernel benchmark (issue 2): events per second against SimPy, scaling with idle processes,
and the cost of a long jump on the timeline.

    python benchmarks/kernel.py [--events 200000]

1. The token ring with 100 processes under the random scheduler, against the same model on
   SimPy (processes as generators, the token through Stores, random delays standing in for the
   random scheduler), for the same number of model events (token deliveries, requests, releases).
2. Time per event at 100 and at 1,000 processes (an idle process must cost nothing per step).
3. ``goto(k)`` at k = 100,000: restore the nearest snapshot and replay.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from protocols.kernel import make_scheduler  # noqa: E402
from protocols.runner import build  # noqa: E402
from protocols.scenario import parse  # noqa: E402


def ring(n: int):
    return build(parse({"id": "bench", "title": "bench", "protocol": "token_ring",
                        "params": {"n": n, "requests": 10**6}}))


def ours(n: int, events: int, seed: int = 1) -> float:
    sim = ring(n)
    sched = make_scheduler("random", seed)
    t = time.perf_counter()
    for _ in range(events):
        sim.step(sched.choose(sim))
    return events / (time.perf_counter() - t)


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
    t = time.perf_counter()
    env.run(until=done)
    return count[0] / (time.perf_counter() - t)


def goto_time(k: int) -> float:
    sim = ring(100)
    sched = make_scheduler("random", 3)
    for _ in range(k):
        sim.step(sched.choose(sim))
    sim.goto(0)
    t = time.perf_counter()
    sim.goto(k - 77)          # not on a snapshot boundary: restore, then replay
    return (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200_000)
    args = ap.parse_args()
    n = args.events
    a = ours(100, n)
    b = simpy_ring(100, n)
    print(f"token ring, 100 processes, {n} events, random scheduling")
    print(f"  allocscope kernel : {a:10.0f} events/s")
    print(f"  SimPy             : {b:10.0f} events/s")
    print(f"  ratio kernel/SimPy: {a / b:.2f}x")
    small = 1e6 / ours(100, n // 2)
    big = 1e6 / ours(1000, n // 2)
    print(f"  time per event at n=100: {small:.2f} us, n=1000: {big:.2f} us, "
          f"ratio {big / small:.2f}x (goal < 2x)")
    print(f"  goto(100000): {goto_time(100_000):.1f} ms (goal < 50 ms)")


if __name__ == "__main__":
    main()
