"""``TaskGame``: the kernel plug-in for Winkowski's game of tasks for access to resources.

Processes, in this order: the agents (one per node), the resource managers (one per pool, named
by the pool), the tasks (fixed by the workload; a task is NEW until its agent creates it). Tasks
and agents are kernel processes, so the kernel's ``crash`` fault (``f:crash:T2``) stops a task
(or an agent) at any phase: "a task that stops" is exactly the failure of the paper.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from ..kernel import Action, Guard, Protocol, Setup
from . import agents as agent_rows
from . import tasks as task_rows
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
from .managers import ManagerActions
from .tasks import TaskActions

PAPER = "001_e4be97f34f907dd5.txt"


class TaskGame(AgentActions, ManagerActions, TaskActions, Protocol):
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

    # ---- behaviour ------------------------------------------------------------------------
    def _rows(self, cfg: Config, pid: str, state: Any) -> list[task_rows.Row]:
        if isinstance(state, AgentState):
            return agent_rows.rows(cfg, pid, state)
        if isinstance(state, TaskState):
            return task_rows.rows(cfg, pid, state)
        return []

    def actions(self, config: Config, pid: str, state: Any) -> list[Action]:
        out = []
        for r in self._rows(config, pid, state):
            if r.holds and not self._eager(r.name):
                # Creating a task cannot help anyone waiting; everything else can.
                out.append(Action(r.kind, r.name, f"{pid}: {r.label}",
                                  progress=not r.name.startswith("create:"),
                                  algorithm=r.ref, lines=(r.page,)))
        return out

    def guards(self, config: Config, pid: str, state: Any) -> list[Guard]:
        if isinstance(state, ManagerState):
            return [Guard("receive forms", True, "Sec. 3", (15, 17),
                          "managers only react to forms")]
        return [Guard(r.name, r.holds, r.ref, (r.page,), r.waiting_for)
                for r in self._rows(config, pid, state)]

    # ---- eager status changes ----------------------------------------------------------------
    # Section 3 says of the status changes REGISTERING -> ADMITTED, ADMITTED -> TRYING,
    # ORDERING -> WINNING and WINNING -> ACCESSING that each "is executed when T reaches a local
    # state" satisfying its guard, and of giving / taking a ticket that it "is a reaction to
    # reaching by T a state" (pp. 15, 18-20): they are immediate, not delayed. We apply them (and
    # our exit from ADVANCING) at the end of the step that makes their guard true instead of as
    # separate scheduler choices; this also keeps the state space small enough to search.
    EAGER = ("admitted", "try", "won", "access", "advanced")
    EAGER_AGENT = ("give", "take")

    def _eager(self, name: str) -> bool:
        return name in self.EAGER or name.split(":", 1)[0] in self.EAGER_AGENT

    def eager(self, config: Config, pid: str, state: Any) -> str | None:
        """The enabled eager action of ``pid``, if any: the kernel applies it at the end of the
        step that enabled it (see ``Protocol.eager``)."""
        return next((r.name for r in self._rows(config, pid, state)
                     if r.holds and self._eager(r.name)), None)

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


__all__ = ["TaskGame", "NEW", "REGISTERING", "WINNING"]
