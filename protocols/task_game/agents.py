"""The actions of an agent A (Section 3, "Actions of agents", pages 14-15): advance of local
time, creation of a task, giving and taking a numbered ticket.

The agent runs on the same computer as its tasks and "can access and change the local state of
each task in Controlled_A" (p. 11): its actions write its tasks' states directly.
"""

from __future__ import annotations

from dataclasses import replace

from ..kernel import ENV, LOCAL, Ctx
from ..kernel.rules import rule
from .data import REGISTERING, About, AgentState, Config, TaskState

REF = "Sec. 3"


def free_ticket(cfg: Config, agent: str, ag: AgentState) -> int:
    """The lowest ticket nK + i of A not at the disposal of a task (resolved: the paper lets A
    give any ticket it has; reusing the lowest keeps the numbers, and the state space, bounded)."""
    i = cfg.agent_no(agent)
    n = 0
    while n * cfg.K + i in ag.distributed_tickets:
        n += 1
    return n * cfg.K + i


def _pending(cfg: Config, a: str, ag: AgentState) -> bool:
    """Some task of A waits for its alarm-clock: A's clock advances only then."""
    return any(m > ag.clock for _, m in ag.alarms)


class AgentActions:
    """Mixin: the rules of an agent (role ``agent``), in the paper's order."""

    # Advance of local time (p. 14); the tasks of A read the new value.
    @rule(ENV, name="tick", title="advance of local time", algorithm=REF, lines=(14,),
          role="agent", when=_pending, waits="a task waiting for its alarm-clock",
          label=lambda cfg, a, ag: f"{a}: advance {a}'s clock to {ag.clock + 1}")
    def do_tick(self, ctx: Ctx, a: str, _arg: str) -> None:
        ag = ctx.get(a)
        ag = replace(ag, clock=ag.clock + 1)
        ctx.put(a, ag)
        for t in ag.controlled:
            if t not in ctx.sim.crashed:
                ctx.put(t, replace(ctx.get(t), clock=ag.clock))
        ctx.say(f"{a}'s clock advances to {ag.clock}", a, REF, (14,))

    # Creation of a task T (p. 14): the next potential task of the workload.
    @rule(ENV, name="create", title="create a task", algorithm=REF, lines=(14,), role="agent",
          progress=False, args=lambda cfg, a, ag: ag.to_create[:1],
          label=lambda cfg, a, ag, t: f"{a}: create task {t}", waits="nothing: every task of its workload is created")
    def do_create(self, ctx: Ctx, a: str, t: str) -> None:
        cfg = ctx.config
        ag = ctx.get(a)
        ctx.put(a, replace(ag, to_create=ag.to_create[1:], controlled=ag.controlled + (t,),
                           entering=ag.entering + (t,)))
        n = len(cfg.tasks[t].interest)
        ctx.put(t, TaskState(status=REGISTERING, destinations=cfg.tasks[t].interest,
                             about=tuple(About() for _ in range(n)),
                             blocking=tuple(() for _ in range(n)), clock=ag.clock,
                             sent=(0,) * n))
        ctx.request(t)
        ctx.say(f"{a} creates {t} with interest {', '.join(cfg.tasks[t].interest)}: "
                "REGISTERING", a, REF, (14,))

    # Giving a numbered ticket N to a task T (p. 15), in reaction to T being ADMITTED.
    @rule(LOCAL, name="give", title="give a ticket", algorithm=REF, lines=(15,), role="agent",
          eager=True, args=lambda cfg, a, ag: ag.admitted, waits="an ADMITTED task",
          label=lambda cfg, a, ag, t: f"{a}: give ticket {free_ticket(cfg, a, ag)} to {t}")
    def do_give(self, ctx: Ctx, a: str, t: str) -> None:
        ag = ctx.get(a)
        n = free_ticket(ctx.config, a, ag)
        ctx.put(a, replace(ag, admitted=tuple(x for x in ag.admitted if x != t),
                           entering=tuple(x for x in ag.entering if x != t),
                           competing=ag.competing + (t,),
                           distributed_tickets=tuple(sorted(ag.distributed_tickets + (n,)))))
        ctx.put(t, replace(ctx.get(t), tickets_at=(n,)))
        ctx.say(f"{a} gives ticket {n} to {t}", a, REF, (15,))

    # Taking a numbered ticket N from a task T (p. 15), in reaction to T ACCESSING.
    @rule(LOCAL, name="take", title="take a ticket back", algorithm=REF, lines=(15,),
          role="agent", eager=True, args=lambda cfg, a, ag: ag.accessing,
          waits="an ACCESSING task", label=lambda cfg, a, ag, t: f"{a}: take back {t}'s ticket")
    def do_take(self, ctx: Ctx, a: str, t: str) -> None:
        ag = ctx.get(a)
        s = ctx.get(t)
        n = s.tickets_at[0] if s.tickets_at else None
        ctx.put(a, replace(ag, accessing=tuple(x for x in ag.accessing if x != t),
                           distributed_tickets=tuple(x for x in ag.distributed_tickets if x != n)))
        ctx.put(t, replace(s, tickets_at=()))
        ctx.say(f"{a} takes ticket {n} back from {t}", a, REF, (15,))


__all__ = ["AgentActions", "free_ticket"]
