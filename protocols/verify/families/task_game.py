"""task_game families: tasks in chains and cycles of conflicts, on 1-3 nodes.

A chain of L tasks T1–T2–…–TL: task Ti needs pools P(i-1) and Pi (the end pools P0 and PL are
used by one task only), so neighbours conflict on one pool; a cycle of L ≥ 2 tasks: Ti needs
P(i-1 mod L) and Pi, every pool shared by two tasks. Every pool has one unit. With
``private`` each task also needs a pool of its own (ρ = 3). Nodes: agents A1..An (n = 1..3);
pool Pj sits at node A(1 + j mod n), task Ti is created by agent A(1 + i mod n). The faulty runs
crash each task at each phase it reaches (``protocols/verify/locality.py``) and measure how far
the failure reaches in the conflict graph. The paper claims failure locality 1 for the complete
game (Sec. 1); it does not hold in any variant (gallery ``game-locality-chain``: distance 2,
found by ``protocols/verify/locality_search.py``), so the runs are judged against the measured
locality 2: a crash run that disturbs a task farther away is a counterexample. ``restricted``
(no alarm-clock, no advancing: nothing undoes a dead task's hold) is judged against 3, the
largest distance in the family: its crash runs reach it on the chain of four (T4 crashed on
entering WINNING, T3, T2 and T1 wait behind one another for ever; benchmarks/README.md, "Families,
third round").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import Family, Instance


def games(shapes: tuple[str, ...], lengths: range, nodes: range, private: tuple[bool, ...],
          quick: Any = None) -> Iterator[Instance]:
    for shape in shapes:
        for L in lengths:
            if shape == "cycle" and L < 2:
                continue
            for n in nodes:
                for own in private:
                    yield _instance(shape, L, n, own, quick)


def _instance(shape: str, L: int, n: int, own: bool, quick: Any) -> Instance:
    agents = [f"A{i}" for i in range(1, n + 1)]
    npools = L + 1 if shape == "chain" else L
    pools = {f"P{j}": {"agent": agents[j % n], "units": 1} for j in range(npools)}
    tasks = []
    for i in range(1, L + 1):
        interest = [f"P{i - 1}", f"P{i % L if shape == 'cycle' else i}"]
        if own:
            name = f"Q{i}"
            pools[name] = {"agent": agents[i % n], "units": 1}
            interest.append(name)
        tasks.append({"id": f"T{i}", "agent": agents[i % n],
                      "interest": sorted(set(interest), key=interest.index)})
    sc = {"protocol": "task_game", "topology": {"agents": agents, "pools": pools},
          "workload": {"tasks": tasks}, "channels": "fifo", "steps": 4000}
    name = f"{shape} L={L} nodes={n}" + (" +private" if own else "")
    return Instance(name, sc, bool(quick and quick(shape, L, n, own)))


FAMILIES = [
    Family("task_game", "conflicts",
           "chains of 1-4 tasks and cycles of 2-4 tasks (one-unit pools, ρ = 2, or 3 with a "
           "private pool each) on 1-3 nodes; crashes of each task at each phase",
           lambda: games(("chain", "cycle"), range(1, 5), range(1, 4), (False, True),
                         quick=lambda shape, L, n, own: (n == 2 and not own
                                                         and (shape, L) in (("chain", 2),
                                                                            ("chain", 3)))),
           max_states=20_000, seeds=6, steps=4000, faults={"crash": True},
           judge_faults="locality", locality={"restricted": 3, "complete": 2, "full": 2},
           worst="forms_per_task"),
]
