"""Failure locality by exhaustive search: every crash point of one task, every schedule.

The random crash runs (``locality.py``) sample crash points and schedules; this searches them
all. For a task T of a task_game instance, the explorer's search API runs with exactly one fault
allowed, ``f:crash:T``, at any reachable state (no other fault), keeps the graph's edges and
records, for every state, which tasks have executed there (reached ACCESSING). A task U other
than T *starves* at a state where T has crashed, U has not executed, and no state where U has
executed can be reached from it by any continuation. The largest conflict-graph distance from T
of a starving task, over every crashed task, is the instance's failure locality; the schedule
to such a state, finished by the oldest-first scheduler, replays it. A plug-in on the public
``search`` (``SearchOptions.events`` / ``goal`` / ``keep_edges``): nothing in the explorer
changes.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

EXECUTED = ("ACCESSING", "RELEASING", "LEFT")


def relative_key(sim: Any) -> Any:
    """The explorer's state key for ``sim`` with the protocol's ``forget`` hook (task_game: its
    clocks made relative, protocols/task_game/forget.py): without it a blocked task's alarm
    cycles make the space infinite; messages numbered away as ``check`` does."""
    from ..explorer.keys import Keyer
    return Keyer(sim.protocol, sim.config, sim.pids, sim.fifo, None, forget=True).key


def crash_search(sc: Any, variant: str, task: str, max_states: int = 200_000,
                 max_seconds: float | None = None) -> dict[str, Any]:
    """Every schedule of ``sc`` in which ``task`` may crash once, anywhere: the starving tasks
    (those that can never execute any more) by distance, and a witness for the farthest."""
    from ..runner import build
    return starving(build(_crashable(sc), variant), task, max_states, max_seconds)


def starving(sim: Any, task: str, max_states: int = 200_000,
             max_seconds: float | None = None) -> dict[str, Any]:
    """From ``sim``'s current state, every schedule with no fault but ``task``'s crash (once,
    if it has not crashed yet): the tasks that can never execute at some reachable state where
    ``task`` has crashed, by conflict distance from it, and the shortest way to the farthest
    (``witness.prefix``: the events from ``sim``'s current state)."""
    from ..explorer import SearchOptions, search
    cfg = sim.config
    tasks = list(cfg.task_order)
    bit = {t: 1 << i for i, t in enumerate(tasks)}
    crash_id = f"f:crash:{task}"
    marks: list[tuple[int, bool]] = []       # per node, in node order: (executed mask, crashed)

    def allowed(view: Any, ev: Any) -> bool:
        return not ev.id.startswith("f:") or (ev.id == crash_id and not view.crashed)

    def record(view: Any) -> None:
        mask = 0
        for t in tasks:
            if view.proc(t).status in EXECUTED:
                mask |= bit[t]
        marks.append((mask, task in view.crashed))
        return None

    res = search(sim, SearchOptions(max_states=max_states, events=allowed, goal=record,
                                    key=relative_key(sim), violations=False, deadlocks=False, keep_edges=True,
                                    max_seconds=max_seconds))
    g = res.graph
    if res.complete and len(marks) != len(g.parent):   # pragma: no cover - engine contract
        raise AssertionError("the goal hook did not see every state once")
    out: dict[str, Any] = {"crashed": task, "states": res.states,
                           "transitions": res.transitions, "complete": res.complete,
                           "result": "ok" if res.complete else "limit", "starving": {},
                           "max_distance": 0, "witness": None}
    if not res.complete:
        return out
    pred: dict[int, list[int]] = {}
    for u, vs in g.succ.items():
        for v in vs:
            pred.setdefault(v, []).append(u)
    dist = nx.single_source_shortest_path_length(cfg.conflict, task)
    best: tuple[int, int] | None = None     # (distance, -depth) of the witness
    for u in tasks:
        if u == task or u in sim.crashed:
            continue
        can = {i for i, (m, _) in enumerate(marks) if m & bit[u]}
        work = list(can)
        while work:
            v = work.pop()
            for p in pred.get(v, ()):
                if p not in can:
                    can.add(p)
                    work.append(p)
        stuck = [i for i, (m, crashed) in enumerate(marks)
                 if crashed and not m & bit[u] and i not in can]
        if not stuck:
            continue
        d = dist.get(u)          # None: not connected to the crashed task at all
        node = min(stuck, key=lambda i: g.depth[i])
        out["starving"][u] = {"distance": d, "states": len(stuck), "shortest": g.depth[node]}
        key = (d if d is not None else 10**6, -g.depth[node])
        if best is None or key > best:
            best = key
            out["witness"] = {"victim": u, "distance": d, "prefix": g.path(node)}
    if best is not None:
        out["max_distance"] = best[0]
    return out


def _crashable(sc: Any) -> Any:
    return sc.model_copy(update={"faults": sc.faults.model_copy(update={"crash": True,
                                                                        "rate": 0.0})})


def finish(sc: Any, variant: str, prefix: list[str], steps: int = 4000) -> list[str]:
    """``prefix`` replayed, then run to its end by the oldest-first scheduler without faults:
    a complete replayable schedule of the starvation."""
    from ..kernel import make_scheduler
    from ..runner import build
    sim = build(_crashable(sc), variant)
    sim.replay(prefix)
    sched = make_scheduler("oldest")
    while sim.step_no < steps:
        eid = sched.choose(sim)
        if eid is None or eid.startswith("f:"):
            break
        sim.step(eid)
    return list(sim.trace)


def chain_crash_point(sc: Any, variant: str) -> Any:
    """The crash point of erratum S3 built on a ``conflicts`` chain or cycle of 3+ tasks (T1 and
    T2 share P1, T2 and T3 share P2): T1 and T2 registered and admitted (T1 holds the lower
    ticket), then T3 registered at the pool it shares with T2, whose admission form is already
    there, and T1's request queued first at P1; T1 crashes. Each step delivers every message in
    flight before the next. Returns the simulator just after ``f:crash:T1``."""
    from ..runner import build
    sim = build(_crashable(sc), variant)
    cfg = sim.config

    def drain() -> None:
        while True:
            ms = [e.id for e in sim.enabled() if e.id.startswith("m")]
            if not ms:
                return
            sim.step(ms[0])

    def forms(t: str, form: str, pools: tuple[str, ...]) -> None:
        for p in pools:
            sim.step(f"a:{t}:{form}:{p}")
        drain()

    interest = {t: cfg.tasks[t].interest for t in ("T1", "T2", "T3")}
    for t in ("T1", "T2"):
        sim.step(f"e:{cfg.tasks[t].agent}:create:{t}")
    for form in ("register", "admit"):
        for t in ("T1", "T2"):
            forms(t, form, interest[t])
    shared = next(p for p in interest["T3"] if p in interest["T2"])
    sim.step(f"e:{cfg.tasks['T3'].agent}:create:T3")
    forms("T3", "register", (shared,))
    first = next(p for p in interest["T1"] if p in interest["T2"])
    forms("T1", "request", (first,))
    forms("T3", "register", tuple(p for p in interest["T3"] if p != shared))
    sim.step("f:crash:T1")
    return sim


def locality(sc: Any, variant: str, max_states: int = 200_000,
             max_seconds: float | None = None) -> dict[str, Any]:
    """``crash_search`` for every task of ``sc``: the instance's failure locality (the largest
    distance of a starving task over every crashed task) with the witness, or ``limit``."""
    from ..runner import build
    tasks = list(build(sc, variant).config.task_order)
    per = [crash_search(sc, variant, t, max_states, max_seconds) for t in tasks]
    out: dict[str, Any] = {
        "result": "ok" if all(p["complete"] for p in per) else "limit",
        "states": sum(p["states"] for p in per),
        "max_distance": max((p["max_distance"] for p in per), default=0),
        "per_task": {p["crashed"]: {k: v for k, v in p.items() if k != "witness"}
                     for p in per},
        "witness": None,
    }
    far = max(per, key=lambda p: (p["max_distance"], p["witness"] is not None))
    if far["witness"] is not None:
        w = dict(far["witness"])
        w["crashed"] = far["crashed"]
        w["schedule"] = finish(sc, variant, w["prefix"])
        out["witness"] = w
    return out


def crash_points(sc: Any, variant: str, task: str, seeds: int, steps: int = 4000,
                 max_states: int = 20_000, max_seconds: float | None = None) -> dict[str, Any]:
    """A cheaper, partial search: along the seeded random runs 0..seeds-1 (fault-free), crash
    ``task`` just after each of its own steps (every point where its state changed), and from
    each crash point search every continuation (``starving``, no crash left to make). Crash
    points are sampled, continuations are exhaustive; a crash point whose search hits
    ``max_states`` is counted as ``limit`` and says nothing."""
    from ..kernel import make_scheduler
    from ..runner import build
    sc = _crashable(sc)
    points = ok = limit = 0
    hist: dict[int, int] = {}
    witness: dict[str, Any] | None = None
    best = 0
    for seed in range(seeds):
        sim = build(sc, variant)
        sched = make_scheduler("random", seed)
        trace: list[str] = []
        last = sim.proc(task)
        crash_at: list[int] = []
        while sim.step_no < steps:
            eid = sched.choose(sim)
            if eid is None:
                break
            if eid.startswith("f:"):
                continue
            sim.step(eid)
            trace.append(eid)
            now = sim.proc(task)
            if now != last:
                crash_at.append(len(trace))
                last = now
        for k in crash_at:
            run = build(sc, variant)
            run.replay(trace[:k] + [f"f:crash:{task}"])
            r = starving(run, task, max_states, max_seconds)
            points += 1
            if not r["complete"]:
                limit += 1
                continue
            ok += 1
            far = r["max_distance"]
            hist[far] = hist.get(far, 0) + 1
            if r["witness"] is not None and far > best:
                best = far
                w = r["witness"]
                witness = {"victim": w["victim"], "distance": w["distance"], "seed": seed,
                           "crash_after": k,
                           "prefix": trace[:k] + [f"f:crash:{task}"] + w["prefix"]}
    return {"crashed": task, "crash_points": points, "searched": ok, "limit": limit,
            "max_distance": best, "distance_histogram": {str(d): n for d, n in sorted(hist.items())},
            "witness": witness}
