"""Local coteries (Section 3): constructions and the validator of the three properties.

A local coterie w.r.t. (U, R, α) is a family {Q_u | u ∈ U} of quorum sets with
- non-emptiness: Q_u ≠ ∅ (and, as in a coterie, no quorum is empty),
- intersection: α(u) ∩ α(v) ≠ ∅ ⇒ every q ∈ Q_u meets every r ∈ Q_v,
- minimality: no quorum of Q_u contains another quorum of Q_u.

Constructions: ``local_coterie`` (the paper's Algorithm LocalCoterie), ``global_coterie`` (one
quorum U for everyone: the Maekawa-free baseline where everybody interferes), ``grid_coterie``
(Maekawa-style row ∪ column of a ⌈√n⌉-wide grid; always valid, see ``grid_coterie``).
A quorum is a tuple of process ids in U's order; Q_u is a tuple of quorums.
"""

from __future__ import annotations

import math

from .structure import SharingStructure

MAX_QUORUMS = 16          # per process in a user-supplied coterie (the validator is quadratic)

Quorum = tuple[str, ...]
LocalCoterie = dict[str, tuple[Quorum, ...]]


class CoterieError(ValueError):
    """A quorum family that is not a local coterie; the message names processes and quorums."""


def _q(U: tuple[str, ...], members) -> Quorum:
    s = set(members)
    return tuple(u for u in U if u in s)


def fmt(q: Quorum) -> str:
    return "{" + ", ".join(q) + "}"


def local_coterie(S: SharingStructure) -> LocalCoterie:
    """Algorithm LocalCoterie(U, R, α): q_u = ⋃_{r ∈ α(u)} N(r) and Q_u = {q_u}."""
    G = S.graph()                                         # MakeBipartiteGraph(U, R, α)
    N = {r: set(G.neighbors(r)) for r in S.R}             # AllAdjacentNodes(r, G)
    out: LocalCoterie = {}
    for u in S.U:
        q_u: set[str] = set()
        for r in S.alpha[u]:
            q_u |= N[r]
        out[u] = (_q(S.U, q_u),)
    return out


def global_coterie(S: SharingStructure) -> LocalCoterie:
    """Q_u = {U} for every u: a valid local coterie that ignores the sharing structure."""
    return {u: (S.U,) for u in S.U}


def grid_coterie(S: SharingStructure) -> LocalCoterie:
    """Maekawa-style grid: U laid row by row in a ⌈√n⌉-wide grid, q_u = row(u) ∪ column(u).

    When n is not a perfect square the last row is short and row(u) may miss column(v); then
    v's row is full, so row(v) meets column(u) and the quorums still intersect. The quorums
    (about 2√n processes) ignore the sharing structure, like ``global_coterie``."""
    n = len(S.U)
    w = max(1, math.isqrt(n - 1) + 1) if n > 1 else 1
    pos = {u: divmod(i, w) for i, u in enumerate(S.U)}
    out: LocalCoterie = {}
    for u in S.U:
        row, col = pos[u]
        out[u] = (_q(S.U, [v for v in S.U if pos[v][0] == row or pos[v][1] == col]),)
    return out


def from_lists(S: SharingStructure, raw: object, field: str) -> LocalCoterie:
    """A user-supplied coterie ``{"a": [["a", "b"]], ...}`` as quorum tuples (shape only)."""
    if not isinstance(raw, dict):
        raise CoterieError(f"{field}: must map every process to a list of quorums")
    out: LocalCoterie = {}
    for u in S.U:
        qs = raw.get(u)
        if not isinstance(qs, list) or len(qs) > MAX_QUORUMS:
            raise CoterieError(f"{field}.{u}: must be a list of at most {MAX_QUORUMS} quorums "
                               "(lists of processes)")
        quorums = []
        for q in qs:
            if not isinstance(q, list) or any(not isinstance(v, str) or v not in S.U for v in q):
                raise CoterieError(f"{field}.{u}: quorum {q!r} must list known processes")
            quorums.append(_q(S.U, q))
        out[u] = tuple(quorums)
    for u in raw:
        if u not in S.U:
            raise CoterieError(f"{field}: unknown process {u!r}")
    return out


def problems(S: SharingStructure, Q: LocalCoterie) -> list[str]:
    """Every violated property, each naming the processes and quorums involved."""
    out = []
    for u in S.U:
        if not Q.get(u):
            out.append(f"non-emptiness: Q_{u} is empty")
        for q in Q.get(u, ()):
            if not q:
                out.append(f"non-emptiness: Q_{u} contains the empty quorum")
    for i, u in enumerate(S.U):
        for v in S.U[i:]:
            if not S.share(u, v):
                continue
            for q in Q.get(u, ()):
                for r in Q.get(v, ()):
                    if not set(q) & set(r):
                        res = ", ".join(S.shared(u, v))
                        out.append(f"intersection: {u} and {v} share {res} but quorum {fmt(q)} "
                                   f"of Q_{u} and quorum {fmt(r)} of Q_{v} are disjoint")
    for u in S.U:
        qs = Q.get(u, ())
        for i, q in enumerate(qs):
            for j, r in enumerate(qs):
                if i != j and set(q) <= set(r) and (set(q) != set(r) or i < j):
                    out.append(f"minimality: in Q_{u}, quorum {fmt(q)} is contained in {fmt(r)}")
    return out


def validate(S: SharingStructure, Q: LocalCoterie) -> LocalCoterie:
    """Return Q when it is a local coterie w.r.t. S; else CoterieError listing every problem."""
    bad = problems(S, Q)
    if bad:
        raise CoterieError("not a local coterie: " + "; ".join(bad))
    return Q


def is_coterie(Q: tuple[Quorum, ...]) -> bool:
    """Garcia-Molina & Barbara's coterie: non-empty quorums, pairwise intersecting, minimal."""
    if not Q or any(not q for q in Q):
        return False
    for i, q in enumerate(Q):
        for j, r in enumerate(Q):
            if not set(q) & set(r):
                return False
            if i != j and set(q) <= set(r):
                return False
    return True


def special_case_agrees(S: SharingStructure, Q: tuple[Quorum, ...]) -> bool:
    """Section 3's remark: when |R| = 1 and α(u) = R for all u, giving every process the same
    quorum set Q is a local coterie exactly when Q is a coterie. True when that holds for Q
    (or when S is not that special case, where the remark says nothing)."""
    if len(S.R) != 1 or any(S.alpha[u] != S.R for u in S.U):
        return True
    return (not problems(S, {u: Q for u in S.U})) == is_coterie(Q)


CONSTRUCTIONS = {"local": local_coterie, "global": global_coterie, "grid": grid_coterie}
