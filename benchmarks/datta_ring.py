"""datta_ring benchmarks: speed of ``full`` on datta-stress, messages per critical-section entry
by type, and exhaustive exploration of small instances (larger than the tests can afford).

    python benchmarks/datta_ring.py                 # speed + messages (a few seconds)
    python benchmarks/datta_ring.py --exhaustive    # + the exhaustive table (tens of minutes)
    python benchmarks/datta_ring.py --sweep 300     # + random scenarios per variant
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocols.explorer import SearchOptions, search  # noqa: E402
from protocols.runner import build, drive, report, scheduler_for  # noqa: E402
from protocols.scenario import gallery, parse  # noqa: E402


def speed(variant: str = "full", repeat: int = 3) -> dict:
    sc = gallery()["datta-stress"]
    best = None
    for _ in range(repeat):
        sim = build(sc, variant)
        sched = scheduler_for(sc, variant)
        t0 = time.perf_counter()
        drive(sim, sched, sc.steps)
        dt = time.perf_counter() - t0
        if best is None or dt < best[0]:
            best = (dt, sim)
    dt, sim = best
    m = sim.monitors.metrics()
    return {"steps": sim.step_no, "seconds": round(dt, 3), "steps_per_s": round(sim.step_no / dt),
            "cs_entries": m["cs_entries"], "served_all": sim.protocol.served_all(sim),
            "per_cs": {k: round(v / max(m["cs_entries"], 1), 2)
                       for k, v in m["messages_by_type"].items()},
            "messages_per_cs": round(m["messages"] / max(m["cs_entries"], 1), 2)}


def small(ring, reqs, token=True, leaves=None) -> object:
    cl = []
    for i, rq in enumerate(reqs):
        c = {"id": f"C{i + 1}", "requests": rq}
        if leaves and leaves[i]:
            c["leaves"] = leaves[i]
        cl.append(c)
    return parse({"id": "x", "title": "x", "protocol": "datta_ring",
                  "topology": {"ring": ring, "token": token}, "workload": {"clients": cl}})


R2, R3 = ["R1", "R2"], ["R1", "R2", "R3"]
FIG1 = [[["R1", "R2"]], [["R2", "R1"]]]
INSTANCES = [
    ("fig1, no token", R2, FIG1, False, None),
    ("fig1 + C3 wants R1, no token", R2, FIG1 + [[["R1"]]], False, None),
    ("fig1, C1 leaves by message, no token", R2, FIG1, False, ["message", None]),
    ("fig1, C2 leaves silently, no token", R2, FIG1, False, [None, "silent"]),
    ("fig3 cycle (3 clients, 3 resources), no token", R3,
     [[["R1", "R2"]], [["R2", "R3"]], [["R3", "R1"]]], False, None),
    ("fig1 + C3 R3→R1 (3 resources), no token", R3, FIG1 + [[["R3", "R1"]]], False, None),
    ("fig1 with the token", R2, FIG1, True, None),
]


def exhaustive(max_states: int) -> list[dict]:
    rows = []
    for name, ring, reqs, token, leaves in INSTANCES:
        t0 = time.perf_counter()
        r = search(build(small(ring, reqs, token, leaves), "full"),
                   SearchOptions(max_states=max_states, stop_at_first=False, can_finish=True))
        res = ("violation" if "violation" in r.findings else "deadlock" if "deadlock" in
               r.findings else "cannot finish" if r.cannot_finish else
               "ok" if r.complete else "limit")
        rows.append({"instance": name, "states": r.states, "complete": r.complete,
                     "result": res, "seconds": round(time.perf_counter() - t0, 1)})
        print(rows[-1], flush=True)
    return rows


def sweep(n: int, variant: str) -> dict:
    """n random scenarios (2–5 resources, 2–7 clients, 1–3 requests each, some departures,
    random root, random / oldest / round-robin scheduler): how many end all-served."""
    outcomes: dict[str, int] = {}
    longest = 0
    for i in range(n):
        rng = random.Random(i)
        ring = [f"R{k}" for k in range(1, rng.randint(2, 5) + 1)]
        cl = []
        for c in range(rng.randint(2, 7)):
            d = {"id": f"C{c + 1}", "requests": [rng.sample(ring, rng.choice([1, 2]))
                                                 for _ in range(rng.randint(1, 3))]}
            if rng.random() < 0.15:
                d["leaves"] = rng.choice(["message", "silent"])
            cl.append(d)
        sc = parse({"id": "s", "title": "s", "protocol": "datta_ring",
                    "topology": {"ring": ring, "root": rng.choice(ring)},
                    "workload": {"clients": cl}, "steps": 100_000,
                    "scheduler": {"kind": rng.choice(["random", "oldest", "round-robin"]),
                                  "seed": i}})
        sim = build(sc, variant)
        drive(sim, scheduler_for(sc, variant), sc.steps)
        out = report(sim, sc)["outcome"]
        outcomes[out] = outcomes.get(out, 0) + 1
        longest = max(longest, sim.step_no)
    return {"variant": variant, "runs": n, "outcomes": dict(sorted(outcomes.items())),
            "longest_run_steps": longest}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--exhaustive", action="store_true")
    ap.add_argument("--max-states", type=int, default=3_000_000)
    ap.add_argument("--sweep", type=int, default=0)
    a = ap.parse_args()
    for v in ("full", "prose", "naive", "as-printed"):
        print(v, speed(v, 5 if v == "full" else 1), flush=True)
    if a.sweep:
        for v in ("full", "prose", "naive", "as-printed"):
            print(sweep(a.sweep, v), flush=True)
    if a.exhaustive:
        exhaustive(a.max_states)


if __name__ == "__main__":
    main()
