"""The actions of the resource manager that controls a pool P (Section 3, "Actions of resource
managers", pages 15-17). Every receipt ends by sending the new local state to every task with a
registration form in Applications_P (and, for a releasing form, to the releasing task too).
"""

from __future__ import annotations

from dataclasses import replace

from ..kernel import Ctx, Message
from ..kernel.rules import receive
from .data import ManagerState, Request

REF = "Sec. 3"
ROLE = "manager"


def _broadcast(ctx: Ctx, pool: str, p: ManagerState, also: str = "") -> None:
    """"sending messages containing information on the new local state p' to all the tasks with
    registration forms in Applications_P(p')" (every manager action, pp. 15-17)."""
    to = list(p.applications)
    if also and also not in to:
        to.append(also)
    for t in sorted(to):
        ctx.send(pool, t, "Info", (pool, p))


def _add_form(ctx: Ctx, pool: str, field: str, form: object, text: str, page: int) -> None:
    """Receiving a registration, admission or order form: add it to its set (kept sorted, so
    the state does not depend on arrival order), then tell the registered tasks."""
    p = ctx.get(pool)
    p = replace(p, **{field: tuple(sorted(set(getattr(p, field)) | {form}))})
    ctx.put(pool, p)
    ctx.say(text, pool, REF, (page,))
    _broadcast(ctx, pool, p)


def _without(xs: tuple, task: str) -> tuple:
    return tuple(x for x in xs if (x.task if isinstance(x, Request) else x[0]) != task)


class ManagerActions:
    """Mixin: the rules of a resource manager (role ``manager``, one process per pool): one
    receive rule per form, each unconditional (a manager only reacts to forms)."""

    # Receiving a registration form (p. 15).
    @receive("Registration", title="register the task (on Registration)", algorithm=REF,
             lines=(15,), role=ROLE,
             waits="a Registration form to deliver")
    def on_Registration(self, ctx: Ctx, msg: Message) -> None:
        pool, t = msg.dst, msg.body
        _add_form(ctx, pool, "applications", t, f"{pool} registers {t}", 15)

    # Receiving an admission form (p. 15).
    @receive("Admission", title="record the admission form (on Admission)", algorithm=REF,
             lines=(15,), role=ROLE,
             waits="an Admission form to deliver")
    def on_Admission(self, ctx: Ctx, msg: Message) -> None:
        pool, form = msg.dst, msg.body
        _add_form(ctx, pool, "admissions", form,
                  f"{pool} admits {form[0]} with ticket {form[1]}", 15)

    # Receiving a request R (p. 16): appended unless it already occurs.
    @receive("Request", title="queue the request (on Request)", algorithm=REF,
             lines=(16,), role=ROLE,
             waits="a Request form to deliver")
    def on_Request(self, ctx: Ctx, msg: Message) -> None:
        pool, r = msg.dst, msg.body
        p = ctx.get(pool)
        if r not in p.requests:
            p = replace(p, requests=p.requests + (r,))
            ctx.put(pool, p)
        ctx.say(f"{pool} queues request {r.ticket}#{r.seq} of {r.task} at position "
                f"{p.requests.index(r) + 1}", pool, REF, (16,))
        _broadcast(ctx, pool, p)

    # Receiving an order form (p. 16).
    @receive("Order", title="record the order form (on Order)", algorithm=REF,
             lines=(16,), role=ROLE,
             waits="an Order form to deliver")
    def on_Order(self, ctx: Ctx, msg: Message) -> None:
        pool, form = msg.dst, msg.body
        _add_form(ctx, pool, "orders", form, f"{pool} records the order form of {form[0]}", 16)

    # Receiving an advancing form (p. 16): transpose T's request with its predecessor's, unless
    # the predecessor's task has an order form at P.
    @receive("Advancing", title="move the request ahead (on Advancing)", algorithm=REF,
             lines=(16,), role=ROLE,
             waits="an Advancing form to deliver")
    def on_Advancing(self, ctx: Ctx, msg: Message) -> None:
        pool, t = msg.dst, msg.body
        p = ctx.get(pool)
        q = p.requests
        i = next((j for j, r in enumerate(q) if r.task == t), None)
        ordered = {x for x, _ in p.orders}
        if i is not None and i > 0 and q[i - 1].task not in ordered:
            p = replace(p, requests=q[:i - 1] + (q[i], q[i - 1]) + q[i + 1:])
            ctx.put(pool, p)
            ctx.say(f"{pool} moves {t}'s request ahead of {q[i - 1].task}'s", pool, REF, (16,))
        else:
            ctx.say(f"{pool}: {t}'s advancing form has no effect", pool, REF, (16,))
        _broadcast(ctx, pool, p)

    # Receiving a withdrawal (p. 16): removes T's request and order form; the withdrawal sent from
    # ACCESSING (final) also removes T's admission form, as Section 2 says (p. 8).
    @receive("Withdrawal", title="remove the withdrawn forms (on Withdrawal)", algorithm=REF,
             lines=(16,), role=ROLE,
             waits="a Withdrawal form to deliver")
    def on_Withdrawal(self, ctx: Ctx, msg: Message) -> None:
        pool, (t, final) = msg.dst, msg.body
        p = ctx.get(pool)
        p = replace(p, requests=_without(p.requests, t), orders=_without(p.orders, t),
                    admissions=_without(p.admissions, t) if final else p.admissions)
        ctx.put(pool, p)
        ctx.say(f"{pool} removes {t}'s request" + (" and admission form" if final else ""),
                pool, REF, (16,))
        _broadcast(ctx, pool, p)

    # Receiving a winning form (pp. 16-17): book a free resource, if any; else no effect.
    @receive("Winning", title="book a free resource (on Winning)", algorithm=REF,
             lines=(16, 17), role=ROLE,
             waits="a Winning form to deliver")
    def on_Winning(self, ctx: Ctx, msg: Message) -> None:
        pool, t = msg.dst, msg.body
        p = ctx.get(pool)
        used = {r for r, _ in p.in_use}
        free = [r for r in ctx.config.units[pool] if r not in used]
        if free:
            p = replace(p, in_use=tuple(sorted(p.in_use + ((free[0], t),))))
            ctx.put(pool, p)
            ctx.say(f"{pool} books {free[0]} for {t}", pool, REF, (16,))
        else:
            ctx.say(f"{pool} has no free resource: {t}'s winning form is lost", pool, REF, (17,))
        _broadcast(ctx, pool, p)

    # Receiving a releasing form (p. 17): free T's resource and drop its registration form.
    @receive("Releasing", title="free the resource (on Releasing)", algorithm=REF,
             lines=(17,), role=ROLE,
             waits="a Releasing form to deliver")
    def on_Releasing(self, ctx: Ctx, msg: Message) -> None:
        pool, t = msg.dst, msg.body
        p = ctx.get(pool)
        mine = [x for x in p.in_use if x[1] == t]
        if mine:
            p = replace(p, in_use=tuple(x for x in p.in_use if x != mine[0]),
                        applications=tuple(a for a in p.applications if a != t))
            ctx.put(pool, p)
            ctx.say(f"{pool} releases {mine[0][0]} used by {t}", pool, REF, (17,))
        else:
            ctx.say(f"{pool}: {t} uses nothing here; the releasing form has no effect",
                    pool, REF, (17,))
        _broadcast(ctx, pool, p, also=t)
