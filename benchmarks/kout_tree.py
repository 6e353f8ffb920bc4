"""kout_tree measurements for benchmarks/README.md.

1. Waiting time (Raynal: critical-section entries by others between a request and its entry)
   of ``full`` from a clean start, random workloads, random scheduler: the maximum observed
   against Theorem 2's ℓ·(2n−3)².
2. Convergence of ``full`` (and ``as-printed``) from seeded arbitrary configurations: controller
   rounds and steps to legitimacy, transient violations, and violations after legitimacy
   within a fixed horizon.
3. Exhaustive search of small clean-start instances (no timeouts, which would make the state
   space infinite): every reachable state is safe, holds exactly ℓ/1/1 tokens and has an
   enabled event; for ``no-priority`` on Fig. 3 the search also finds the starvation cycle.
4. (``--only=speed``, not in the default list) the explorer's speed on the ``chaos`` family
   (verify families): the first ``--states=N`` states (default 100,000) of ``check`` on the
   instances ``--instances=62,120`` (their family indices), with the states, transitions and
   depth reached (deterministic: equal on every machine) and states per CPU second
   (``time.process_time``, so another load on the machine stretches it little).

Run: ``python benchmarks/kout_tree.py [--quick] [--only=waiting,convergence,exhaustive,speed]
[--instances=62,120] [--states=100000]``.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

# this checkout's package, not the installed one (so a copy of the script measures its tree)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocols.explorer import SearchOptions, search  # noqa: E402
from protocols.kernel import make_scheduler  # noqa: E402
from protocols.kout_tree.legitimacy import counts, expected, report, safety, track  # noqa: E402
from protocols.runner import build  # noqa: E402
from protocols.scenario import parse  # noqa: E402


def scenario(params, topology, workload, seed=0):
    return parse({"id": "bench", "title": "bench", "protocol": "kout_tree", "params": params,
                  "topology": topology, "workload": workload,
                  "scheduler": {"kind": "random", "seed": seed}, "steps": 10**6})


def waiting_table(seeds: int) -> list[tuple]:
    rows = []
    for n, ell, k in ((3, 3, 2), (7, 3, 2), (7, 5, 3), (15, 4, 3), (15, 8, 4), (31, 6, 3)):
        worst, served, t0 = 0, 0, time.perf_counter()
        for s in range(seeds):
            sc = scenario({"ell": ell, "k": k}, {"random": {"n": n, "seed": s}},
                          {"random": {"requests": 6, "seed": s}}, s)
            sim = build(sc, "full")
            sched = make_scheduler("random", s)
            while sim.step_no < 400_000 and not sim.protocol.served_all(sim):
                sim.step(sched.choose(sim))
            m = sim.monitors.metrics()["waiting_time"]
            worst = max(worst, m["max"] or 0)
            served += m["count"]
        adv = adversarial_waiting(n, ell, k, max(1, seeds // 3), 30_000 if n < 31 else 60_000)
        rows.append((n, ell, k, seeds, served, worst, adv, ell * (2 * n - 3) ** 2,
                     round(time.perf_counter() - t0, 1)))
    return rows


class Adversary:
    """A bounded-fair adversary for the waiting-time table: it keeps the longest-waiting process
    waiting (delays deliveries to it, prefers others' requests and entries) but takes any event
    that has been enabled for more than ``patience`` steps, so every run stays fair."""

    def __init__(self, seed: int, patience: int) -> None:
        import random
        self.rng = random.Random(seed)
        self.patience = patience

    def choose(self, sim) -> str | None:
        evs = [e for e in sim.enabled() if e.kind != "fault"]
        if not evs:
            return None
        now = sim.step_no
        overdue = [e for e in evs if now - sim.since(e.id) > self.patience]
        if overdue:
            return min(overdue, key=lambda e: sim.since(e.id)).id
        victim = min(sim.waiting, key=lambda p: sim.waiting[p][0]) if sim.waiting else None
        others = [e for e in evs if e.pid != victim] or evs
        eager = [e for e in others if e.id.endswith((":request", ":EnterCS"))]
        pool = eager or others
        return pool[self.rng.randrange(len(pool))].id


def adversarial_waiting(n: int, ell: int, k: int, seeds: int, steps: int = 30_000) -> int:
    """Max waiting time when every process requests again and again under the adversary."""
    worst = 0
    for s in range(seeds):
        wl = {f"p{i}": {"needs": [1 + (i + j) % k for j in range(3)], "repeat": True}
              for i in range(n)}
        sim = build(scenario({"ell": ell, "k": k}, {"random": {"n": n, "seed": s}}, wl, s), "full")
        adv = Adversary(s, patience=4 * n)
        for _ in range(steps):
            sim.step(adv.choose(sim))
        worst = max(worst, sim.monitors.metrics()["waiting_time"]["max"] or 0)
    return worst


def convergence(variant: str, n: int, c_max: int, seeds: int, horizon: int = 3000) -> tuple:
    rounds, steps, trans, after, never = [], [], [], 0, 0
    for s in range(seeds):
        sc = scenario({"ell": 3, "k": 2, "c_max": c_max, "chaos": {"seed": s}},
                      {"random": {"n": n, "seed": s}}, {"random": {"requests": 3, "seed": s}}, s)
        sim = build(sc, variant)
        sched = make_scheduler("random", s)
        t = track(sim)
        while sim.step_no < 200_000 and not t.legit(sim.step_no):
            sim.step(sched.choose(sim))
        if not t.legit(sim.step_no):
            never += 1
            continue
        rep = report(sim)
        rounds.append(rep["converged_at"]["rounds"])
        steps.append(rep["converged_at"]["step"])
        trans.append(len(rep["transient"]))
        for _ in range(horizon):
            sim.step(sched.choose(sim))
        after += bool(sim.monitors.violations())
    top = 2 * (n - 1) * (c_max + 1)
    return (variant, n, c_max, seeds, never, max(rounds), round(statistics.mean(rounds), 2),
            top + 4, max(steps), round(statistics.mean(trans), 1), after)


def exhaustive(variant: str, sc, limit: int, timeouts: bool = False) -> tuple[int, str]:
    """Breadth-first over every interleaving, faults excluded; with ``timeouts`` the root's
    TimeOut is explored whenever fewer than two controllers are in flight (more duplicates
    would make the state space infinite)."""
    def bad(sim) -> str | None:
        unsafe = safety(sim)
        if unsafe:
            return f"unsafe: {unsafe[0]}"
        return "token count changed" if counts(sim) != expected(sim.config) else None

    def explored(sim, e) -> bool:
        if e.kind == "fault":
            return False
        return e.kind != "timeout" or (timeouts and sum(
            1 for m in sim.inflight.values() if m.kind == "ctrl") < 2)

    res = search(build(sc, variant), SearchOptions(
        max_states=limit, violations=False, deadlocks=False, events=explored, goal=bad,
        final=lambda _sim: "stuck"))
    if res.result == "limit":
        return res.states, "state limit reached, no violation or stuck state so far"
    return res.states, res.text if res.result in ("goal", "final") else res.result


def main() -> None:
    quick = "--quick" in sys.argv
    only = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--only=")),
                "waiting,convergence,exhaustive").split(",")
    if "waiting" in only:
        print_waiting(quick)
    if "convergence" in only:
        print_convergence(quick)
    if "exhaustive" in only:
        print_exhaustive(quick)
    if "speed" in only:
        arg = dict(a[2:].split("=", 1) for a in sys.argv if a.startswith("--") and "=" in a)
        print_speed([int(x) for x in arg.get("instances", "62,120").split(",")],
                    int(arg.get("states", "100000")))


def chaos_speed(index: int, states: int) -> tuple:
    """``check`` of chaos instance ``index`` (variant ``full``) up to ``states`` states: (its
    name, states, transitions, depth, result, CPU s, states per CPU s)."""
    from protocols.explorer import check
    from protocols.verify.families import get, instances

    inst = instances(get("kout_tree", "chaos"))[index]
    t0 = time.process_time()
    res = check(parse(inst.scenario), variant="full", max_states=states)
    cpu = time.process_time() - t0
    return (inst.name, res["states"], res["transitions"], res["depth"], res["result"],
            round(cpu, 2), round(res["states"] / cpu))


def print_speed(indices: list[int], states: int) -> None:
    print(f"\n## explorer speed on the chaos family (full, first {states:,} states)")
    print("| # | instance | states | transitions | depth | result | CPU s | states / CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    for i in indices:
        print(f"| {i} | " + " | ".join(map(str, chaos_speed(i, states))) + " |", flush=True)


def print_waiting(quick: bool) -> None:
    print("## waiting time (full, clean start, random scheduler)")
    print("| n | ℓ | k | runs | requests served | max waiting (random) | max waiting (adversary) "
          "| bound ℓ(2n−3)² | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in waiting_table(3 if quick else 10):
        print("| " + " | ".join(map(str, r)) + " |", flush=True)


def print_convergence(quick: bool) -> None:
    print("\n## convergence from arbitrary configurations (ℓ = 3, k = 2)")
    print("| variant | n | C_MAX | runs | never legit | max rounds | mean rounds | stated bound "
          "| max steps | mean transient violations | runs with violations after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for v in ("full", "as-printed"):
        for n, c in ((3, 1), (7, 1), (7, 2), (15, 2)):
            print("| " + " | ".join(map(str, convergence(v, n, c, 10 if quick else 40))) + " |",
                  flush=True)


def print_exhaustive(quick: bool) -> None:
    print("\n## exhaustive search, clean start, C_MAX = 0")
    two = {"root": "r", "children": {"r": ["a"]}}
    path = {"root": "r", "children": {"r": ["a"], "a": ["b"]}}
    fig3 = {"root": "r", "children": {"r": ["b", "a"]}}
    small = [("r–a, ℓ=1, k=1; r: 1, a: 1", {"ell": 1, "k": 1, "c_max": 0, "timeout": 1}, two,
              {"r": [1], "a": [1]}, ("no-controller", "full", "as-printed"), True),
             ("r–a–b, ℓ=2, k=2; a: 2, b: 1", {"ell": 2, "k": 2, "c_max": 0}, path,
              {"a": [2], "b": [1]}, ("no-priority", "no-controller", "full"), False),
             ("Fig. 3 tree, ℓ=2, k=2; r: 1, b: 1, a: 2", {"ell": 2, "k": 2, "c_max": 0}, fig3,
              {"r": [1], "b": [1], "a": [2]}, ("no-priority", "no-controller"), False)]
    print("| instance | variant | timeouts | states | result |")
    print("|---|---|---|---|---|")
    for name, params, topo, wl, variants, with_timeouts in small:
        for v in variants:
            for tmo in ((False, True) if with_timeouts and v != "no-controller" else (False,)):
                t0 = time.perf_counter()
                n, res = exhaustive(v, scenario(params, topo, wl), 30_000 if quick else 150_000, tmo)
                print(f"| {name} | {v} | {'≤ 2 ctrl' if tmo else 'no'} | {n} | {res} "
                      f"({time.perf_counter() - t0:.0f} s) |", flush=True)


if __name__ == "__main__":
    main()
