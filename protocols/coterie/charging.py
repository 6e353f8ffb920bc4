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
        ev = info.event
        for seq in range(info.first_seq, sim.next_seq):
            m = sim.inflight.get(seq)
            if m is None:
                continue
            if m.kind == "QUERY":
                req = (m.src, m.body)
            elif m.kind in ("LOCK", "UNLOCK"):
                req = (m.src, sim.proc(m.src).req.ts)
            elif m.kind == "RESPONSE":
                req = (m.dst, sim.proc(m.src).mem.T)
            elif m.kind == "PREEMPT":
                req = (ev.msg.src, ev.msg.body)
                cause[(m.src, m.dst)] = req
            else:  # RETURN
                req = cause[(m.dst, m.src)]
            c = charges.setdefault(req, {})
            c[m.kind] = c.get(m.kind, 0) + 1

    run.drive(charge)     # stops where `allocscope run` stops (a monitor firing, the budget)
    sim = run.sim
    return charges, sim
