"""Family tables for benchmarks/README.md: `allocscope verify` over whole families, timed.

    python benchmarks/verify.py datta_ring:two:full datta_ring:departures:full ...
        [--max-states N] [--seeds N] [--workers N] [--scheduler-address A | --local-cluster N]
        [--out results.jsonl]

Each argument is PROTOCOL:FAMILY:VARIANT[:skip=N][:first=N]. Prints one markdown row per family
(instances, ok / limit / counterexample counts, states, wall seconds, where it ran) and appends
the summaries (limits and counterexamples listed by instance) to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import protocols.verify.families as fams  # noqa: E402
from protocols.verify import report  # noqa: E402


def one(spec: str, args: argparse.Namespace, address: str | None) -> dict:
    parts = spec.split(":")
    proto, name, variant = parts[:3]
    opts = dict(p.split("=") for p in parts[3:])
    first = int(opts["first"]) if "first" in opts else None
    skip = int(opts.get("skip", 0))
    fam = fams.get(proto, name)
    t0 = time.perf_counter()
    rows = []
    from itertools import islice

    from protocols.verify import run_tasks, tasks, verify_instance
    todo = islice(tasks(fam, variant, max_states=args.max_states, seeds=args.seeds,
                        max_seconds=args.max_seconds), skip, None if first is None
                  else skip + first)
    for r in run_tasks(verify_instance, todo, address, args.workers):
        rows.append(r)
        with open(args.out + ".rows", "a", encoding="utf-8") as f:   # partial results survive
            f.write(json.dumps({"family": spec, "instance": r["instance"],
                                "result": r["result"], "states": r["states"],
                                "seconds": r["seconds"], "worst": r.get("worst")},
                               ensure_ascii=False) + "\n")
    where = f"LocalCluster {args.local_cluster} workers" if args.local_cluster else (
        f"dask {address}" if address else f"local pool {args.workers or os.cpu_count()}")
    s = report.summary(rows, fam, variant, time.perf_counter() - t0, where)
    s["max_states_bound"] = args.max_states or fam.max_states
    s["first"] = first
    s["rows"] = [{k: r[k] for k in ("instance", "result", "kind", "states", "seconds",
                                    "finding")} | {"random": r["random"]["outcomes"],
                                                   "faulty": {k: v for k, v in
                                                              r.get("faulty", {}).items()
                                                              if k != "first_failure"}}
                 for r in sorted(rows, key=lambda r: r["index"])]
    return s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--max-states", type=int)
    ap.add_argument("--max-seconds", type=float)
    ap.add_argument("--seeds", type=int)
    ap.add_argument("--workers", type=int)
    ap.add_argument("--scheduler-address")
    ap.add_argument("--local-cluster", type=int, help="start a distributed.LocalCluster with "
                    "this many worker processes and run there")
    ap.add_argument("--out", default="verify-results.jsonl")
    args = ap.parse_args()
    address, lc = args.scheduler_address, None
    if args.local_cluster:
        from distributed import LocalCluster
        lc = LocalCluster(n_workers=args.local_cluster, threads_per_worker=1, processes=True,
                          dashboard_address=None, host="127.0.0.1")
        address = lc.scheduler_address
    try:
        for spec in args.specs:
            s = one(spec, args, address)
            with open(args.out, "a", encoding="utf-8") as f:
                f.write(json.dumps(s, ensure_ascii=False) + "\n")
            print(f"| {s['protocol']} | {s['family']}{' (first ' + str(s['first']) + ')' if s['first'] else ''} "
                  f"| {s['variant']} | {s['instances']} | {s['ok']} | {s['limit']} | "
                  f"{s['counterexample']} | {s['states']:,} | {s['max_states_bound']:,} | "
                  f"{s['seconds']} | {s['cpu_seconds']} | {s['where']} |", flush=True)
            for ce in s["counterexamples"]:
                print(f"    counterexample {ce['instance']}: {ce['finding']}", flush=True)
    finally:
        if lc is not None:
            lc.close()


if __name__ == "__main__":
    main()
