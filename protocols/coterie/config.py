"""What a coterie scenario fixes for a whole run: the structure, the local coterie, the workload
and the resource-selection strategy. Bad values raise ScenarioError naming the field.

``params``:
- ``coterie``: ``local`` (Algorithm LocalCoterie, default) | ``global`` | ``grid`` | ``custom``
  (then ``quorums`` maps each process to its list of quorums; accepted only when valid);
- ``strategy``: how u picks k of A_u in Case 1: ``lowest`` (lowest resource id, default),
  ``arbitrary`` (a draw seeded by ``seed``, the request and the process), ``preference`` (each
  process's ranking in ``preference``, as in the Discussion's printer example);
- ``quorum_choice``: ``first`` (default) or ``rotate`` (request i uses quorum i mod |Q_u|).

``workload``: ``{"requests": {"a": [1, 2], ...}}`` (k per request, in order) or
``{"rounds": 2, "k": 1 | "all" | "random", "seed": 0}`` for every process.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from ..scenario import Fields as ScenarioFields
from ..scenario import ScenarioError, Section
from . import quorums as qm
from .structure import SharingStructure, from_topology

STRATEGIES = ("lowest", "arbitrary", "preference")


# ---- the typed scenario fields (shapes and choices; build() checks what depends on them) ----
class Params(Section):
    coterie: Literal["local", "global", "grid", "custom"] = Field(
        "local", description="the local coterie: Algorithm LocalCoterie, or given in quorums")
    quorums: dict[str, list[list[str]]] | None = Field(
        None, description="coterie custom: each process's list of quorums")
    strategy: Literal["lowest", "arbitrary", "preference"] = Field(
        "lowest", description="how Case 1 picks k of A_u")
    preference: dict[str, list[str]] = Field(
        default_factory=dict, description="strategy preference: each process's ranking of α(u)")
    quorum_choice: Literal["first", "rotate"] = Field(
        "first", description="which quorum of Q_u request i uses")
    seed: int = Field(0, description="seeds the arbitrary strategy")


class Topology(Section):
    kind: Literal["explicit", "chain", "shared", "random"] = Field(
        "explicit", description="explicit: processes, resources, alpha; else generated")
    processes: list[str] | None = Field(None, description="explicit: the processes U")
    resources: list[str] | None = Field(None, description="explicit: the resources R")
    alpha: dict[str, list[str]] | None = Field(None, description="explicit: α(u) per process")
    n: int | None = Field(None, description="chain, shared, random: how many processes")
    m: int | None = Field(None, description="shared, random: how many resources")
    degree: int | None = Field(None, description="random: at most this many resources each")
    seed: int | None = Field(None, description="random: seeds the structure")


class Workload(Section):
    requests: dict[str, list[int]] | None = Field(
        None, description="k of each request, in order, per process")
    rounds: int | None = Field(None, description="without requests: requests per process")
    k: int | Literal["all", "random"] | None = Field(
        None, description="without requests: k of every request")
    seed: int | None = Field(None, description="k random: seeds the draws")


class Fields(ScenarioFields):
    params: Params = Field(default_factory=Params)
    topology: Topology = Field(default_factory=Topology)
    workload: Workload = Field(default_factory=Workload)


@dataclass(frozen=True)
class Config:
    S: SharingStructure
    Q: dict[str, tuple[tuple[str, ...], ...]]     # the local coterie {Q_u}
    R_of: dict[str, tuple[str, ...]]              # R_v = ⋃ α(w) over w ∈ S_v: what v manages
    rank: dict[str, int]                          # process id numbers 1..n (stamp tie-break)
    workload: dict[str, tuple[int, ...]]          # k of each request, per process
    strategy: str
    preference: dict[str, tuple[str, ...]]
    quorum_choice: str
    seed: int
    coterie_kind: str


def _int(value: Any, field: str, lo: int, hi: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ScenarioError(f"{field}: must be a whole number from {lo} to {hi}")
    return value


def _choice(p: dict[str, Any], key: str, default: str, choices: tuple[str, ...]) -> str:
    v = p.get(key, default)
    if not isinstance(v, str) or v not in choices:
        raise ScenarioError(f"scenario.params.{key}: {v!r} is not one of {', '.join(choices)}")
    return v


def build(scenario: Any) -> Config:
    p, wl = scenario.params, scenario.workload
    S = from_topology(scenario.topology)
    kind = _choice(p, "coterie", "local", (*qm.CONSTRUCTIONS, "custom"))
    try:
        if kind == "custom":
            Q = qm.from_lists(S, p.get("quorums"), "scenario.params.quorums")
        else:
            Q = qm.CONSTRUCTIONS[kind](S)
        qm.validate(S, Q)
    except qm.CoterieError as exc:
        field = "scenario.params.quorums" if kind == "custom" else "scenario.params.coterie"
        msg = str(exc)
        raise ScenarioError(msg if msg.startswith("scenario.") else f"{field}: {msg}") from None
    # S_v = {w | v ∈ q for some q ∈ Q_w}; R_v = ⋃_{w ∈ S_v} α(w) (Section 4).
    R_of = {}
    for v in S.U:
        rs = {r for w in S.U if any(v in q for q in Q[w]) for r in S.alpha[w]}
        R_of[v] = tuple(r for r in S.R if r in rs)
    strategy = _choice(p, "strategy", "lowest", STRATEGIES)
    pref = _preference(S, p.get("preference", {}), strategy)
    choice = _choice(p, "quorum_choice", "first", ("first", "rotate"))
    seed = _int(p.get("seed", 0), "scenario.params.seed", 0, 2**63 - 1)
    return Config(S, Q, R_of, {u: i + 1 for i, u in enumerate(S.U)}, _workload(S, wl),
                  strategy, pref, choice, seed, kind)


def _preference(S: SharingStructure, raw: Any, strategy: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(raw, dict):
        raise ScenarioError("scenario.params.preference: must map processes to resource lists")
    out = {}
    for u in S.U:
        ranking = raw.get(u, list(S.alpha[u]))
        if not isinstance(ranking, list) or not all(isinstance(r, str) for r in ranking) \
                or sorted(ranking) != sorted(S.alpha[u]):
            raise ScenarioError(f"scenario.params.preference.{u}: must order exactly α({u}) = "
                                f"{list(S.alpha[u])}")
        out[u] = tuple(ranking)
    for u in raw:
        if u not in S.U:
            raise ScenarioError(f"scenario.params.preference: unknown process {u!r}")
    return out


def _workload(S: SharingStructure, wl: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    if "requests" in wl:
        raw = wl["requests"]
        if not isinstance(raw, dict):
            raise ScenarioError("scenario.workload.requests: must map processes to lists of k")
        out = {}
        for u in S.U:
            ks = raw.get(u, [])
            if not isinstance(ks, list) or len(ks) > 1000:
                raise ScenarioError(f"scenario.workload.requests.{u}: must be a list of at most "
                                    "1000 request sizes")
            for k in ks:
                _int(k, f"scenario.workload.requests.{u}", 1, len(S.alpha[u]))
            out[u] = tuple(ks)
        for u in raw:
            if u not in S.U:
                raise ScenarioError(f"scenario.workload.requests: unknown process {u!r}")
        return out
    rounds = _int(wl.get("rounds", 1), "scenario.workload.rounds", 0, 1000)
    k = wl.get("k", 1)
    if isinstance(k, str) and k not in ("all", "random"):
        raise ScenarioError("scenario.workload.k: must be a whole number, 'all' or 'random'")
    rng = random.Random(_int(wl.get("seed", 0), "scenario.workload.seed", 0, 2**63 - 1))
    out = {}
    for u in S.U:
        a = len(S.alpha[u])
        if k == "all":
            out[u] = (a,) * rounds
        elif k == "random":
            out[u] = tuple(rng.randint(1, a) for _ in range(rounds))
        else:
            _int(k, "scenario.workload.k", 1, 10**6)   # larger than |α(u)| means all of α(u)
            out[u] = (min(k, a),) * rounds
    return out


def select(cfg: Config, u: str, A: tuple[str, ...], k: int, request_no: int) -> tuple[str, ...]:
    """Case 1's "selects a set of k resources from A_u", by the scenario's strategy."""
    if cfg.strategy == "preference":
        ranked = [r for r in cfg.preference[u] if r in A]
    elif cfg.strategy == "arbitrary":
        ranked = list(A)
        random.Random(f"{cfg.seed}:{u}:{request_no}").shuffle(ranked)
    else:
        ranked = list(A)
    chosen = set(ranked[:k])
    return tuple(r for r in cfg.S.R if r in chosen)


def quorum_for(cfg: Config, u: str, request_no: int) -> tuple[str, ...]:
    """Case 1's "arbitrarily selects a quorum q ∈ Q_u"."""
    Qu = cfg.Q[u]
    return Qu[request_no % len(Qu)] if cfg.quorum_choice == "rotate" else Qu[0]
