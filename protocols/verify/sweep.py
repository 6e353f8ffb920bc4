"""Seed sweeps: one scenario under many seeded random schedules, metric distributions against
the paper's bound, on the same local pool / Dask runner as ``verify``.

Each task runs a chunk of seeds and returns value counts (a histogram per metric), so 10^5 runs
move only small dictionaries between processes. Metrics: messages per critical-section entry
(per run), waiting time (entries by others between a request and its entry, per request) and
response time (steps, per request) for every protocol; coterie adds messages per request against
4|q| and (7+|α(u)|)|q| (Section 6, charged as protocols/coterie/charging.py says); task_game adds
forms per task per pool against 6 (restricted) / 7 (with order forms); kout_tree's waiting time
is drawn against Theorem 2's ℓ(2n−3)².
"""

from __future__ import annotations

import functools
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from .runner import run_tasks


def sweep_chunk(task: dict[str, Any]) -> dict[str, Any]:
    """Run seeds [lo, hi) of one scenario; value counts per metric and outcome counts."""
    from ..scenario import parse
    cpu0 = time.process_time()
    sc = parse(task["scenario"])
    lo, hi = task["seeds"]
    metrics: dict[str, Counter] = {}
    outcomes: Counter = Counter()
    bounds: dict[str, Any] = {}
    engine = task.get("engine", "simulator")
    reruns = 0
    for seed in range(lo, hi):
        out, vals, bounds = one_run(sc, task["variant"], seed, task["steps"], engine)
        if out != "all-served" and engine == "core":
            # only a run that ends all-served is taken from the core; anything else is re-run
            # on the simulator, whose livelock memory the core lacks (see ``_core_run``)
            out, vals, bounds = one_run(sc, task["variant"], seed, task["steps"])
            reruns += 1
        outcomes[out] += 1
        for name, xs in vals.items():
            metrics.setdefault(name, Counter()).update(xs)
    return {"outcomes": dict(outcomes), "metrics": {k: dict(v) for k, v in metrics.items()},
            "bounds": bounds, "runs": hi - lo, "reruns": reruns,
            "cpu_seconds": time.process_time() - cpu0}


def core_fits(sc: Any) -> bool:
    """Whether the headless core gives this scenario's sweep metrics: no faults (the message
    count is the core's message numbering, which a duplicated message would not match) and not
    coterie (its charged messages come from its own simulator run)."""
    f = getattr(sc, "faults", None)
    faulty = f is not None and any(getattr(f, k, False) for k in
                                   ("drop", "duplicate", "crash", "corrupt"))
    return sc.protocol != "coterie" and not faulty


@functools.cache
def _tally_class() -> type:
    """Headless monitors that also keep the served requests, recorded as the simulator's
    monitors record them: (pid, request step, response time in steps, waiting time in
    critical-section entries by others)."""
    from ..kernel.monitors import Headless

    class Tally(Headless):
        def __init__(self, sim: Any) -> None:
            super().__init__(sim)
            self.served: list[tuple[str, int, int, int]] = []

        def on_enter(self, pid: str, resources: tuple[str, ...],
                     served: tuple[int, int] | None, again: bool, over: list[str]) -> None:
            if served is not None:
                self.served.append((pid, served[0], self.sim.step_no - served[0],
                                    self.cs_entries - served[1]))
            super().on_enter(pid, resources, served, again, over)

    return Tally


def one_run(sc: Any, variant: str | None, seed: int, steps: int,
            engine: str = "simulator") -> tuple[str, dict[str, list[float]], dict[str, Any]]:
    """One seeded random run: (outcome, metric values, bounds). ``engine="core"`` steps the
    kernel's headless ``Core`` (no timeline, narration or livelock memory), which gives the
    same states for the same choices; the caller re-runs on the simulator any run it does not
    end all-served."""
    from ..kernel import make_scheduler
    from ..runner import build
    proto = sc.protocol
    if proto == "coterie":
        return _coterie(sc, variant, seed)
    sim = build(sc, variant)
    if engine == "core":
        from ..kernel.core import Core
        sim = Core.of(sim)
        # the core's monitors with a served-request tally; installed before the first step,
        # so every waiting entry and critical-section entry is counted by it
        sim.monitors = _tally_class()(sim)
    sched = make_scheduler("random", seed)
    tasks = set(sim.config.task_order) if proto == "task_game" else set()
    forms: Counter = Counter()
    mon = sim.monitors
    while sim.step_no < steps:
        eid = sched.choose(sim)
        if eid is None:
            break
        before, n = sim.next_seq, len(mon.findings)
        sim.step(eid)
        if tasks:
            for seq in range(before, sim.next_seq):
                m = sim.inflight.get(seq)
                if m is not None and m.src in tasks:
                    forms[m.src] += 1
        if len(mon.findings) > n:
            break
        if sim.protocol.quiescent_ok(sim) and sim.protocol.served_all(sim):
            break
    vals = _common(sim, engine == "core")
    bounds: dict[str, Any] = {}
    cfg = sim.config
    if proto == "kout_tree":
        n = cfg.tree.n
        bounds["waiting_time"] = {"value": cfg.ell * (2 * n - 3) ** 2,
                                  "what": "ℓ(2n−3)², Theorem 2", "kind": "upper"}
    if proto == "task_game":
        per = 6 if sim.variant == "restricted" else 7
        vals["forms_per_task_per_pool"] = [
            round(forms[t] / len(cfg.tasks[t].interest), 3) for t in cfg.task_order
            if sim.proc(t).status == "LEFT"]
        bounds["forms_per_task_per_pool"] = {"value": per, "kind": "upper",
                                             "what": f"{per}ρ forms, for a task in no conflict (Sec. 1)"}
    return _outcome(sim), vals, bounds


def _common(sim: Any, core: bool = False) -> dict[str, list[float]]:
    mon = sim.monitors
    # every message sent is numbered from 0 (setup messages too), so on a fault-free run the
    # core's next number is the simulator's count of sent messages
    msgs = sim.next_seq if core else sum(mon.sent.values())
    return {"messages_per_cs_entry": [round(msgs / mon.cs_entries, 2)] if mon.cs_entries else [],
            "waiting_time": [s[3] for s in mon.served],
            "response_time": [s[2] for s in mon.served]}


def _outcome(sim: Any) -> str:
    mon = sim.monitors
    if mon.violations():
        return "violation"
    for kind in ("deadlock", "livelock"):
        if mon.first(kind):
            return kind
    return "all-served" if sim.protocol.served_all(sim) else "incomplete"


def _coterie(sc: Any, variant: str | None, seed: int) -> tuple[str, dict, dict]:
    from ..coterie.charging import charged_run
    charges, sim = charged_run(sc, variant or "full", "random", seed)
    cfg = sim.config
    worst, best = [], []
    for (u, _ts), c in charges.items():
        q = len(cfg.Q[u][0])
        total = sum(c.values())
        worst.append(round(total / ((7 + len(cfg.S.alpha[u])) * q), 3))
        best.append(round(total / (4 * q), 3))
    vals = _common(sim)
    vals["messages_per_request_over_worst"] = worst
    vals["messages_per_request_over_best"] = best
    bounds = {"messages_per_request_over_worst": {"value": 1.0, "kind": "upper",
                                                  "what": "(7+|α(u)|)|q|, Section 6"},
              "messages_per_request_over_best": {"value": 1.0, "kind": "lower",
                                                 "what": "4|q|, Section 6"}}
    return _outcome(sim), vals, bounds


def sweep(sc: Any, variant: str | None, seeds: int, *, scheduler_address: str | None = None,
          workers: int | None = None, chunk: int = 250, steps: int | None = None,
          out: str | None = "sweep", progress: bool = False,
          engine: str | None = None) -> dict[str, Any]:
    """Distributions over seeds 0..seeds-1; writes OUT.svg and OUT.json when ``out``.
    ``engine``: ``core`` (the default where ``core_fits``) or ``simulator``."""
    import os

    from ..runner import build
    sim = build(sc, variant)
    v = sim.variant
    data = sc.model_dump(mode="json", exclude_none=True)
    chunk = max(1, chunk)
    if engine is None:
        engine = "core" if core_fits(sc) else "simulator"
    if engine not in ("core", "simulator") or (engine == "core" and not core_fits(sc)):
        raise ValueError(f"engine {engine!r} does not fit {sc.id} (core: fault-free, "
                         f"not coterie; or simulator)")
    tasks = [{"scenario": data, "variant": v, "seeds": (lo, min(seeds, lo + chunk)),
              "steps": steps or sc.steps, "engine": engine} for lo in range(0, seeds, chunk)]
    t0 = time.perf_counter()
    outcomes: Counter = Counter()
    merged: dict[str, Counter] = {}
    bounds: dict[str, Any] = {}
    done, cpu, reruns = 0, 0.0, 0
    for part in run_tasks(sweep_chunk, tasks, scheduler_address, workers):
        reruns += part.get("reruns", 0)
        outcomes.update(part["outcomes"])
        for k, c in part["metrics"].items():
            merged.setdefault(k, Counter()).update({float(x): n for x, n in c.items()})
        bounds.update(part["bounds"])
        done += part["runs"]
        cpu += part["cpu_seconds"]
        if progress:
            end = "\r" if sys.stderr.isatty() else "\n"
            sys.stderr.write(f"{done}/{seeds} seeds, {time.perf_counter() - t0:.0f} s wall, "
                             f"{cpu:.0f} s CPU in the workers{end}")
            sys.stderr.flush()
    if progress:
        sys.stderr.write("\n")
    seconds = time.perf_counter() - t0
    res: dict[str, Any] = {
        "scenario": sc.id, "protocol": sc.protocol, "variant": v, "seeds": seeds,
        "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
        "engine": engine, "reruns_on_simulator": reruns,
        "where": (f"dask {scheduler_address}" if scheduler_address
                  else f"local pool, {workers or os.cpu_count()} processes"),
        "outcomes": dict(sorted(outcomes.items())),
        "metrics": {k: _stats(c, bounds.get(k)) for k, c in sorted(merged.items())},
        "files": {},
    }
    if out:
        from .svg import histograms
        svg, js = Path(f"{out}.svg"), Path(f"{out}.json")
        svg.write_text(histograms(res, merged), encoding="utf-8")
        res["files"] = {"svg": str(svg), "json": str(js)}
        full = dict(res, histograms={k: {_num(x): n for x, n in sorted(c.items())}
                                     for k, c in merged.items()})
        js.write_text(json.dumps(full, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return res


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _stats(c: Counter, bound: dict[str, Any] | None) -> dict[str, Any]:
    n = sum(c.values())
    xs = sorted(c.items())

    def pct(p: float) -> float | None:
        if not n:
            return None
        k, acc = p * (n - 1), 0
        for x, m in xs:
            acc += m
            if acc > k:
                return x
        return xs[-1][0]
    out: dict[str, Any] = {"count": n, "mean": round(sum(x * m for x, m in xs) / n, 3) if n
                           else None, "p50": pct(0.5), "p99": pct(0.99),
                           "max": xs[-1][0] if xs else None, "min": xs[0][0] if xs else None,
                           "bound": bound}
    if bound:
        v = bound["value"]
        out["over_bound"] = sum(m for x, m in xs if (x > v if bound["kind"] == "upper"
                                                     else x < v))
    return out
