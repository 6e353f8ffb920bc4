"""``check(scenario)``: the explorer's public entry point (CLI ``allocscope check``, web worker).

Returns a JSON-ready dict with the keys of the architecture page, ``result``, ``states``,
``seconds``, ``counterexample`` (null or ``{"schedule": [...]}``) and ``link``, plus details:
``transitions``, ``depth``, ``reductions``, ``finding`` (what was found, in words) and
``stopped`` (why a ``limit`` result stopped: ``max_states``, ``cancelled``, ``timeout`` or
``cpu_time``).

``check(scenario, ..., also=[other, ...])`` explores the scenario together with other starts of
the same instance (``same_instance``) in one search from all their starts; ``check_group``
gives each of a group of such scenarios its own verdict from as few searches as possible
(docs/explorer.md, "One search for a group of starts").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from ..kernel import SimError, Simulator, Transitions
from ..kernel.core import Core
from ..runner import build
from ..scenario import Scenario, ScenarioError
from . import livelock
from .audit import ForgetAudit
from .driver import label
from .engine import Progress, Search, SearchOptions
from .keys import Keyer
from .por import LocalityError, PartialOrder, supports
from .symmetry import verify

FOUND = ("violation", "deadlock", "livelock")


# What ``quote(s, safe="")`` writes as it is (``urllib.parse``'s always-safe characters).
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


def _quote(s: str) -> str:
    """``quote(s, safe="")``. An id of unreserved characters and ``:`` (every kernel event id:
    ``m12``, ``a:R1:new-head``) is written directly, ``:`` as ``%3A``; anything else goes to
    ``quote``, whose quoter fills a table per byte on its first use in a process (60 µs of a
    cold ``check`` of a small ring, for the link of its counterexample)."""
    if _UNRESERVED.issuperset(s.replace(":", "")):
        return s.replace(":", "%3A")
    return quote(s, safe="")


def link(scenario_id: str, variant: str, schedule: list[str]) -> str:
    """The viewer URL that replays ``schedule``: ids URL-encoded one by one, joined by commas."""
    ids = ",".join(map(_quote, schedule))
    return f"/sim/{_quote(scenario_id)}?variant={_quote(variant)}&schedule={ids}"


def check(scenario: Scenario, variant: str | None = None, max_states: int = 200_000, *,
          symmetry: bool = True, livelock_check: bool = True, partial_order: bool | None = None,
          forget: bool = True, progress: Progress | None = None, progress_every: int = 10_000,
          should_stop: Callable[[], bool] | None = None,
          max_seconds: float | None = None,
          max_cpu_seconds: float | None = None,
          also: Sequence[Scenario] = ()) -> dict[str, Any]:
    """Explore every schedule of ``scenario`` breadth-first, up to ``max_states`` states.

    - ``also``: other scenarios of the same instance up to their start (``same_instance``),
      explored in the same search from all the starts at once: ``ok`` then holds for each of
      them, ``limit`` for none; a counterexample belongs to one start, named by the answer's
      ``start`` (0: ``scenario``, k: ``also[k - 1]``), and its schedule and ``link`` replay on
      that scenario. The answer also has ``group`` (how many starts, how many distinct).

    - ``symmetry``: use the scenario's declared interchangeable processes (if any). Under
      symmetry the livelock search is skipped (its fairness labels are not renaming-invariant;
      see docs/explorer.md) and ``reductions.livelock_checked`` says so.
    - ``progress(info)`` is called every ``progress_every`` new states with ``states``,
      ``transitions``, ``depth``, ``frontier`` and ``seconds``; ``should_stop()`` is polled at the
      same moments and a True answer ends the search with result ``limit`` and ``stopped:
      "cancelled"`` (so a web worker can report a progress bar and be cancelled).
    - ``max_seconds`` bounds the wall time the same way (``stopped: "timeout"``), and
      ``max_cpu_seconds`` this process's CPU time (``stopped: "cpu_time"``): unlike the wall
      clock it does not stretch when others load the machine, so the same bound stops the
      same instance at (nearly) the same state on a busy or an idle machine.
    - ``forget``: key states after the protocol's ``forget`` hook, if it has one (values no
      future step reads, e.g. coterie's dead Lamport times; audited during the search).
    - ``partial_order``: expand one persistent set per state (``por.py``) for a protocol that
      declares the hooks. Violations and deadlocks are still all found, but a counterexample
      is shortest only within the reduced graph, and the livelock search is skipped. ``None``
      (the default) uses it where the protocol also declares ``por_default`` (it cannot
      livelock, so skipping that search loses nothing) and the scenario has no faults and no
      symmetry; ``True`` asks for it (an error where impossible), ``False`` turns it off.

    Raises ScenarioError for bad input (unknown variant, bad symmetry declaration, an ``also``
    scenario that is not the same instance).
    """
    if not isinstance(max_states, int) or isinstance(max_states, bool) or max_states < 1:
        raise ScenarioError("max_states: must be a whole number of at least 1")
    sim = build(scenario, variant)
    starts = [(build(sc, variant), sc) for sc in also]
    same_instance([(sim, scenario), *starts], symmetry)
    return explore(sim, scenario, max_states, symmetry=symmetry, livelock_check=livelock_check,
                   partial_order=partial_order, forget=forget, progress=progress,
                   progress_every=progress_every, should_stop=should_stop,
                   max_seconds=max_seconds, max_cpu_seconds=max_cpu_seconds, starts=starts)


def check_group(scenarios: Sequence[Scenario], variant: str | None = None,
                max_states: int = 200_000, **options: Any) -> list[dict[str, Any]]:
    """One verdict per scenario of a group of starts of one instance, from as few searches
    as possible: ``check`` of all of them together; a counterexample found belongs to one
    start, which gets it, and the others (whose verdict it does not settle) are searched
    again together, until a search ends without one. Each answer is that last search's
    (``ok`` or ``limit``; ``states`` the group's) or the one that found its counterexample,
    with ``group``: ``members`` (indices into ``scenarios`` searched together) and
    ``searches`` (the how-manieth search of the group it is).

    ``options``: ``check``'s keywords (not ``also``). Raises ScenarioError as ``check``."""
    if not scenarios:
        raise ScenarioError("check_group: give at least one scenario")
    if "also" in options:
        raise ScenarioError("check_group: the scenarios are the group; do not pass also")
    symmetry = options.get("symmetry", True)
    same_instance([(build(sc, variant), sc) for sc in scenarios], symmetry)
    out: list[dict[str, Any] | None] = [None] * len(scenarios)
    left = list(range(len(scenarios)))
    searches = 0
    while left:
        searches += 1
        res = check(scenarios[left[0]], variant, max_states,
                    also=[scenarios[m] for m in left[1:]], **options)
        res["group"] = {**res.get("group", {"starts": 1, "distinct_starts": 1}),
                        "members": list(left), "searches": searches}
        if res["result"] in FOUND:
            k = left.pop(res.get("start") or 0)
            res["start"] = k
            res["counterexample"]["scenario"] = getattr(scenarios[k], "id", res["scenario"])
            out[k] = res
            continue
        for m in left:
            out[m] = {**res, "group": dict(res["group"]), "start": None,
                      "scenario": getattr(scenarios[m], "id", res["scenario"])}
        left = []
    return [r for r in out if r is not None]


def same_instance(members: Sequence[tuple[Simulator, Any]], symmetry: bool = True) -> None:
    """Raise ScenarioError unless every (simulator at step 0, scenario) is the same instance
    as the first up to its start: the same protocol, variant, processes, channels, faults,
    symmetry declaration (when used) and built configuration, except the configuration fields
    the protocol declares as the start's own (``Protocol.start_fields``: read only to describe
    the start, e.g. kout_tree's ``myc0``). Their states (process states and messages in
    flight) may differ: that is what a start is."""
    if len(members) < 2:
        return
    first = instance_of(*members[0], symmetry)
    for k, (sim, sc) in enumerate(members[1:], 1):
        mine = instance_of(sim, sc, symmetry)
        for part, value in first.items():
            if mine[part] != value:
                detail = ""
                if part == "config" and dataclasses.is_dataclass(value) and \
                        type(value) is type(mine[part]):
                    names = [f.name for f in dataclasses.fields(value)
                             if getattr(value, f.name) != getattr(mine[part], f.name)]
                    detail = f" (fields {', '.join(names)})"
                raise ScenarioError(
                    f"starts of one instance: scenario {k} "
                    f"({getattr(sc, 'id', '?')}) is not the same instance as scenario 0 "
                    f"({getattr(members[0][1], 'id', '?')}) up to its start: its {part} "
                    f"differs{detail}; only the initial state may differ")


def instance_of(sim: Simulator, scenario: Any, symmetry: bool = True) -> dict[str, Any]:
    """What ``same_instance`` compares, by name: equal for two scenarios (built as ``sim``)
    exactly when they are one instance up to their start."""
    cfg = sim.config
    own = tuple(getattr(sim.protocol, "start_fields", ()))
    if own and dataclasses.is_dataclass(cfg):
        cfg = dataclasses.replace(cfg, **{f: None for f in own})
    return {"protocol": sim.protocol.id, "variant": sim.variant, "processes": sim.pids,
            "channels": sim.fifo, "faults": sim.faults,
            "symmetry declaration": getattr(scenario, "symmetry", []) if symmetry else [],
            "config": cfg}


def explore(sim: Simulator, scenario: Any, max_states: int = 200_000, *,
            symmetry: bool = True, livelock_check: bool = True, partial_order: bool | None = None,
            forget: bool = True, progress: Progress | None = None, progress_every: int = 10_000,
            should_stop: Callable[[], bool] | None = None,
            max_seconds: float | None = None,
            max_cpu_seconds: float | None = None,
            starts: Sequence[tuple[Simulator, Any]] = ()) -> dict[str, Any]:
    """``check`` on a simulator at step 0 (any protocol object, e.g. a test's own); fresh
    simulators for replays are made with ``Simulator(sim.protocol, scenario, sim.variant)``.
    ``starts``: (simulator at step 0, scenario) of more starts of the same instance
    (``same_instance``, checked by the caller), searched together with ``sim``'s."""
    members = [(sim, scenario), *starts]

    def fresh_of(k: int) -> Callable[[], Simulator]:
        """Fresh simulators at step 0 of start k (0: ``sim``'s), for its replays."""
        s, sc = members[k]
        return lambda: Simulator(s.protocol, sc, s.variant)

    def headless_of(k: int) -> Callable[[], Core]:
        """Fresh headless cores at step 0 of start k, for ``confirm``."""
        s, sc = members[k]
        return lambda: Core(s.protocol, sc, s.variant)

    fresh = fresh_of(0)
    sid = getattr(scenario, "id", "scenario")
    decl = getattr(scenario, "symmetry", []) if symmetry else []
    ts = Transitions(sim)
    keyer = Keyer(sim.protocol, sim.config, sim.pids, sim.fifo, decl, forget=forget,
                  numbers=ts.numbers, contents=ts)
    group = keyer.size
    verify(ts, keyer)
    if partial_order is None:
        partial_order = _por_by_default(sim, group)
    reducer = _reducer(sim, group) if partial_order else None
    with_livelock = livelock_check and group == 1 and reducer is None
    # A forget hook that renames message contents (kout_tree's counter rotation) breaks the
    # livelock search's fairness labels: check instead that every reachable state can still
    # serve everyone, which needs no labels and no fairness (docs/explorer.md).
    relabels = keyer.forgets and bool(getattr(sim.protocol, "forget_relabels",
                                              lambda _c: False)(sim.config))
    finish = with_livelock and relabels
    with_livelock = with_livelock and not relabels
    # The scenario's restriction of the explored events (kout_tree's congestion bound).
    allowed = getattr(sim.protocol, "explore_events", lambda _c: None)(sim.config)
    options = SearchOptions(max_states=max_states, keep_edges=with_livelock, progress=progress,
                            progress_every=progress_every, should_stop=should_stop,
                            max_seconds=max_seconds, max_cpu_seconds=max_cpu_seconds,
                            expansion=reducer, events=allowed, can_finish=finish,
                            audit=ForgetAudit(fresh, keyer, ts=ts) if keyer.forgets else None,
                            starts=tuple(s.state() for s, _sc in starts))
    search = Search(ts, options, keyer.key)
    g = search.graph
    if starts and options.audit is not None:
        # the audited state is the one just added: name its start in an error
        options.audit.where = lambda: _named(members, search.start_of(len(g.parent) - 1))
    try:
        stop = search.run()
    except LocalityError as exc:
        raise ScenarioError(str(exc)) from None
    result: dict[str, Any] = {
        "scenario": sid, "protocol": sim.protocol.id, "variant": sim.variant,
        "result": "ok", "states": len(g.parent), "transitions": g.transitions,
        "depth": search.max_depth, "seconds": 0.0, "counterexample": None, "link": None,
        "finding": None, "stopped": None,
        "reductions": {"symmetry_group": group, "partial_order": reducer is not None,
                       "forget": keyer.forgets, "livelock_checked": with_livelock,
                       "can_finish_checked": finish and search.complete,
                       "events_restricted": allowed is not None},
    }
    if starts:
        # distinct: how many roots the starts made (None if a finding at a start ended the
        # search before every start was added)
        added = len(search.roots) == len(members)
        result["group"] = {"starts": len(members),
                           "distinct_starts": len(set(search.roots)) if added else None}
        result["start"] = None
    schedule: list[str] | None = None
    start = 0          # the start the schedule begins at
    extra: dict[str, Any] = {}
    if stop is not None and stop.kind in ("violation", "deadlock"):
        result["result"] = stop.kind
        schedule = stop.schedule
        start = stop.start
        result["finding"] = stop.text or None
        # the visited set and the kernel's memo are not needed any more: free them before
        # the confirming replay allocates its own simulator
        search.seen.clear()
        ts.drop_memo()
    elif with_livelock:
        lasso = livelock.find(g, bool(getattr(sim.protocol, "livelock_bypass", False)))
        if lasso is not None:
            start = search.start_of(lasso.entry)
            schedule, loop_start = _lasso_schedule(fresh_of(start), search, lasso)
            result["result"] = "livelock"
            extra["loop_start"] = loop_start
            others = ("while others keep being served" if lasso.cs_mask == 0
                      else "without any critical-section entry")
            result["finding"] = (f"livelock: {lasso.pid} waits forever while the states from "
                                 f"step {loop_start} on repeat {others}, and every event "
                                 "enabled throughout the loop is taken in it (a weakly fair "
                                 "scheduler can follow it forever)")
    elif finish and search.complete:
        node = search.cannot_finish_node()
        if node is not None:
            schedule = g.path(node)
            start = search.start_of(node)
            result["result"] = "livelock"
            result["finding"] = ("cannot finish: after this schedule no schedule serves every "
                                 "request any more (every run from here starves someone)")
    if schedule is None and stop is not None:
        result["result"] = "limit"
        result["stopped"] = "max_states" if stop.kind == "limit" else stop.kind
    if schedule is not None:
        replay = confirm(fresh_of(start), schedule, result["result"], headless_of(start))
        result["counterexample"] = {"schedule": schedule, "length": len(schedule), **extra,
                                    **replay}
        if result["finding"] is None:
            result["finding"] = replay.get("monitor")
        result["link"] = link(getattr(members[start][1], "id", sid), sim.variant, schedule)
        if starts:
            result["start"] = start
            result["counterexample"]["scenario"] = getattr(members[start][1], "id", sid)
    if reducer is not None:
        result["reductions"]["reduced_states"] = search.reduced
    result["seconds"] = round(search.elapsed(), 3)
    return result


def _named(members: Sequence[tuple[Simulator, Any]], k: int) -> str:
    """Start k of a group, in words."""
    return f"start {k} (scenario {getattr(members[k][1], 'id', '?')})"


def _por_by_default(sim: Simulator, group: int) -> bool:
    """Partial-order reduction is the default only where it costs nothing the protocol needs:
    it declares the hooks and ``por_default`` (no livelock is possible, e.g. every run is
    finite), and the scenario has no faults and no symmetry declaration."""
    faults = sim.faults is not None and getattr(sim.faults, "any", False)
    return (supports(sim.protocol) and bool(getattr(sim.protocol, "por_default", False))
            and not faults and group == 1)


def _reducer(sim: Simulator, group: int) -> PartialOrder:
    """The partial-order reducer for ``sim``, or ScenarioError saying why it cannot be used."""
    pid = sim.protocol.id
    if not supports(sim.protocol):
        raise ScenarioError(f"partial-order reduction: protocol {pid} does not declare "
                            "por_senders / por_signature (see docs/explorer.md)")
    if sim.faults is not None and getattr(sim.faults, "any", False):
        raise ScenarioError("partial-order reduction: the scenario allows faults, whose events "
                            "are not local to one process; check it without --por")
    if group > 1:
        raise ScenarioError("partial-order reduction with a symmetry declaration is not "
                            "supported; check with one or the other")
    return PartialOrder(sim.protocol, sim.config, sim.pids, sim.fifo)


def _lasso_schedule(fresh: Callable[[], Simulator], search: Search,
                    lasso: livelock.Lasso) -> tuple[list[str], int]:
    """Stem (parent pointers) + one fair loop, re-simulated so every id is valid in order."""
    g = search.graph
    stem = g.path(lasso.entry)
    steps = livelock.loop_nodes(g, lasso)
    want = {g.succ[i][k] for i, k in steps}
    keys = {i: k for k, i in search.seen.items() if i in want}
    sim = fresh()
    sim.replay(stem)
    ts = Transitions(fresh())         # tries events on copies of the replay's current state
    labels = {n: lab for lab, n in g.labels.items()}
    out = list(stem)
    for i, k in steps:
        j, code = g.succ[i][k], g.codes[i][k]
        here = sim.state()
        for ev in list(sim.enabled()):
            if label(ev) != labels[code >> 2]:
                continue
            if search.key(ts.step(here, ev).state) == keys[j]:
                out.append(ev.id)
                break
        else:  # pragma: no cover - the graph came from these very transitions
            raise AssertionError("cannot re-simulate the livelock loop")
        sim.step(out[-1])
    return out, len(stem)


def confirm(fresh: Callable[[], Simulator], schedule: list[str], kind: str,
            headless: Callable[[], Core] | None = None) -> dict[str, Any]:
    """Replay ``schedule`` with ``Simulator.step`` from step 0 and report what the kernel's own
    monitors say at its end (an independent check of the explorer's finding).

    A violation or a deadlock is judged by the per-step checks alone, which the headless
    ``Core`` runs as the simulator does (same steps, same state hash, same findings): with
    ``headless`` (its fresh cores) they are replayed there, without the timeline's narration,
    snapshots, metrics and livelock memory, which the answer does not read; on the two-client
    ring that was a third of the replay, and the only code of a ``check`` outside the search's
    own. A livelock needs that memory (the monitor's own livelock finding): the simulator."""
    sim = headless() if headless is not None and kind in ("violation", "deadlock") else fresh()
    try:
        sim.replay(schedule)
    except SimError as exc:  # pragma: no cover - would be an explorer bug
        return {"replayed": False, "monitor": str(exc)}
    mon = sim.monitors
    found = [f for f in mon.findings.values() if f.step == sim.step_no and f.kind == kind]
    if kind == "deadlock" and not found and not sim.step_no:
        found = [] if sim.enabled() else found
    out: dict[str, Any] = {"replayed": True, "state_hash": sim.state_hash(),
                           "confirmed_by_monitor": bool(found)}
    if found:
        out["monitor"] = found[0].text
        if kind == "deadlock":
            out["cycle"] = found[0].cycle
    return out
