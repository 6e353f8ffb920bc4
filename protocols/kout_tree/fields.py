"""The typed shape of a kout_tree scenario's params / topology / workload (``scenario_model``);
config.py checks what depends on them (ℓ ≥ k, processes of the tree, tokens on its edges)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from ..scenario import Fields as ScenarioFields
from ..scenario import Section


class Chaos(Section):
    seed: int = Field(description="seeds the arbitrary initial configuration (≥ 0)")


class Params(Section):
    ell: int = Field(3, description="ℓ: how many resource tokens (1..1000)")
    k: int = Field(1, description="k: at most this many per request (1..ℓ)")
    c_max: int = Field(1, description="C_MAX of the controller's counter (0..8)")
    timeout: int | None = Field(None, description="the root's timer (default 4 (n - 1))")
    congestion: int | None = Field(
        None, description="exhaustive search only: TimeOut is explored while fewer than this "
        "many ctrl messages are in flight (footnote 4's timeout that prevents congestion); "
        "default: always")
    tokens: list[list[str]] | None = Field(
        None, description="a clean start's tokens in flight: [src, dst, kind] in FIFO order")
    chaos: Chaos | None = Field(None, description="start from an arbitrary configuration "
                                "(self-stabilization) instead of a clean one")


class RandomTree(Section):
    n: int = Field(15, description="how many processes (2..200)")
    seed: int = Field(0, description="seeds the tree")


class Topology(Section):
    root: str | None = Field(None, description="the root's name (default r)")
    children: dict[str, list[str]] | None = Field(
        None, description="each process's children, in channel order")
    random: RandomTree | None = Field(None, description="or: a random tree")


class RandomWorkload(Section):
    requests: int = Field(2, description="requests per process (0..10000)")
    seed: int = Field(0, description="seeds the Need values")


class ProcessWork(Section):
    needs: list[int] = Field(description="the Need value of each request, in order")
    repeat: bool = Field(False, description="start over after the last request")
    target: int | None = Field(None, description="how many requests make it served")


class Workload(Section):
    """Per process id: a list of Need values or {needs, repeat, target}; or ``random``."""

    model_config = ConfigDict(extra="allow", frozen=True)
    __pydantic_extra__: dict[str, list[int] | ProcessWork]
    random: RandomWorkload | None = Field(None, description="every process draws its requests")


class Fields(ScenarioFields):
    params: Params = Field(default_factory=Params)
    topology: Topology = Field(default_factory=Topology)
    workload: Workload = Field(default_factory=Workload)
