"""Replays an erratum entry's counterexample under the printed variant and the repair."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from protocols import runner
from protocols.scenario import gallery

from .model import Replay, Run


@dataclass(frozen=True)
class Result:
    variant: str
    outcome: str
    trace: list[str]
    followed: int            # events of the given schedule applied before it diverged
    claims: list[tuple[str, bool]]

    def link(self, scenario: str) -> str:
        ids = ",".join(quote(e, safe="") for e in self.trace)
        return f"/sim/{scenario}?variant={quote(self.variant)}&schedule={ids}&step={len(self.trace)}"

    def as_dict(self, scenario: str) -> dict[str, Any]:
        return {"variant": self.variant, "outcome": self.outcome, "steps": len(self.trace),
                "followed": self.followed, "claims": self.claims, "link": self.link(scenario)}


def schedule_of(r: Replay, variant: str | None = None) -> list[str]:
    """The events ``variant`` (default: the printed one) follows: the replay's schedule, or the
    scenario's recorded one for ``variant`` when its side says ``recorded``."""
    own = next((s for s in (r.printed, r.repair) if s.variant == variant and s.recorded), None)
    if own is not None:
        out = gallery()[r.scenario].schedule_for(own.variant)
    elif r.schedule is not None:
        out = list(r.schedule)
    else:
        out = gallery()[r.scenario].schedule_for(r.printed.variant)
    return out[:r.step] if r.step is not None else out


def _simulate(r: Replay, variant: str) -> tuple[Any, int]:
    """The simulator after the replay under ``variant``, and how many schedule events it took."""
    sc = gallery()[r.scenario]
    sim = runner.build(sc, variant)
    followed = 0
    findings = 0
    for eid in schedule_of(r, variant):
        if eid not in sim.enabled_ids() and not eid.startswith("f:"):
            break
        sim.step(eid)
        followed += 1
        if len(sim.monitors.findings) > findings:
            break
    if not sim.monitors.findings:
        kind = (sc.scheduler.then or "oldest") if sc.scheduler.kind == "scripted" else None
        sched = runner.scheduler_for(sc, sim.variant, kind)
        runner.drive(sim, sched, sc.steps if r.step is None else r.step)
    return sim, followed


def run_side(r: Replay, side: Run) -> Result:
    """The schedule under ``side.variant``: followed while its events are enabled, then the
    scenario's own scheduler, to the scenario's step budget or the first monitor finding. With
    ``r.step`` the run stops at that step and is judged there."""
    from protocols.lessons.evaluate import Facts, holds
    from protocols.lessons.predicates import parse
    sim, followed = _simulate(r, side.variant)
    res = runner.report(sim, gallery()[r.scenario])
    facts = Facts(sim)
    claims = [(c, holds(parse(c), facts)) for c in side.claims]
    return Result(side.variant, res["outcome"], list(sim.trace), followed, claims)


def applicable_prefix(r: Replay, variant: str) -> list[str]:
    """The longest prefix of the replay's schedule that ``variant`` can apply (for a link)."""
    sc = gallery()[r.scenario]
    sim = runner.build(sc, variant)
    out: list[str] = []
    for eid in schedule_of(r, variant):
        if eid not in sim.enabled_ids() and not eid.startswith("f:"):
            break
        sim.step(eid)
        out.append(eid)
    return out


def viewer_link(r: Replay, variant: str) -> str:
    """One click: the viewer at the end of the applicable schedule (with ``step``: at the moment
    the entry is judged); play goes on from there with the scenario's own scheduler."""
    prefix = applicable_prefix(r, variant) if r.step is None else list(_simulate(r, variant)[0].trace)
    base = f"/sim/{r.scenario}?variant={quote(variant)}"
    if not prefix:
        return base
    ids = ",".join(quote(e, safe="") for e in prefix)
    return f"{base}&schedule={ids}&step={len(prefix)}"
