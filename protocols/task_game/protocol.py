"""``TaskGame``: the kernel plug-in for Winkowski's game of tasks for access to resources.

Processes, in this order: the agents (one per node), the resource managers (one per pool, named
by the pool), the tasks (fixed by the workload; a task is NEW until its agent creates it). Tasks
and agents are kernel processes, so the kernel's ``crash`` fault (``f:crash:T2``) stops a task
(or an agent) at any phase: "a task that stops" is exactly the failure of the paper.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from ..kernel import Setup
from ..kernel.rules import RuleProtocol
from .agents import AgentActions
from .data import (
    LEFT,
    NEW,
    REGISTERING,
    VARIANT_TABLE,
    WINNING,
    AgentState,
    Config,
    ManagerState,
    TaskState,
    build_config,
)
from .fields import Fields
from .forget import forget as relative_clocks
from .managers import ManagerActions
from .tasks import TaskActions

PAPER = "001_e4be97f34f907dd5.txt"


class TaskGame(TaskActions, ManagerActions, AgentActions, RuleProtocol):
    """The game of tasks; variants ``restricted`` (Sec. 2, (p1)), ``complete`` (Sec. 2-3 as
    printed, with order forms, (p2)/(p3), alarm-clock and advancing forms) and ``full`` (the
    complete variant with our repairs, docs/protocols/task_game.md)."""

    id = "task_game"
    title = "Game of tasks for access to resources (Winkowski)"
    version = "1"
    variant_table = VARIANT_TABLE
    scenario_model = Fields
    channels = "fifo"
    view_kind = "game"
    # A fixed glyph, colour and short label per message type (distinct pairs; the label is
    # always drawn too, so colour never carries the meaning alone): read by the viewer.
    message_styles = {
        "Registration": ("square", "#0072B2", "Reg"),
        "Admission": ("triangle", "#0072B2", "Adm"),
        "Request": ("circle", "#0072B2", "Req"),
        "Order": ("diamond", "#E69F00", "Order"),
        "Advancing": ("vee", "#E69F00", "Adv"),
        "Winning": ("star", "#000000", "Win"),
        "Releasing": ("circle", "#5b6472", "Rel"),
        "Withdrawal": ("hexagon", "#5b6472", "Wdr"),
        "Info": ("hexagon", "#56B4E9", "Info"),
    }
    fault_kinds = ("drop", "duplicate", "crash")
    paper = PAPER

    # ---- building -------------------------------------------------------------------------
    def setup(self, scenario: Any, variant: str) -> Setup:
        cfg = build_config(scenario, variant)
        pids = cfg.agents + cfg.pools + cfg.task_order
        states: list[Any] = []
        for a in cfg.agents:
            mine = tuple(t for t in cfg.task_order if cfg.tasks[t].agent == a)
            states.append(AgentState(to_create=mine))
        states += [ManagerState() for _ in cfg.pools]
        states += [TaskState() for _ in cfg.task_order]
        cap: dict[str, int] = {}
        for p, us in cfg.units.items():
            cap[p] = len(us)
            for u in us:
                cap[u] = 1
        return Setup(pids, tuple(states), cfg, capacity=cap)

    # ---- the rules tables ----------------------------------------------------------------------
    # agents.py, managers.py and tasks.py declare every action of the paper once, as a rule; a
    # task's role is its status, so the inspector shows the actions of the status it is in.
    #
    # Section 3 says of the status changes REGISTERING -> ADMITTED, ADMITTED -> TRYING,
    # ORDERING -> WINNING and WINNING -> ACCESSING that each "is executed when T reaches a local
    # state" satisfying its guard, and of giving / taking a ticket that it "is a reaction to
    # reaching by T a state" (pp. 15, 18-20): they are immediate, not delayed. Their rules are
    # ``eager`` (as is our exit from ADVANCING): the kernel applies them at the end of the step
    # that makes their guard true instead of offering them as separate scheduler choices; this
    # also keeps the state space small enough to search.
    def features(self, config: Config) -> frozenset[str]:
        """The variant's named features (VARIANT_TABLE): the repairs R2 and R3 are rules that
        take the place of the printed ones (``feature=``/``over=``)."""
        on = VARIANT_TABLE.on(config.variant)
        return on - self.ablated if self.ablated else on

    def role(self, config: Config, pid: str, state: Any) -> str:
        """``agent``, ``manager``, or a task's status."""
        if isinstance(state, AgentState):
            return "agent"
        if isinstance(state, ManagerState):
            return "manager"
        return state.status

    def message_label(self, msg: Any) -> str:
        if msg.kind == "Info":
            return f"Info({msg.body[0]})"
        return msg.kind

    # ---- monitors -------------------------------------------------------------------------
    def wait_for(self, sim: Any) -> nx.DiGraph:
        """T -> U when T cannot progress because of U: U's request precedes T's at a pool where T
        is blocked, U uses a resource of a full pool T needs, or U is T's absolute predecessor."""
        from .view import wait_edges
        g = nx.DiGraph()
        g.add_edges_from(wait_edges(sim))
        return g

    def served_all(self, sim: Any) -> bool:
        """Every task was created and has left the game, except those that crashed."""
        cfg: Config = sim.config
        for t in cfg.task_order:
            if t in sim.crashed or cfg.tasks[t].agent in sim.crashed:
                continue
            if sim.proc(t).status != LEFT:
                return False
        return True

    def report(self, sim: Any) -> dict[str, Any]:
        from .locality import report
        return report(sim)

    def view(self, sim: Any) -> dict[str, Any]:
        from .view import view
        return view(sim)

    # ---- explorer reductions ------------------------------------------------------------------
    def forget(self, config: Config, pids: tuple[str, ...], procs: tuple, messages: tuple):
        """The explorer's key hook: clocks made relative to themselves (forget.py argues why no
        step can tell the difference), so a blocked task's alarm cycles close instead of growing."""
        return relative_clocks(config, pids, procs, messages)


__all__ = ["TaskGame", "NEW", "REGISTERING", "WINNING"]
