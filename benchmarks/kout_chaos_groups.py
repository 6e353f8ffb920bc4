"""kout_tree ``chaos``: one search from a group of corrupted starts against one search per start.

For the given family indices (instances of one tree / ℓ / k / workload that differ only by
their chaos seed), runs ``check`` on each alone and then ``check(first, also=rest)`` once, and
prints one JSON line per search: result, states, transitions and CPU seconds
(``time.process_time``: what waiting for a core on a shared machine does not stretch), then a
summary line (sums, the group's share, the union's bounds: at least the largest member, at
most the sum). ``--only=group`` or ``--only=separate`` runs one side.

Run: ``python benchmarks/kout_chaos_groups.py 20-29`` or ``... 60,61,63,65-69
[--variant=full] [--max-states=N] [--only=group|separate]`` (benchmarks/README.md, "kout_tree
chaos: one search per group of starts").
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

# this checkout's package, not the installed one (so a copy of the script measures its tree)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocols.explorer.check import check  # noqa: E402
from protocols.scenario import parse  # noqa: E402
from protocols.verify import get, tasks  # noqa: E402


def indices(text: str) -> list[int]:
    """``20-29`` or ``60,61,63,65-69`` as a list of indices, in order."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out


def main(argv: list[str]) -> None:
    opts = dict(a[2:].split("=", 1) for a in argv if a.startswith("--"))
    idx = indices(next(a for a in argv if not a.startswith("--")))
    variant = opts.get("variant", "full")
    max_states = int(opts.get("max-states", 50_000_000))
    only = opts.get("only")
    fam = get("kout_tree", "chaos")
    by_index = {t["index"]: t for t in tasks(fam, variant, only=set(idx), max_states=1)}
    scs = [parse(by_index[i]["scenario"]) for i in idx]
    alone: list[dict] = []
    if only in (None, "separate"):
        for i, sc in zip(idx, scs, strict=True):
            t0 = time.process_time()
            r = check(sc, variant, max_states)
            alone.append({"index": i, "instance": by_index[i]["name"], "result": r["result"],
                          "states": r["states"], "transitions": r["transitions"],
                          "cpu_s": round(time.process_time() - t0, 1)})
            print(json.dumps(alone[-1], ensure_ascii=False), flush=True)
    group: dict = {}
    if only in (None, "group"):
        t0 = time.process_time()
        r = check(scs[0], variant, max_states, also=scs[1:])
        group = {"group": idx, "result": r["result"], "states": r["states"],
                 "transitions": r["transitions"], "depth": r["depth"],
                 "cpu_s": round(time.process_time() - t0, 1),
                 "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}
        print(json.dumps(group), flush=True)
    if alone and group:
        states = sum(a["states"] for a in alone)
        cpu = sum(a["cpu_s"] for a in alone)
        print(json.dumps({"separate_states": states, "separate_cpu_s": round(cpu, 1),
                          "largest_member": max(a["states"] for a in alone),
                          "group_states": group["states"], "group_cpu_s": group["cpu_s"],
                          "states_ratio": round(group["states"] / states, 3),
                          "cpu_ratio": round(group["cpu_s"] / cpu, 3)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
