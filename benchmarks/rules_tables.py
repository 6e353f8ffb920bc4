"""What the rules tables (issue 16) cost: simulator steps per CPU second and one explorer check,
on this checkout and on an older tree of the project given as the baseline, in the same run.

Each measurement runs in its own process (``--one``), baseline and this checkout interleaved,
best of five CPU-time runs (``time.process_time``, so other jobs on the machine weigh less).

Run: ``git archive <rev> protocols | tar -x -C /tmp/base`` then
``python benchmarks/rules_tables.py --base /tmp/base [--rounds 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

CASES = (("kout-random", "full"), ("kout-fig3", "no-priority"), ("game-three-nodes", "full"))
STEPS = 3000
STATES = 3000


def one() -> None:
    """Measure in this process (the tree on sys.path decides which code runs)."""
    from protocols.explorer import check
    from protocols.runner import build, scheduler_for
    from protocols.scenario import gallery
    out = {}
    for sid, v in CASES:
        sc = gallery()[sid]
        best = float("inf")
        for _ in range(5):
            sim = build(sc, v)
            sched = scheduler_for(sc, sim.variant, "random", 7)
            t, n = time.process_time(), 0
            while n < STEPS:
                e = sched.choose(sim)
                if e is None:
                    break
                sim.step(e)
                n += 1
            best = min(best, (time.process_time() - t) / max(n, 1))
        t = time.process_time()
        check(sc, v, STATES)
        out[f"{sid}/{v}"] = {"steps_per_s": round(1 / best), "explore_s": time.process_time() - t}
    print(json.dumps(out))


def run(tree: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    r = subprocess.run([sys.executable, __file__, "--one"], cwd=tree, env=env, check=True,
                       capture_output=True, text=True, timeout=600)
    return json.loads(r.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", action="store_true")
    ap.add_argument("--base", type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    if a.one:
        return one()
    if a.base is None:
        ap.error("--base: an exported older tree to compare with")
    here = Path(__file__).resolve().parent.parent
    print("| run | case | base steps/s | rules steps/s | ratio | base explore s | rules explore s |")
    print("|---|---|---|---|---|---|---|")
    for k in range(a.rounds):
        b, h = run(a.base), run(here)
        for case in b:
            x, y = b[case], h[case]
            print(f"| {k + 1} | {case} | {x['steps_per_s']:,} | {y['steps_per_s']:,} | "
                  f"{y['steps_per_s'] / x['steps_per_s']:.2f}× | {x['explore_s']:.2f} | "
                  f"{y['explore_s']:.2f} |")


if __name__ == "__main__":
    main()
