"""Arbitrary initial configurations for self-stabilization (Section 2's model).

Every variable takes an arbitrary value in its declared domain (Algorithm 1 lines 2–7,
Algorithm 2 lines 2–6) and every channel holds up to C_MAX arbitrary messages, so there may be
too many or too few tokens of each type and any number of stale controllers.  Drawn from a
``random.Random(seed)`` so a scenario names the configuration by its seed.
"""

from __future__ import annotations

import random

from .config import Config
from .state import CTRL, IN, OUT, PRIOT, PUSHT, REQ, REST, Ctrl, Proc


def kinds(cfg: Config) -> tuple[str, ...]:
    """The message types the variant uses (an arbitrary message is one of these)."""
    out = [REST]
    if cfg.feat.pusher:
        out.append(PUSHT)
    if cfg.feat.prio:
        out.append(PRIOT)
    if cfg.feat.controller:
        out.append(CTRL)
    return tuple(out)


def arbitrary(cfg: Config, seed: int) -> tuple[tuple[Proc, ...], list[tuple[str, str, str, object]]]:
    rng = random.Random(seed)
    t = cfg.tree
    states = []
    for pid in t.pids:
        d = t.degree(pid)
        s = Proc(State=rng.choice((REQ, IN, OUT)), Need=rng.randint(0, cfg.k),
                 RSet=tuple(sorted(rng.randrange(d) for _ in range(rng.randint(0, cfg.k)))),
                 Prio=rng.choice((None, *range(d))) if cfg.feat.prio else None,
                 myC=rng.randint(0, cfg.top) if cfg.feat.controller else 0,
                 Succ=rng.randrange(d) if cfg.feat.controller else 0)
        if pid == t.root and cfg.feat.controller:
            s = Proc(s.State, s.Need, s.RSet, s.Prio, s.myC, s.Succ,
                     SToken=rng.randint(0, cfg.ell + 1), SPush=rng.randint(0, 2),
                     SPrio=rng.randint(0, 2), Reset=rng.random() < 0.25,
                     Timer=rng.randrange(cfg.timeout))
        states.append(s)
    msgs: list[tuple[str, str, str, object]] = []
    ks = kinds(cfg)
    for p in t.pids:
        for q in t.nbr[p]:
            for _ in range(rng.randint(0, cfg.c_max)):
                kind = rng.choice(ks)
                body = None
                if kind == CTRL:
                    body = Ctrl(rng.randint(0, cfg.top), rng.random() < 0.25,
                                rng.randint(0, cfg.ell + 1), rng.randint(0, 2))
                msgs.append((p, q, kind, body))
    return tuple(states), msgs
