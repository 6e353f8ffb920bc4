"""The typed shape of a task_game scenario's params / topology / workload (``scenario_model``);
data.py checks what depends on them (agents that exist, pools of interest) naming the field."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..scenario import Fields as ScenarioFields
from ..scenario import Section


class Params(Section):
    gamma: int = Field(2, description="Γ: the alarm-clock's delay (Section 3)")


class Topology(Section):
    agents: list[str] = Field(default_factory=list, description="the network nodes (agents)")
    pools: dict[str, Any] = Field(default_factory=dict,
                                  description="each pool: {agent, units} (its manager and size)")


class Workload(Section):
    tasks: list[dict[str, Any]] = Field(
        default_factory=list, description="the potential tasks: {id, agent, interest: [pools]}")


class Fields(ScenarioFields):
    params: Params = Field(default_factory=Params)
    topology: Topology = Field(default_factory=Topology)
    workload: Workload = Field(default_factory=Workload)
