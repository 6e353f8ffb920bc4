"""What one event changes, for the viewer's step diff and event previews (issue 17).

The effect is computed on a scratch simulator restored to the state before the event, so the
session's own simulator, timeline and monitors are never touched: previewing an event the user
has not chosen yet cannot change the run. Variables are compared as the inspector shows them
(``protocol.describe``), flattened to dotted names, so a change reads "R1.queue: [] → [C2]".
"""

from __future__ import annotations

from typing import Any

from protocols.kernel import SimError, Simulator

from .session import Session, SessionError

MAX_CHANGES = 60      # rows per effect (a 200-node step rarely touches more than a few)


def _flat(value: Any, prefix: str, out: dict[str, Any]) -> dict[str, Any]:
    """Nested records as dotted names ("req.phase"), as the inspector's rows are named."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k != "@":
                _flat(v, f"{prefix}.{k}" if prefix else str(k), out)
    else:
        out[prefix] = value
    return out


def _scratch(sim: Simulator) -> Simulator:
    """A simulator of the same run (protocol, scenario, variant, channels, faults), no snapshots."""
    return Simulator(sim.protocol, sim.scenario, sim.variant, channels=sim.channels,
                     faults=sim.faults, snapshot_every=1 << 30)


def effect_of(sim: Simulator, before: Any, event_id: str) -> dict[str, Any]:
    """The changes ``event_id`` makes to the global state ``before`` of this run."""
    scratch = _scratch(sim)
    scratch.restore(before)
    old = {p: _flat(scratch.protocol.describe(scratch.config, p, scratch.proc(p)), "", {})
           for p in scratch.pids}
    msgs = {m.id: m for m in scratch.inflight.values()}
    cs, crashed = dict(scratch.cs), set(scratch.crashed)
    narration = scratch.step(event_id)
    changes: list[dict[str, Any]] = []
    for p in scratch.pids:
        new = _flat(scratch.protocol.describe(scratch.config, p, scratch.proc(p)), "", {})
        for name in sorted(set(old[p]) | set(new)):
            a, b = old[p].get(name), new.get(name)
            if a != b:
                changes.append({"proc": p, "name": name, "before": a, "after": b})
    now = {m.id: m for m in scratch.inflight.values()}
    said = lambda m: {"id": m.id, "type": m.kind, "src": m.src, "dst": m.dst}   # noqa: E731
    return {
        "event": event_id,
        "changes": changes[:MAX_CHANGES], "more": max(0, len(changes) - MAX_CHANGES),
        "sent": [said(m) for i, m in now.items() if i not in msgs],
        "consumed": [said(m) for i, m in msgs.items() if i not in now],
        "entered_cs": sorted(p for p in scratch.cs if p not in cs),
        "left_cs": sorted(p for p in cs if p not in scratch.cs),
        "crashed": sorted(p for p in scratch.crashed if p not in crashed),
        "narration": [n.as_dict() for n in narration],
    }


def effect_frame(session: Session, reply_to: Any, event_id: str | None) -> dict[str, Any]:
    """`{"op": "effect", "event": id}`: what that enabled event would change now (a preview);
    without an event: what the last step changed (the step diff)."""
    sim = session.sim
    k = sim.step_no
    try:
        if event_id is None:
            if k == 0:
                return {"type": "effect", "reply_to": reply_to, "step": 0, "of": "last",
                        "event": None, "changes": [], "sent": [], "consumed": [],
                        "entered_cs": [], "left_cs": [], "crashed": [], "narration": [],
                        "more": 0}
            out = effect_of(sim, sim.state_at(k - 1), sim.trace[k - 1])
            of = "last"
        else:
            out = effect_of(sim, sim.state(), event_id)
            of = "next"
    except SimError as exc:
        raise SessionError(str(exc)) from None
    return {"type": "effect", "reply_to": reply_to, "step": k, "of": of, **out}
