"""The deadlock monitor's wait-for cycle (``monitors.first_cycle``) is the cycle networkx's
``find_cycle`` reports, node for node: findings, their text and the golden counterexamples
name it. It is worked out without networkx because the first ``find_cycle`` call of a process
compiles networkx's dispatch wrappers, which cost a cold ``check`` more than the search of
a small instance's last states."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from protocols.kernel.monitors import first_cycle


def _nx_cycle(g: nx.DiGraph) -> list:
    try:
        return [u for u, _v, *_ in nx.find_cycle(g)]
    except nx.NetworkXNoCycle:
        return []


def _graphs() -> list[nx.DiGraph]:
    """Small digraphs of every shape a wait-for graph takes, and random ones (seeded)."""
    out = [nx.DiGraph(), nx.DiGraph([("a", "a")]), nx.DiGraph([("a", "b"), ("b", "a")]),
           nx.DiGraph([("C1", "C2"), ("C2", "C3"), ("C3", "C2")]),
           nx.DiGraph([("x", "y"), ("y", "z")])]
    g = nx.DiGraph()
    g.add_nodes_from(["lonely", "p", "q"])
    g.add_edges_from([("q", "p"), ("p", "q")])
    out.append(g)
    rng = random.Random(15)
    for n in range(2, 9):
        for _ in range(60):
            g = nx.DiGraph()
            nodes = [f"P{k}" for k in rng.sample(range(12), n)]
            g.add_nodes_from(nodes)
            for _e in range(rng.randrange(0, 2 * n)):
                g.add_edge(rng.choice(nodes), rng.choice(nodes))
            out.append(g)
    return out


@pytest.mark.parametrize("k", range(len(_graphs())))
def test_first_cycle_is_networkx_find_cycle(k: int) -> None:
    g = _graphs()[k]
    assert first_cycle(g) == _nx_cycle(g)


def test_a_graph_that_is_not_a_plain_digraph_still_goes_to_networkx() -> None:
    g = nx.MultiDiGraph([("a", "b"), ("b", "a"), ("b", "a")])
    assert first_cycle(g) == _nx_cycle(g) == ["a", "b"]
    assert first_cycle(nx.MultiDiGraph([("a", "b")])) == []
