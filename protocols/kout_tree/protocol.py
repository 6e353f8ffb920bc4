"""KoutTree: the kernel's view of the protocol (setup, the rules tables, monitors).

The behaviour is three rules tables (kernel.rules): algorithm1.py (the root, role ``root``),
algorithm2.py (the other processes, role ``process``) and interface.py (the application's
events and the end of each loop pass); the kernel derives the enabled actions, the message
dispatch and the inspector's guards from them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import networkx as nx

from ..kernel import Message, Setup
from ..kernel.rules import RuleProtocol
from ..scenario import ScenarioError
from . import legitimacy, search, views
from .algorithm1 import Root
from .algorithm2 import Process
from .chaos import arbitrary
from .config import VARIANT_TABLE, Config, parse
from .fields import Fields
from .interface import Application
from .state import CTRL, IN, OUT, PRIOT, PUSHT, REQ, REST, Ctrl, Proc, ctrl_label


class KoutTree(Root, Process, Application, RuleProtocol):
    id = "kout_tree"
    title = "Self-stabilizing k-out-of-ℓ exclusion on trees (Datta, Devismes, Horn, Larmore)"
    version = "1"
    variant_table = VARIANT_TABLE
    scenario_model = Fields
    channels = "fifo"
    view_kind = "tree"
    # A fixed glyph, colour and short label per message type (distinct pairs; the label is
    # always drawn too, so colour never carries the meaning alone): read by the viewer.
    message_styles = {
        "ResT": ("hexagon", "#000000", "ResT"),
        "PushT": ("star", "#E69F00", "PushT"),
        "PrioT": ("diamond", "#0072B2", "PrioT"),
        "ctrl": ("square", "#CC79A7", "ctrl"),
    }
    fault_kinds = ("drop", "duplicate", "corrupt")
    paper = "003_b9cbd16512390307.txt"
    # Fig. 3's livelock lets r and b enter over and over while a starves: a repeated state
    # while one requester is bypassed the whole period is what the paper calls a livelock.
    livelock_bypass = True
    # The root's initial counter (a chaos start's) is read only by the timeline's history
    # (``legitimacy.track``): starts that differ only in it are one instance (``check``'s also).
    start_fields = ("myc0",)

    # ---- building -------------------------------------------------------------------------
    def setup(self, scenario: Any, variant: str) -> Setup:
        cfg = parse(scenario, variant)
        t = cfg.tree
        chaos = scenario.params.get("chaos")
        if chaos is not None:
            if not isinstance(chaos, dict) or not isinstance(chaos.get("seed"), int) \
                    or isinstance(chaos.get("seed"), bool) or chaos["seed"] < 0:
                raise ScenarioError("scenario.params.chaos: must be an object {\"seed\": n ≥ 0}")
            states, msgs = arbitrary(cfg, chaos["seed"])
            cfg = replace(cfg, clean=False, myc0=states[0].myC)
        else:
            states = tuple(Proc(myC=1, legit=True) if p == t.root and cfg.feat.controller
                           else Proc() for p in t.pids)
            msgs = self._initial_tokens(cfg, scenario.params.get("tokens"))
        return Setup(t.pids, states, cfg, tuple(msgs))

    @staticmethod
    def _initial_tokens(cfg: Config, given: Any) -> list[tuple[str, str, str, object]]:
        """A clean start: the scenario's tokens (``params.tokens``: [src, dst, kind] in FIFO
        order), those of the variant's types only; the missing ones, and the controller last,
        on the root's channel 0 as if a controller traversal had just begun."""
        t = cfg.tree
        first = (t.root, t.nbr[t.root][0])
        out: list[tuple[str, str, str, object]] = []
        if given is not None:
            if not isinstance(given, list):
                raise ScenarioError("scenario.params.tokens: must be a list of [src, dst, kind]")
            for i, item in enumerate(given):
                f = f"scenario.params.tokens[{i}]"
                if not (isinstance(item, list) and len(item) == 3
                        and all(isinstance(x, str) for x in item)):
                    raise ScenarioError(f"{f}: must be [src, dst, kind]")
                src, dst, kind = item
                if (src, dst) not in t.label:
                    raise ScenarioError(f"{f}: {src!r} and {dst!r} are not neighbours")
                if kind not in (REST, PUSHT, PRIOT):
                    raise ScenarioError(f"{f}: kind must be ResT, PushT or PrioT")
                if kind == PUSHT and not cfg.feat.pusher or kind == PRIOT and not cfg.feat.prio:
                    continue                     # this variant has no such token
                out.append((src, dst, kind, None))
        n_res = sum(1 for m in out if m[2] == REST)
        if given is not None and n_res not in (0, cfg.ell):
            raise ScenarioError(f"scenario.params.tokens: {n_res} ResT listed, ℓ = {cfg.ell}")
        for kind, want in ((REST, cfg.ell), (PUSHT, int(cfg.feat.pusher)),
                           (PRIOT, int(cfg.feat.prio))):
            have = sum(1 for m in out if m[2] == kind)
            if have > want:
                raise ScenarioError(f"scenario.params.tokens: {have} {kind}, at most {want}")
            out.extend((*first, kind, None) for _ in range(want - have))
        if cfg.feat.controller:
            out.append((*first, CTRL, Ctrl(1, False, 0, 0)))
        return out

    # ---- monitors -------------------------------------------------------------------------
    def violations(self, sim: Any) -> list[str]:
        return legitimacy.observe(sim)

    def transient(self, sim: Any, text: str) -> bool:
        return legitimacy.transient(sim, text)

    def monitor_writes(self, config: Config) -> bool:
        """Its monitor keeps the legitimacy ghost in the root's state (legitimacy.observe): with a
        controller, from an arbitrary start the ghost changes (a clean start makes it true), so no
        step is local to its process (kernel.transitions). From a clean start it stays true
        unless a fault strikes, and faults already turn the local fast path off."""
        return config.feat.controller and not config.clean

    def monitor_ghost(self, sim: Any) -> tuple[str, Proc] | None:
        """The monitor's write after a fault-free step (legitimacy.ghost): the explorer replays
        a step's recorded effect and then makes this write, instead of stepping the simulator."""
        return legitimacy.ghost(sim)

    def report(self, sim: Any) -> dict[str, Any]:
        return legitimacy.report(sim)

    # ---- the explorer's hooks (search.py; docs/explorer.md) -----------------------------------
    def forget(self, config: Config, pids: tuple[str, ...], procs: tuple, messages: tuple):
        """Counter rotation: the key takes every counter relative to the root's ``myC``."""
        return search.forget(config, pids, procs, messages)

    forget_parts = (search.context, search.forget_proc, search.forget_content)
    # The rotation keeps every verdict (search.py): the safety predicates read no counter, and
    # clean_start, which begins legitimacy, only compares counters for equality. So a successor
    # whose key is stored need not be judged again (the forget audit compares both verdicts).
    forget_keeps_violations = True
    # the rotation's context is the root's myC: the explorer finds it by numbered parts
    forget_context_parts = (search.context_part, search.content_part, search.combine,
                            search.reads_contents)

    def forget_relabels(self, config: Config) -> bool:
        """The rotation renames ctrl contents, which the livelock search's fairness labels read:
        with a controller the explorer checks ``can_finish`` instead (search.py)."""
        return config.feat.controller

    def explore_events(self, config: Config):
        """The scenario's congestion bound on ``TimeOut`` (search.py), or None."""
        return search.events(config)

    def wait_for(self, sim: Any) -> nx.DiGraph:
        return views.wait_for(sim)

    def served_all(self, sim: Any) -> bool:
        """Every finite workload is done and its process is Out; every repeating workload has
        been served ``target`` times (counted by the kernel's metrics, which time travel keeps)."""
        cfg: Config = sim.config
        served: dict[str, int] = {}
        if any(cfg.repeat.values()):    # the kernel's list is history: read it only if needed
            for p, *_ in sim.monitors.served:
                served[p] = served.get(p, 0) + 1
        for p, s in zip(sim.pids, sim.procs, strict=True):
            if cfg.repeat[p]:
                if served.get(p, 0) < cfg.target[p]:
                    return False
            elif s.job < len(cfg.needs[p]) or s.State != OUT:
                return False
        return True

    def quiescent_ok(self, sim: Any) -> bool:
        """Tokens circulate forever, so a run may stop once everyone is served, but with a
        controller only once the configuration is legitimate (so chaos runs show convergence)."""
        return not sim.config.feat.controller or legitimacy.legitimate(sim)

    # ---- inspection -----------------------------------------------------------------------
    def features(self, config: Config) -> frozenset[str]:
        """The variant's named features (config.VARIANT_TABLE): ``prose-guards`` puts the
        prose's reading of a rule in the place of the printed one (``feature=``/``over=``)."""
        return config.feat.on

    def role(self, config: Config, pid: str, state: Proc) -> str:
        """Algorithm 1 is the root's code, Algorithm 2 every other process's."""
        return "root" if pid == config.root else "process"

    def corruptions(self, config: Config, pid: str, s: Proc) -> Iterable[tuple[str, Any]]:
        d = config.tree.degree(pid)
        out: list[tuple[str, Any]] = [("State", x) for x in (REQ, IN, OUT) if x != s.State]
        out.append(("Need", (s.Need + 1) % (config.k + 1)))
        out.append(("RSet", () if s.RSet else (0,)))
        if config.feat.prio:
            out.append(("Prio", 0 if s.Prio is None else None))
        if config.feat.controller:
            out.append(("myC", (s.myC + 1) % (config.top + 1)))
            out.append(("Succ", (s.Succ + 1) % d))
            if pid == config.root:
                out.append(("SToken", (s.SToken + 1) % (config.ell + 2)))
                out.append(("Reset", not s.Reset))
                out.append(("Timer", (s.Timer + 1) % config.timeout))
        return out

    def message_label(self, msg: Message) -> str:
        return ctrl_label(msg.body) if msg.kind == CTRL else msg.kind

    def view(self, sim: Any) -> dict[str, Any]:
        return views.view(sim)


__all__ = ["KoutTree"]
