"""Issue 14 item 6: the explorer's livelock witness is itself a weakly fair loop."""

from __future__ import annotations

from protocols.explorer.engine import Graph
from protocols.explorer.livelock import Lasso, find, loop_nodes

A, B, C, D, E = range(5)     # label numbers


def _graph(edges: dict[int, list[tuple[int, int]]]) -> Graph:
    """Nodes 0..4; p waits everywhere but in node 4; edges (target, label), all demanded by
    weak fairness (code = label * 4 + 2), none entering a critical section."""
    g = Graph()
    for i in range(5):
        g.parent.append(0 if i else -1)
        g.via.append("")
        g.depth.append(0 if i == 0 else 1)
        g.waiting.append(frozenset() if i == 4 else frozenset({"p"}))
    for i, out in edges.items():
        g.succ[i] = [j for j, _lab in out]
        g.codes[i] = [lab * 4 + 2 for _j, lab in out]
    return g


def test_an_event_enabled_all_along_the_loop_is_taken_in_it():
    """S = {1, 2, 3}. C (p's own entry, leaving S) is enabled in 1 and 2 but not in 3, so S has a
    fair run (through 3), but the shortest loop 1 → 2 → 1 keeps C enabled and never takes it:
    the witness must pass through 3."""
    g = _graph({0: [(1, A)], 1: [(2, A), (3, D), (4, C)], 2: [(1, B), (4, C)], 3: [(1, E)],
                4: []})
    lasso = find(g, bypass=True)
    assert lasso is not None and lasso.scc == frozenset({1, 2, 3}) and lasso.entry == 1
    steps = loop_nodes(g, lasso)
    nodes = [i for i, _k in steps]
    taken = {g.codes[i][k] >> 2 for i, k in steps}
    assert 3 in nodes
    always = set.intersection(*[{c >> 2 for c in g.codes[i]} for i in nodes])
    assert always <= taken


def test_a_fair_shortest_loop_is_kept():
    g = _graph({0: [(1, A)], 1: [(2, A)], 2: [(1, B)], 3: [], 4: []})
    lasso = find(g)
    assert lasso is not None
    assert [(i, g.codes[i][k] >> 2) for i, k in loop_nodes(g, lasso)] == [(1, A), (2, B)]
    assert isinstance(lasso, Lasso)
