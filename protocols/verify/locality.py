"""Failure locality over a family instance: crash each task at each phase it reaches.

For every task T, every phase P, every seed s and every j < ``waits``, a seeded random schedule
runs until T has spent j steps in P (0: the step it enters P), T crashes there (``f:crash:T``)
— a phase shorter than j steps is skipped — and
the same scheduler finishes the run without further faults. task_game's own report compares the
run with the same schedule without the crash; a task that *never executes* although it did in
the reference is starved by the failure, at its distance from T in the conflict graph. The
largest such distance over all runs is the measured locality; a run beyond the claimed one is a
counterexample (its schedule, crash included, replays it).
"""

from __future__ import annotations

from typing import Any

PHASES = ("REGISTERING", "ADMITTED", "TRYING", "ADVANCING", "ORDERING", "WINNING",
          "ACCESSING", "RELEASING")


def crash_runs(sc: Any, variant: str, seeds: int, steps: int,
               claim: int | None = None, waits: int = 6) -> dict[str, Any]:
    """Crash runs of a task_game instance: counts, distance histogram, first run beyond
    ``claim``."""
    from ..kernel import make_scheduler
    from ..runner import build
    sc = sc.model_copy(update={"faults": sc.faults.model_copy(update={"crash": True,
                                                                      "rate": 0.0})})
    tasks = list(build(sc, variant).config.task_order)
    runs = crashed = 0
    hist: dict[int, int] = {}
    worst = 0
    first: dict[str, Any] | None = None
    for t in tasks:
        for phase in PHASES:
            for seed, wait in ((s, w) for s in range(seeds) for w in range(waits)):
                runs += 1
                sim = build(sc, variant)
                sched = make_scheduler("random", seed)
                if not _crash_in(sim, sched, t, phase, wait, steps):
                    continue
                crashed += 1
                _finish(sim, sched, steps)
                d = sim.protocol.report(sim)["disturbed"] or {}
                never = d.get("never_executed", [])
                dist = [d["distance"][u] for u in never if d["distance"].get(u) is not None]
                far = max(dist, default=0)
                hist[far] = hist.get(far, 0) + 1
                worst = max(worst, far)
                if first is None and claim is not None and far > claim:
                    who = [u for u in never if d["distance"].get(u) == far]
                    first = {"seed": seed, "outcome": "locality",
                             "finding": f"{t} crashed after {wait} steps in {phase}: "
                                        f"{', '.join(who)} never "
                                        f"executes, at distance {far} in the conflict graph "
                                        f"(claimed locality {claim})",
                             "schedule": list(sim.trace)}
    return {"runs": runs, "crashed": crashed, "max_distance": worst,
            "distance_histogram": {str(k): v for k, v in sorted(hist.items())},
            "first_failure": first}


def _crash_in(sim: Any, sched: Any, task: str, phase: str, wait: int, steps: int) -> bool:
    """Step until ``task`` has been in ``phase`` for ``wait`` steps, then crash it; False if it
    never gets there (finished, left the phase first, or the budget ended)."""
    seen = 0
    while sim.step_no < steps:
        if sim.proc(task).status == phase:
            if seen == wait:
                sim.step(f"f:crash:{task}")
                return True
            seen += 1
        elif seen:
            return False
        eid = sched.choose(sim)
        if eid is None:
            return False
        sim.step(eid)
    return False


def _finish(sim: Any, sched: Any, steps: int) -> None:
    while sim.step_no < steps:
        eid = sched.choose(sim)
        if eid is None:
            return
        sim.step(eid)
