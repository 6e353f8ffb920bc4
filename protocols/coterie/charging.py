"""Message complexity per request (Section 6).

Charging (Section 6 counts per request, so every message is charged to exactly one request,
identified by (process, QUERY stamp)):
- QUERY, LOCK, UNLOCK: the sender's request;
- RESPONSE: the request it answers, i.e. its receiver's (grant, re-grant after a RETURN, or a
  Case 7 update) — the member's T_v when it sends;
- PREEMPT: the preempting request (whose QUERY made the member send it);
- RETURN: the same preempting request as the PREEMPT it answers.
The paper also charges to u the RESPONSE a member sends w_i after u's UNLOCK; we charge that
one to w_i, its receiver (whose own count it is part of), so u's count here lacks that one
message per member compared with the paper's worst-case sum.
"""

from __future__ import annotations

from typing import Any

from ..kernel import Simulator
from ..service import Run, StepInfo


def charged_run(sc: Any, variant: str = "full", kind: str | None = None,
                seed: int | None = None) -> tuple[dict, Any]:
    """Run ``sc`` and charge every message to a request: {(pid, stamp): {kind: count}}."""
    run = Run(sc, variant, kind, seed)
    charges: dict[tuple, dict[str, int]] = {}
    cause: dict[tuple[str, str], tuple] = {}      # (member, preempted) -> preempting request

    def charge(sim: Simulator, info: StepInfo) -> None:
        for seq in range(info.first_seq, sim.next_seq):
            m = sim.inflight.get(seq)
            if m is None:
                continue
            c = charges.setdefault(charged_to(sim, info.event, m, cause), {})
            c[m.kind] = c.get(m.kind, 0) + 1

    run.drive(charge)     # stops where `allocscope run` stops (a monitor firing, the budget)
    sim = run.sim
    return charges, sim


def charged_to(sim: Simulator, ev: Any, m: Any, cause: dict[tuple[str, str], tuple]) -> tuple:
    """The request (process, QUERY stamp) that message ``m``, just sent by event ``ev``, is
    charged to; ``cause`` remembers each PREEMPT's preempting request for its RETURN."""
    if m.kind == "QUERY":
        return (m.src, m.body)
    if m.kind in ("LOCK", "UNLOCK"):
        return (m.src, sim.proc(m.src).req.ts)
    if m.kind == "RESPONSE":
        return (m.dst, sim.proc(m.src).mem.T)
    if m.kind == "PREEMPT":
        req = (ev.msg.src, ev.msg.body)
        cause[(m.src, m.dst)] = req
        return req
    return cause[(m.dst, m.src)]          # RETURN
