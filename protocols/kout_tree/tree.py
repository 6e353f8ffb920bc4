"""The oriented tree, its channel labels, the DFS virtual ring and the drawing positions.

Channel labels follow the paper (Section 2): at a non-root process label 0 is the parent and
labels 1..Δp−1 are its children in the given order; at the root labels 0..Δr−1 are its children.
A token received on channel i leaves on channel i+1 mod Δp, which makes the tree a ring
(Figures 1 and 4): ``tour()`` lists the processes in the order the ring visits them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import networkx as nx


@dataclass(frozen=True)
class Tree:
    root: str
    pids: tuple[str, ...]                       # display order: DFS preorder
    parent: dict[str, str | None]
    nbr: dict[str, tuple[str, ...]]             # neighbours by channel label
    label: dict[tuple[str, str], int]           # (p, q) -> p's label for its channel to q

    @property
    def n(self) -> int:
        return len(self.pids)

    def degree(self, p: str) -> int:
        return len(self.nbr[p])

    def next_of(self, p: str, q_label: int) -> str:
        """The neighbour a token received on channel q_label goes to: channel q+1 mod Δp."""
        d = len(self.nbr[p])
        return self.nbr[p][(q_label + 1) % d]

    def tour(self) -> list[str]:
        """The virtual ring: processes in the order a token visits them, starting at the root
        and ending just before it returns there (2(n−1) entries)."""
        out: list[str] = []
        p, q = self.root, self.degree(self.root) - 1   # as if just received on the last channel
        for _ in range(2 * (self.n - 1)):
            out.append(p)
            dst = self.next_of(p, q)
            q, p = self.label[(dst, p)], dst
        return out

    def edges(self) -> list[tuple[str, str]]:
        return [(self.parent[p], p) for p in self.pids if self.parent[p] is not None]

    def graph(self) -> nx.Graph:
        g = nx.Graph()
        g.add_nodes_from(self.pids)
        g.add_edges_from(self.edges())
        return g

    def positions(self) -> dict[str, tuple[float, float]]:
        """Root at the top of a box 1000 wide; leaves spread evenly in DFS order, each parent
        centred over its children; one row per depth.  Rows are at most 0.8 leaf-gaps apart:
        a wide tree is drawn wide and flat, so on a landscape screen its nodes are far enough
        apart for the queue chips and token labels beside them (a deep, narrow tree keeps
        rows up to 580/depth apart)."""
        depth = nx.shortest_path_length(self.graph(), self.root)
        rows = max(depth.values()) or 1
        xs: dict[str, float] = {}
        leaves = [p for p in self.pids if self.children(p) == ()]
        step = 880 / max(len(leaves) - 1, 1)
        for i, p in enumerate(leaves):
            xs[p] = 60 + i * step if len(leaves) > 1 else 500
        for p in reversed(self.pids):                  # children before parents
            ch = self.children(p)
            if ch:
                xs[p] = sum(xs[c] for c in ch) / len(ch)
        pitch = min(580 / rows, 0.8 * step)
        return {p: (round(xs[p], 1), round(60 + depth[p] * pitch, 1)) for p in self.pids}

    def children(self, p: str) -> tuple[str, ...]:
        return self.nbr[p] if p == self.root else self.nbr[p][1:]


def build(root: str, children: dict[str, list[str]]) -> Tree:
    """A tree from its root and each process's ordered children; ValueError if not a tree."""
    parent: dict[str, str | None] = {root: None}
    order: list[str] = []
    stack = [root]
    while stack:
        p = stack.pop()
        order.append(p)
        for c in reversed(children.get(p, [])):
            if c in parent:
                raise ValueError(f"process {c!r} appears twice")
            parent[c] = p
            stack.append(c)
    unknown = sorted(set(children) - set(parent))
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not reachable from the root {root!r}")
    if len(order) < 2:
        raise ValueError("a tree needs at least two processes")
    nbr: dict[str, tuple[str, ...]] = {}
    for p in order:
        ch = tuple(children.get(p, []))
        nbr[p] = ch if p == root else (parent[p], *ch)   # type: ignore[arg-type]
    label = {(p, q): i for p in order for i, q in enumerate(nbr[p])}
    return Tree(root, tuple(order), parent, nbr, label)


def random_tree(n: int, seed: int) -> Tree:
    """A seeded random tree on p0..p{n−1} rooted at p0 (each process attaches to an earlier one)."""
    rng = random.Random(seed)
    children: dict[str, list[str]] = {f"p{i}": [] for i in range(n)}
    for i in range(1, n):
        children[f"p{rng.randrange(i)}"].append(f"p{i}")
    return build("p0", children)
