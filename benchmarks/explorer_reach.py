"""Issue 15's reach goals: instances one size bigger than the gallery's, searched to the end.

    python benchmarks/explorer_reach.py --only datta --max-states 8000000 --max-seconds 3000
    python benchmarks/explorer_reach.py --only kout
    python benchmarks/explorer_reach.py --only coterie

- ``datta``: ``full`` datta_ring on Fig. 1 + C3 {R3, R1} (ring R1, R2, R3) with the circulating
  token, searched as ``benchmarks/datta_ring.py --exhaustive`` does (every finding kind, and
  from every reachable state all-served must stay reachable: ``can_finish``).
- ``kout``: ``full`` kout_tree on the path r–a–b, ℓ = 2, k = 2, a asking for 2 units and b for 1,
  searched as ``benchmarks/kout_tree.py``'s exhaustive table does (no faults, no timeouts).
- ``coterie``: ``allocscope check coterie-fig1`` (the explorer's defaults: forget + partial
  order).

Each run is bounded by ``--max-states`` and ``--max-seconds`` (wall); a run that stops there is
reported as ``limit``, never as ok. One line of JSON per instance: result, states, transitions,
CPU and wall seconds, peak RSS.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from protocols.explorer import SearchOptions, check, search  # noqa: E402
from protocols.runner import build  # noqa: E402
from protocols.scenario import gallery  # noqa: E402


def datta(max_states: int, max_seconds: float) -> dict:
    from datta_ring import FIG1, R3, small
    sc = small(R3, FIG1 + [[["R3", "R1"]]], True)
    r = search(build(sc, "full"), SearchOptions(max_states=max_states, stop_at_first=False,
                                                can_finish=True, max_seconds=max_seconds))
    res = ("violation" if "violation" in r.findings else "deadlock" if "deadlock" in r.findings
           else "limit" if not r.complete else "cannot finish" if r.cannot_finish else "ok")
    return {"result": res, "states": r.states, "transitions": r.transitions, "depth": r.depth}


def kout(max_states: int, max_seconds: float) -> dict:
    from kout_tree import counts, expected, safety, scenario
    path = {"root": "r", "children": {"r": ["a"], "a": ["b"]}}
    sc = scenario({"ell": 2, "k": 2, "c_max": 0}, path, {"a": [2], "b": [1]})

    def bad(sim) -> str | None:
        unsafe = safety(sim)
        if unsafe:
            return f"unsafe: {unsafe[0]}"
        return "token count changed" if counts(sim) != expected(sim.config) else None

    r = search(build(sc, "full"), SearchOptions(
        max_states=max_states, violations=False, deadlocks=False,
        events=lambda _sim, e: e.kind not in ("fault", "timeout"), goal=bad,
        final=lambda _sim: "stuck", max_seconds=max_seconds))
    res = "ok" if r.result == "ok" else r.result
    return {"result": res, "states": r.states, "transitions": r.transitions, "depth": r.depth,
            "text": r.text}


def _progress(info: dict) -> None:
    """Every 100,000 states, a line on stderr with the CPU seconds so far (a run stopped by
    its wall bound on a loaded machine still tells how far it got at what CPU cost)."""
    print(json.dumps({**info, "cpu_s": round(time.process_time(), 1)}), file=sys.stderr,
          flush=True)


def coterie(max_states: int, max_seconds: float) -> dict:
    r = check(gallery()["coterie-fig1"], None, max_states, max_seconds=max_seconds,
              progress=_progress, progress_every=100_000)
    return {"result": r["result"], "states": r["states"], "transitions": r["transitions"],
            "depth": r["depth"], "stopped": r["stopped"]}


RUNS = {"datta": datta, "kout": kout, "coterie": coterie}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=sorted(RUNS), action="append")
    ap.add_argument("--max-states", type=int, default=8_000_000)
    ap.add_argument("--max-seconds", type=float, default=3600)
    a = ap.parse_args()
    for name in a.only or sorted(RUNS):
        t, c = time.perf_counter(), time.process_time()
        out = RUNS[name](a.max_states, a.max_seconds)
        out = {"instance": name, **out, "cpu_s": round(time.process_time() - c, 1),
               "wall_s": round(time.perf_counter() - t, 1),
               "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
