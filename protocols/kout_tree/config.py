"""Variants and the per-run configuration (topology, ℓ, k, C_MAX, workload), validated.

The variants are the paper's own construction steps (Section 3), each adding one token type:
``no-pusher`` circulates the ℓ resource tokens only (Fig. 2), ``no-priority`` adds the pusher
(Fig. 3), ``no-controller`` adds the priority token (correct from a clean start only), ``full``
adds the controller with counter flushing (the self-stabilizing protocol, with Algorithm 1
lines 43–73 and Algorithm 2 lines 33–60 reconstructed from the prose), and ``as-printed`` is
``full`` with the printed guards that contradict the prose (docs/protocols/kout_tree.md).
``printed-guard`` is ``full`` with one printed slip only, the pusher's ``Prio ≠ ⊥`` (erratum
K1), so its Fig. 3 starvation is seen without ``as-printed``'s controller defects (K8, K9).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..kernel.variants import Feature, table
from ..scenario import ScenarioError
from .tree import Tree, build, random_tree


@dataclass(frozen=True)
class Features:
    pusher: bool
    prio: bool
    controller: bool
    printed: bool
    on: frozenset[str] = frozenset()    # the variant's named features (the rules' feature=)


# The variants as named features (kernel.variants): ``as-printed`` is the printed pseudocode;
# ``full`` reads its guards as the prose means them; the ablations take the paper's mechanisms
# away one at a time on top of ``full`` (Section 3 builds them up in this order).
_PROSE = ("prose-guards", "pusher-prose")
VARIANT_TABLE = table(
    features=(
        Feature("prose-guards", "the printed guards that contradict the prose (G1-G12) are "
                "read as the prose means them", "kout_tree:G1", "reading"),
        Feature("pusher-prose", "the pusher makes a process release its reserved tokens only "
                "when it holds no PrioT (Prio = ⊥), as the prose says; printed: Prio ≠ ⊥",
                "kout_tree:K1", "reading"),
        Feature("no-controller", "without the controller's ctrl traversal, extra or missing "
                "tokens are never repaired", "", "ablation"),
        Feature("no-priority", "without the PrioT, two requesters can each hold part of what "
                "they need for ever", "", "ablation"),
        Feature("no-pusher", "without the PushT, reserved ResT are never released", "",
                "ablation"),
    ),
    variants={
        "no-pusher": (*_PROSE, "no-controller", "no-priority", "no-pusher"),
        "no-priority": (*_PROSE, "no-controller", "no-priority"),
        "no-controller": (*_PROSE, "no-controller"),
        "as-printed": (),
        "printed-guard": ("prose-guards",),
        "full": _PROSE,
    },
    default="full")


def features(variant: str) -> Features:
    """The switches the algorithms read, from the variant's named features."""
    on = VARIANT_TABLE.on(variant)
    return Features(pusher="no-pusher" not in on, prio="no-priority" not in on,
                    controller="no-controller" not in on, printed="prose-guards" not in on,
                    on=on)


VARIANTS: dict[str, Features] = {v: features(v) for v in VARIANT_TABLE.names}


@dataclass(frozen=True)
class Config:
    tree: Tree
    ell: int
    k: int
    c_max: int
    top: int                                  # myC ∈ [0 .. top], top = 2(n−1)(C_MAX+1)
    feat: Features
    needs: dict[str, tuple[int, ...]]         # each process's requests, in order
    repeat: dict[str, bool]                   # cycle through ``needs`` forever
    target: dict[str, int]                    # served requests that count as "all served"
    timeout: int = 1                          # root clock ticks until TimeOut() holds
    clean: bool = True                        # False: an arbitrary (chaos) initial configuration
    myc0: int = 0                             # the root's initial counter value
    congestion: int | None = None             # search only: TimeOut while < this many ctrl

    @property
    def root(self) -> str:
        return self.tree.root


def _int(value: Any, field: str, lo: int, hi: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ScenarioError(f"{field}: must be a whole number from {lo} to {hi}")
    return value


def parse_tree(topo: dict[str, Any]) -> Tree:
    if "random" in topo:
        r = topo["random"]
        if not isinstance(r, dict):
            raise ScenarioError("scenario.topology.random: must be an object {n, seed}")
        n = _int(r.get("n", 15), "scenario.topology.random.n", 2, 200)
        seed = _int(r.get("seed", 0), "scenario.topology.random.seed", 0, 2**31)
        return random_tree(n, seed)
    root = topo.get("root", "r")
    children = topo.get("children", {"r": ["a", "b"]})
    if not isinstance(root, str) or not root:
        raise ScenarioError("scenario.topology.root: must be a process name")
    if not isinstance(children, dict) or not all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(c, str) for c in v)
            for k, v in children.items()):
        raise ScenarioError("scenario.topology.children: must map each process to a list of "
                            "its children's names")
    try:
        return build(root, children)
    except ValueError as exc:
        raise ScenarioError(f"scenario.topology.children: {exc}") from None


def parse(scenario: Any, variant: str) -> Config:
    p = scenario.params
    tree = parse_tree(scenario.topology)
    ell = _int(p.get("ell", 3), "scenario.params.ell", 1, 1000)
    k = _int(p.get("k", 1), "scenario.params.k", 1, ell)
    c_max = _int(p.get("c_max", 1), "scenario.params.c_max", 0, 8)
    timeout = _int(p.get("timeout", 4 * (tree.n - 1)), "scenario.params.timeout", 1, 10**6)
    congestion = p.get("congestion")
    if congestion is not None:
        congestion = _int(congestion, "scenario.params.congestion", 1, 1000)
    needs: dict[str, tuple[int, ...]] = {}
    repeat: dict[str, bool] = {}
    target: dict[str, int] = {}
    wl = scenario.workload
    if "random" in wl:
        import random
        r = wl["random"]
        if not isinstance(r, dict):
            raise ScenarioError("scenario.workload.random: must be an object {requests, seed}")
        m = _int(r.get("requests", 2), "scenario.workload.random.requests", 0, 10_000)
        rng = random.Random(_int(r.get("seed", 0), "scenario.workload.random.seed", 0, 2**31))
        for pid in tree.pids:
            needs[pid] = tuple(rng.randint(1, k) for _ in range(m))
    else:
        for pid, spec in wl.items():
            field = f"scenario.workload.{pid}"
            if pid not in tree.nbr:
                raise ScenarioError(f"{field}: no process {pid!r} in the tree")
            if isinstance(spec, list):
                spec = {"needs": spec}
            if not isinstance(spec, dict) or not isinstance(spec.get("needs"), list):
                raise ScenarioError(f"{field}: must be a list of Need values or {{needs, repeat}}")
            needs[pid] = tuple(_int(x, f"{field}.needs", 1, k) for x in spec["needs"])
            repeat[pid] = bool(spec.get("repeat", False))
            if repeat[pid] and not needs[pid]:
                raise ScenarioError(f"{field}.needs: a repeating workload needs a request")
            target[pid] = _int(spec.get("target", len(needs[pid])), f"{field}.target", 0, 10**6)
    for pid in tree.pids:
        needs.setdefault(pid, ())
        repeat.setdefault(pid, False)
        target.setdefault(pid, len(needs[pid]))
    top = 2 * (tree.n - 1) * (c_max + 1)
    return Config(tree, ell, k, c_max, top, VARIANTS[variant], needs, repeat, target, timeout,
                  congestion=congestion)
