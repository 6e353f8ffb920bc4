"""What a task can conclude from its own knowledge: conditions (p1), (p2)/(p3), "all requests
distributed", "blocked", "winnable", blocking requests. Pure functions of (config, task, state).

(p1) (Section 2, restricted variant): for each pool P of interest, the requests that precede T's
actual or potential request and come from tasks of priority not lower than T's are fewer than the
resources currently accessible in P. (p2) adds "or have an order form at P"; (p3) is (p2) read in
the task's own knowledge (Section 3, page 18). A *potential* request is one at the end of the
queue. A lower ticket number is a higher priority; tickets are distinct, so "not lower" = "<=".
"""

from __future__ import annotations

from .data import TRYING, About, Config, Request, TaskState


def own_request(cfg: Config, task: str, s: TaskState, k: int) -> int | None:
    """Position of T's *current* request (the one it sent last) in AboutRequests_T,P, or None.
    In TRYING a pool still in Destinations has no current request (never sent, or withdrawn):
    a snapshot still showing the withdrawn one is stale and must not count."""
    if s.status == TRYING and cfg.tasks[task].interest[k] in s.destinations:
        return None
    want = s.sent[k] - 1
    for i, r in enumerate(s.about[k].requests):
        if r.task == task and r.seq == want:
            return i
    return None


def preceding(cfg: Config, task: str, s: TaskState, k: int) -> tuple[Request, ...]:
    """Requests before T's actual request, or all others if T has none there (potential)."""
    reqs = s.about[k].requests
    i = own_request(cfg, task, s, k)
    if i is None:
        return tuple(r for r in reqs if r.task != task)
    return reqs[:i]


def accessible(cfg: Config, task: str, s: TaskState, k: int) -> int:
    """Resources in pool^-1(P) but not in AboutUse_T,P."""
    return len(cfg.units[cfg.tasks[task].interest[k]]) - len(s.about[k].use)


def _has_order(a: About, task: str) -> bool:
    return any(t == task for t, _ in a.orders)


def p_count(cfg: Config, task: str, s: TaskState, k: int, with_orders: bool) -> int:
    """How many predecessors count against T at pool k under (p1) or (p2)/(p3)."""
    mine = s.tickets_at[0] if s.tickets_at else None
    a = s.about[k]
    n = 0
    for r in preceding(cfg, task, s, k):
        if mine is None or r.ticket <= mine or (with_orders and _has_order(a, r.task)):
            n += 1
    return n


def p_holds(cfg: Config, task: str, s: TaskState) -> bool:
    """(p1) in the restricted variant, (p3) otherwise."""
    orders = not cfg.has("restricted")
    return all(p_count(cfg, task, s, k, orders) < accessible(cfg, task, s, k)
               for k in range(len(s.about)))


def all_requests_seen(cfg: Config, task: str, s: TaskState) -> bool:
    """"T has all its requests in AboutRequests_T,P with P in interest(T)"."""
    return all(own_request(cfg, task, s, k) is not None for k in range(len(s.about)))


def blocked_at(cfg: Config, task: str, s: TaskState, k: int) -> bool:
    """T's request at pool k is preceded by at least as many requests as accessible resources."""
    return len(preceding(cfg, task, s, k)) >= accessible(cfg, task, s, k)


def winnable(cfg: Config, task: str, s: TaskState) -> bool:
    """All requests distributed, and each preceded by fewer requests than accessible resources."""
    return all_requests_seen(cfg, task, s) and not any(
        blocked_at(cfg, task, s, k) for k in range(len(s.about)))


def blocking_now(cfg: Config, task: str, s: TaskState) -> tuple[tuple[Request, ...], ...]:
    """Per pool, the predecessors of T's request that have no order form (blocking requests)."""
    return tuple(tuple(r for r in preceding(cfg, task, s, k)
                       if not _has_order(s.about[k], r.task))
                 for k in range(len(s.about)))


def orders_seen(cfg: Config, task: str, s: TaskState) -> bool:
    """T's order form is in AboutOrders_T,P for every P of its interest (used by ``full``)."""
    return all(_has_order(a, task) for a in s.about)


def is_user_everywhere(cfg: Config, task: str, s: TaskState) -> bool:
    """T occurs in AboutUse_T,P (as the user of some resource) for every P of its interest."""
    return all(any(u == task for _, u in a.use) for a in s.about)
