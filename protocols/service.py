"""The run service: a simulator, a scheduler and the stop rules of ``allocscope run``, in one place.

The CLI's ``run``, the web session's play, coterie's message charging and the golden replays
all step through ``Run`` (or, where they step on their own, ask ``stop_reason`` after each step),
so the command line and the browser stop at the same step by construction. Schedulers are made
only by ``scheduler_for``, which knows how a scripted schedule hands over when it ends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import registry
from .kernel import Event, SimError, Simulator, make_scheduler
from .kernel.schedulers import KINDS, Scheduler
from .scenario import Scenario, ScenarioError, check_fields

__all__ = ["KINDS", "Run", "StepInfo", "build", "drive", "findings", "scheduler_for", "stop_reason"]

# Why a run stopped (``Run.drive``'s answer): the scheduler had nothing to choose, a monitor
# fired, every request was served (protocols whose tokens circulate forever), or the step budget.
END, FIRED, SERVED, BUDGET = "end", "fired", "served", "budget"


def build(scenario: Scenario, variant: str | None = None) -> Simulator:
    """A simulator at step 0 of ``scenario`` (``variant`` overrides the file's); the scenario's
    typed fields are checked first, so every caller gets the same errors."""
    proto = registry.get(scenario.protocol)
    v = variant or scenario.variant or proto.default_variant
    if v not in proto.variants:
        raise ScenarioError(f"variant {v!r} is not one of {proto.id}'s variants: "
                            f"{', '.join(proto.variants)}")
    check_fields(scenario)
    try:
        return Simulator(proto, scenario, v)
    except (SimError, KeyError) as exc:
        raise ScenarioError(f"scenario {scenario.id}: {exc}") from None


def scheduler_for(scenario: Scenario, variant: str, kind: str | None = None,
                  seed: int | None = None, schedule: Sequence[str] | None = None) -> Scheduler:
    """The scheduler a run uses: ``kind`` / ``seed`` override the scenario's; ``schedule``
    (default: the scenario's for ``variant``) is what ``scripted`` follows, and when it ends the
    scenario's ``then`` takes over ("oldest" if the schedule is empty and ``then`` is null)."""
    spec = scenario.scheduler
    k = kind or spec.kind
    s = spec.seed if seed is None else seed
    ids = list(scenario.schedule_for(variant) if schedule is None else schedule)
    then = spec.then if k == "scripted" else None
    if k == "scripted" and then is None and not ids:
        then = "oldest"
    return make_scheduler(k, s, ids, then, scenario.faults.rate)


def stop_reason(sim: Simulator, findings_before: int) -> str | None:
    """After a step: why a run stops here (FIRED, SERVED), or None to go on."""
    if len(sim.monitors.findings) > findings_before:
        return FIRED
    proto = sim.protocol
    if proto.quiescent_ok(sim) and proto.served_all(sim):
        return SERVED
    return None


def drive(sim: Simulator, sched: Scheduler, max_steps: int,
          on_step: Callable[[Simulator, "StepInfo"], Any] | None = None,
          stop_rules: bool = True) -> str:
    """Step until nothing is chosen (END), a monitor fires (FIRED), everyone is served where
    tokens circulate forever (SERVED), or ``max_steps`` is reached (BUDGET); returns which.
    ``on_step(sim, info)`` is called after every step. ``stop_rules=False`` keeps only END and
    BUDGET, for measurements that must see a run to its end whatever the monitors say."""
    mon = sim.monitors
    while sim.step_no < max_steps:
        eid = sched.choose(sim)
        if eid is None:
            return END
        before = len(mon.findings)
        ev = sim.event(eid) if on_step is not None else None
        first = sim.next_seq
        sim.step(eid)
        if on_step is not None:
            on_step(sim, StepInfo(ev, first))
        why = stop_reason(sim, before) if stop_rules else None
        if why is not None:
            return why
    return BUDGET


def findings(sim: Simulator) -> dict[str, Any]:
    """The monitors' findings as of the current step, in the shape both ``run --json`` and the
    websocket frames carry: ``violations`` (list), ``deadlock`` and ``livelock`` (null or the
    first one)."""
    mon = sim.monitors
    dl = mon.first("deadlock")
    ll = mon.first("livelock")
    return {
        "violations": [{"step": f.step, "text": f.text} for f in mon.violations()],
        "deadlock": {"step": dl.step, "cycle": dl.cycle, "text": dl.text} if dl else None,
        "livelock": {"step": ll.step, "period": ll.period, "text": ll.text} if ll else None,
    }


@dataclass(frozen=True)
class StepInfo:
    """What one step of a run did, for ``on_step`` hooks: the event, and the numbers of the
    messages it sent (``range(first_seq, sim.next_seq)``)."""

    event: Event
    first_seq: int


class Run:
    """One scenario run: ``drive()`` steps until a stop rule holds; ``report()`` is the JSON of
    ``allocscope run``."""

    def __init__(self, scenario: Scenario, variant: str | None = None,
                 scheduler: str | None = None, seed: int | None = None,
                 steps: int | None = None) -> None:
        self.scenario = scenario
        self.sim = build(scenario, variant)
        self.sched = scheduler_for(scenario, self.sim.variant, scheduler, seed)
        self.steps = steps if steps is not None else scenario.steps
        self.stopped: str | None = None

    def drive(self, on_step: Callable[[Simulator, StepInfo], Any] | None = None) -> str:
        """Step until a stop rule holds (see ``drive``); returns which."""
        self.stopped = drive(self.sim, self.sched, self.steps, on_step)
        return self.stopped

    def report(self) -> dict[str, Any]:
        from .runner import report
        return report(self.sim, self.scenario)
