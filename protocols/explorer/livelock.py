"""Livelock: a reachable cycle of states that a weakly fair scheduler could follow forever while
some process waits and nobody enters a critical section.

For each process p that ever waits, take the explored states in which p waits and the
transitions between them that enter no critical section; compute its strongly connected
components (SCCs). A run that stays in an SCC S forever can visit every state and take every
edge of S infinitely often. Weak fairness (on events named independently of message numbers,
see ``driver.label``): an event that is continuously enabled is eventually taken. Any run
confined to S has, from some point on, continuously enabled every event enabled in *all* states
of S, so S admits a weakly fair run iff every such event (that fairness demands: progress, not a
fault) labels some edge inside S; the run that covers S is then fair. Only sub-SCCs of S
are candidates otherwise, and they inherit the failure, so one test per maximal SCC is exact.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .engine import Graph


@dataclass(frozen=True)
class Lasso:
    pid: str
    entry: int            # the SCC state with the shortest path from the root
    scc: frozenset[int]
    demands: tuple[int, ...]   # label numbers the loop must take to be fair
    cs_mask: int = 1           # 1: edges that enter a critical section are not in the loop


def _sccs(nodes: list[int], edges: dict[int, list[int]]) -> list[list[int]]:
    """Tarjan's algorithm, iterative; components with a cycle only (size > 1 or a self-loop)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, k = work[-1]
            nbrs = edges.get(v, [])
            if k < len(nbrs):
                work[-1] = (v, k + 1)
                w = nbrs[k]
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in edges.get(v, []):
                    out.append(comp)
    return out


def find(g: Graph, bypass: bool = False) -> Lasso | None:
    """The fair livelock SCC whose entry state is closest to the root (None if there is none).

    ``bypass`` (the protocol's ``livelock_bypass``, as the kernel monitor reads it): critical-
    section entries *by others* are allowed inside the loop, so a process starved while the
    others keep being served counts (kout_tree's Fig. 3). p's own entry never is: it ends p's
    wait, so its target state is not in p's subgraph."""
    cs_mask = 0 if bypass else 1
    pids = sorted({p for w in g.waiting for p in w})
    best: Lasso | None = None
    for p in pids:
        nodes = [i for i in sorted(g.succ) if p in g.waiting[i]]
        member = set(nodes)
        edges: dict[int, list[int]] = {}
        for i in nodes:
            edges[i] = [j for j, c in zip(g.succ[i], g.codes[i], strict=True)
                        if not c & cs_mask and j in member and j in g.succ]
        for comp in _sccs(nodes, edges):
            s = frozenset(comp)
            everywhere: set[int] | None = None
            for i in comp:
                here = {c >> 2 for c in g.codes[i] if c & 2}
                everywhere = here if everywhere is None else everywhere & here
            taken = {c >> 2 for i in comp for j, c in zip(g.succ[i], g.codes[i], strict=True)
                     if j in s and not c & cs_mask}
            missing = (everywhere or set()) - taken
            if missing:
                continue
            entry = min(comp, key=lambda i: (g.depth[i], i))
            if best is None or (g.depth[entry], entry) < (g.depth[best.entry], best.entry):
                best = Lasso(p, entry, s, tuple(sorted(everywhere or ())), cs_mask)
    return best


def loop_nodes(g: Graph, lasso: Lasso) -> list[tuple[int, int]]:
    """A cycle from the entry back to it inside the SCC, as (node, edge index) steps, that takes
    every demanded label once and every label enabled all along it (so repeating it forever is
    a weakly fair run)."""
    s = lasso.scc

    def internal(i: int):
        for k, (j, c) in enumerate(zip(g.succ[i], g.codes[i], strict=True)):
            if j in s and not c & lasso.cs_mask:
                yield k, j, c

    def bfs(start: int, goal) -> list[tuple[int, int]]:
        """Shortest (node, edge) steps from start to the first edge satisfying goal(j, c)."""
        prev: dict[int, tuple[int, int] | None] = {start: None}
        q = deque([start])
        while q:
            i = q.popleft()
            for k, j, c in internal(i):
                if goal(j, c):
                    steps = [(i, k)]
                    while prev[i] is not None:
                        pi, pk = prev[i]
                        steps.append((pi, pk))
                        i = pi
                    steps.reverse()
                    return steps
                if j not in prev:
                    prev[j] = (i, k)
                    q.append(j)
        raise AssertionError("SCC is not strongly connected")

    steps: list[tuple[int, int]] = []
    at = lasso.entry
    covered: set[int] = set()
    for want in lasso.demands:
        if want in covered:
            continue
        seg = bfs(at, lambda j, c, w=want: c >> 2 == w)
        steps += seg
        covered.update(g.codes[i][k] >> 2 for i, k in seg)
        i, k = seg[-1]
        at = g.succ[i][k]
    if at != lasso.entry or not steps:
        seg = bfs(at, lambda j, c: j == lasso.entry)
        steps += seg
    # The loop alone must be weakly fair, not only the SCC: an event enabled in every state of
    # the loop (an EnterCS that stays enabled) but in not every state of S is demanded of the
    # loop though not of S. For each, add a detour from the entry that takes it inside S or
    # passes a state of S where it is not enabled (one exists, as it is not demanded of S).
    def enabled(i: int) -> set[int]:
        return {c >> 2 for c in g.codes[i] if c & 2}

    while True:
        always = set.intersection(*[enabled(i) for i, _k in steps])
        missing = always - {g.codes[i][k] >> 2 for i, k in steps}
        if not missing:
            return steps
        want = min(missing)
        seg = bfs(lasso.entry, lambda j, c, w=want: c >> 2 == w or w not in enabled(j))
        i, k = seg[-1]
        at = g.succ[i][k]
        back = bfs(at, lambda j, c: j == lasso.entry) if at != lasso.entry else []
        steps = seg + back + steps
