"""The actions of a task T (Section 3, "Actions of tasks", pages 17-21, and Section 2 for the
restricted variant's direct win), as a rules table (kernel.rules).

A task's role is its status (``TaskGame.role``): the rules of one status are the actions the
paper lists for a task in that status, in its order. Each rule is declared once, with its
guard, its reference and what it waits for; the kernel derives the enabled actions and the
inspector's "why can't it move?" from the same guard. A rule for a form to each pool is a family
(``args``: one event ``head:pool`` per pool still in Destinations). The status changes Section 3
makes immediate are ``eager`` (see ``TaskGame``).

References are ``algorithm="Sec. 3"`` with the page of the printed action list as ``lines``.
"""

from __future__ import annotations

from dataclasses import replace

from ..kernel import ENV, LOCAL, Ctx, Message
from ..kernel.rules import receive, rule
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
    STATUSES,
    TRYING,
    WINNING,
    About,
    Config,
    Request,
    TaskState,
)

REF = "Sec. 3"
COMPETING = (TRYING, ADVANCING, ORDERING)


def _destinations(cfg: Config, t: str, s: TaskState) -> tuple[str, ...]:
    return s.destinations


def _to(label: str):
    """The label of one event of a form family: "T: <label> to P"."""
    return lambda cfg, t, s, pool: f"{t}: {label} to {pool}"


def _as(label: str):
    return lambda cfg, t, s: f"{t}: {label}"


def _pname(cfg: Config) -> str:
    return "(p1)" if cfg.has("restricted") else "(p3)"


def _p(cfg: Config, t: str, s: TaskState) -> bool:
    """(p1) in the restricted variant, (p3) otherwise."""
    return C.p_holds(cfg, t, s)


def _seen_p(cfg: Config, t: str, s: TaskState) -> bool:
    return C.all_requests_seen(cfg, t, s) and C.p_holds(cfg, t, s)


def _may_win(cfg: Config, t: str, s: TaskState) -> bool:
    """All requests distributed, (p1)/(p3), and each first enough in its queue."""
    return _seen_p(cfg, t, s) and C.winnable(cfg, t, s)


def _forms_left(what: str, cond=None, unless: str = ""):
    """What a form family waits for: nothing once the form went to every pool of Destinations,
    else its condition (``unless``)."""
    def waits(cfg: Config, t: str, s: TaskState) -> str:
        if not s.destinations:
            return f"nothing: {what} went to every pool"
        if cond is not None and not cond(cfg, t, s):
            return unless.format(p=_pname(cfg))
        return f"{what} still to send"
    return waits


def _registering_waits(cfg: Config, t: str, s: TaskState) -> str:
    if s.destinations:
        return "registration forms still to send"
    return "its absolute predecessors to leave: " + ", ".join(
        sorted({x for a in s.about for x, _ in a.predecessors}))


def _regress_args(cfg: Config, t: str, s: TaskState) -> tuple[str, ...]:
    """The pools T has a request at: those sent in TRYING; every pool of its interest in
    ADVANCING and ORDERING (every request is out; Destinations then names other forms)."""
    if s.status == TRYING:
        return tuple(q for q in cfg.tasks[t].interest if q not in s.destinations)
    return cfg.tasks[t].interest


def _won(cfg: Config, t: str, s: TaskState) -> bool:
    """As printed (p. 20): the order forms are distributed, and (p3) holds."""
    return not s.destinations and _seen_p(cfg, t, s)


def _won_seen(cfg: Config, t: str, s: TaskState) -> bool:
    """R2: the order forms are also seen, and T can still win, at every pool."""
    return _won(cfg, t, s) and C.orders_seen(cfg, t, s) and C.winnable(cfg, t, s)


def _alarm_rings(cfg: Config, t: str, s: TaskState) -> bool:
    return s.alarm_clock is not INF and s.clock >= s.alarm_clock and _seen_p(cfg, t, s)


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
    """Mixin: the rules of a task, one group per status (its role), in the paper's order."""

    # ---- REGISTERING ----------------------------------------------------------------------------
    # Sending a registration form (p. 18). Resolved: it removes P from Destinations.
    @rule(LOCAL, name="register", title="send a registration form", algorithm=REF, lines=(18,),
          role=REGISTERING, args=_destinations, label=_to("send a registration form"),
          waits=_forms_left("a registration form"))
    def do_register(self, ctx: Ctx, t: str, pool: str) -> None:
        s = _send_form(ctx, t, ctx.get(t), pool, "Registration", t)
        ctx.put(t, s)
        ctx.say(f"{t} sends its registration form to {pool}", t, REF, (18,))

    # REGISTERING -> ADMITTED (p. 18): no absolute predecessors left.
    @rule(LOCAL, name="admitted", title="REGISTERING → ADMITTED", algorithm=REF, lines=(18,),
          role=REGISTERING, eager=True, waits=_registering_waits,
          when=lambda cfg, t, s: not s.destinations and all(not a.predecessors for a in s.about))
    def do_admitted(self, ctx: Ctx, t: str, _arg: str) -> None:
        cfg = ctx.config
        s = ctx.get(t)
        ctx.put(t, replace(s, status=ADMITTED, destinations=cfg.tasks[t].interest))
        a = cfg.tasks[t].agent
        ag = ctx.get(a)
        ctx.put(a, replace(ag, admitted=ag.admitted + (t,)))
        ctx.say(f"{t} has no absolute predecessors left: ADMITTED, asks {a} for a ticket",
                t, REF, (18,))

    # ---- ADMITTED -------------------------------------------------------------------------------
    # Sending an admission form (p. 18); it carries the ticket, so it waits for one.
    @rule(LOCAL, name="admit", title="send an admission form", algorithm=REF, lines=(18,),
          role=ADMITTED, args=_destinations, label=_to("send an admission form"),
          when=lambda cfg, t, s: bool(s.tickets_at),
          waits=_forms_left("an admission form", lambda cfg, t, s: bool(s.tickets_at),
                            "a ticket from its agent"))
    def do_admit(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        ctx.put(t, _send_form(ctx, t, s, pool, "Admission", (t, s.tickets_at[0])))
        ctx.say(f"{t} sends its admission form (ticket {s.tickets_at[0]}) to {pool}",
                t, REF, (18,))

    # ADMITTED -> TRYING (p. 18).
    @rule(LOCAL, name="try", title="ADMITTED → TRYING", algorithm=REF, lines=(18,),
          role=ADMITTED, eager=True, waits="a ticket and all admission forms sent",
          when=lambda cfg, t, s: not s.destinations and bool(s.tickets_at))
    def do_try(self, ctx: Ctx, t: str, _arg: str) -> None:
        s = ctx.get(t)
        ctx.put(t, replace(s, status=TRYING, destinations=ctx.config.tasks[t].interest))
        ctx.say(f"{t} enters the competition: TRYING", t, REF, (18,))

    # ---- ACCESSING ------------------------------------------------------------------------------
    # The withdrawal of admission form and request that Section 2 describes (p. 8), sent from
    # ACCESSING (p. 20).
    @rule(LOCAL, name="withdraw", title="withdraw admission form and request", algorithm=REF,
          lines=(20,), role=ACCESSING, args=_destinations,
          label=_to("withdraw admission form and request"), waits=_forms_left("a withdrawal"))
    def do_withdraw_admission(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        ctx.put(t, _send_form(ctx, t, s, pool, "Withdrawal", (t, True)))
        ctx.say(f"{t} withdraws its admission form and request at {pool}", t, "Sec. 2", (8,))

    # ACCESSING -> RELEASING (p. 20-21): the execution ends (an environment event).
    @rule(ENV, name="release", title="execution ends: ACCESSING → RELEASING", algorithm=REF,
          lines=(20,), role=ACCESSING, when=lambda cfg, t, s: not s.destinations,
          label=_as("execution ends: ACCESSING → RELEASING"), waits="withdrawals still to send")
    def do_release(self, ctx: Ctx, t: str, _arg: str) -> None:
        s = ctx.get(t)
        ctx.exit_cs(t)
        ctx.put(t, replace(s, status=RELEASING, destinations=ctx.config.tasks[t].interest))
        ctx.say(f"{t}'s execution ends: RELEASING", t, REF, (21,))

    # ---- RELEASING ------------------------------------------------------------------------------
    @rule(LOCAL, name="release", title="send a releasing form", algorithm=REF, lines=(21,),
          role=RELEASING, args=_destinations, label=_to("send a releasing form"),
          waits=_forms_left("a releasing form"))
    def do_releasing_form(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        ctx.put(t, _send_form(ctx, t, s, pool, "Releasing", t))
        ctx.say(f"{t} sends a releasing form to {pool}", t, REF, (21,))

    # ---- WINNING --------------------------------------------------------------------------------
    # Sending a winning form (p. 20).
    @rule(LOCAL, name="winning", title="send a winning form", algorithm=REF, lines=(20,),
          role=WINNING, args=_destinations, label=_to("send a winning form"),
          waits=_forms_left("a winning form"))
    def do_winning(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        ctx.put(t, _send_form(ctx, t, s, pool, "Winning", t))
        ctx.say(f"{t} sends a winning form to {pool}", t, REF, (20,))

    # WINNING -> ACCESSING (p. 20): a resource booked at every pool; T is executed.
    @rule(LOCAL, name="access", title="WINNING → ACCESSING", algorithm=REF, lines=(20,),
          role=WINNING, eager=True, when=C.is_user_everywhere,
          waits="a resource booked at every pool")
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

    # ---- TRYING, ADVANCING, ORDERING: the competition proper ----------------------------------
    # Sending a withdrawal (pp. 19-20), the regressive behaviour: the condition fails.
    @rule(LOCAL, name="withdraw", title="withdraw a request (regressive)", algorithm=REF,
          lines=(19,), role=COMPETING, args=_regress_args,
          when=lambda cfg, t, s: not _p(cfg, t, s),
          label=lambda cfg, t, s, q: f"{t}: withdraw the request at {q} (regressive)",
          waits=lambda cfg, t, s: f"{_pname(cfg)} to fail" if _regress_args(cfg, t, s)
          else "a request sent")
    def do_withdraw(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        ctx.send(t, pool, "Withdrawal", (t, False))
        if s.status != TRYING:       # regress: every request is out, so Destinations = {P}
            s = replace(s, status=TRYING, destinations=())
        dest = tuple(q for q in ctx.config.tasks[t].interest if q in s.destinations or q == pool)
        ctx.put(t, replace(s, destinations=dest, alarm_clock=INF,
                           blocking=tuple(() for _ in s.about)))
        _set_agent_alarm(ctx, t, None)
        ctx.say(f"{t} withdraws its request at {pool}: the condition fails (regressive behaviour)",
                t, REF, (19, 20))

    # Sending a request R (p. 18), allowed by (p1)/(p3).
    @rule(LOCAL, name="request", title="send a request", algorithm=REF, lines=(18,),
          role=TRYING, args=_destinations, when=_p, label=_to("send a request"),
          waits=_forms_left("a request", _p, "{p} to hold"))
    def do_request(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        k = ctx.config.pool_index(t, pool)
        r = Request(s.tickets_at[0], t, s.sent[k])
        s = replace(s, sent=s.sent[:k] + (s.sent[k] + 1,) + s.sent[k + 1:])
        ctx.put(t, _send_form(ctx, t, s, pool, "Request", r))
        ctx.say(f"{t} sends request {r.ticket}#{r.seq} to {pool}", t, REF, (18,))

    # Restricted variant (Sec. 2, p. 8): a task with all requests first enough wins directly.
    @rule(LOCAL, name="win", title="TRYING → WINNING", algorithm="Sec. 2", lines=(8,),
          role=TRYING, only=lambda cfg: cfg.has("restricted"), when=_may_win,
          label=_as("TRYING → WINNING"), waits="all requests first enough in their queues")
    def do_win(self, ctx: Ctx, t: str, _arg: str) -> None:
        s = ctx.get(t)
        ctx.put(t, replace(s, status=WINNING, destinations=ctx.config.tasks[t].interest))
        ctx.say(f"{t} wins: WINNING", t, "Sec. 2", (8,))

    # TRYING -> ORDERING (p. 20), guarded as in the prose (p. 9): all requests first enough.
    @rule(LOCAL, name="order", title="TRYING → ORDERING", algorithm=REF, lines=(20,),
          role=TRYING, only=lambda cfg: not cfg.has("restricted"), when=_may_win,
          label=_as("TRYING → ORDERING"), waits="all requests first enough in their queues")
    def do_order(self, ctx: Ctx, t: str, _arg: str) -> None:
        s = ctx.get(t)
        ctx.put(t, replace(s, status=ORDERING, destinations=ctx.config.tasks[t].interest,
                           alarm_clock=INF))
        _set_agent_alarm(ctx, t, None)
        ctx.say(f"{t} may win: ORDERING", t, REF, (20,))

    # Setting the alarm-clock (p. 19): clock + Γ as in the prose (p. 9); registers blocking requests.
    @rule(LOCAL, name="set-alarm", title="set the alarm-clock", algorithm=REF, lines=(19,),
          role=TRYING, only=lambda cfg: not cfg.has("restricted"),
          when=lambda cfg, t, s: _seen_p(cfg, t, s) and not C.winnable(cfg, t, s)
          and s.alarm_clock is INF,
          label=lambda cfg, t, s: f"{t}: set the alarm-clock to clock + Γ = "
          f"{s.clock + cfg.gamma}", waits="a blocked request and no alarm set")
    def do_set_alarm(self, ctx: Ctx, t: str, _arg: str) -> None:
        cfg = ctx.config
        s = ctx.get(t)
        moment = s.clock + cfg.gamma
        ctx.put(t, replace(s, alarm_clock=moment, blocking=C.blocking_now(cfg, t, s)))
        _set_agent_alarm(ctx, t, moment)
        ctx.say(f"{t} is blocked: sets its alarm-clock to {moment} and registers the blocking "
                "requests", t, REF, (19,))

    # Noticing the alarm-clock (p. 19).
    @rule(LOCAL, name="alarm", title="notice the alarm-clock", algorithm=REF, lines=(19,),
          role=TRYING, only=lambda cfg: not cfg.has("restricted"), when=_alarm_rings,
          label=_as("notice the alarm-clock"),
          waits=lambda cfg, t, s: f"the clock ({s.clock}) to reach the alarm "
          f"({'∞' if s.alarm_clock is INF else s.alarm_clock})")
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
        self._advancing(ctx, t, s, cfg.tasks[t].interest)

    # R3 (locality): advancing forms go only to the pools where T is blocked.
    @rule(LOCAL, name="alarm", title="notice the alarm-clock (advance where blocked)",
          algorithm=REF, lines=(19,), role=TRYING, feature="R3", over="do_alarm",
          only=lambda cfg: not cfg.has("restricted"), when=_alarm_rings,
          label=_as("notice the alarm-clock"),
          waits=lambda cfg, t, s: f"the clock ({s.clock}) to reach the alarm "
          f"({'∞' if s.alarm_clock is INF else s.alarm_clock})")
    def do_alarm_local(self, ctx: Ctx, t: str, _arg: str) -> None:
        cfg = ctx.config
        s = ctx.get(t)
        now = C.blocking_now(cfg, t, s)
        if now != s.blocking:
            self.do_alarm(ctx, t, _arg)      # the blocking requests changed: as printed
            return
        self._advancing(ctx, t, s, tuple(q for k, q in enumerate(cfg.tasks[t].interest)
                                         if now[k]))

    def _advancing(self, ctx: Ctx, t: str, s: TaskState, dest: tuple[str, ...]) -> None:
        """The alarm rings and nothing blocking was removed: ADVANCING, forms to ``dest``."""
        ctx.put(t, replace(s, alarm_clock=INF, status=ADVANCING, destinations=dest))
        _set_agent_alarm(ctx, t, None)
        ctx.say(f"{t}'s alarm rings and nothing blocking was removed: ADVANCING", t, REF, (19,))

    # Sending an advancing form (p. 19).
    @rule(LOCAL, name="advance", title="send an advancing form", algorithm=REF, lines=(19,),
          role=ADVANCING, args=_destinations, when=_seen_p, label=_to("send an advancing form"),
          waits=_forms_left("an advancing form", _seen_p, "all requests seen and {p}"))
    def do_advance(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        ctx.put(t, _send_form(ctx, t, s, pool, "Advancing", t))
        ctx.say(f"{t} sends an advancing form to {pool}", t, REF, (19,))

    # Leaving ADVANCING (not printed; resolved): back to TRYING once every form is sent.
    @rule(LOCAL, name="advanced", title="ADVANCING → TRYING (all advancing forms sent)",
          algorithm=REF, lines=(19,), role=ADVANCING, eager=True,
          when=lambda cfg, t, s: not s.destinations, waits="advancing forms still to send")
    def do_advanced(self, ctx: Ctx, t: str, _arg: str) -> None:
        s = ctx.get(t)
        ctx.put(t, replace(s, status=TRYING, destinations=(), blocking=tuple(() for _ in s.about)))
        ctx.say(f"{t} has sent its advancing forms: TRYING again", t, REF, (19,))

    # Sending an order form (p. 20).
    @rule(LOCAL, name="order", title="send an order form", algorithm=REF, lines=(20,),
          role=ORDERING, args=_destinations, when=_seen_p, label=_to("send an order form"),
          waits=_forms_left("an order form", _seen_p, "all requests seen and {p}"))
    def do_order_form(self, ctx: Ctx, t: str, pool: str) -> None:
        s = ctx.get(t)
        ctx.put(t, _send_form(ctx, t, s, pool, "Order", (t, s.tickets_at[0])))
        ctx.say(f"{t} sends an order form to {pool}", t, REF, (20,))

    # ORDERING -> WINNING (p. 20).
    @rule(LOCAL, name="won", title="ORDERING → WINNING", algorithm=REF, lines=(20,),
          role=ORDERING, eager=True, when=_won, waits="order forms distributed")
    def do_won(self, ctx: Ctx, t: str, _arg: str) -> None:
        s = ctx.get(t)
        ctx.put(t, replace(s, status=WINNING, destinations=ctx.config.tasks[t].interest))
        ctx.say(f"{t} has distributed its order forms: WINNING", t, REF, (20,))

    # R2: WINNING only once the order forms are seen and T can still win at every pool.
    @rule(LOCAL, name="won", title="ORDERING → WINNING (order forms seen)", algorithm=REF,
          lines=(20,), role=ORDERING, eager=True, feature="R2", over="do_won", when=_won_seen,
          waits="order forms distributed and seen")
    def do_won_seen(self, ctx: Ctx, t: str, _arg: str) -> None:
        self.do_won(ctx, t, _arg)

    # ---- every status -------------------------------------------------------------------------
    # Receiving a message from the manager of P (pp. 17-18).
    @receive("Info", title="receive the manager's Info", algorithm=REF, lines=(17, 18),
             role=STATUSES, waits="an Info from a manager")
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
