"""Sharing structures (U, R, α) of Kakugawa & Yamashita, Section 2, as bipartite networkx graphs.

A process u may use exactly the resources α(u) ⊆ R; the paper assumes α(u) ≠ ∅. The graph has
one node per process (``part="U"``) and per resource (``part="R"``) and an edge (u, r) iff
r ∈ α(u): it is the graph ``MakeBipartiteGraph`` builds in Algorithm LocalCoterie.

A scenario gives the structure in ``topology`` in one of four shapes:

- explicit: ``{"processes": [...], "resources": [...], "alpha": {"a": ["x"], ...}}``;
- ``{"kind": "chain", "n": 4}``: the paper's Section 3 example α(u_i) = {r_i, r_{i+1}};
- ``{"kind": "shared", "n": 3, "m": 1}``: everybody may use every resource (|R| = 1 is the
  classical coterie case);
- ``{"kind": "random", "n": 5, "m": 4, "degree": 2, "seed": 1}``: each process draws 1..degree
  resources from a generator seeded by the scenario.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import networkx as nx

from ..scenario import ScenarioError

MAX_PROCESSES = 64
MAX_RESOURCES = 64


@dataclass(frozen=True)
class SharingStructure:
    """(U, R, α) with U and R in display order and α(u) as a sorted tuple."""

    U: tuple[str, ...]
    R: tuple[str, ...]
    alpha: dict[str, tuple[str, ...]]

    def graph(self) -> nx.Graph:
        """The bipartite graph of MakeBipartiteGraph(U, R, α)."""
        g = nx.Graph()
        g.add_nodes_from(self.U, part="U")
        g.add_nodes_from(self.R, part="R")
        for u in self.U:
            g.add_edges_from((u, r) for r in self.alpha[u])
        return g

    def N(self, r: str) -> tuple[str, ...]:
        """AllAdjacentNodes(r, G): the processes that may use r, in U's order."""
        return tuple(u for u in self.U if r in self.alpha[u])

    def share(self, u: str, v: str) -> bool:
        """α(u) ∩ α(v) ≠ ∅."""
        return bool(set(self.alpha[u]) & set(self.alpha[v]))

    def shared(self, u: str, v: str) -> tuple[str, ...]:
        return tuple(r for r in self.alpha[u] if r in self.alpha[v])


def _names(value: Any, field: str, limit: int) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or len(value) > limit:
        raise ScenarioError(f"{field}: must be a list of 1 to {limit} names")
    for x in value:
        if not isinstance(x, str) or not 1 <= len(x) <= 20 or not x.replace("_", "").isalnum():
            raise ScenarioError(f"{field}: {x!r} is not a short alphanumeric name")
    if len(set(value)) != len(value):
        raise ScenarioError(f"{field}: names must be unique")
    return tuple(value)


def _int(value: Any, field: str, lo: int, hi: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ScenarioError(f"{field}: must be a whole number from {lo} to {hi}")
    return value


def from_topology(topo: dict[str, Any]) -> SharingStructure:
    """Build and check the sharing structure a scenario's ``topology`` describes."""
    kind = topo.get("kind", "explicit")
    if not isinstance(kind, str):
        raise ScenarioError("scenario.topology.kind: must be one of explicit, chain, shared, random")
    if kind == "explicit":
        U = _names(topo.get("processes"), "scenario.topology.processes", MAX_PROCESSES)
        R = _names(topo.get("resources"), "scenario.topology.resources", MAX_RESOURCES)
        if set(U) & set(R):
            raise ScenarioError("scenario.topology.resources: a resource may not share a "
                                "process's name")
        raw = topo.get("alpha")
        if not isinstance(raw, dict):
            raise ScenarioError("scenario.topology.alpha: must map each process to its resources")
        alpha = {}
        for u in U:
            rs = raw.get(u)
            if not isinstance(rs, list) or not rs:
                raise ScenarioError(f"scenario.topology.alpha.{u}: must be a non-empty list of "
                                    "resources (the paper assumes α(u) ≠ ∅)")
            for r in rs:
                if not isinstance(r, str) or r not in R:
                    raise ScenarioError(f"scenario.topology.alpha.{u}: unknown resource {r!r}")
            alpha[u] = tuple(r for r in R if r in rs)
        for u in raw:
            if u not in U:
                raise ScenarioError(f"scenario.topology.alpha: unknown process {u!r}")
        return SharingStructure(U, R, alpha)
    if kind == "chain":
        n = _int(topo.get("n", 4), "scenario.topology.n", 1, MAX_PROCESSES - 1)
        U = tuple(f"u{i}" for i in range(1, n + 1))
        R = tuple(f"r{i}" for i in range(1, n + 2))
        return SharingStructure(U, R, {f"u{i}": (f"r{i}", f"r{i + 1}") for i in range(1, n + 1)})
    if kind == "shared":
        n = _int(topo.get("n", 3), "scenario.topology.n", 1, MAX_PROCESSES)
        m = _int(topo.get("m", 1), "scenario.topology.m", 1, MAX_RESOURCES)
        U = tuple(f"u{i}" for i in range(1, n + 1))
        R = tuple(f"r{i}" for i in range(1, m + 1))
        return SharingStructure(U, R, {u: R for u in U})
    if kind == "random":
        n = _int(topo.get("n", 5), "scenario.topology.n", 1, MAX_PROCESSES)
        m = _int(topo.get("m", 4), "scenario.topology.m", 1, MAX_RESOURCES)
        d = _int(topo.get("degree", 2), "scenario.topology.degree", 1, m)
        seed = _int(topo.get("seed", 0), "scenario.topology.seed", 0, 2**63 - 1)
        return random_structure(n, m, d, seed)
    raise ScenarioError(f"scenario.topology.kind: {kind!r} is not one of explicit, chain, "
                        "shared, random")


def random_structure(n: int, m: int, degree: int, seed: int) -> SharingStructure:
    """Each of n processes draws 1..degree of m resources, from its own seeded generator."""
    rng = random.Random(seed)
    U = tuple(f"u{i}" for i in range(1, n + 1))
    R = tuple(f"r{i}" for i in range(1, m + 1))
    alpha = {}
    for u in U:
        picked = set(rng.sample(R, rng.randint(1, degree)))
        alpha[u] = tuple(r for r in R if r in picked)
    return SharingStructure(U, R, alpha)
