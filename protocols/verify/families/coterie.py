"""coterie families: every sharing structure (U, R, α) of a few processes and resources.

α gives each process a non-empty set of resources, and every resource is used by someone. Two
instances are one when renaming processes and resources maps one (structure and workload) onto
the other; the representative lists processes u1, u2, ... and resources r1, r2, ... in the
canonical order (the lexicographically least relabelling), so process ranks — the tie-break of
equal Lamport stamps — are those of the representative only (an assumption of the family, said
in docs/explorer.md). The workload gives each process 1 or 2 requests, each of k = 1..|α(u)|
resources. Quorums are the paper's LocalCoterie; channels are FIFO; the paper's model has
reliable channels and no crashes, so random runs with faults are not made.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from . import Family, Instance


def _subsets(m: int) -> list[tuple[int, ...]]:
    return [s for size in range(1, m + 1) for s in itertools.combinations(range(m), size)]


def structures(ns: range, ms: range, asks: range, quick: Any = None) -> Iterator[Instance]:
    for m in ms:
        subs = _subsets(m)
        perms = list(itertools.permutations(range(m)))
        for n in ns:
            seen: set[tuple] = set()
            for alphas in itertools.combinations_with_replacement(subs, n):
                if set().union(*map(set, alphas)) != set(range(m)):
                    continue
                works = [[w for a in asks for w in itertools.product(range(1, len(al) + 1),
                                                                     repeat=a)]
                         for al in alphas]
                for work in itertools.product(*works):
                    key = _canon(alphas, work, perms)
                    if key in seen:
                        continue
                    seen.add(key)
                    yield _instance(key, m, quick)


def _canon(alphas: tuple, work: tuple, perms: list[tuple[int, ...]]) -> tuple:
    best = None
    for p in perms:
        rows = tuple(sorted((tuple(sorted(p[r] for r in al)), w)
                            for al, w in zip(alphas, work, strict=True)))
        if best is None or rows < best:
            best = rows
    return best


def _instance(key: tuple, m: int, quick: Any) -> Instance:
    U = [f"u{i}" for i in range(1, len(key) + 1)]
    R = [f"r{i}" for i in range(1, m + 1)]
    alpha = {u: [R[r] for r in al] for u, (al, _) in zip(U, key, strict=True)}
    reqs = {u: list(w) for u, (_, w) in zip(U, key, strict=True)}
    sc = {"protocol": "coterie",
          "topology": {"processes": U, "resources": R, "alpha": alpha},
          "workload": {"requests": reqs}, "channels": "fifo", "steps": 3000}
    name = " ".join(f"{u}:{''.join(alpha[u])}[{','.join(map(str, reqs[u]))}]" for u in U)
    return Instance(name, sc, bool(quick and quick(len(U), m, key)))


def shape(sc: dict[str, Any]) -> str:
    """An instance's class for ``verify --sample``: processes, resources, how many resources
    two or more processes share, and the most requests one process makes."""
    alpha, reqs = sc["topology"]["alpha"], sc["workload"]["requests"]
    shared = sum(1 for r in sc["topology"]["resources"]
                 if sum(r in a for a in alpha.values()) > 1)
    return (f"n{len(alpha)} m{len(sc['topology']['resources'])} shared={shared} "
            f"asks<={max(len(w) for w in reqs.values())}")


FAMILIES = [
    Family("coterie", "small",
           "every sharing structure of 2 processes and 1-2 resources; each process requests "
           "once (k = 1..|α(u)|); LocalCoterie quorums; FIFO channels",
           lambda: structures(range(2, 3), range(1, 3), range(1, 2),
                              quick=lambda n, m, key: True),
           shape=shape, max_states=50_000, worst="messages_per_request"),
    Family("coterie", "three",
           "every sharing structure of 3 processes and 1-2 resources; each process requests "
           "once; LocalCoterie quorums; FIFO channels",
           lambda: structures(range(3, 4), range(1, 3), range(1, 2),
                              quick=lambda n, m, key: key == (((0,), (1,)), ((0,), (1,)),
                                                              ((1,), (1,)))),
           shape=shape, max_states=300_000, worst="messages_per_request"),
    Family("coterie", "issue",
           "the issue's family: every sharing structure of 2-5 processes and 1-3 resources; "
           "each process requests 1-2 times (k = 1..|α(u)| each); LocalCoterie quorums; FIFO "
           "channels (cluster-sized)",
           lambda: structures(range(2, 6), range(1, 4), range(1, 3)),
           shape=shape, max_states=500_000, worst="messages_per_request", ci=False),
]
