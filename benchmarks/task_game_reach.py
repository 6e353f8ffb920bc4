"""How far the explorer gets into one task_game ``conflicts`` instance: a progress line per
``--every`` new states (states, transitions, depth, frontier, CPU seconds, load), then the result.

    nice -n 10 python benchmarks/task_game_reach.py INDEX [--variant full]
        [--max-states N] [--max-cpu-seconds S] [--every N]

INDEX is the instance's index in the family (``allocscope verify task_game --family conflicts``
numbers them the same way; 6 is "chain L=2 nodes=1", the smallest with two tasks). The search is
``check``'s, with its reductions (clocks relative, the forget audit) and its livelock search on
what was explored. Written for benchmarks/README.md, "task_game `conflicts`, exhausted (issue
14, branch tgfam)": the first progress line at each depth gives how the levels grow, and the
frontier says whether the search was about to end.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocols.explorer import check  # noqa: E402
from protocols.scenario import parse  # noqa: E402
from protocols.verify.families import get, instances  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("index", type=int)
    ap.add_argument("--variant", default="full")
    ap.add_argument("--max-states", type=int, default=2_000_000)
    ap.add_argument("--max-cpu-seconds", type=float, default=None)
    ap.add_argument("--every", type=int, default=50_000)
    a = ap.parse_args(argv)
    inst = instances(get("task_game", "conflicts"))[a.index]
    sc = parse({**inst.scenario, "id": f"conflicts-{a.index}"})
    t0 = time.process_time()
    print(json.dumps({"instance": a.index, "name": inst.name, "variant": a.variant,
                      "start": time.strftime("%H:%M:%S", time.gmtime()),
                      "load": round(os.getloadavg()[0], 1)}), flush=True)

    def progress(p: dict) -> None:
        print(json.dumps({**p, "cpu": round(time.process_time() - t0, 1),
                          "load": round(os.getloadavg()[0], 1)}), flush=True)

    r = check(sc, a.variant, a.max_states, progress=progress, progress_every=a.every,
              max_cpu_seconds=a.max_cpu_seconds)
    print(json.dumps({"result": r["result"], "states": r["states"],
                      "transitions": r["transitions"], "depth": r["depth"],
                      "stopped": r.get("stopped"), "finding": r.get("finding"),
                      "cpu": round(time.process_time() - t0, 1),
                      "end": time.strftime("%H:%M:%S", time.gmtime()),
                      "load": round(os.getloadavg()[0], 1)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
