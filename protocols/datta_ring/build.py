"""From a scenario to the initial global state: the rooted ring, the clients and their requests.

Scenario shape (every field is checked, and a bad one raises ``ScenarioError`` naming it):

    "topology": {"ring": ["R1", "R2", "R3"], "root": "R1"}          root defaults to the first
                (``"token": false`` starts without the token: exhaustive checks only)
    "workload": {"clients": [{"id": "C1", "requests": [["R1", "R2"]], "leaves": "message"}]}
    or          {"generate": {"clients": 30, "requests": 2, "two": 0.6, "seed": 3}}

A request lists one or two distinct resources; the first is the strong one (D[1]), the second
the weak one (D[2]). ``leaves`` (optional) lets that client depart while it waits (Section IV):
"message" sends a departure message, "silent" leaves without a word and the perfect participant
detector tells the resources.
"""

from __future__ import annotations

import random
import re
from typing import Any

from ..kernel import Setup
from ..scenario import ScenarioError
from .state import Client, Config, Resource

_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,15}$")


def _natural(s: str) -> tuple:
    r"""Identifier order: R2 < R10 (digits compare as numbers). The parts of
    ``re.split(r"(\d+)", s)`` — text, digit run, text, …, text (possibly empty) — with each
    digit run as a number, cut by a plain loop: ``re`` compiles its pattern on its first use
    in a process (0.1 ms), which the explorer's first ``check`` of a small ring paid."""
    parts: list = []
    start = i = 0
    n = len(s)
    while i < n:
        if s[i].isdecimal():        # what ``\d`` matches in a str pattern
            j = i + 1
            while j < n and s[j].isdecimal():
                j += 1
            text = s[start:i]
            parts.append(int(text) if text.isdigit() else text)
            parts.append(int(s[i:j]))
            start = i = j
        else:
            i += 1
    text = s[start:]
    parts.append(int(text) if text.isdigit() else text)
    return tuple(parts)


def _ring(topo: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    ring = topo.get("ring", ["R1", "R2"])
    if isinstance(ring, int) and not isinstance(ring, bool):
        if not 2 <= ring <= 64:
            raise ScenarioError("scenario.topology.ring: a count must be from 2 to 64")
        ring = [f"R{i}" for i in range(1, ring + 1)]
    if not isinstance(ring, list) or not 1 <= len(ring) <= 64:
        raise ScenarioError("scenario.topology.ring: must be a list of 1 to 64 resource ids")
    for i, r in enumerate(ring):
        if not isinstance(r, str) or not _ID.match(r):
            raise ScenarioError(f"scenario.topology.ring.{i}: {r!r} is not an identifier "
                                "(a letter, then letters, digits or _)")
    if len(set(ring)) != len(ring):
        raise ScenarioError("scenario.topology.ring: resource ids must be distinct")
    root = topo.get("root", ring[0])
    if root not in ring:
        raise ScenarioError(f"scenario.topology.root: {root!r} is not on the ring")
    extra = sorted(set(topo) - {"ring", "root", "token"})
    if extra:
        raise ScenarioError(f"scenario.topology.{extra[0]}: unknown field (use ring, root, token)")
    if not isinstance(topo.get("token", True), bool):
        raise ScenarioError("scenario.topology.token: must be true or false")
    return tuple(ring), root


def _generate(g: Any, ring: tuple[str, ...]) -> list[dict[str, Any]]:
    if not isinstance(g, dict):
        raise ScenarioError("scenario.workload.generate: must be an object")
    n, k, two, seed = g.get("clients", 4), g.get("requests", 1), g.get("two", 0.5), g.get("seed", 0)
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 500:
        raise ScenarioError("scenario.workload.generate.clients: must be a whole number 1..500")
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 1000:
        raise ScenarioError("scenario.workload.generate.requests: must be a whole number 1..1000")
    if not isinstance(two, (int, float)) or isinstance(two, bool) or not 0 <= two <= 1:
        raise ScenarioError("scenario.workload.generate.two: must be a probability 0..1")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ScenarioError("scenario.workload.generate.seed: must be a whole number ≥ 0")
    rng = random.Random(seed)
    out = []
    for i in range(1, n + 1):
        reqs = []
        for _ in range(k):
            if len(ring) >= 2 and rng.random() < two:
                reqs.append(rng.sample(ring, 2))
            else:
                reqs.append([ring[rng.randrange(len(ring))]])
        out.append({"id": f"C{i}", "requests": reqs})
    return out


def _clients(work: dict[str, Any], ring: tuple[str, ...]) -> list[dict[str, Any]]:
    extra = sorted(set(work) - {"clients", "generate"})
    if extra:
        raise ScenarioError(f"scenario.workload.{extra[0]}: unknown field (use clients or generate)")
    if "generate" in work:
        return _generate(work["generate"], ring)
    cl = work.get("clients")
    if not isinstance(cl, list) or not 1 <= len(cl) <= 500:
        raise ScenarioError("scenario.workload.clients: must be a list of 1 to 500 clients")
    return cl


def build(scenario: Any, variant: str) -> Setup:
    """Validate the scenario and return the kernel's Setup (resources first, then clients)."""
    if scenario.params:
        raise ScenarioError(f"scenario.params.{sorted(scenario.params)[0]}: datta_ring takes no "
                            "params (the ring is under topology, the clients under workload)")
    ring, root = _ring(scenario.topology)
    rank = {r: i for i, r in enumerate(sorted(ring, key=_natural))}
    clients: list[str] = []
    requests: dict[str, tuple] = {}
    leaves: dict[str, str] = {}
    for i, c in enumerate(_clients(scenario.workload, ring)):
        where = f"scenario.workload.clients.{i}"
        if not isinstance(c, dict):
            raise ScenarioError(f"{where}: must be an object with id and requests")
        bad = sorted(set(c) - {"id", "requests", "leaves"})
        if bad:
            raise ScenarioError(f"{where}.{bad[0]}: unknown field (use id, requests, leaves)")
        cid = c.get("id")
        if not isinstance(cid, str) or not _ID.match(cid):
            raise ScenarioError(f"{where}.id: {cid!r} is not an identifier")
        if cid in ring or cid in requests:
            raise ScenarioError(f"{where}.id: {cid!r} is already used")
        reqs = c.get("requests")
        if not isinstance(reqs, list) or not 0 <= len(reqs) <= 1000:
            raise ScenarioError(f"{where}.requests: must be a list of requests")
        out = []
        for j, rq in enumerate(reqs):
            if (not isinstance(rq, list) or not 1 <= len(rq) <= 2
                    or any(r not in ring for r in rq) or len(set(rq)) != len(rq)):
                raise ScenarioError(f"{where}.requests.{j}: must list one or two distinct "
                                    f"resources of the ring ({', '.join(ring)})")
            out.append(tuple(rq))
        lv = c.get("leaves")
        if lv is not None:
            if lv not in ("message", "silent"):
                raise ScenarioError(f"{where}.leaves: must be 'message' or 'silent'")
            leaves[cid] = lv
        clients.append(cid)
        requests[cid] = tuple(out)
    cfg = Config(ring, root, tuple(clients), requests, leaves, variant, rank)
    # The root creates the token at its initialisation (prose fix: with nothing to flush it
    # passes it on at once, as on a Token arrival; as printed it keeps it until a Done).
    # "token": false (for exhaustive checks only) leaves the ring without a token, so ≺ is
    # the identifier order and the state space stays small.
    tok = scenario.topology.get("token", True)
    res = [Resource(HoldingToken=(r == root and tok), r_min=r,
                    SendingToken=(r == root and tok and not cfg.printed),
                    StrongReady=False if cfg.printed else frozenset(),
                    WeakReady=False if cfg.printed else None) for r in ring]
    states = tuple(res) + tuple(Client() for _ in clients)
    return Setup(ring + tuple(clients), states, cfg, capacity={r: 1 for r in ring})
