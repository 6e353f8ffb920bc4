"""Named instance families: every instance of a small, documented space, up to symmetry.

A family is a generator of scenario JSON objects plus what the runner must know to judge them:
the faults its seeded random runs inject and how those runs are judged. The exact enumeration of
each family is documented in its module and in docs/explorer.md ("Families").
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Instance:
    """One member of a family: a short stable name and the scenario that fixes it."""

    name: str
    scenario: dict[str, Any]
    quick: bool = False          # part of the CI subset


@dataclass(frozen=True)
class Family:
    """A named family of one protocol; ``generate`` yields its instances in a fixed order."""

    protocol: str
    name: str
    doc: str
    generate: Callable[[], Iterator[Instance]]
    max_states: int = 20_000
    seeds: int = 20              # seeded random schedules per instance (and as many with faults)
    steps: int = 3_000           # step budget of a random schedule
    faults: dict[str, Any] | None = None   # Faults for the faulty random runs (None: no claim)
    judge_faults: str = "report"   # "report" (outcomes only), "stabilise", "locality"
    locality: dict[str, int] = field(default_factory=dict)   # claimed failure locality by variant
    worst: str | None = None     # metric whose worst case over all schedules is searched
    ci: bool = True              # small enough to enumerate when tests are collected
    shape: Callable[[dict[str, Any]], str] | None = None   # an instance's class for --sample
    extra: dict[str, Any] = field(default_factory=dict)


def _all() -> dict[tuple[str, str], Family]:
    from . import coterie, datta_ring, kout_tree, task_game
    out: dict[tuple[str, str], Family] = {}
    for mod in (datta_ring, kout_tree, coterie, task_game):
        for fam in mod.FAMILIES:
            out[(fam.protocol, fam.name)] = fam
    return out


def families() -> dict[tuple[str, str], Family]:
    """Every family, keyed by (protocol, name)."""
    return _all()


def get(protocol: str, name: str) -> Family:
    """The named family, or KeyError naming the ones that exist for ``protocol``."""
    fams = _all()
    if (protocol, name) not in fams:
        names = sorted(n for p, n in fams if p == protocol)
        raise KeyError(f"no family {name!r} for protocol {protocol!r}; known: "
                       f"{', '.join(names) or 'none'}")
    return fams[(protocol, name)]


def instances(fam: Family, quick: bool = False) -> list[Instance]:
    """The family's instances as a list (only the CI subset when ``quick``)."""
    return list(iter_instances(fam, quick))


def iter_instances(fam: Family, quick: bool = False) -> Iterator[Instance]:
    """The family's instances one by one (a cluster-sized family is never held in memory),
    ids made unique and stable."""
    for i, inst in enumerate(fam.generate()):
        if quick and not inst.quick:
            continue
        sc = dict(inst.scenario)
        sc.setdefault("id", f"verify-{fam.protocol.replace('_', '-')}-{fam.name}-{i}"[:80])
        sc.setdefault("title", f"{fam.protocol} family {fam.name}: {inst.name}"[:200])
        sc.setdefault("protocol", fam.protocol)
        yield Instance(inst.name, sc, inst.quick)


def sample(fam: Family, per_class: int, seed: int, classes: str | None = None
           ) -> tuple[list[tuple[int, Instance]], dict[str, list[int]]]:
    """Up to ``per_class`` instances of every shape class (``fam.shape``; one class if the
    family has none), drawn by reservoir sampling in the family's fixed order with
    ``random.Random(seed)``: the same family, size and seed give the same indices, in one
    streamed pass. ``classes``: keep only the classes whose name this regular expression
    matches (``re.search``), after drawing, so each kept class has the picks it has without
    the filter. Returns the picked (index, instance) pairs in index order and, per class, its
    size followed by the picked indices."""
    want = re.compile(classes) if classes is not None else None
    rng = random.Random(seed)
    keep: dict[str, list[tuple[int, Instance]]] = {}
    size: dict[str, int] = {}
    for i, inst in enumerate(iter_instances(fam)):
        cls = fam.shape(inst.scenario) if fam.shape else "all"
        t = size.get(cls, 0)
        size[cls] = t + 1
        res = keep.setdefault(cls, [])
        if t < per_class:
            res.append((i, inst))
        else:
            j = rng.randrange(t + 1)
            if j < per_class:
                res[j] = (i, inst)
    kept = [c for c in sorted(size) if want is None or want.search(c)]
    return (sorted((p for c in kept for p in keep[c]), key=lambda p: p[0]),
            {c: [size[c], *sorted(i for i, _ in keep[c])] for c in kept})
