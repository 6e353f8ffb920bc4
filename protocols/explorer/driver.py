"""Event labels for the fairness check (the explorer drives the kernel through the kernel's
public ``Transitions``; nothing here touches a simulator)."""

from __future__ import annotations

from ..kernel import FAULT, Event


def label(ev: Event) -> tuple:
    """An event's identity independent of message numbering, for the fairness check: a delivery
    is named by its message's content, an action by its id."""
    if ev.msg is not None:
        m = ev.msg
        return ("m", m.src, m.dst, m.kind, m.body)
    return ("e", ev.id)


def is_fair_demand(ev: Event) -> bool:
    """Events that weak fairness forces to happen: progress events that are not faults.
    (A client need not request, a message need not be lost.)"""
    return ev.progress and ev.kind != FAULT
