"""Runs a scenario headless: build the simulator, drive it with a scheduler, report the outcome.

The report's keys are the contract of ``allocscope run --json`` (architecture page).
"""

from __future__ import annotations

from typing import Any

from . import service
from .kernel import Simulator
from .kernel.schedulers import Scheduler
from .scenario import Expect, Scenario


def build(scenario: Scenario, variant: str | None = None) -> Simulator:
    """A simulator at step 0 of ``scenario`` (``variant`` overrides the file's)."""
    return service.build(scenario, variant)


def scheduler_for(scenario: Scenario, variant: str, kind: str | None = None,
                  seed: int | None = None) -> Scheduler:
    return service.scheduler_for(scenario, variant, kind, seed)


def drive(sim: Simulator, sched: Scheduler, max_steps: int) -> None:
    """Step until nothing is chosen, a monitor fires, the budget ends, or (for protocols whose
    tokens never stop) everyone has been served (protocols/service.py has the stop rules)."""
    service.drive(sim, sched, max_steps)


def report(sim: Simulator, scenario: Scenario) -> dict[str, Any]:
    mon = sim.monitors
    found = service.findings(sim)
    served = sim.protocol.served_all(sim)
    metrics = mon.metrics()
    out: dict[str, Any] = {
        "scenario": scenario.id,
        "protocol": sim.protocol.id,
        "variant": sim.variant,
        "steps": sim.step_no,
        "state_hash": sim.state_hash(),
        "cs_entries": mon.cs_entries,
        "messages": metrics["messages"],
        **found,
        "served_all": served,
        "metrics": metrics,
    }
    out.update(sim.protocol.report(sim))
    out["outcome"] = outcome(out)
    return out


def outcome(result: dict[str, Any]) -> str:
    if result["violations"]:
        return "violation"
    if result["deadlock"]:
        return "deadlock"
    if result["livelock"]:
        return "livelock"
    return "all-served" if result["served_all"] else "incomplete"


def run(scenario: Scenario, variant: str | None = None, steps: int | None = None,
        scheduler: str | None = None, seed: int | None = None) -> dict[str, Any]:
    """Run a scenario to its end and report; SimError/ScenarioError on bad input."""
    r = service.Run(scenario, variant, scheduler, seed, steps)
    r.drive()
    return report(r.sim, scenario)


def mismatches(result: dict[str, Any], expect: Expect | None) -> list[str]:
    """How a run's result differs from a scenario's ``expect`` (empty when it matches)."""
    if expect is None:
        return []
    e = expect.for_variant(result["variant"])
    bad = []
    if result["outcome"] != e.outcome:
        bad.append(f"outcome {result['outcome']!r}, expected {e.outcome!r}")
    if e.cycle is not None:
        got = sorted(map(str, (result["deadlock"] or {}).get("cycle", [])))
        if got != sorted(e.cycle):
            bad.append(f"deadlock cycle {got}, expected {sorted(e.cycle)}")
    if e.period is not None:
        got_p = (result["livelock"] or {}).get("period")
        if got_p != e.period:
            bad.append(f"livelock period {got_p}, expected {e.period}")
    return bad
