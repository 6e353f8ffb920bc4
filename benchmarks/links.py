"""Short links under load: latency of POST /api/links and GET /api/links/{id} on a real server.

Starts ``uvicorn app.main:app`` on a free loopback port with a fresh data folder, then for a few
schedule lengths: ``N`` sequential POSTs (distinct states), the same from 8 client threads at
once, and ``N`` GETs that replay and verify each link. Prints a Markdown table. Loopback only.

    python benchmarks/links.py [--n 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.devserver import server  # noqa: E402
from protocols.kernel import make_scheduler  # noqa: E402
from protocols.runner import build  # noqa: E402
from protocols.scenario import gallery  # noqa: E402


def schedules(sid: str, length: int, count: int) -> list[list[str]]:
    out = []
    for seed in range(count):
        sim = build(gallery()[sid])
        sched = make_scheduler("random", seed)
        ids: list[str] = []
        while len(ids) < length:
            eid = sched.choose(sim)
            if eid is None:
                break
            sim.step(eid)
            ids.append(eid)
        out.append(ids)
    return out


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d, server(Path(d)) as base:
        with httpx.Client(base_url=base, timeout=30) as c:
            for length in (10, 200, 2000):
                bodies = [{"scenario": "token-ring", "schedule": s}
                          for s in schedules("token-ring", length, args.n)]
                post: list[float] = []
                ids = []
                t0 = time.perf_counter()
                for b in bodies:
                    t = time.perf_counter()
                    r = c.post("/api/links", json=b)
                    post.append(time.perf_counter() - t)
                    assert r.status_code == 201, r.text
                    ids.append(r.json()["id"])
                seq_rate = len(bodies) / (time.perf_counter() - t0)
                get: list[float] = []
                for lid in ids:
                    t = time.perf_counter()
                    assert c.get(f"/api/links/{lid}").status_code == 200
                    get.append(time.perf_counter() - t)
                # 8 clients at once, new states (content-addressed: repeats would be free)
                more = [{"scenario": "token-ring", "schedule": s, "step": len(s) - 1}
                        for s in (b["schedule"] for b in bodies)]
                failed: list[int] = []

                def worker(part: list[dict], failed: list[int] = failed) -> None:
                    with httpx.Client(base_url=base, timeout=30) as cc:
                        for b in part:
                            if cc.post("/api/links", json=b).status_code != 201:
                                failed.append(1)     # list.append is atomic under the GIL

                t0 = time.perf_counter()
                ts = [threading.Thread(target=worker, args=(more[i::8],)) for i in range(8)]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                par_rate = len(more) / (time.perf_counter() - t0)
                rows.append((length, args.n, statistics.median(post) * 1000, pct(post, 0.99),
                             seq_rate, par_rate, len(failed), statistics.median(get) * 1000,
                             pct(get, 0.99)))
        db = Path(d) / "links.sqlite3"
        size = db.stat().st_size + (Path(str(db) + "-wal").stat().st_size
                                    if Path(str(db) + "-wal").exists() else 0)
    print("| schedule length | links | POST p50 ms | POST p99 ms | POST/s (1 client) | "
          "POST/s (8 clients) | errors | GET p50 ms | GET p99 ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]:.1f} | {r[3]:.1f} | {r[4]:.0f} | {r[5]:.0f} | {r[6]} | "
              f"{r[7]:.1f} | {r[8]:.1f} |")
    print(f"\ndatabase + WAL after {2 * args.n * 3} links: {size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
