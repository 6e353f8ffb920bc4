"""Which protocols exist: id -> module and class, imported on first use."""

from __future__ import annotations

import importlib
import importlib.util
from functools import cache

from .kernel import Protocol

PROTOCOLS: dict[str, str] = {
    "token_ring": "protocols.token_ring:TokenRing",
    "datta_ring": "protocols.datta_ring:DattaRing",
    "kout_tree": "protocols.kout_tree:KoutTree",
    "coterie": "protocols.coterie:Coterie",
    "task_game": "protocols.task_game:TaskGame",
    "ricart_agrawala": "protocols.ricart_agrawala:RicartAgrawala",
}


@cache
def available() -> tuple[str, ...]:
    """Ids of the protocols whose module is present in this checkout."""
    out = []
    for pid, target in PROTOCOLS.items():
        mod = target.split(":")[0]
        if importlib.util.find_spec(mod) is not None:
            out.append(pid)
    return tuple(out)


@cache
def get(protocol_id: str) -> Protocol:
    if protocol_id not in PROTOCOLS or protocol_id not in available():
        raise KeyError(f"unknown protocol {protocol_id!r}; known: {', '.join(available())}")
    mod, cls = PROTOCOLS[protocol_id].split(":")
    return getattr(importlib.import_module(mod), cls)()
