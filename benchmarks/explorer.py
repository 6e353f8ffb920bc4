"""Explorer benchmarks (issue 9): states/s, memory per stored state, the reductions' effect,
and the papers' expectations, as a Markdown table for benchmarks/README.md.

    python benchmarks/explorer.py            # everything that is in the gallery
    python benchmarks/explorer.py --quick    # smaller bounds
    python benchmarks/explorer.py --only goals --repeat 3 --baseline DIR
                                             # issue 15's rows, DIR (an older checkout) side by side

Single core, one process; times are CPU seconds of this process (time.process_time), best of
``--repeat`` runs, because the 2-core machine is shared with other jobs and wall time is noisy.
Memory per stored state is measured in a separate run under tracemalloc (peak traced bytes
during the search / states), which includes the frontier's kept states and the edges kept for
the livelock search.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocols.explorer import check  # noqa: E402
from protocols.runner import build  # noqa: E402
from protocols.scenario import ScenarioError, gallery, parse  # noqa: E402

# (label, scenario id or inline scenario, variant, max_states)
# The first instance: two clients asking for the same two resources, in opposite order.
DATTA_TWO = {"id": "datta-two-clients", "title": "two clients, two resources",
             "protocol": "datta_ring", "topology": {"ring": ["R1", "R2"]},
             "workload": {"clients": [{"id": "C1", "requests": [["R1", "R2"]]},
                                      {"id": "C2", "requests": [["R2", "R1"]]}]}}

# (label, scenario id or inline scenario, variant, max_states)
SPEED = [
    ("token ring n=5, 2 requests each", "token-ring", "reliable", 200_000),
    ("datta_ring, two clients, same two resources", DATTA_TWO, "naive", 200_000),
    ("datta_ring, two clients, same two resources", DATTA_TWO, "full", 30_000),
    ("datta_ring Fig. 1", "datta-fig1", "naive", 200_000),
    # the naive ring big enough to time (10 263 states; the two-client instance takes 0.05 s)
    ("datta_ring Fig. 3", "datta-fig3", "naive", 200_000),
    ("datta_ring Fig. 1", "datta-fig1", "full", 30_000),
    ("kout_tree Fig. 3", "kout-fig3", "no-pusher", 200_000),
    ("kout_tree Fig. 2", "kout-fig2", "no-pusher", 200_000),
    ("kout_tree Fig. 3", "kout-fig3", "full", 30_000),
    ("coterie Fig. 1", "coterie-fig1", "full", 30_000),
]

EXPECT_MAX = 100_000   # states per expectation (a `limit` beyond)

# The expectations: (label, scenario, variant, expected result)
EXPECT = [
    ("naive datta_ring, two clients, same two resources", DATTA_TWO, "naive", "deadlock"),
    ("naive datta_ring, Fig. 1", "datta-fig1", "naive", "deadlock"),
    ("prose datta_ring, Fig. 1", "datta-fig1", "prose", "deadlock"),
    ("as-printed datta_ring, Fig. 1", "datta-fig1", "as-printed", "violation|deadlock|livelock"),
    ("full datta_ring, Fig. 1", "datta-fig1", "full", "ok"),
    ("full datta_ring, Fig. 3", "datta-fig3", "full", "ok"),
    ("kout_tree no-pusher, Fig. 2", "kout-fig2", "no-pusher", "deadlock"),
    ("kout_tree no-priority, Fig. 3", "kout-fig3", "no-priority", "livelock"),
    ("coterie Fig. 1", "coterie-fig1", None, "ok"),
    # Exhaustible only with both exact reductions (about 13 minutes, 1.9 GB: see README).
    ("coterie Fig. 1, partial-order reduction", "coterie-fig1", None, "ok",
     {"partial_order": True, "max_states": 10_000_000}),
]

FIG1 = {"processes": ["a", "b", "c"], "resources": ["x", "y"],
        "alpha": {"a": ["x"], "b": ["x", "y"], "c": ["y"]}}


def coterie(requests: dict, topology: dict = FIG1, params: dict | None = None) -> dict:
    return {"id": "coterie-bench", "title": "coterie", "protocol": "coterie",
            "topology": topology, "workload": {"requests": requests}, "params": params or {}}


# Instances for the coterie reductions' effect: Fig. 1 with fewer requests, and the three-process
# one-resource instance where every conflict goes through one member (little concurrency).
REDUCE = [
    ("coterie Fig. 1, a and b once", coterie({"a": [1], "b": [1]})),
    ("coterie Fig. 1, a, b, c once", coterie({"a": [1], "b": [1], "c": [1]})),
    ("coterie one member u2, two requests each",
     coterie({"u1": [1, 1], "u2": [1, 1], "u3": [1, 1]}, {"kind": "shared", "n": 3, "m": 1},
             {"coterie": "custom", "quorums": {"u1": [["u2"]], "u2": [["u2"]],
                                               "u3": [["u2"]]}})),
]


def scenario(ref: Any):
    if isinstance(ref, dict):
        return parse(ref)
    return gallery().get(ref)


def timed(sc, variant, max_states, repeat, **kw) -> tuple[dict, float]:
    best = None
    res: dict = {}
    for _ in range(repeat):
        t = time.process_time()
        res = check(sc, variant=variant, max_states=max_states, **kw)
        dt = time.process_time() - t
        best = dt if best is None else min(best, dt)
    return res, best or 0.0


def memory_per_state(sc, variant, max_states) -> float:
    tracemalloc.start()
    res = check(sc, variant=variant, max_states=max_states)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / max(1, res["states"])


def speed_table(repeat: int, quick: bool) -> list[str]:
    rows = ["| instance | variant | result | states | transitions | s | states/s | "
            "transitions/s | bytes/state |", "|---|---|---|---|---|---|---|---|---|"]
    for label, ref, variant, cap in SPEED:
        try:
            sc = scenario(ref)
        except ScenarioError as exc:              # e.g. the protocol is not in this checkout
            rows.append(f"| {label} | {variant} | unavailable: {exc} | | | | | | |")
            continue
        if sc is None:
            rows.append(f"| {label} | {variant} | (scenario `{ref}` not in the gallery yet) "
                        "| | | | | | |")
            continue
        cap = min(cap, 50_000) if quick else cap
        try:
            res, dt = timed(sc, variant, cap, repeat)
        except ScenarioError as exc:
            rows.append(f"| {label} | {variant} | error: {exc} | | | | | | |")
            continue
        mem = memory_per_state(sc, variant, min(cap, 30_000))
        rows.append(f"| {label} | {variant} | {res['result']} | {res['states']} | "
                    f"{res['transitions']} | {dt:.2f} | {res['states'] / dt:,.0f} | "
                    f"{res['transitions'] / dt:,.0f} | {mem:,.0f} |")
    return rows


def reductions_table(repeat: int) -> list[str]:
    rows = ["| instance | reduction | states without | states with | s without | s with |",
            "|---|---|---|---|---|---|"]
    sym = {"id": "ring2-sym", "title": "2-ring", "protocol": "token_ring",
           "params": {"n": 2, "requests": 3}, "symmetry": [["p0", "p1"]]}
    sc = scenario(sym)
    a, ta = timed(sc, None, 10**6, repeat, symmetry=False)
    b, tb = timed(sc, None, 10**6, repeat, symmetry=True)
    rows.append(f"| token ring n=2, 3 requests each | symmetry (p0 ↔ p1) | {a['states']} | "
                f"{b['states']} | {ta:.3f} | {tb:.3f} |")
    for ref in sorted(gallery()):
        g = gallery()[ref]
        if g.symmetry and g.protocol != "token_ring":
            try:
                a, ta = timed(g, None, 200_000, 1, symmetry=False)
                b, tb = timed(g, None, 200_000, 1, symmetry=True)
            except ScenarioError as exc:
                rows.append(f"| {ref} | symmetry | error: {exc} | | | |")
                continue
            rows.append(f"| {ref} | symmetry {g.symmetry} | {a['states']} ({a['result']}) | "
                        f"{b['states']} ({b['result']}) | {ta:.3f} | {tb:.3f} |")
    # coterie: forgetting dead Lamport times, then partial-order reduction on top
    for label, ref in REDUCE:
        sc = scenario(ref)
        a, ta = timed(sc, "full", 400_000, 1, forget=False, livelock_check=False)
        b, tb = timed(sc, "full", 400_000, 1, livelock_check=False)
        c, tc = timed(sc, "full", 400_000, 1, partial_order=True, livelock_check=False)
        rows.append(f"| {label} | forget dead clocks | {a['states']} ({a['result']}) | "
                    f"{b['states']} ({b['result']}) | {ta:.2f} | {tb:.2f} |")
        rows.append(f"| {label} | forget + partial-order | {a['states']} ({a['result']}) | "
                    f"{c['states']} ({c['result']}) | {ta:.2f} | {tc:.2f} |")
    # fast restore (lean transitions) vs Simulator.restore, same search
    from protocols.explorer.engine import SearchOptions, search
    from protocols.kernel import Transitions
    sc = gallery()["token-ring"]
    t_fast = t_slow = None
    for fast in (True, False):
        best = None
        for _ in range(repeat):
            ts = Transitions(build(sc), fast=fast)
            t = time.process_time()
            search(ts, SearchOptions(max_states=200_000, keep_edges=True))
            dt = time.process_time() - t
            best = dt if best is None else min(best, dt)
        if fast:
            t_fast = best
        else:
            t_slow = best
    rows.append(f"| token ring n=5, 2 requests | fast restore (same states) | — | — | "
                f"{t_slow:.2f} (restore) | {t_fast:.2f} (fast) |")
    return rows


def expect_table() -> list[str]:
    rows = ["| expectation | scenario | variant | expected | result | states | s | schedule length |",
            "|---|---|---|---|---|---|---|---|"]
    for label, ref, variant, want, *more in EXPECT:
        kw = dict(more[0]) if more else {}
        cap = kw.pop("max_states", EXPECT_MAX)
        sc = scenario(ref)
        ref = sc.id if sc is not None else ref
        if sc is None:
            rows.append(f"| {label} | `{ref}` not in the gallery yet | {variant} | {want} | | | | |")
            continue
        try:
            res = check(sc, variant=variant, max_states=cap, **kw)
        except ScenarioError as exc:
            rows.append(f"| {label} | {ref} | {variant} | {want} | error: {exc} | | | |")
            continue
        ok = res["result"] in want.split("|")
        n = len(res["counterexample"]["schedule"]) if res["counterexample"] else "—"
        rows.append(f"| {label} | {ref} | {res['variant']} | {want} | "
                    f"{res['result']}{'' if ok else ' ✗'} | {res['states']} | {res['seconds']} | {n} |")
    return rows


# Issue 15's three speed goals: (label, scenario, variant, max_states, goal in states/s).
GOALS = [("naive datta_ring, two clients, same two resources", DATTA_TWO, "naive", 200_000,
          50_000),
         ("naive datta_ring Fig. 3", "datta-fig3", "naive", 200_000, 35_000),
         ("coterie Fig. 1", "coterie-fig1", "full", 30_000, 15_000)]


def goal_rows(repeat: int, memory: bool = True) -> list[dict[str, Any]]:
    """States/s (CPU, best of ``repeat``) and bytes per stored state of the GOALS instances
    (``memory`` False: not measured, 0)."""
    out = []
    for label, ref, variant, cap, goal in GOALS:
        sc = scenario(ref)
        res, dt = timed(sc, variant, cap, repeat)
        out.append({"label": label, "variant": variant, "result": res["result"],
                    "states": res["states"], "seconds": dt, "rate": res["states"] / dt,
                    "bytes": memory_per_state(sc, variant, min(cap, 30_000)) if memory else 0,
                    "goal": goal})
    return out


def goals_table(repeat: int, baseline: str | None, memory: bool = True) -> list[str]:
    """The GOALS rows; with ``baseline`` (an older checkout) measured side by side: each
    repeat runs the baseline's explorer in a subprocess, then this one, under the same load."""
    import json
    import subprocess
    here = Path(__file__).resolve()
    runs: dict[str, list[list[dict[str, Any]]]] = {"before": [], "after": []}
    for _ in range(repeat):
        for name, root in (("before", baseline), ("after", str(here.parents[1]))):
            if root is None:
                continue
            # This file's measuring code, run against ``root``'s checkout (the baseline may
            # predate this function). The markers are split so they do not match themselves.
            code = here.read_text().replace(
                "sys.path.insert(0, str(Path(__file__)" + ".resolve().parent.parent))",
                f"sys.path.insert(0, {root!r})")
            code = code.replace('if __name__ == "__main__"' + ':\n    main()',
                                'if __name__ == "__main__":\n    import json\n'
                                f'    print(json.dumps(goal_rows(1, {memory!r})))')
            res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            if res.returncode:
                raise SystemExit(f"{name} ({root}) failed:\n{res.stderr}")
            runs[name].append(json.loads(res.stdout.strip().splitlines()[-1]))
    rows = ["| instance | variant | result | states | before: states/s | after: states/s | "
            "speed-up | goal | before: bytes/state | after: bytes/state |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for k, (label, _ref, variant, _cap, goal) in enumerate(GOALS):
        after = [r[k] for r in runs["after"]]
        before = [r[k] for r in runs["before"]]
        a = max(r["rate"] for r in after)
        b = max(r["rate"] for r in before) if before else None
        ab = min(r["bytes"] for r in after)
        bb = min(r["bytes"] for r in before) if before else None
        rows.append(f"| {label} | {variant} | {after[0]['result']} | {after[0]['states']} | "
                    f"{f'{b:,.0f}' if b else '—'} | {a:,.0f} | "
                    f"{f'{a / b:.2f}×' if b else '—'} | ≥ {goal:,} | "
                    f"{f'{bb:,.0f}' if bb else '—'} | {ab:,.0f} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=["speed", "reductions", "expect", "goals"])
    ap.add_argument("--no-memory", action="store_true",
                    help="goals: states/s only (the tracemalloc runs take longest)")
    ap.add_argument("--baseline", default=None,
                    help="an older checkout: the goals rows measure it side by side")
    a = ap.parse_args()
    parts = {"speed": lambda: speed_table(a.repeat, a.quick),
             "reductions": lambda: reductions_table(a.repeat), "expect": expect_table,
             "goals": lambda: goals_table(a.repeat, a.baseline, not a.no_memory)}
    for name, fn in parts.items():
        if a.only and a.only != name:
            continue
        print(f"\n### {name}\n")
        print("\n".join(fn()))


if __name__ == "__main__":
    main()
