"""Bounds as worst cases: the maximum of a per-request metric over *every* schedule.

The explorer's ``check`` answers safety and liveness questions and keeps its graph to itself,
so this module runs its own breadth-first search over pairs (global state, the metric's running
counts), through the kernel's public ``Simulator`` (``state``, ``restore``, ``enabled``,
``step``). A running count is capped one above the bound, so the product stays finite and a
count past the bound is still seen. Global states are told apart as the explorer's plain keys
tell them apart (messages without their numbers: per channel in order if FIFO, as a multiset if
not), so two interleavings of sends on different channels are one state. When the search is
exhausted, ``max`` is the worst case over all schedules, with a schedule reaching it; otherwise
the answer is ``limit`` and ``max`` only a lower bound of the worst case.

Metrics:
- ``waiting_time``: for each request, the critical-section entries by other processes between
  the request and the requester's own entry (Raynal's waiting time, kout_tree's Theorem 2:
  ℓ(2n−3)²), counted as the paper defines it: entries by others until the request is
  *satisfied*. For kout_tree that is the moment the requester holds its Need resource tokens
  (State = Req, |RSet| = Need), not its EnterCS event, which the scheduler may delay after it
  holds them (the kernel's own ``served`` metric counts to EnterCS; it can exceed Theorem 2's
  bound by entries made during that delay). For other protocols: the critical-section entry.
- ``messages_per_request`` (coterie): messages charged to each request as
  ``protocols/coterie/charging.py`` charges them (its PREEMPT causes are part of the searched
  state), ÷ (7+|α(u)|)|q| — Section 6's printed worst case, so the bound is 1. The answer also
  gives the largest raw count and, over the schedules' ends (no event enabled), the smallest
  count of a request ÷ 4|q|, Section 6's best case (a lower bound: ``min_over_best`` ≥ 1).
- ``forms_per_task`` (task_game): forms a task sends from its creation on, against 6ρ
  (restricted) or 7ρ (with order forms), ρ = |interest|; reported as forms ÷ ρ (the largest
  over the tasks), so the bound is 6 or 7.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any


def bound_of(sim: Any, metric: str) -> tuple[float, str]:
    cfg = sim.config
    if metric == "waiting_time" and sim.protocol.id == "kout_tree":
        n = cfg.tree.n
        return cfg.ell * (2 * n - 3) ** 2, "ℓ(2n−3)², Theorem 2"
    if metric == "messages_per_request" and sim.protocol.id == "coterie":
        return 1, "(7+|α(u)|)|q| messages per request, Section 6"
    if metric == "forms_per_task" and sim.protocol.id == "task_game":
        per = 6 if sim.variant == "restricted" else 7
        return per, f"{per}ρ forms, for a task in no conflict (Sec. 1)"
    raise ValueError(f"no bound for {metric} on {sim.protocol.id}")


def worst_case(scenario: Any, variant: str | None, metric: str,
               max_states: int = 100_000, max_seconds: float | None = None,
               max_cpu_seconds: float | None = None) -> dict[str, Any]:
    """Breadth-first over (state, running counts); the largest value met and its schedule
    (stopped by the state bound, the wall-time bound or this process's CPU-time bound)."""
    from ..runner import build
    t0, cpu0 = time.perf_counter(), time.process_time()
    sim = build(scenario, variant)
    bound, what = bound_of(sim, metric)
    cap = int(bound * _scale(sim, metric)) + 1
    start = sim.state()
    acc0: tuple = ((), ()) if metric == "messages_per_request" else ()
    # the explorer's key (``plain_key``'s identity) after the protocol's ``forget`` hook
    # (task_game: relative clocks), so a blocked task's alarm cycles close here as in
    # ``check``; the hook is a bisimulation that keeps every event and message, so the running
    # counts are those of the unreduced game
    from ..explorer.keys import Keyer
    state_key = Keyer(sim.protocol, sim.config, sim.pids, sim.fifo, None, forget=True).key
    # the scenario's restriction of the explored events, as in ``check`` (kout_tree's
    # congestion bound on TimeOut)
    allowed = getattr(sim.protocol, "explore_events", lambda _c: None)(sim.config)
    seen = {(state_key(start), acc0): 0}
    parent: list[tuple[int, str | None]] = [(-1, None)]
    todo = deque([(start, acc0, 0)])
    best, best_edge = 0.0, (0, None)
    ends: list[float] = []              # messages_per_request: smallest count ÷ 4|q| at an end
    top = 0                             # messages_per_request: the largest raw count met
    stopped = None
    while todo:
        if len(seen) >= max_states:
            stopped = "max_states"
            break
        if max_seconds is not None and time.perf_counter() - t0 > max_seconds:
            stopped = "timeout"
            break
        if max_cpu_seconds is not None and time.process_time() - cpu0 > max_cpu_seconds:
            stopped = "cpu_time"
            break
        st, acc, me = todo.popleft()
        _load(sim, st)
        evs = sim.enabled()
        if allowed is not None:
            evs = [e for e in evs if allowed(sim, e)]
        if not evs and metric == "messages_per_request" and acc[0]:
            ends.append(min(n / (4 * _q(sim, u)) for (u, _ts), n in acc[0]))
        for ev in evs:
            _load(sim, st)
            done, nacc = _step(sim, ev, acc, metric, cap)
            if metric == "messages_per_request":
                top = max([top] + [n for _, n in nacc[0]])
            for v in done:
                if v > best:
                    best, best_edge = v, (me, ev.id)
            nst = sim.state()
            key = (state_key(nst), nacc)
            if key in seen:
                continue
            seen[key] = len(parent)
            parent.append((me, ev.id))
            todo.append((nst, nacc, len(parent) - 1))
    schedule = [best_edge[1]] if best_edge[1] else []
    i = best_edge[0]
    while i > 0:
        p, eid = parent[i]
        schedule.append(eid)
        i = p
    schedule.reverse()
    value = best
    out = {"metric": metric, "result": "limit" if stopped else "ok", "stopped": stopped,
           "states": len(seen), "max": round(value, 3),
           "bound": bound, "bound_what": what, "over_bound": value > bound,
           "witness": schedule, "seconds": round(time.perf_counter() - t0, 2)}
    if metric == "messages_per_request":
        out["max_messages"] = top
        out["capped"] = top >= cap
        out["min_over_best"] = round(min(ends), 3) if ends else None
        out["best_bound_what"] = "4|q| messages per request, Section 6 (lower bound)"
    return out


def _scale(sim: Any, metric: str) -> float:
    """forms_per_task counts raw forms; the cap is per task's ρ (the largest ρ here).
    messages_per_request counts raw messages; the cap is twice the largest (7+|α(u)|)|q|, so a
    count well past Section 6's worst case is still measured, not only seen."""
    if metric == "forms_per_task":
        return float(max(len(t.interest) for t in sim.config.tasks.values()))
    if metric == "messages_per_request":
        return 2.0 * max(_worst(sim, u) for u in sim.config.S.U)
    return 1.0


def _q(sim: Any, u: str) -> int:
    return len(sim.config.Q[u][0])


def _worst(sim: Any, u: str) -> int:
    return (7 + len(sim.config.S.alpha[u])) * _q(sim, u)




def _load(sim: Any, st: Any) -> None:
    sim.restore(st)
    sim.step_no = 0
    del sim.trace[:]
    sim.monitors.findings.clear()


def _satisfied(sim: Any, pid: str) -> bool:
    """kout_tree: ``pid`` holds the resource tokens it asked for (its request is satisfied,
    Theorem 2's end of waiting); other protocols: never before their entry."""
    if sim.protocol.id != "kout_tree":
        return False
    s = sim.proc(pid)
    return s.State == "Req" and s.Need > 0 and len(s.RSet) >= s.Need


def _step(sim: Any, ev: Any, acc: tuple, metric: str, cap: int) -> tuple[list[float], tuple]:
    """Apply ``ev`` and update the running counts ``acc``; the values of requests completed
    (or, for messages_per_request, charged) now, and the new counts."""
    eid = ev.id
    done: list[float] = []
    if metric == "messages_per_request":
        return _charge(sim, ev, acc, cap)
    counts = dict(acc)
    if metric == "waiting_time":
        before_cs, before_wait = set(sim.cs), set(sim.waiting)
        sim.step(eid)
        entered = [p for p in sim.cs if p not in before_cs]
        for p in list(counts):
            if p in entered or _satisfied(sim, p):
                done.append(counts.pop(p))
        for q in list(counts):
            if q in before_wait:
                counts[q] = min(cap, counts[q] + len([p for p in entered if p != q]))
        for p in sim.waiting:
            if p not in before_wait and p not in counts and not _satisfied(sim, p):
                counts[p] = 0
        for p in list(counts):
            if p not in sim.waiting:
                counts.pop(p)
        return done, tuple(sorted(counts.items()))
    if metric == "forms_per_task":
        tasks = sim.config.tasks
        first = sim.next_seq
        sim.step(eid)
        for seq in range(first, sim.next_seq):
            m = sim.inflight.get(seq)
            if m is not None and m.src in tasks:
                counts[m.src] = min(cap, counts.get(m.src, 0) + 1)
                done.append(counts[m.src] / len(tasks[m.src].interest))
        return done, tuple(sorted(counts.items()))
    raise ValueError(f"unknown metric {metric!r}")


def _charge(sim: Any, ev: Any, acc: tuple, cap: int) -> tuple[list[float], tuple]:
    """coterie: charge the messages ``ev`` sends as charging.py does; each charged request's
    count ÷ (7+|α(u)|)|q|."""
    from ..coterie.charging import charged_to
    counts, cause = dict(acc[0]), dict(acc[1])
    first = sim.next_seq
    sim.step(ev.id)
    done: list[float] = []
    for seq in range(first, sim.next_seq):
        m = sim.inflight.get(seq)
        if m is None:
            continue
        req = charged_to(sim, ev, m, cause)
        n = counts[req] = min(cap, counts.get(req, 0) + 1)
        done.append(n / _worst(sim, req[0]))
    return done, (tuple(sorted(counts.items())), tuple(sorted(cause.items())))
