"""datta_ring families: rooted rings of resources and clients asking for one or two of them.

An instance is fixed by the ring size m (resources R1..Rm in ring order), the token (absent —
``"token": false``, ≺ is then the identifier order — or created by the root at Ri), and a
*multiset* of clients. A client is its sequence of requests (each one resource, or an ordered
pair: the first is the strong one) and whether it departs (Section IV: by message or silently).
Clients are interchangeable (their names carry no order the protocol reads), so each multiset is
one instance: clients are numbered C1, C2, ... in the sorted order of their specs. At most one
client departs in an instance (a departure is the fault this protocol claims to tolerate; the
kernel faults drop / duplicate / crash are outside its model, so random runs with faults are
not made).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from . import Family, Instance


def _requests(m: int, sizes: tuple[int, ...]) -> list[tuple[str, ...]]:
    ring = [f"R{i}" for i in range(1, m + 1)]
    out: list[tuple[str, ...]] = []
    if 1 in sizes:
        out += [(r,) for r in ring]
    if 2 in sizes:
        out += list(itertools.permutations(ring, 2))
    return out


def _tokens(m: int, positions: str) -> list[str | None]:
    """None = no token; "Ri" = the root Ri creates it. ``positions``: off | root | all."""
    if positions == "off":
        return [None]
    if positions == "root":
        return [None, "R1"]
    return [None] + [f"R{i}" for i in range(1, m + 1)]


def rings(ms: range, clients: range, asks: range, sizes: tuple[int, ...] = (1, 2),
          tokens: str = "all", departures: tuple[str, ...] = (), same: bool = False,
          quick: Any = None) -> Iterator[Instance]:
    """Every instance with the given ranges, in a fixed order (see the module docstring).
    ``same``: a client repeats one request 1..max(asks) times, instead of every sequence."""
    for m in ms:
        reqs = _requests(m, sizes)
        if same:
            seqs = [(r,) * a for r in reqs for a in asks]
        else:
            seqs = [s for a in asks for s in itertools.product(reqs, repeat=a)]
        for tok in _tokens(m, tokens):
            for c in clients:
                for combo in itertools.combinations_with_replacement(seqs, c):
                    for leaver, how in [(None, None)] + [(i, d) for i in range(c)
                                                         for d in departures]:
                        if leaver is not None and leaver > 0 and combo[leaver] == combo[leaver - 1]:
                            continue          # the same client spec departs: one instance
                        inst = _instance(m, tok, combo, leaver, how)
                        yield Instance(inst[0], inst[1], bool(quick and quick(inst[1])))


def _instance(m: int, tok: str | None, combo: tuple, leaver: int | None,
              how: str | None) -> tuple[str, dict[str, Any]]:
    clients = []
    for i, seq in enumerate(combo):
        c: dict[str, Any] = {"id": f"C{i + 1}", "requests": [list(r) for r in seq]}
        if i == leaver:
            c["leaves"] = how
        clients.append(c)
    topo: dict[str, Any] = {"ring": [f"R{i}" for i in range(1, m + 1)]}
    if tok is None:
        topo["token"] = False
    else:
        topo["root"] = tok
    name = f"m{m} {'no token' if tok is None else 'token@' + tok} " + " ".join(
        f"C{i + 1}:" + "/".join("".join(r) for r in seq)
        + (f"({how})" if i == leaver else "") for i, seq in enumerate(combo))
    return name, {"protocol": "datta_ring", "topology": topo, "workload": {"clients": clients},
                  "channels": "unordered", "steps": 3000}


def shape(sc: dict[str, Any]) -> str:
    """An instance's class for ``verify --sample``: ring size, token position, clients, the
    most times one client asks, and how a client departs (the requests vary inside a class)."""
    topo, cl = sc["topology"], sc["workload"]["clients"]
    tok = "no token" if topo.get("token") is False else f"token@{topo['root']}"
    leave = next((c["leaves"] for c in cl if c.get("leaves")), "none")
    return (f"m{len(topo['ring'])} {tok} clients={len(cl)} "
            f"asks<={max(len(c['requests']) for c in cl)} leaves={leave}")


def _small(sc: dict[str, Any]) -> bool:
    """CI subset: no token, at most two clients, each asking once."""
    cl = sc["workload"]["clients"]
    return sc["topology"].get("token") is False and all(len(c["requests"]) == 1 for c in cl)


def _same_two(clients: list[dict[str, Any]]) -> bool:
    """Two clients asking once for the same ordered pair."""
    reqs = [c["requests"] for c in clients]
    return len(reqs) == 2 and reqs[0] == reqs[1] and len(reqs[0][0]) == 2


def _fig1_twice(clients: list[dict[str, Any]]) -> bool:
    """Fig. 1's crossed clients, each asking twice (the issue's repeated-request instance)."""
    return [c["requests"] for c in clients] == [[["R1", "R2"]] * 2, [["R2", "R1"]] * 2]


FAMILIES = [
    Family("datta_ring", "two",
           "ring of 2 resources; 1-2 clients asking once for one resource or an ordered pair; "
           "token absent, at R1 or at R2",
           lambda: rings(range(2, 3), range(1, 3), range(1, 2), quick=_small),
           shape=shape, max_states=150_000),
    Family("datta_ring", "repeat",
           "ring of 2 resources; 1-2 clients asking 1-2 times (every sequence of one resource or "
           "an ordered pair); token absent or at R1",
           lambda: rings(range(2, 3), range(1, 3), range(1, 3), tokens="root",
                         quick=lambda sc: (sc["topology"].get("token") is False
                                           and (len(sc["workload"]["clients"]) == 1
                                                or _fig1_twice(sc["workload"]["clients"])))),
           shape=shape, max_states=250_000),
    Family("datta_ring", "departures",
           "ring of 2 resources; 2 clients asking once (one resource or an ordered pair), one of "
           "them departing by message or silently; no token",
           lambda: rings(range(2, 3), range(2, 3), range(1, 2), tokens="off",
                         departures=("message", "silent"),
                         quick=lambda sc: _same_two(sc["workload"]["clients"])),
           shape=shape, max_states=60_000),
    Family("datta_ring", "three",
           "ring of 3 resources; 1-3 clients asking once for an ordered pair; no token",
           lambda: rings(range(3, 4), range(1, 4), range(1, 2), sizes=(2,), tokens="off",
                         quick=lambda sc: len(sc["workload"]["clients"]) == 1),
           shape=shape, max_states=100_000),
    Family("datta_ring", "four",
           "ring of 4 resources; 1-2 clients asking once for an ordered pair; no token",
           lambda: rings(range(4, 5), range(1, 3), range(1, 2), sizes=(2,), tokens="off",
                         quick=lambda sc: len(sc["workload"]["clients"]) == 1),
           shape=shape, max_states=100_000),
    Family("datta_ring", "beyond",
           "just beyond repeat and three: ring of 3 resources; 1-2 clients asking 1-2 times "
           "(every sequence of one resource or an ordered pair); token absent or created at "
           "each resource; no departure, or one client departing by message or silently",
           lambda: rings(range(3, 4), range(1, 3), range(1, 3), tokens="all",
                         departures=("message", "silent")),
           shape=shape, max_states=200_000, ci=False),
    Family("datta_ring", "issue",
           "the issue's family: rings of 2-4 resources; 1-3 clients, each asking 1-3 times for "
           "the same one resource or ordered pair; token absent or created at each resource; "
           "with no departure, or one client departing by message or silently (cluster-sized)",
           lambda: rings(range(2, 5), range(1, 4), range(1, 4), tokens="all",
                         departures=("message", "silent"), same=True),
           shape=shape, max_states=200_000, ci=False),
]
