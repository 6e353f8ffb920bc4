"""The typed shape of a datta_ring scenario's params / topology / workload (``scenario_model``):
which keys exist, their types and what they mean. build.py checks what depends on them (ids
on the ring, requests naming its resources) with errors naming the field."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..scenario import Empty, Section
from ..scenario import Fields as ScenarioFields


class Topology(Section):
    ring: list[str] | int = Field(["R1", "R2"], description="the resources in ring order, or "
                                  "how many (R1..Rn, 2 to 64)")
    root: str | None = Field(None, description="the root resource (default: the first)")
    token: bool = Field(True, description="whether the token starts at the root")


class Client(Section):
    id: str = Field(description="the client's id")
    requests: list[list[str]] = Field(description="its requests in order: [strong] or "
                                      "[strong, weak] resource ids")
    leaves: Literal["message", "silent"] | None = Field(
        None, description="Section IV: the client departs while waiting, by a message or "
        "silently")


class Generate(Section):
    clients: int = Field(4, description="how many clients (1..500)")
    requests: int = Field(1, description="requests per client (1..1000)")
    two: float = Field(0.5, description="probability that a request wants two resources")
    seed: int = Field(0, description="seeds the draws")


class Workload(Section):
    clients: list[Client] | None = Field(None, description="the clients and their requests")
    generate: Generate | None = Field(None, description="or: random clients")


class Fields(ScenarioFields):
    params: Empty = Field(default_factory=Empty)
    topology: Topology = Field(default_factory=Topology)
    workload: Workload = Field(default_factory=Workload)

