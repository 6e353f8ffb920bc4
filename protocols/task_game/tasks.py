"""The actions of a task T (Section 3, "Actions of tasks", pages 17-21, and Section 2 for the
restricted variant's direct win). One ``rows`` function lists every guarded action with its guard's
truth value, so the enabled actions and the inspector's "why can't it move?" never disagree.

References are ``algorithm="Sec. 3"`` with the page of the printed action list as ``lines``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..kernel import ENV, LOCAL, Ctx, Message
from . import conditions as C
from .data import (
    ACCESSING,
    ADMITTED,
    ADVANCING,
    INF,
    LEFT,
    NEW,
    ORDERING,
    REGISTERING,
    RELEASING,
    TRYING,
    WINNING,
    About,
    Config,
    Request,
    TaskState,
)

REF = "Sec. 3"


@dataclass(frozen=True)
class Row:
    """One guarded action of a task: its name (event id suffix), guard value and reference."""

    name: str
    holds: bool
    label: str
    page: int
    waiting_for: str = ""
    kind: str = LOCAL
    ref: str = REF


def _dest_rows(s: TaskState, head: str, label: str, page: int, extra: bool = True,
               why: str = "") -> list[Row]:
    return [Row(f"{head}:{p}", extra, f"{label} to {p}", page, "" if extra else why)
            for p in s.destinations]


def rows(cfg: Config, t: str, s: TaskState) -> list[Row]:
    """Every guarded action of task ``t`` in state ``s`` (only those of its current status)."""
    st, full, restricted = s.status, cfg.has("R2"), cfg.has("restricted")
    out: list[Row] = []
    if st in (NEW, LEFT):
        return out
    if st == REGISTERING:
        out += _dest_rows(s, "register", "send a registration form", 18)
        clear = all(not a.predecessors for a in s.about)
        ok = not s.destinations and clear
        why = ("registration forms still to send" if s.destinations else
               "its absolute predecessors to leave: " +
               ", ".join(sorted({x for a in s.about for x, _ in a.predecessors})))
        out.append(Row("admitted", ok, "REGISTERING → ADMITTED", 18, "" if ok else why))
        return out
    if st == ADMITTED:
        has = bool(s.tickets_at)
        out += _dest_rows(s, "admit", "send an admission form", 18, has,
                          "a ticket from its agent")
        ok = not s.destinations and has
        out.append(Row("try", ok, "ADMITTED → TRYING", 18,
                       "" if ok else "a ticket and all admission forms sent"))
        return out
    if st == ACCESSING:
        out += _dest_rows(s, "withdraw", "withdraw admission form and request", 20)
        ok = not s.destinations
        out.append(Row("release", ok, "execution ends: ACCESSING → RELEASING", 20,
                       "" if ok else "withdrawals still to send", kind=ENV))
        return out
    if st == RELEASING:
        out += _dest_rows(s, "release", "send a releasing form", 21)
        return out
    if st == WINNING:
        out += _dest_rows(s, "winning", "send a winning form", 20)
        ok = C.is_user_everywhere(cfg, t, s)
        out.append(Row("access", ok, "WINNING → ACCESSING", 20,
                       "" if ok else "a resource booked at every pool"))
        return out
    # TRYING, ADVANCING, ORDERING: the competition proper.
    p = C.p_holds(cfg, t, s)
    pname = "(p1)" if restricted else "(p3)"
    seen = C.all_requests_seen(cfg, t, s)
    sent = [q for q in cfg.tasks[t].interest if q not in s.destinations]
    if st in (TRYING, ADVANCING, ORDERING):
        # in ADVANCING / ORDERING every request is out (Destinations then names other forms)
        for q in sent if st == TRYING else cfg.tasks[t].interest:
            out.append(Row(f"withdraw:{q}", not p, f"withdraw the request at {q} (regressive)",
                           19, "" if not p else f"{pname} to fail"))
    if st == TRYING:
        out += _dest_rows(s, "request", "send a request", 18, p, f"{pname} to hold")
        win = seen and p and C.winnable(cfg, t, s)
        if restricted:
            out.append(Row("win", win, "TRYING → WINNING", 8,
                           "" if win else "all requests first enough in their queues",
                           ref="Sec. 2"))
            return out
        out.append(Row("order", win, "TRYING → ORDERING", 20,
                       "" if win else "all requests first enough in their queues"))
        blocked = seen and p and not C.winnable(cfg, t, s)
        ok = blocked and s.alarm_clock is INF
        out.append(Row("set-alarm", ok, f"set the alarm-clock to clock + Γ = {s.clock + cfg.gamma}",
                       19, "" if ok else "a blocked request and no alarm set"))
        ring = s.alarm_clock is not INF and s.clock >= s.alarm_clock and seen and p
        out.append(Row("alarm", ring, "notice the alarm-clock", 19,
                       "" if ring else f"the clock ({s.clock}) to reach the alarm "
                       f"({'∞' if s.alarm_clock is INF else s.alarm_clock})"))
        return out
    if st == ADVANCING:
        ok = seen and p
        out += _dest_rows(s, "advance", "send an advancing form", 19, ok,
                          f"all requests seen and {pname}")
        done = not s.destinations
        out.append(Row("advanced", done, "ADVANCING → TRYING (all advancing forms sent)", 19,
                       "" if done else "advancing forms still to send"))
        return out
    # ORDERING
    ok = seen and p
    out += _dest_rows(s, "order", "send an order form", 20, ok, f"all requests seen and {pname}")
    won = not s.destinations and ok
    if full:    # R2: the order forms are seen, and T can still win, at every pool
        won = won and C.orders_seen(cfg, t, s) and C.winnable(cfg, t, s)
    out.append(Row("won", won, "ORDERING → WINNING", 20,
                   "" if won else "order forms distributed" + (" and seen" if full else "")))
    return out


# --------------------------------------------------------------------------- effects
def _set_agent_alarm(ctx: Ctx, t: str, moment: int | None) -> None:
    a = ctx.config.tasks[t].agent
    ag = ctx.get(a)
    alarms = tuple(x for x in ag.alarms if x[0] != t)
    if moment is not None:
        alarms = tuple(sorted(alarms + ((t, moment),)))
    if alarms != ag.alarms:
        ctx.put(a, replace(ag, alarms=alarms))


def _send_form(ctx: Ctx, t: str, s: TaskState, pool: str, kind: str, body) -> TaskState:
    ctx.send(t, pool, kind, body)
    return replace(s, destinations=tuple(q for q in s.destinations if q != pool))


class TaskActions:
    """Mixin: ``do_<action>`` for the task actions listed by ``rows``."""

    # Sending a registration form (p. 18). Resolved: it removes P from Destinations.
    def do_register(self, ctx: Ctx, t: str, pool: str) -> None:
        s = _send_form(ctx, t, ctx.get(t), pool, "Registration", t)
        ctx.put(t, s)
        ctx.say(f"{t} sends its registration form to {pool}", t, REF, (18,))

    # REGISTERING -> ADMITTED (p. 18): no absolute predecessors left.
    def do_admitted(self, ctx: Ctx, t: str, _arg: str) -> None:
        cfg = ctx.config
        s = ctx.get(t)
        ctx.put(t, replace(s, status=ADMITTED, destinations=cfg.tasks[t].interest))
        a = cfg.tasks[t].agent
        ag = ctx.get(a)
        ctx.put(a, replace(ag, admitted=ag.admitted + (t,)))
        ctx.say(f"{t} has no absolute predecessors left: ADMITTED, asks {a} for a ticket",
                t, REF, (18,))

    # Sending an admission form (p. 18); it carries the ticket, so it waits for one.
    def do_admit(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        ctx.put(t, _send_form(ctx, t, s, pool, "Admission", (t, s.tickets_at[0])))
        ctx.say(f"{t} sends its admission form (ticket {s.tickets_at[0]}) to {pool}",
                t, REF, (18,))

    # ADMITTED -> TRYING (p. 18).
    def do_try(self, ctx: Ctx, t: str, _arg: str) -> None:
        s = ctx.get(t)
        ctx.put(t, replace(s, status=TRYING, destinations=ctx.config.tasks[t].interest))
        ctx.say(f"{t} enters the competition: TRYING", t, REF, (18,))

    # Sending a request R (p. 18), allowed by (p1)/(p3).
    def do_request(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        k = ctx.config.pool_index(t, pool)
        r = Request(s.tickets_at[0], t, s.sent[k])
        s = replace(s, sent=s.sent[:k] + (s.sent[k] + 1,) + s.sent[k + 1:])
        ctx.put(t, _send_form(ctx, t, s, pool, "Request", r))
        ctx.say(f"{t} sends request {r.ticket}#{r.seq} to {pool}", t, REF, (18,))

    # Sending a withdrawal (pp. 19-20), the regressive behaviour; and in ACCESSING the withdrawal
    # of admission form and request that Section 2 describes (p. 8).
    def do_withdraw(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        if s.status == ACCESSING:
            ctx.put(t, _send_form(ctx, t, s, pool, "Withdrawal", (t, True)))
            ctx.say(f"{t} withdraws its admission form and request at {pool}", t, "Sec. 2", (8,))
            return
        ctx.send(t, pool, "Withdrawal", (t, False))
        if s.status != TRYING:       # regress: every request is out, so Destinations = {P}
            s = replace(s, status=TRYING, destinations=())
        dest = tuple(q for q in ctx.config.tasks[t].interest if q in s.destinations or q == pool)
        ctx.put(t, replace(s, destinations=dest, alarm_clock=INF,
                           blocking=tuple(() for _ in s.about)))
        _set_agent_alarm(ctx, t, None)
        ctx.say(f"{t} withdraws its request at {pool}: the condition fails (regressive behaviour)",
                t, REF, (19, 20))

    # Restricted variant (Sec. 2, p. 8): a task with all requests first enough wins directly.
    def do_win(self, ctx: Ctx, t: str, _arg: str) -> None:
        s = ctx.get(t)
        ctx.put(t, replace(s, status=WINNING, destinations=ctx.config.tasks[t].interest))
        ctx.say(f"{t} wins: WINNING", t, "Sec. 2", (8,))

    # TRYING -> ORDERING (p. 20), guarded as in the prose (p. 9): all requests first enough.
    def do_order(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        if not pool:
            ctx.put(t, replace(s, status=ORDERING, destinations=ctx.config.tasks[t].interest,
                               alarm_clock=INF))
            _set_agent_alarm(ctx, t, None)
            ctx.say(f"{t} may win: ORDERING", t, REF, (20,))
            return
        ctx.put(t, _send_form(ctx, t, s, pool, "Order", (t, s.tickets_at[0])))
        ctx.say(f"{t} sends an order form to {pool}", t, REF, (20,))

    # Setting the alarm-clock (p. 19): clock + Γ as in the prose (p. 9); registers blocking requests.
    def do_set_alarm(self, ctx: Ctx, t: str, _arg: str) -> None:
        cfg = ctx.config
        s = ctx.get(t)
        moment = s.clock + cfg.gamma
        ctx.put(t, replace(s, alarm_clock=moment, blocking=C.blocking_now(cfg, t, s)))
        _set_agent_alarm(ctx, t, moment)
        ctx.say(f"{t} is blocked: sets its alarm-clock to {moment} and registers the blocking "
                "requests", t, REF, (19,))

    # Noticing the alarm-clock (p. 19).
    def do_alarm(self, ctx: Ctx, t: str, _arg: str) -> None:
        cfg = ctx.config
        s = ctx.get(t)
        now = C.blocking_now(cfg, t, s)
        if now != s.blocking:
            moment = s.clock + cfg.gamma
            ctx.put(t, replace(s, alarm_clock=moment, blocking=now))
            _set_agent_alarm(ctx, t, moment)
            ctx.say(f"{t}'s alarm rings but the blocking requests changed: alarm reset to {moment}",
                    t, REF, (19,))
            return
        if cfg.has("R3"):    # R3: only where T is blocked (locality)
            dest = tuple(q for k, q in enumerate(cfg.tasks[t].interest) if now[k])
        else:
            dest = cfg.tasks[t].interest
        ctx.put(t, replace(s, alarm_clock=INF, status=ADVANCING, destinations=dest))
        _set_agent_alarm(ctx, t, None)
        ctx.say(f"{t}'s alarm rings and nothing blocking was removed: ADVANCING", t, REF, (19,))

    # Sending an advancing form (p. 19).
    def do_advance(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        ctx.put(t, _send_form(ctx, t, s, pool, "Advancing", t))
        ctx.say(f"{t} sends an advancing form to {pool}", t, REF, (19,))

    # Leaving ADVANCING (not printed; resolved): back to TRYING once every form is sent.
    def do_advanced(self, ctx: Ctx, t: str, _arg: str) -> None:
        s = ctx.get(t)
        ctx.put(t, replace(s, status=TRYING, destinations=(), blocking=tuple(() for _ in s.about)))
        ctx.say(f"{t} has sent its advancing forms: TRYING again", t, REF, (19,))

    # ORDERING -> WINNING (p. 20).
    def do_won(self, ctx: Ctx, t: str, _arg: str) -> None:
        s = ctx.get(t)
        ctx.put(t, replace(s, status=WINNING, destinations=ctx.config.tasks[t].interest))
        ctx.say(f"{t} has distributed its order forms: WINNING", t, REF, (20,))

    # Sending a winning form (p. 20).
    def do_winning(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        ctx.put(t, _send_form(ctx, t, s, pool, "Winning", t))
        ctx.say(f"{t} sends a winning form to {pool}", t, REF, (20,))

    # WINNING -> ACCESSING (p. 20): a resource booked at every pool; T is executed.
    def do_access(self, ctx: Ctx, t: str, _arg: str) -> None:
        cfg = ctx.config
        s = ctx.get(t)
        ctx.put(t, replace(s, status=ACCESSING, destinations=cfg.tasks[t].interest))
        units = [r for a in s.about for r, u in a.use if u == t]
        ctx.enter_cs(t, units + list(cfg.tasks[t].interest))
        a = cfg.tasks[t].agent
        ag = ctx.get(a)
        ctx.put(a, replace(ag, accessing=ag.accessing + (t,)))
        ctx.say(f"{t} has resources {', '.join(units)} booked: ACCESSING (it is executed)",
                t, REF, (20,))

    # ACCESSING -> RELEASING (p. 20-21): the execution ends (an environment event).
    def do_release(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        if not pool:
            ctx.exit_cs(t)
            ctx.put(t, replace(s, status=RELEASING, destinations=ctx.config.tasks[t].interest))
            ctx.say(f"{t}'s execution ends: RELEASING", t, REF, (21,))
            return
        ctx.put(t, _send_form(ctx, t, s, pool, "Releasing", t))
        ctx.say(f"{t} sends a releasing form to {pool}", t, REF, (21,))

    # Receiving a message from the manager of P (pp. 17-18).
    def on_Info(self, ctx: Ctx, msg: Message) -> None:
        t = msg.dst
        pool, p = msg.body
        s: TaskState = ctx.get(t)
        if s.status in (NEW, LEFT):
            return
        k = ctx.config.pool_index(t, pool)
        a = s.about[k]
        if s.status == RELEASING and t not in a.registered:
            return       # this pool has already confirmed the release
        first = s.status == REGISTERING and t not in a.registered and t in p.applications
        preds = p.admissions if first else tuple(x for x in a.predecessors if x in p.admissions)
        new = About(preds, p.applications, p.requests, p.orders, p.in_use)
        s = replace(s, about=s.about[:k] + (new,) + s.about[k + 1:])
        if s.status == RELEASING and t not in p.applications:
            ctx.say(f"{t} learns that {pool} released its resource", t, REF, (18,))
            if not s.destinations and all(t not in x.registered for x in s.about):
                self._leave(ctx, t, s)
                return
        ctx.put(t, s)

    def _leave(self, ctx: Ctx, t: str, s: TaskState) -> None:
        """T leaves the game and the system (p. 18); resolved: once every pool confirmed."""
        ctx.put(t, replace(s, status=LEFT))
        a = ctx.config.tasks[t].agent
        ag = ctx.get(a)
        ctx.put(a, replace(ag, controlled=tuple(x for x in ag.controlled if x != t),
                           competing=tuple(x for x in ag.competing if x != t)))
        ctx.say(f"{t} leaves the game", t, REF, (18,))
