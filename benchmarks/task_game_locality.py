"""task_game failure locality by search, per variant, over a declared set of instances.

    python benchmarks/task_game_locality.py INSTANCE... [--variants restricted,complete,full]
        [--mode exhaustive|points|directed] [--seeds N] [--max-states N] [--out results.jsonl]

INSTANCE is a gallery id (``game-locality-chain``) or ``FAMILY:NAME`` of a task_game family
(``conflicts:chain L=3 nodes=3``). ``exhaustive``: every crash point of every task and every
schedule (``locality_search.crash_search``; ``limit`` when the state bound is hit, then no
distance is claimed). ``points``: crash points sampled along seeded runs (after each step of
the crashed task), every continuation searched (``locality_search.crash_points``). ``directed``:
erratum S3's crash point built on a chain or cycle of 3+ tasks (``chain_crash_point``: T1 crashes
with its request first at P1 after T3 registered behind T2's admission), every continuation
searched (``starving``); crashed task T1 only. Prints a
markdown row per (instance, variant, crashed task) and appends JSON to --out.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocols.runner import build  # noqa: E402
from protocols.scenario import gallery, parse  # noqa: E402
from protocols.verify import locality_search as ls  # noqa: E402
from protocols.verify.families import get, iter_instances  # noqa: E402


def scenario(spec: str):
    if ":" not in spec:
        return gallery()[spec]
    fam, name = spec.split(":", 1)
    for inst in iter_instances(get("task_game", fam)):
        if inst.name == name:
            return parse(inst.scenario)
    raise SystemExit(f"no instance {name!r} in task_game family {fam!r}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("instances", nargs="+")
    ap.add_argument("--variants", default="restricted,complete,full")
    ap.add_argument("--mode", choices=("exhaustive", "points", "directed"), default="exhaustive")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--max-states", type=int, default=100_000)
    ap.add_argument("--tasks", default="", help="comma-separated crashed tasks (default: all)")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    for spec in a.instances:
        sc = scenario(spec)
        for v in a.variants.split(","):
            tasks = a.tasks.split(",") if a.tasks else list(build(sc, v).config.task_order)
            if a.mode == "directed":
                tasks = ["T1"]
            for t in tasks:
                c0, w0 = time.process_time(), time.perf_counter()
                if a.mode == "exhaustive":
                    r = ls.crash_search(sc, v, t, a.max_states)
                    what = f"{r['result']} ({r['states']:,} states)"
                    far = r["max_distance"] if r["complete"] else "—"
                elif a.mode == "directed":
                    r = ls.starving(ls.chain_crash_point(sc, v), t, a.max_states)
                    what = f"from S3's crash point: {r['result']} ({r['states']:,} states)"
                    far = r["max_distance"] if r["complete"] else "—"
                else:
                    r = ls.crash_points(sc, v, t, a.seeds, max_states=a.max_states)
                    what = (f"{r['crash_points']} crash points: {r['searched']} searched, "
                            f"{r['limit']} limit")
                    far = r["max_distance"]
                w = r.get("witness")
                victim = f"{w['victim']} (d={w['distance']})" if w else "—"
                cpu, wall = time.process_time() - c0, time.perf_counter() - w0
                print(f"| {spec} | {v} | {t} | {a.mode} | {what} | {far} | {victim} | "
                      f"{cpu:.1f} | {wall:.1f} |", flush=True)
                if a.out:
                    with open(a.out, "a") as f:
                        f.write(json.dumps({"instance": spec, "variant": v, "crashed": t,
                                            "mode": a.mode, "cpu": round(cpu, 2),
                                            "wall": round(wall, 2), **r}) + "\n")


if __name__ == "__main__":
    main()
