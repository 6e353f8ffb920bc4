"""Token counts, legitimacy, safety predicates and the convergence report.

Legitimate (for the variants with a controller) means: the run has passed a *clean start* of
a controller traversal and no fault was injected since.  A clean start is the configuration
right after the root sends a new controller on channel 0 with empty counts when the network
holds exactly ℓ ResT, one PushT and one PrioT, no reset is under way, no process or other
controller message carries the root's new counter value and no stale controller carries a
reset flag.  From there the paper's Lemmas 3–14 say the counts stay right and nothing resets;
the property tests check that on seeded arbitrary configurations.  Safety violations before
legitimacy are *transient* (reported, not returned); after it they are real.  Variants without
a controller promise nothing from an arbitrary start, so for them every violation is real.

Legitimacy is history, so it is kept *in the state*: the root's ghost ``Proc.legit``, which
``observe`` (the monitor, after every step) sets from the state before the step, the event and
the state after it.  A search therefore judges every explored state by its own history (a fault
ends legitimacy on that branch only; a clean start reached from an arbitrary one begins it),
and the same configuration reached legitimately and not is two states.  The per-step record
(``Track``: legitimacy, counter values, transient violations) only serves the run's report; it
is kept on the simulator object, keyed by step, so time travel simply overwrites it on replay.
"""

from __future__ import annotations

from array import array
from dataclasses import replace
from typing import Any

from ..kernel import FAULT
from .config import Config
from .state import CTRL, IN, PRIOT, PUSHT, REST

_ATTR = "_kout_tree_track"


class Track:
    """Per-step history of one run: 1 byte of legitimacy and the root's counter per step (so a
    million-step run costs a few megabytes), and the transient violations by step."""

    def __init__(self) -> None:
        self._legit = bytearray()
        self._myc = array("q")
        self.transient: dict[int, tuple[str, ...]] = {}
        self.bad: dict[int, frozenset] = {}    # safety texts at each step before legitimacy
        self.pending: list[str] = []            # the kernel's transient texts of the step under way

    def set(self, step: int, legit: bool, myc: int) -> None:
        while len(self._legit) <= step:
            self._legit.append(0)
            self._myc.append(-1)
        self._legit[step] = legit
        self._myc[step] = myc

    def legit(self, step: int) -> bool:
        return 0 <= step < len(self._legit) and bool(self._legit[step])

    def myc(self, step: int) -> int:
        return self._myc[step] if 0 <= step < len(self._myc) else -1


def counts(sim: Any) -> tuple[int, int, int]:
    """(ResT, PushT, PrioT) in the network: reserved or held ones plus those in channels."""
    res = prio = 0
    for s in sim.procs:
        res += len(s.RSet)
        if s.Prio is not None:
            prio += 1
    return _in_channels(sim, res, prio)


def _in_channels(sim: Any, res: int, prio: int) -> tuple[int, int, int]:
    """``counts`` given the ResT and PrioT the processes hold: those in channels added."""
    push = 0
    for m in sim.inflight.values():
        kind = m.kind
        if kind == REST:
            res += 1
        elif kind == PUSHT:
            push += 1
        elif kind == PRIOT:
            prio += 1
    return res, push, prio


def expected(cfg: Config) -> tuple[int, int, int]:
    return cfg.ell, int(cfg.feat.pusher), int(cfg.feat.prio)


def clean_start(sim: Any, root: Any = None) -> bool:
    """Whether the configuration is a clean start (module docstring); ``root``: the root's
    state, where the caller has it."""
    cfg: Config = sim.config
    if root is None:
        root = sim.proc(cfg.tree.root)
    if root.Reset or root.Succ != 0 or (root.SToken, root.SPush, root.SPrio) != (0, 0, 0):
        return False
    if counts(sim) != expected(cfg):
        return False
    first = cfg.tree.nbr[cfg.root][0]
    current = 0
    for m in sim.inflight.values():
        if m.kind != CTRL:
            continue
        b = m.body
        if b.C == root.myC:
            if (m.src, m.dst) != (cfg.root, first) or b.R or b.PT or b.PPr:
                return False
            current += 1
        elif b.R:
            return False
    if current != 1:
        return False
    return all(s.myC != root.myC for p, s in zip(sim.pids, sim.procs, strict=True) if p != cfg.root)


def safety(sim: Any) -> list[str]:
    """The k-out-of-ℓ safety predicates (Section 2) and the closure of legitimacy. One pass
    over the processes (it runs after every step of a legitimate search)."""
    cfg: Config = sim.config
    out = []
    k = cfg.k
    used = res = prio = 0
    over = []
    for p, s in zip(sim.pids, sim.procs, strict=True):
        n = len(s.RSet)
        res += n
        if s.State == IN:
            used += n
        if n > k:
            over.append(f"{p} holds {n} units, more than k = {k}")
        if s.Prio is not None:
            prio += 1
    if used > cfg.ell:
        out.append(f"{used} resource units are in use, more than ℓ = {cfg.ell}")
    out += over
    c, e = _in_channels(sim, res, prio), expected(cfg)
    if c != e:
        out.append(f"the network holds {c[0]} ResT, {c[1]} PushT, {c[2]} PrioT instead of "
                   f"{e[0]}, {e[1]}, {e[2]} (a unit lost or held twice)")
    if sim.proc(cfg.root).Reset:
        out.append("the root resets the network")
    return out


def track(sim: Any) -> Track:
    t = getattr(sim, _ATTR, None)
    if t is None:
        t = Track()
        cfg: Config = sim.config
        t.set(0, not cfg.feat.controller or cfg.clean, cfg.myc0)
        setattr(sim, _ATTR, t)
    return t


def legitimate(sim: Any) -> bool:
    """Whether the current state is legitimate: the root's ghost (always, without a controller)."""
    cfg: Config = sim.config
    return not cfg.feat.controller or sim.proc(cfg.root).legit


def ghost(sim: Any) -> tuple[str, Any] | None:
    """The write ``observe`` makes after a fault-free step, as ``(root, its new state)``, or
    None: a clean start begins legitimacy, and nothing else changes the ghost without a fault.
    ``Protocol.monitor_ghost``: the explorer applies it to the steps it replays."""
    cfg: Config = sim.config
    if not cfg.feat.controller:
        return None
    pid = cfg.tree.root
    root = sim.proc(pid)
    if root.legit or not clean_start(sim, root):
        return None
    return pid, replace(root, legit=True)


def _searching(sim: Any) -> bool:
    """Whether ``sim`` is a search's: the lean simulator of ``kernel.Transitions`` or a stored
    state it judges (``monitors`` None). A search keeps no per-step history (each transition is
    "step 0" of its own), so the Track is neither written nor read there."""
    mon = sim.monitors
    return mon is None or mon.lean


def observe(sim: Any) -> list[str]:
    """Called after every step: carry the legitimacy ghost over the step (a fault ends it, a
    clean start begins it), record the history, return the violations that count."""
    cfg: Config = sim.config
    if _searching(sim):
        return _observe_searching(sim, cfg)
    t = track(sim)
    step = sim.step_no
    bad = safety(sim)
    if not cfg.feat.controller:
        t.set(step, True, 0)
        return bad
    ev = getattr(sim.monitors, "last_event", None)
    fault = ev is not None and ev.kind == FAULT
    root = sim.proc(cfg.root)           # its ghost is still the state before the step's
    legit = (root.legit and not fault) or clean_start(sim)
    if legit != root.legit:
        sim.put_ghost(cfg.root, replace(root, legit=legit))
    t.set(step, legit, root.myC)
    kernel, t.pending = tuple(t.pending), []
    if legit:
        t.bad.pop(step, None)
        if kernel:      # entered twice in the very step that began legitimacy: still before it
            t.transient[step] = kernel
        else:
            t.transient.pop(step, None)
        return bad
    now = frozenset(bad)
    prev = t.bad.get(step - 1, frozenset())
    t.bad[step] = prev if prev == now else now      # share the object while nothing changes
    new = tuple(sorted(now - prev)) + kernel
    if new:
        t.transient[step] = new
    else:
        t.transient.pop(step, None)
    return []


def _observe_searching(sim: Any, cfg: Config) -> list[str]:
    """``observe`` without the Track: the same ghost and the same violations returned. Before
    legitimacy nothing counts, so the safety predicates are not even evaluated. On a stored
    state (``monitors`` None) the explorer has already made the ghost's write (``ghost``) and
    there are no faults, so only the violations are left to judge."""
    if not cfg.feat.controller:
        return safety(sim)
    root = sim.proc(cfg.tree.root)
    mon = sim.monitors
    if mon is None:
        return safety(sim) if root.legit else []
    ev = mon.last_event
    fault = ev is not None and ev.kind == FAULT
    legit = (root.legit and not fault) or clean_start(sim, root)
    if legit != root.legit:
        sim.put_ghost(cfg.root, replace(root, legit=legit))
    return safety(sim) if legit else []


def transient(sim: Any, text: str) -> bool:
    """The kernel found ``text`` (e.g. a process entering its critical section while the kernel
    has it in one already, after a fault set its ``State`` back to Req) in this step: before
    legitimacy that is transient like the safety predicates' violations — recorded with the
    step's, not returned; after it, real. Without a controller every violation is real."""
    cfg: Config = sim.config
    if not cfg.feat.controller or legitimate(sim):
        return False
    if not _searching(sim):
        track(sim).pending.append(text)
    return True


def async_rounds(sim: Any, upto: int) -> int:
    """Asynchronous rounds completed in the first ``upto`` steps of ``sim``'s trace, replayed on
    a fresh simulator: a round ends once every process enabled at its start (an action or a
    message to receive; faults do not count) has taken a step or is no longer enabled."""
    from ..kernel import FAULT, Simulator
    run = Simulator(sim.protocol, sim.scenario, sim.variant)

    def enabled() -> set[str]:
        return {e.pid for e in run.enabled() if e.kind != FAULT}

    pending = enabled()
    rounds = 0
    for eid in sim.trace[:upto]:
        ev = next((e for e in run.enabled() if e.id == eid), None)
        run.step(eid)
        if ev is not None:
            pending.discard(ev.pid)
        pending &= enabled()
        if not pending:
            rounds += 1
            pending = enabled()
            if not pending:
                break
    return rounds


def report(sim: Any) -> dict[str, Any]:
    cfg: Config = sim.config
    t = track(sim)
    now = sim.step_no
    since = None
    for s in range(now, -1, -1):
        if not t.legit(s):
            break
        since = s
    rounds_at = wraps = 0
    for s in range(1, now + 1):
        a, b = t.myc(s - 1), t.myc(s)
        if a >= 0 and b >= 0 and a != b:
            wraps += 1
        if s == since:
            rounds_at = wraps
    n = cfg.tree.n
    waits = [w for (_p, _t, _r, w) in sim.monitors.served]
    return {
        "converged_at": None if since is None else {"step": since, "rounds": rounds_at,
                                                    "async_rounds": async_rounds(sim, since)},
        "legitimate": legitimate(sim),
        "controller_rounds": wraps,
        "transient": [{"step": s, "text": x} for s in sorted(t.transient) if s <= now
                      for x in t.transient[s]],
        "tokens": dict(zip(("ResT", "PushT", "PrioT"), counts(sim), strict=True)),
        "waiting_time": {"max": max(waits) if waits else None,
                         "bound": cfg.ell * (2 * n - 3) ** 2},
    }
