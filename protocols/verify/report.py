"""Rows to people and machines: the table, the summary, the progress bar, counterexample files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO


def summary(rows: list[dict[str, Any]], fam: Any, variant: str, seconds: float,
            where: str) -> dict[str, Any]:
    """Counts by result (``limit`` is its own count, never part of ``ok``) and the worst cases.
    ``states``: the states stored, each group search's (``--group-starts``) counted once, and
    then ``searches``: how many exhaustive searches that took."""
    counts = {"ok": 0, "limit": 0, "counterexample": 0}
    for r in rows:
        counts[r["result"]] += 1
    searched = _searches(rows)
    out: dict[str, Any] = {
        "protocol": fam.protocol, "family": fam.name, "variant": variant, "doc": fam.doc,
        "instances": len(rows), **counts,
        "states": sum(searched.values()),
        "max_states_per_instance": max((r["states"] for r in rows), default=0),
        "seconds": round(seconds, 1), "where": where,
        "cpu_seconds": round(sum(r.get("cpu_seconds", 0.0) for r in rows), 1),
        "counterexamples": [{"instance": r["instance"], "kind": r["kind"],
                             "finding": r["finding"], "found_by": r["found_by"],
                             "file": r.get("file")} for r in rows
                            if r["result"] == "counterexample"],
        "limits": [r["instance"] for r in rows if r["result"] == "limit"],
        "limits_by_bound": _by_bound(rows),
    }
    if any(r.get("group") for r in rows):
        out["searches"] = len(searched)
    worst = [r["worst"] for r in rows if "worst" in r]
    if worst:
        exact = [w for w in worst if w["result"] == "ok"]
        out["worst_case"] = {"metric": worst[0]["metric"], "exhausted": len(exact),
                             "searched": len(worst),
                             "max": max((w["max"] for w in exact), default=None),
                             "over_bound": sum(1 for w in exact if w["over_bound"])}
        if any("max_messages" in w for w in exact):
            out["worst_case"]["max_messages"] = max(w["max_messages"] for w in exact)
            ends = [w["min_over_best"] for w in exact if w["min_over_best"] is not None]
            out["worst_case"]["min_over_best"] = min(ends, default=None)
    dists = [r["faulty"]["max_distance"] for r in rows if "max_distance" in r.get("faulty", {})]
    if dists:
        out["max_failure_distance"] = max(dists)
    return out


def _searches(rows: list[dict[str, Any]]) -> dict[tuple, int]:
    """Each exhaustive search the rows come from, with its states: one per row, or one per
    group search (rows with the same ``group`` and states came from one search)."""
    out: dict[tuple, int] = {}
    for r in rows:
        group = r.get("group")
        key = ("group", tuple(group), r["states"]) if group and len(group) > 1 else \
            ("instance", r["index"])
        out[key] = r["states"]
    return out


def _group_text(group: list[int] | None) -> str:
    """``; one search with #20-#29`` for a row of a group search of several starts."""
    if not group or len(group) < 2:
        return ""
    runs: list[str] = []
    ordered = sorted(group)
    lo = prev = ordered[0]
    for i in [*ordered[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        runs.append(f"#{lo}" if lo == prev else f"#{lo}-#{prev}")
        if i is not None:
            lo = prev = i
    return f"; one search with {','.join(runs)} (states: the group's)"


def _by_bound(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How many ``limit`` rows each bound stopped (``max_states``, ``timeout``, ``cpu_time``)."""
    out: dict[str, int] = {}
    for r in rows:
        if r["result"] == "limit":
            why = str(r["explorer"].get("stopped"))
            out[why] = out.get(why, 0) + 1
    return dict(sorted(out.items()))


def table(rows: list[dict[str, Any]], out: TextIO | None = None) -> None:
    """instance | states | result | seconds (and the random runs' outcomes). ``out``: default
    the current ``sys.stdout`` (looked up at the call, so a replaced stdout is honoured)."""
    out = out or sys.stdout
    w = max([len(r["instance"]) for r in rows] + [8])
    out.write(f"{'instance':{w}}  {'states':>9}  {'result':<28}  {'seconds':>8}  random\n")
    for r in sorted(rows, key=lambda r: r["index"]):
        res = r["result"] if r["result"] != "counterexample" else f"counterexample ({r['kind']})"
        if r["result"] == "limit":     # which bound stopped it: max_states, timeout, cpu_time
            res = f"limit ({r['explorer'].get('stopped')})"
        rnd = ", ".join(f"{k} {v}" for k, v in r["random"]["outcomes"].items())
        if "faulty" in r:
            f = r["faulty"]
            if "max_distance" in f:
                rnd += f"; crashes {f['crashed']}, max distance {f['max_distance']}"
            else:
                rnd += "; with faults: " + ", ".join(f"{k} {v}" for k, v in
                                                     f["outcomes"].items())
        if "worst" in r:
            wc = r["worst"]
            rnd += (f"; worst {wc['metric']} {'≥ ' if wc['result'] == 'limit' else ''}"
                    f"{wc['max']} (bound {wc['bound']:g})")
            if "max_messages" in wc:
                rnd += (f", {wc['max_messages']} messages at most, ≥ "
                        f"{wc['min_over_best']} × 4|q| at every end")
        rnd += _group_text(r.get("group"))
        out.write(f"{r['instance']:{w}}  {r['states']:>9}  {res:<28}  {r['seconds']:>8.2f}  "
                  f"{rnd}\n")


def progress(done: int, total: int | None, counts: dict[str, int], out: TextIO) -> None:
    """One self-overwriting line on a terminal (stderr), e.g. ``[#####     ] 12/24``."""
    if total:
        filled = int(30 * done / total)
        bar = f"[{'#' * filled}{' ' * (30 - filled)}] {done}/{total}"
    else:
        bar = f"{done} done"
    tail = " ".join(f"{k} {v}" for k, v in counts.items())
    out.write(f"\r{bar}  {tail}   ")
    out.flush()


def save_counterexample(row: dict[str, Any], scenario: dict[str, Any], folder: Path,
                        faults: dict[str, Any] | None) -> Path:
    """A scenario file that replays the counterexample: the instance, its variant, the schedule
    (scripted, then nothing more), and the faults the schedule uses."""
    sc = dict(scenario)
    sc["id"] = f"{scenario['id']}-{row['variant']}-ce"[:80].rstrip("-")
    sc["title"] = f"Counterexample: {row['instance']} ({row['variant']}, {row['kind']})"[:200]
    sc["variant"] = row["variant"]
    sc["schedule"] = row["schedule"]
    sc["scheduler"] = {"kind": "scripted", "seed": 0, "then": None}
    sc["steps"] = max(len(row["schedule"]), 1)
    needed = {k: v for k, v in (faults or {}).items() if k != "rate"}
    if any(e.startswith("f:crash:") for e in row["schedule"]):
        needed["crash"] = True
    if any(e.startswith("f:") for e in row["schedule"]) and needed:
        sc["faults"] = needed
    if row["kind"] in ("deadlock", "violation"):
        sc["expect"] = {"outcome": row["kind"], "notes": (row.get("finding") or "")[:4000]}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sc['id']}.json"
    path.write_text(json.dumps(sc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
