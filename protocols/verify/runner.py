"""Verify one family instance (a pure function of picklable data) and run many on a pool.

``verify_instance(task)`` runs the explorer's public ``check`` exhaustively under the task's
state bound, then seeded random schedules without faults and, when the family says so, with
the protocol's faults; it returns one JSON-ready row. ``verify_group(task)`` does the same for
a group of instances that differ only by their start (``--group-starts``): one exhaustive
search from all their starts (``explorer.check_group``), then each instance's own random runs;
it returns one row per instance. ``run_tasks`` maps either over tasks on a local process pool
(default: all cores) or on a Dask distributed cluster given its scheduler address: the same
function, the same rows, in either place.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

FOUND = ("violation", "deadlock", "livelock")
# how long to try reaching a Dask scheduler before saying it cannot be reached (Dask retries a
# refused connection until then)
CONNECT_TIMEOUT = "10s"


class ClusterError(RuntimeError):
    """The Dask scheduler cannot be used (not installed, not reachable)."""


def verify_instance(task: dict[str, Any]) -> dict[str, Any]:
    """Explore one instance and run its random schedules; the row the table shows."""
    from ..explorer import check
    from ..scenario import parse
    t0, cpu0 = time.perf_counter(), time.process_time()
    sc = parse(task["scenario"])
    cpu_ex = time.process_time()
    res = check(sc, variant=task["variant"], max_states=task["max_states"],
                max_seconds=task.get("max_seconds"),
                max_cpu_seconds=task.get("max_cpu_seconds"))
    # the explorer's own CPU time: what a ``--max-cpu-seconds`` bound is compared with
    return _row(task, sc, res, round(time.process_time() - cpu_ex, 3), t0, cpu0)


def verify_group(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of a group of instances that differ only by their start (``task["members"]``,
    instance tasks; ``group_tasks``): their exhaustive searches as one search from all their
    starts (``explorer.check_group``: ``ok`` or ``limit`` is the group's, a counterexample its
    start's, the others searched again without it), then each instance's own random runs.
    Each row's ``explorer.states`` and ``cpu_seconds`` are its group search's, and ``group``
    lists the indices of the instances searched with it (itself included)."""
    from ..explorer.check import check_group
    from ..scenario import parse
    t0, cpu0 = time.perf_counter(), time.process_time()
    members = task["members"]
    scs = [parse(m["scenario"]) for m in members]
    first = members[0]
    results = check_group(scs, first["variant"], first["max_states"],
                          max_seconds=first.get("max_seconds"),
                          max_cpu_seconds=first.get("max_cpu_seconds"))
    cpu_ex = round(time.process_time() - cpu0, 3)
    rows = []
    for m, sc, res in zip(members, scs, results, strict=True):
        row = _row(m, sc, res, cpu_ex, time.perf_counter(), time.process_time())
        row["group"] = [members[k]["index"] for k in res["group"]["members"]]
        row["explorer"]["group"] = row["group"]
        rows.append(row)
    # the group search's time once, in the first row's totals (the sums stay true)
    rows[0]["seconds"] = round(rows[0]["seconds"] + time.perf_counter() - t0
                               - sum(r["seconds"] for r in rows), 3)
    rows[0]["cpu_seconds"] = round(rows[0]["cpu_seconds"] + cpu_ex, 3)
    return rows


def group_tasks(tasks: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Consecutive instance tasks that are one instance up to their start
    (``explorer.check.same_instance``: kout_tree's chaos seeds of one tree, ℓ, k and workload)
    as one group task ``{"index": first index, "members": [task, ...]}`` for ``verify_group``;
    an instance with no such neighbour is a group of one."""
    from ..explorer.check import instance_of
    from ..runner import build
    from ..scenario import parse
    group: list[dict[str, Any]] = []
    ident: Any = None
    for t in tasks:
        sc = parse(t["scenario"])
        mine = (t["variant"], t["max_states"], instance_of(build(sc, t["variant"]), sc))
        if group and mine != ident:
            yield {"index": group[0]["index"], "members": group}
            group = []
        if not group:
            ident = mine
        group.append(t)
    if group:
        yield {"index": group[0]["index"], "members": group}


def _row(task: dict[str, Any], sc: Any, res: dict[str, Any], cpu_ex: float, t0: float,
         cpu0: float) -> dict[str, Any]:
    """One instance's row from its explorer answer ``res`` (``cpu_ex``: the search's CPU
    seconds), with its random runs; ``t0`` / ``cpu0``: when the row's work began."""
    variant = task["variant"]
    row: dict[str, Any] = {"index": task["index"], "instance": task["name"], "variant": variant}
    ex = {k: res.get(k) for k in ("result", "states", "transitions", "depth", "seconds",
                                  "finding", "stopped")}
    ex["cpu_seconds"] = cpu_ex
    ex["livelock_checked"] = res["reductions"]["livelock_checked"]
    ex["can_finish_checked"] = res["reductions"].get("can_finish_checked", False)
    if res.get("counterexample"):
        ce = res["counterexample"]
        ex["schedule"] = ce["schedule"]
        ex["confirmed_by_monitor"] = ce.get("confirmed_by_monitor")
    row["explorer"] = ex
    row["random"] = random_runs(sc, variant, task["seeds"], task["steps"], None)
    if task.get("faults") is not None:
        row["faulty"] = faulty_runs(sc, variant, task)
    if task.get("worst") and ex["result"] == "ok":
        from .bounds import worst_case
        wc = worst_case(sc, variant, task["worst"], task["max_states"], task.get("max_seconds"),
                        task.get("max_cpu_seconds"))
        row["worst"] = {k: v for k, v in wc.items() if k != "witness"}
        row["worst"]["witness_length"] = len(wc["witness"])
    row.update(verdict(row, task))
    if row["result"] == "counterexample":
        row["scenario"] = task["scenario"]
    row["seconds"] = round(time.perf_counter() - t0, 3)
    row["cpu_seconds"] = round(time.process_time() - cpu0, 3)
    return row


def random_runs(sc: Any, variant: str, seeds: int, steps: int,
                faults: dict[str, Any] | None) -> dict[str, Any]:
    """Seeded random schedules 0..seeds-1: outcome counts and the first failing schedule."""
    from ..kernel import make_scheduler
    from ..runner import build, drive, report
    if faults is not None:
        sc = sc.model_copy(update={"faults": sc.faults.model_copy(update=faults)})
    outcomes: dict[str, int] = {}
    first: dict[str, Any] | None = None
    for seed in range(seeds):
        sim = build(sc, variant)
        drive(sim, make_scheduler("random", seed, fault_rate=sc.faults.rate), steps)
        rep = report(sim, sc)
        outcomes[rep["outcome"]] = outcomes.get(rep["outcome"], 0) + 1
        if first is None and rep["outcome"] in FOUND:
            first = {"seed": seed, "outcome": rep["outcome"], "schedule": list(sim.trace),
                     "finding": _finding_text(rep)}
    return {"runs": seeds, "outcomes": dict(sorted(outcomes.items())), "first_failure": first}


def _finding_text(rep: dict[str, Any]) -> str:
    if rep["violations"]:
        return rep["violations"][0]["text"]
    for key in ("deadlock", "livelock"):
        if rep[key]:
            return rep[key]["text"]
    return rep["outcome"]


def faulty_runs(sc: Any, variant: str, task: dict[str, Any]) -> dict[str, Any]:
    """Random runs with the family's faults; for a locality family, one crash per task and
    phase instead (see ``locality.py``)."""
    if task.get("judge_faults") == "locality":
        from .locality import crash_runs
        return crash_runs(sc, variant, task["seeds"], task["steps"], task.get("locality"),
                          task.get("waits", 6))
    return random_runs(sc, variant, task["seeds"], task["steps"], task["faults"])


def verdict(row: dict[str, Any], task: dict[str, Any]) -> dict[str, Any]:
    """``result``: counterexample (explorer or a judged random run found one), limit (the
    explorer did not finish and nothing was found) or ok; with the counterexample's schedule."""
    ex = row["explorer"]
    if ex["result"] in FOUND:
        return {"result": "counterexample", "kind": ex["result"], "finding": ex["finding"],
                "schedule": ex["schedule"], "found_by": "explorer",
                "states": ex["states"]}
    judged = [("random", row["random"].get("first_failure"))]
    fj = task.get("judge_faults")
    if "faulty" in row and fj == "stabilise":
        ff = row["faulty"].get("first_failure")
        judged.append(("random with faults", ff if ff and ff["outcome"] == "violation" else None))
    if "faulty" in row and fj == "locality":
        judged.append(("crash", row["faulty"].get("first_failure")))
    for who, ff in judged:
        if ff:
            return {"result": "counterexample", "kind": ff["outcome"], "finding": ff["finding"],
                    "schedule": ff["schedule"], "found_by": who, "states": ex["states"]}
    return {"result": "limit" if ex["result"] == "limit" else "ok", "kind": None,
            "finding": None, "schedule": None, "found_by": None, "states": ex["states"]}


# ------------------------------------------------------------------ where it runs

def run_tasks(fn: Callable[[dict[str, Any]], Any], tasks: Iterable[dict[str, Any]],
              scheduler_address: str | None = None, workers: int | None = None,
              window: int | None = None) -> Iterator[Any]:
    """``fn`` over ``tasks``, results as they finish: on a local process pool (``workers``
    processes, default all cores; 1 = in this process) or, given ``scheduler_address``, on a
    Dask distributed cluster. At most ``window`` tasks are in flight, so a family of a million
    instances is streamed, never materialised."""
    if scheduler_address:
        yield from _dask(fn, tasks, scheduler_address, window)
        return
    n = workers or os.cpu_count() or 1
    if n == 1:
        for t in tasks:
            yield fn(t)
        return
    with ProcessPoolExecutor(max_workers=n) as pool:
        yield from _windowed(pool.submit, lambda fs: wait(fs, return_when=FIRST_COMPLETED)[0],
                             fn, tasks, window or 4 * n)


def _windowed(submit: Callable[..., Any], done_some: Callable[[set], Iterable[Any]],
              fn: Callable, tasks: Iterable[dict[str, Any]], window: int) -> Iterator[Any]:
    pending: set = set()
    it = iter(tasks)
    exhausted = False
    while pending or not exhausted:
        while not exhausted and len(pending) < window:
            try:
                pending.add(submit(fn, next(it)))
            except StopIteration:
                exhausted = True
        if not pending:
            break
        for f in done_some(pending):
            pending.discard(f)
            yield f.result()


def _dask(fn: Callable, tasks: Iterable[dict[str, Any]], address: str,
          window: int | None) -> Iterator[Any]:
    try:
        from distributed import Client, as_completed
    except ImportError:  # pragma: no cover - depends on the installation
        raise ClusterError("--scheduler-address needs Dask distributed: pip install "
                           "'allocscope[cluster]'") from None
    try:
        client = Client(address, set_as_default=False, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        cores = sum(client.nthreads().values()) or 1
        it = iter(tasks)
        # our own client (not the process's default one): as_completed on its event loop, fed
        # one new task per finished one, so at most ``window`` are in flight
        done = as_completed(loop=client.loop)
        for t in itertools.islice(it, window or 4 * cores):
            done.add(client.submit(fn, t, pure=False))
        for fut in done:
            yield fut.result()
            fut.release()
            nxt = next(it, None)
            if nxt is not None:
                done.add(client.submit(fn, nxt, pure=False))
