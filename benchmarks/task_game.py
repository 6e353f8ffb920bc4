"""task_game measurements for benchmarks/README.md.

1. The O(ρ) claim (Sec. 1): a task in no conflict needs time and messages of order ρ, the number
   of pools it needs. One task whose interest is ρ pools on ρ nodes, alone, and again beside three
   busy tasks on other pools: response time (steps from creation to ACCESSING) and messages the
   task sends or receives, per variant.
2. Failure locality: chains of conflicts T1-T2-...-TL over single-unit pools; one task crashes
   when it first reaches a given competition phase; the run goes on under the seeded random
   scheduler; ``report()['disturbed']`` compares with the same schedule without the crash.
3. ``--exhaustive``: every schedule of two tasks on one single-unit pool, from step 0 (minutes).

Run: ``python benchmarks/task_game.py [--seeds N] [--exhaustive]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocols.explorer import SearchOptions, search  # noqa: E402
from protocols.kernel import make_scheduler  # noqa: E402
from protocols.runner import build, drive  # noqa: E402
from protocols.scenario import parse  # noqa: E402
from protocols.task_game.locality import report  # noqa: E402
from protocols.verify.locality_search import relative_key  # noqa: E402

VARIANTS = ("restricted", "complete", "full")


def lone_task(rho: int, busy: bool) -> dict:
    agents = [f"A{i + 1}" for i in range(max(rho, 1) + (3 if busy else 0))]
    pools = {f"P{i + 1}": {"agent": agents[i], "units": 1} for i in range(rho)}
    tasks = [{"id": "T", "agent": "A1", "interest": list(pools)}]
    if busy:
        for j in range(3):
            q = f"Q{j + 1}"
            pools[q] = {"agent": agents[rho + j], "units": 1}
            tasks += [{"id": f"U{j + 1}{k}", "agent": agents[rho + j], "interest": [q]}
                      for k in range(2)]
    return {"id": "rho", "title": "lone task", "protocol": "task_game",
            "topology": {"agents": agents, "pools": pools}, "workload": {"tasks": tasks},
            "params": {"gamma": 2}}


def rho_table(seeds: int) -> list[str]:
    rows = ["| ρ | variant | steps, alone (oldest) | messages, alone | steps, beside busy tasks "
            "(random, mean) | messages, beside busy tasks (mean) |",
            "|---|---|---|---|---|---|"]
    for rho in (1, 2, 3, 4, 6, 8):
        for v in VARIANTS:
            sim = build(parse(lone_task(rho, False)), v)
            drive(sim, make_scheduler("oldest"), 20_000)
            r = report(sim)["tasks"]["T"]
            alone = dict((p, k) for p, k in r["phases"])
            steps = alone["ACCESSING"] - alone["REGISTERING"]
            busy_steps, busy_msgs = [], []
            for seed in range(seeds):
                sim = build(parse(lone_task(rho, True)), v)
                drive(sim, make_scheduler("random", seed), 50_000)
                rb = report(sim)["tasks"]["T"]
                ph = dict((p, k) for p, k in rb["phases"])
                busy_steps.append(ph["ACCESSING"] - ph["REGISTERING"])
                busy_msgs.append(rb["messages"])
            rows.append(f"| {rho} | {v} | {steps} | {r['messages']} | "
                        f"{statistics.mean(busy_steps):.1f} | {statistics.mean(busy_msgs):.1f} |")
    return rows


def chain(length: int) -> dict:
    agents = [f"A{i + 1}" for i in range(length)]
    pools = {f"P{i + 1}": {"agent": agents[i], "units": 1} for i in range(length - 1)}
    tasks = []
    for i in range(length):
        interest = [p for p in (f"P{i}", f"P{i + 1}") if p in pools]
        tasks.append({"id": f"T{i + 1}", "agent": agents[i], "interest": interest})
    return {"id": "chain", "title": "chain", "protocol": "task_game",
            "topology": {"agents": agents, "pools": pools}, "workload": {"tasks": tasks},
            "params": {"gamma": 2}}


def locality_table(seeds: int) -> list[str]:
    rows = ["| chain | crashed task | crashes in | variant | runs | runs with a disturbed task | "
            "never executed (runs) | max distance | distance histogram |",
            "|---|---|---|---|---|---|---|---|---|"]
    for length, victim in ((3, "T1"), (3, "T2"), (5, "T3")):
        for phase in ("TRYING", "ORDERING", "WINNING"):
            for v in VARIANTS:
                if phase == "ORDERING" and v == "restricted":
                    continue
                n = dist_runs = never_runs = 0
                hist: dict[int, int] = {}
                for seed in range(seeds):
                    sim = build(parse(chain(length)), v)
                    sched = make_scheduler("random", seed)
                    while sim.proc(victim).status != phase and sim.step_no < 5000:
                        eid = sched.choose(sim)
                        if eid is None:
                            break
                        sim.step(eid)
                    if sim.proc(victim).status != phase:
                        continue
                    sim.step(f"f:crash:{victim}")
                    drive(sim, sched, 8000)
                    d = report(sim)["disturbed"]
                    n += 1
                    if d["set"]:
                        dist_runs += 1
                        m = d["max_distance"]
                        hist[m] = hist.get(m, 0) + 1
                    if d["never_executed"]:
                        never_runs += 1
                mx = max(hist) if hist else 0
                h = ", ".join(f"d={k}: {c}" for k, c in sorted(hist.items())) or "—"
                rows.append(f"| T1–…–T{length} | {victim} | {phase} | {v} | {n} | {dist_runs} | "
                            f"{never_runs} | {mx} | {h} |")
    return rows


def exhaustive(variant: str, budget_s: float) -> str:
    sc = parse({"id": "two", "title": "two tasks, one pool", "protocol": "task_game",
                "topology": {"agents": ["A1", "A2"], "pools": {"P1": {"agent": "A1", "units": 1}}},
                "workload": {"tasks": [{"id": "T1", "agent": "A1", "interest": ["P1"]},
                                       {"id": "T2", "agent": "A2", "interest": ["P1"]}]},
                "params": {"gamma": 1}})
    sim = build(sc, variant)
    res = search(sim,
                 SearchOptions(max_states=10**8, key=relative_key(sim), violations=False, deadlocks=False,
                               final=lambda v: None if v.protocol.served_all(v) else "stuck",
                               stop_at_first=False, max_seconds=budget_s))
    done = "complete" if res.complete else f"unfinished ({res.result})"
    return f"| {variant} | {res.states} | {res.finals} | {done} | {res.seconds:.0f} s |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--exhaustive", action="store_true")
    ap.add_argument("--budget", type=float, default=1800.0)
    a = ap.parse_args()
    print("\n".join(rho_table(a.seeds)))
    print()
    print("\n".join(locality_table(a.seeds)))
    if a.exhaustive:
        print()
        print("| variant | states | stuck final states | search | time |")
        print("|---|---|---|---|---|")
        for v in ("full",):
            print(exhaustive(v, a.budget))


if __name__ == "__main__":
    main()
