"""datta_ring: exhaustive checks (``allocscope check``'s explorer) over a FAMILY of small instances,
until the project's own family runner (``allocscope verify``) lands.

    python benchmarks/datta_ring_family.py --tier repeat --max-states 20000 [--variant full]
    python benchmarks/datta_ring_family.py --tier pairs --token off

Tiers (every instance up to renaming of clients; the ring is never renamed, because ≺ and the
root are not symmetric):
  repeat  rings of 2-3 resources; 1-3 clients; each client asks 1-3 times for the SAME request
          (one or two resources, every pair and orientation): the multi-request pattern of
          issue 14, at its widest.
  pairs   ring of 2; 1-2 clients; each client any sequence of 1-2 requests (every choice of
          request each time).
Token: off (≺ = identifier order) and on at every position (``--token off|on|both``).

Each row: instance, states, result (ok / limit / violation / deadlock / livelock), seconds.
``limit`` is never counted as ok. A counterexample is saved under ``--save`` as a scenario
file with its schedule (``allocscope run FILE --scheduler scripted`` replays it).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocols.explorer import check  # noqa: E402
from protocols.scenario import parse  # noqa: E402


def requests_of(ring: list[str]) -> list[list[str]]:
    """Every request on ``ring``: one resource, or an ordered pair (strong, weak)."""
    return [[r] for r in ring] + [list(p) for p in itertools.permutations(ring, 2)]


def workloads(tier: str, ring: list[str]) -> list[tuple[tuple[tuple[str, ...], ...], ...]]:
    """Client workloads, each a sorted tuple of request sequences (client renaming)."""
    reqs = [tuple(r) for r in requests_of(ring)]
    if tier == "repeat":
        seqs = [(rq,) * k for rq in reqs for k in (1, 2, 3)]
        sizes = (1, 2, 3)
    else:
        seqs = [(a,) for a in reqs] + [(a, b) for a in reqs for b in reqs]
        sizes = (1, 2)
    out = []
    for n in sizes:
        out += list(itertools.combinations_with_replacement(seqs, n))
    return out


def instances(tier: str, token: str):
    rings = ([["R1", "R2"], ["R1", "R2", "R3"]] if tier == "repeat" else [["R1", "R2"]])
    for ring in rings:
        roots = ([None] if token in ("off", "both") else []) + \
                (list(ring) if token in ("on", "both") else [])
        for wl in workloads(tier, ring):
            for root in roots:
                yield ring, root, wl


def scenario(ring, root, wl) -> dict:
    topo = {"ring": ring, "root": root or ring[0], "token": root is not None}
    cl = [{"id": f"C{i + 1}", "requests": [list(r) for r in seq]} for i, seq in enumerate(wl)]
    name = " ".join(f"C{i + 1}:" + ",".join("+".join(r) for r in seq)
                    for i, seq in enumerate(wl))
    tok = f"token@{root}" if root else "no token"
    return {"id": "family", "title": f"ring {len(ring)}, {tok}, {name}",
            "protocol": "datta_ring", "topology": topo, "workload": {"clients": cl}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tier", choices=("repeat", "pairs"), default="repeat")
    ap.add_argument("--token", choices=("off", "on", "both"), default="both")
    ap.add_argument("--variant", default="full")
    ap.add_argument("--max-states", type=int, default=20_000)
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--max-requests", type=int, default=9, help="skip larger workloads")
    ap.add_argument("--rings", default="2,3", help="ring sizes, e.g. 2 or 2,3")
    ap.add_argument("--no-livelock", action="store_true")
    ap.add_argument("--save", default="", help="directory for counterexample scenarios")
    ap.add_argument("--json", default="", help="write the rows here")
    a = ap.parse_args()
    rows, counts = [], {}
    t_all = time.perf_counter()
    for ring, root, wl in instances(a.tier, a.token):
        if (sum(len(s) for s in wl) > a.max_requests
                or str(len(ring)) not in a.rings.split(",")):
            continue
        data = scenario(ring, root, wl)
        t0 = time.perf_counter()
        r = check(parse(data), a.variant, a.max_states, livelock_check=not a.no_livelock,
                  max_seconds=a.max_seconds)
        row = {"instance": data["title"], "states": r["states"], "result": r["result"],
               "seconds": round(time.perf_counter() - t0, 2)}
        if r["counterexample"]:
            row["length"] = r["counterexample"]["length"]
            row["finding"] = r["finding"]
            if a.save:
                Path(a.save).mkdir(parents=True, exist_ok=True)
                n = sum(1 for x in rows if x.get("length")) + 1
                out = dict(data, id=f"family-{a.variant}-{n}", variant=a.variant,
                           scheduler={"kind": "scripted"},
                           schedule=r["counterexample"]["schedule"])
                Path(a.save, f"{out['id']}.json").write_text(json.dumps(out, indent=1))
        rows.append(row)
        counts[r["result"]] = counts.get(r["result"], 0) + 1
        print(json.dumps(row, ensure_ascii=False), flush=True)
    summary = {"tier": a.tier, "token": a.token, "variant": a.variant,
               "max_states": a.max_states, "instances": len(rows), "counts": counts,
               "states": sum(x["states"] for x in rows),
               "seconds": round(time.perf_counter() - t_all, 1)}
    print(json.dumps(summary), flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
