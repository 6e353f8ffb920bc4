"""coterie: messages per request against the paper's bounds, and the exhaustive checks.

Messages are charged to requests by ``protocols.coterie.charging`` (its docstring says how).

Run: ``python benchmarks/coterie.py`` (the table of benchmarks/README.md, coterie section), or
``python benchmarks/coterie.py --explore`` to add the exhaustive searches (a few minutes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocols.coterie import Coterie  # noqa: E402
from protocols.coterie.charging import charged_run  # noqa: E402
from protocols.explorer import SearchOptions, search  # noqa: E402
from protocols.kernel import Simulator  # noqa: E402
from protocols.runner import build  # noqa: E402
from protocols.scenario import parse, resolve  # noqa: E402

SCENARIOS = ["coterie-fig1", "coterie-example4", "coterie-preempt", "coterie-disjoint",
             "coterie-random", "coterie-repeated-preemption"]


def rows(sid: str) -> dict[str, Any]:
    sc = resolve(sid)
    charges, sim = charged_run(sc)
    cfg = sim.config
    per = []
    for (u, ts), c in charges.items():
        q = next(len(qq) for qq in cfg.Q[u])
        a = len(cfg.S.alpha[u])
        per.append({"proc": u, "stamp": ts, "q": q, "alpha": a, "total": sum(c.values()),
                    "best": 4 * q, "worst": (7 + a) * q, "by_kind": c})
    lo = min(per, key=lambda r: (r["total"] - r["best"]))
    hi = max(per, key=lambda r: (r["total"] - r["worst"], r["total"]))
    return {"scenario": sid, "requests": len(per), "lo": lo, "hi": hi,
            "at_best": sum(r["total"] == r["best"] for r in per),
            "over_worst": sum(r["total"] > r["worst"] for r in per)}


def bfs(sc: Any, variant: str, limit: int, proto: Any = None) -> tuple[str, int, int]:
    """Breadth-first over every interleaving (the explorer's engine, no reductions);
    (result, states, counterexample length)."""
    sim = Simulator(proto, sc, variant) if proto is not None else build(sc, variant)
    res = search(sim, SearchOptions(max_states=limit))
    return res.result, res.states, len(res.schedule or [])


def instance(reqs: list[int], single: bool) -> Any:
    params = {"coterie": "custom", "quorums": {f"u{i}": [["u2"]] for i in (1, 2, 3)}} \
        if single else {}
    return parse({"id": "x", "title": "x", "protocol": "coterie",
                  "topology": {"kind": "shared", "n": 3, "m": 1}, "params": params,
                  "workload": {"requests": {f"u{i + 1}": [1] * r for i, r in enumerate(reqs)}}})


def seeds(sid: str, n: int) -> dict[str, dict[str, int]]:
    from protocols.runner import run
    out: dict[str, dict[str, int]] = {}
    for v in ("as-printed", "full"):
        c: dict[str, int] = {}
        for s in range(n):
            o = run(resolve(sid), v, scheduler="random", seed=s)["outcome"]
            c[o] = c.get(o, 0) + 1
        out[v] = dict(sorted(c.items()))
    return out


def walks(n: int) -> None:
    """Random schedules where exhaustive search does not finish: quorums of 2 and 3 members."""
    from protocols.runner import run
    print(f"| instance | variant | outcomes over random seeds 0..{n - 1} |")
    print("|---|---|---|")
    for q in (None, ["u1", "u2"]):
        params = {"coterie": "custom", "quorums": {f"u{i}": [q] for i in (1, 2, 3)}} if q else {}
        sc = parse({"id": "x", "title": "x", "protocol": "coterie", "params": params,
                    "topology": {"kind": "shared", "n": 3, "m": 1}, "steps": 5000,
                    "workload": {"requests": {f"u{i}": [1, 1] for i in (1, 2, 3)}}})
        name = "local (q = U)" if q is None else "Q = {u1, u2}"
        for v in ("as-printed", "full"):
            c: dict[str, int] = {}
            for s in range(n):
                o = run(sc, v, scheduler="random", seed=s)["outcome"]
                c[o] = c.get(o, 0) + 1
            print(f"| {name}, requests [2, 2, 2] | {v} | {dict(sorted(c.items()))} |", flush=True)


def ablate() -> None:
    """``full`` without one of its repairs, on the {u2}-quorum instances: each is needed."""
    print("| repair dropped | instance | result | states | counterexample steps |")
    print("|---|---|---|---|---|")
    for r in ("R1", "R2", "R3"):
        proto = type(f"CoterieWithout{r}", (Coterie,), {"ablated": frozenset({r})})()
        for reqs in ([1, 1, 1], [1, 1, 2], [1, 2, 2]):
            res, n, d = bfs(instance(reqs, True), "full", 10**6, proto)
            print(f"| {r} | Q = {{u2}}, requests {reqs} | {res} | {n} | {d or '—'} |", flush=True)
            if res != "ok":
                break


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--explore", action="store_true")
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--ablate", action="store_true", help="only: drop each repair of full in turn")
    ap.add_argument("--walks", type=int, default=0, help="only: N random schedules per instance")
    args = ap.parse_args()
    if args.ablate:
        ablate()
        return
    if args.walks:
        walks(args.walks)
        return
    print("| scenario | requests | at 4\\|q\\| | fewest: proc \\|q\\| \\|α(u)\\| msgs (4\\|q\\|) "
          "| most: proc \\|q\\| \\|α(u)\\| msgs ((7+\\|α(u)\\|)\\|q\\|) | over worst |")
    print("|---|---|---|---|---|---|")
    for sid in SCENARIOS:
        r = rows(sid)
        lo, hi = r["lo"], r["hi"]
        print(f"| {sid} | {r['requests']} | {r['at_best']} | {lo['proc']} {lo['q']} {lo['alpha']} "
              f"{lo['total']} ({lo['best']}) | {hi['proc']} {hi['q']} {hi['alpha']} {hi['total']} "
              f"({hi['worst']}) {dict(sorted(hi['by_kind'].items()))} | {r['over_worst']} |")
    print()
    print("| scenario | variant | outcomes over random seeds 0.." + str(args.seeds - 1) + " |")
    print("|---|---|---|")
    for sid in ("coterie-example4", "coterie-random", "coterie-fig1"):
        for v, c in seeds(sid, args.seeds).items():
            print(f"| {sid} | {v} | {c} |")
    if args.explore:
        print()
        print("| instance | variant | result | states | seconds | counterexample steps |")
        print("|---|---|---|---|---|---|")
        for single, reqs, limit in ((True, [1, 1, 1], 10**6), (True, [1, 1, 2], 10**6),
                                    (True, [1, 2, 2], 10**6), (True, [2, 2, 2], 10**6),
                                    (False, [1, 1, 1], 200_000)):
            for v in ("as-printed", "full"):
                t0 = time.perf_counter()
                res, n, d = bfs(instance(reqs, single), v, limit)
                dt = time.perf_counter() - t0
                name = ("Q = {u2}" if single else "local (q = U)") + f", requests {reqs}"
                print(f"| {name} | {v} | {res} | {n} | {dt:.1f} | {d or '—'} |", flush=True)


if __name__ == "__main__":
    main()
