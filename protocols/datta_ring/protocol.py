"""The DattaRing protocol class: its rules table and the monitors.

The table is Algorithm 1 (client.py), Algorithm 2 (common.py) and Algorithm 3 (loops.py) as
printed, Section IV (departure.py), and the named overrides of the other variants: the prose's
reading and the no-detection ablation (prose.py), our repairs (repairs.py). The kernel derives
``actions()``, delivery and the inspector's guards from it (kernel/rules.py).
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from ..kernel import Message, Setup
from ..kernel.rules import RuleProtocol
from .build import build
from .client import Algorithm1
from .common import Algorithm2
from .departure import Departures
from .fields import Fields
from .graph import cycles, dependencies, resources
from .loops import Algorithm3
from .prose import Prose
from .repairs import Repairs
from .state import CLIENT, RESOURCE, VARIANT_TABLE, Config
from .view import view as _view


class DattaRing(Repairs, Prose, Departures, Algorithm3, Algorithm2, Algorithm1, RuleProtocol):
    id = "datta_ring"
    title = "Two-resource allocation with unknown participants (rooted ring)"
    version = "1"
    variant_table = VARIANT_TABLE
    scenario_model = Fields
    channels = "unordered"
    view_kind = "ring"
    # A fixed glyph, colour and short label per message type (distinct pairs; the label is
    # always drawn too, so colour never carries the meaning alone): read by the viewer.
    message_styles = {
        "Token": ("star", "#000000", "Token"),
        "NewRequest": ("square", "#0072B2", "NewReq"),
        "NewStrong": ("square", "#CC79A7", "NewStrong"),
        "newStrongACK": ("triangle", "#E69F00", "nsACK"),
        "resAllowed": ("circle", "#0072B2", "resAllowed"),
        "Done": ("circle", "#000000", "Done"),
        "Res1Ready": ("circle", "#56B4E9", "Res1Ready"),
        "seekLoop": ("diamond", "#E69F00", "seekLoop"),
        "NoLoop": ("diamond", "#56B4E9", "NoLoop"),
        "RemoteKillLoop": ("hexagon", "#CC79A7", "RemoteKill"),
        "KillLoop": ("hexagon", "#000000", "KillLoop"),
        "KillLoopACK1": ("vee", "#0072B2", "KL-ACK1"),
        "KillLoopACK2": ("vee", "#CC79A7", "KL-ACK2"),
        "KillLoopNACK": ("vee", "#000000", "KL-NACK"),
        "UnloopDone": ("triangle", "#7a5a00", "UnloopDone"),
        "EndACK": ("circle", "#5b6472", "EndACK"),
        "Leave": ("square", "#5b6472", "Leave"),
        "Departed": ("square", "#7a5a00", "Departed"),
    }
    fault_kinds = ()
    paper = "000_6b7fd52daa412ecf.txt"

    def setup(self, scenario: Any, variant: str) -> Setup:
        return build(scenario, variant)

    def role(self, config: Config, pid: str, state: Any) -> str:
        return RESOURCE if config.is_resource(pid) else CLIENT

    roles_by_pid = True     # ``role`` reads the pid only: the kernel keeps plans by pid

    def features(self, config: Config) -> frozenset[str]:
        on = VARIANT_TABLE.on(config.variant)
        return on - self.ablated if self.ablated else on

    def is_progress(self, msg: Message) -> bool:
        """The token only orders unloops (Definition 3.2): it never unblocks anyone itself, and
        it circulates forever, so a state where only it moves is a deadlock."""
        return msg.kind != "Token"

    def message_label(self, msg: Message) -> str:
        b = msg.body
        if msg.kind == "seekLoop":
            return f"seekLoop(r_min={b[0]}, {b[1]})"
        if msg.kind == "NewRequest":
            return f"NewRequest({b[0]}, {b[1]}, {b[2] or '⊥'})"
        if msg.kind in ("NewStrong", "Res1Ready", "KillLoop", "KillLoopACK1", "KillLoopACK2",
                        "KillLoopNACK", "newStrongACK"):
            return f"{msg.kind}({b[0]})"
        if msg.kind in ("Done", "Leave", "Departed") and b:
            return f"{msg.kind}({b})"
        return msg.kind

    # ---- monitors -------------------------------------------------------------------------
    def tokens(self, sim: Any) -> int:
        """Tokens held plus tokens in flight. ``violations`` asks after every step (the
        explorer: on every transition), so this reads the states in place, with plain loops,
        instead of building ``resources(sim)``."""
        procs, index = sim.procs, sim.index
        n = 0
        for r in sim.config.ring:
            if procs[index[r]].HoldingToken:
                n += 1
        for m in sim.inflight.values():
            if m.kind == "Token":
                n += 1
        return n

    def violations(self, sim: Any) -> list[str]:
        """One token (footnote 2), and a client in its critical section holds the head of
        Q_strong at each of its resources: a resource is allocated only to its head (§III-A.3),
        so reorganising a queue under a client that uses the resource breaks the allocation."""
        n = self.tokens(sim)
        out = [f"{n} tokens on the ring (the paper has exactly one)"] if n > 1 else []
        for c in sim.cs:
            for r in sim.cs[c]:
                h = sim.procs[sim.index[r]].head
                if h is None or h.ClId != c:
                    out.append(f"{c} is in its critical section on {r}, but {r}'s head is "
                               f"{h.ClId if h else '⊥'}")
        return out

    def wait_for(self, sim: Any) -> nx.DiGraph:
        """Definition 3.1's dependency graph (r_i → r_j), so a deadlock names its cycle."""
        return dependencies(sim.config, resources(sim))

    def served_all(self, sim: Any) -> bool:
        cfg = sim.config
        for c in cfg.clients:
            s = sim.procs[sim.index[c]]
            if s.phase == "gone":
                continue
            if s.phase != "idle" or s.next < len(cfg.requests[c]):
                return False
        return True

    def quiescent_ok(self, sim: Any) -> bool:
        return True

    def unfinished(self, config: Config, pid: str, state: Any) -> bool:
        """A client that has started Algorithm 1 and not come back to D = ⊥: waiting for
        resAllowed, in its critical section, or waiting for EndACK after its Done (lines 15–24):
        stuck there it never asks again, so the explorer must count it like a waiting one.
        Resources only react; a departed client has finished."""
        if pid in config.rank:      # ``config.is_resource(pid)``, without the call: the
            return False            # explorer asks after each first-time step
        return state.phase in ("waiting", "cs", "finishing")

    def report(self, sim: Any) -> dict[str, Any]:
        return {"dependency_cycles": cycles(sim.config, self.wait_for(sim)),
                "tokens": self.tokens(sim)}

    def view(self, sim: Any) -> dict[str, Any]:
        return _view(sim)
