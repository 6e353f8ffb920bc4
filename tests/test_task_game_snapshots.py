"""Why the explorer does not merge a manager's superseded snapshots (docs/explorer.md,
"Forgetting dead values", and docs/protocols/task_game.md, "Searching the game").

Every manager action sends its new state (an ``Info``) to every registered task, and these
snapshots queue up on the FIFO channel manager -> task; their interleavings are what fills the
`conflicts` searches. Dropping a snapshot that a later one on the same channel supersedes would
be a sound reduction only if no task could ever act on the older one. The game is built the
other way round: a task acts on the last snapshot it read, however stale, and the regressive
withdrawal (Sec. 3, pp. 19-20) exists to undo what it did on a snapshot that was already
overtaken. This test finds, along seeded random runs of the `conflicts` family's chain of two
tasks and the gallery's `game-conflict`, a state where a task has two snapshots of one pool in
flight and, *between* reading them, can take an action it can take neither before the first
nor after both: a run that merging the two would delete. It fails if no such state exists
(then the merge might be sound and worth building).
"""

from __future__ import annotations

import pytest

from protocols.kernel import DELIVER, Transitions, make_scheduler
from protocols.runner import build
from protocols.scenario import gallery, parse
from protocols.verify.families import get, instances


def _scenario(which: str):
    if which == "game-conflict":
        return gallery()[which]
    inst = next(i for i in instances(get("task_game", "conflicts")) if i.name == which)
    return parse({**inst.scenario, "id": "conflicts"})


def _actions(ts: Transitions, st, pid: str) -> set[str]:
    """The ids of ``pid``'s enabled events other than deliveries in ``st``."""
    ts.load(st)
    return {e.id for e in ts.enabled() if e.pid == pid and e.kind != DELIVER}


def _witness(sc, variant: str, seeds: int = 40, steps: int = 150):
    """(seed, step, task, pool, action) of a run that needs the superseded snapshot, or None."""
    ts = Transitions(build(sc, variant))
    for seed in range(seeds):
        sim = build(sc, variant)
        sched = make_scheduler("random", seed)
        for step in range(steps):
            st = sim.state()
            heads: dict[tuple[str, str], list] = {}
            for m in st.messages:
                heads.setdefault((m.src, m.dst), []).append(m)
            for (src, dst), q in heads.items():
                if len(q) < 2 or q[0].kind != "Info" or q[1].kind != "Info":
                    continue
                before = _actions(ts, st, dst)
                first = next(o for e, o in ts.successors(st)
                             if e.kind == DELIVER and e.msg.seq == q[0].seq)
                mid = _actions(ts, first.state, dst)
                both = next(o for e, o in ts.successors(first.state)
                            if e.kind == DELIVER and e.msg.seq == q[1].seq)
                after = _actions(ts, both.state, dst)
                only = sorted(mid - before - after)
                if only:
                    return seed, step, dst, src, only[0]
            eid = sched.choose(sim)
            if eid is None:
                break
            sim.step(eid)
    return None


@pytest.mark.parametrize("which", ["chain L=2 nodes=1", "game-conflict"])
def test_a_superseded_snapshot_can_be_acted_on(which):
    """Some reachable state has two snapshots of one pool queued to a task, and an action of
    that task is enabled only between reading the first and the second (so merging them is
    not a bisimulation: it deletes that action's runs)."""
    found = _witness(_scenario(which), "full")
    assert found is not None, "no task ever acted on a superseded snapshot in these runs"
    seed, step, task, pool, action = found
    assert action.startswith(f"a:{task}:")
