"""Frames (server -> browser) built from a Session, as docs/websocket.md describes them.

A ``FrameBuilder`` belongs to one connection: it remembers what it last sent (nodes, queues,
edges, messages, step) so that a step is answered by a small ``view_patch`` instead of the whole
view. Full frames (after load, back, goto, reset, or when the view's shape changed) carry the
whole view, the step history and every finding; they also reset the builder's memory.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from protocols import service
from protocols.kernel import DELIVER, Simulator
from protocols.kernel.canon import canon

from .session import Session
from .statehash import StateHasher

HISTORY = 2000
PER_REQUEST_STEP = 60     # metrics.per_request entries on incremental frames (full: all 200)
JUMP_RECORDS = 8          # a goto forward by at most this many steps carries their records
PER_REQUEST_KEYS = ("proc", "requested_at", "response", "waiting")
FIELD_PATCH = 8           # more changed nodes than this: send their changed fields, grouped


class RawJSON:
    """A value already encoded as JSON text (a full frame's history), spliced in by encode."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def value(self) -> Any:
        return json.loads(self.text)


def encode(frame: dict[str, Any]) -> str:
    """Compact JSON; values a protocol's view may hold (sets, dataclasses) go through canon."""
    raw = [(k, v) for k, v in frame.items() if isinstance(v, RawJSON)]
    if not raw:
        return json.dumps(frame, separators=(",", ":"), ensure_ascii=False, default=_plain)
    text = json.dumps({k: v for k, v in frame.items() if not isinstance(v, RawJSON)},
                      separators=(",", ":"), ensure_ascii=False, default=_plain)
    return text[:-1] + "".join(f",{json.dumps(k)}:{v.text}" for k, v in raw) + "}"


def _plain(value: Any) -> Any:
    if isinstance(value, (set, frozenset)) or dataclasses.is_dataclass(value):
        return canon(value)
    raise TypeError(f"cannot send {type(value).__name__} in a frame")


def error(reply_to: Any, message: str) -> dict[str, Any]:
    return {"type": "error", "reply_to": reply_to, "message": message}


def monitors(session: Session) -> dict[str, Any]:
    """The monitor lights as of the current step (findings after it are markers only)."""
    found = service.findings(session.sim)       # as `allocscope run --json` reports them
    return {"safety": "violation" if found["violations"] else "ok", **found,
            "fired": [f.as_dict() for f in session.fired()]}


def message_styles(p: Any) -> dict[str, dict[str, str]]:
    """The protocol's fixed glyph, colour and short label per message type (its
    ``message_styles`` class attribute; empty when it declares none)."""
    return {k: {"glyph": g, "colour": c, "short": s}
            for k, (g, c, s) in getattr(p, "message_styles", {}).items()}


def protocol_info(sim: Simulator) -> dict[str, Any]:
    p = sim.protocol
    return {"id": p.id, "title": p.title, "variants": list(p.variants), "variant": sim.variant,
            "view_kind": p.view_kind, "fault_kinds": list(p.fault_kinds), "channels": sim.channels,
            "message_styles": message_styles(p)}


def history_frame(session: Session, reply_to: Any, lo: int, hi: int) -> dict[str, Any]:
    """The step records of steps lo+1 .. hi of the current timeline (at most HISTORY)."""
    n = len(session.sim.trace)
    hi = min(hi, n)
    lo = max(0, min(lo, hi), hi - HISTORY)
    return {"type": "history", "reply_to": reply_to, "branch": session.branch, "from": lo,
            "to": hi, "total": n, "records": RawJSON(session.history_json(lo, hi))}


def inspect_frame(session: Session, reply_to: Any, pid: str) -> dict[str, Any]:
    info = session.inspect(pid)
    return {"type": "inspect", "reply_to": reply_to, "proc": info["pid"],
            "variables": info["variables"], "guards": info["guards"], "in_cs": info["in_cs"],
            "waiting": info["waiting"], "crashed": info["crashed"], "inbox": info["inbox"]}


class FrameBuilder:
    """Builds the frames of one connection and remembers the last one for the next diff."""

    def __init__(self) -> None:
        self._forget()
        self._hash_key: tuple | None = None
        self._hash_sim: Simulator | None = None
        self._hash = ""
        self._hasher = StateHasher()
        self._version = -1          # the session's timeline version this connection has seen
        self._per_request: list | None = None

    def _forget(self) -> None:
        self.last_step: int | None = None
        self._sim: Simulator | None = None
        self._nodes: dict[str, dict] = {}
        self._queues: dict[tuple[str, str], dict] = {}
        self._edges: Any = None
        self._extra: Any = None
        self._layout: Any = None
        self._msgs: dict[str, tuple[Any, Any, dict]] = {}   # id -> (Message, sent_step, dict)

    # ------------------------------------------------------------------ public
    def full(self, session: Session, reply_to: Any, load: bool = False,
             notice: str = "") -> dict[str, Any]:
        sim = session.sim
        self._forget()
        f = self._common(session, reply_to, notice, full=True)
        if load:
            f["event"] = None
            f["scenario"] = session.scenario.model_dump(mode="json")
            f["own_steps"] = session.own_steps
            f["protocol"] = protocol_info(sim)
        view = dict(sim.protocol.view(sim))
        view["messages"] = self._messages(sim)[0]
        self._remember(sim, view)
        f["view"] = view
        k = sim.step_no
        f["history"] = RawJSON(session.history_json(max(0, k - HISTORY), k))
        f["findings"] = sim.monitors.timeline()
        f["branches"] = session.branch_list()
        f["forget_after"] = 0
        self._version = session.version
        return f

    def incremental(self, session: Session, reply_to: Any, notice: str = "",
                    jump: bool = False) -> dict[str, Any]:
        """A frame with a view_patch against the last frame built, in either direction of the
        timeline; falls back to a full frame when there is no usable base (first frame, a new
        simulator, the view changed shape). ``jump`` (back, goto, a branch switch): a gap of
        more than JUMP_RECORDS steps carries no records; the browser fetches them by range."""
        sim = session.sim
        k = sim.step_no
        if self._sim is not sim or self.last_step is None:
            return self.full(session, reply_to, notice=notice)
        last = self.last_step
        changed = session.version != self._version
        view = sim.protocol.view(sim)
        patch = self._patch(sim, view)
        if patch is None:
            return self.full(session, reply_to, notice=notice)
        f = self._common(session, reply_to, notice)
        f["view_patch"] = patch
        if changed:          # recorded steps changed (a fork, a branch switch): say from where
            f["forget_after"] = session.changed_since(self._version)
            f["findings"] = sim.monitors.timeline()
            f["branches"] = session.branch_list()
            self._version = session.version
            last = min(last, f["forget_after"])
        f["step_record"] = session.record(k) if k == last + 1 else None
        if k > last + 1 and (not jump or k - last <= JUMP_RECORDS):
            # frames were coalesced (slow browser or fast play), or a short jump forward
            f["skipped_records"] = session.records(last, k - 1)
            f["step_record"] = session.record(k)
        self.last_step = k
        return f

    # ------------------------------------------------------------------ parts
    def _common(self, session: Session, reply_to: Any, notice: str,
                full: bool = False) -> dict[str, Any]:
        sim = session.sim
        k = sim.step_no
        f: dict[str, Any] = {
            "type": "frame", "reply_to": reply_to, "step": k, "total": len(sim.trace),
            "state_hash": self._state_hash(sim, full), "event": sim.trace[k - 1] if k else None,
            "playing": session.playing, "branch": session.branch,
            "scheduler": {"kind": session.sched_kind, "seed": session.sched_seed},
            "enabled": [e.as_dict() for e in sim.enabled()],
            "narration": [n.as_dict() for n in sim.narrations[k - 1]] if k else [],
            "monitors": monitors(session),
            "metrics": sim.monitors.metrics(),
        }
        self._lean_per_request(f["metrics"], full)
        said = session.take_notice()
        notice = "; ".join(x for x in (notice, said) if x)
        if notice:
            f["notice"] = notice
        self.last_step = k
        return f

    def _lean_per_request(self, metrics: dict[str, Any], full: bool) -> None:
        """Full frames carry the kernel's last 200 served requests; incremental frames only the
        entries added since this connection's previous frame (``per_request_add``), or, when
        the list changed otherwise (time travel over a serve), its last 60 anew. The list was
        most of a step frame's bytes (4.4 of 5 KB at 100 processes)."""
        pr = metrics["per_request"]
        prev = self._per_request
        self._per_request = pr
        if full:
            return
        if prev is not None and pr == prev:
            del metrics["per_request"]
            metrics["per_request_add"] = []
            return
        if prev:
            last = prev[-1]
            for i in range(len(pr) - 1, -1, -1):
                if pr[i] == last:
                    n = min(i + 1, len(prev))
                    if pr[i + 1 - n:i + 1] == prev[-n:] and len(pr) - i - 1 <= PER_REQUEST_STEP:
                        del metrics["per_request"]
                        metrics["per_request_add"] = pr[i + 1:]
                        return
                    break
            if pr and len(pr) <= len(prev):     # went back: the list is an earlier run of it
                last = pr[-1]
                for i in range(len(prev) - 1, len(pr) - 2, -1):
                    if prev[i] == last:
                        if prev[i + 1 - len(pr):i + 1] == pr:
                            del metrics["per_request"]
                            metrics["per_request_add"] = []
                            metrics["per_request_drop"] = len(prev) - 1 - i
                            return
                        break
        # A far jump: the last 60 anew, by column (a third of the bytes of 60 objects).
        del metrics["per_request"]
        last = pr[-PER_REQUEST_STEP:]
        metrics["per_request_cols"] = {k: [r[k] for r in last] for k in PER_REQUEST_KEYS}

    def _state_hash(self, sim: Simulator, full: bool) -> str:
        """sha256 of the state; cached while the frame's step and timeline are the same (the
        answers to play, pause, speed and scheduler do not move)."""
        k = sim.step_no
        key = (k, tuple(sim.trace[max(0, k - 1):k]), len(sim.trace))
        if self._hash_key == key and self._hash_sim is sim:
            return self._hash
        self._hash_sim = sim
        self._hash_key = key
        self._hash = self._hasher.checked(sim) if full else self._hasher(sim)
        return self._hash

    def _messages(self, sim: Simulator) -> tuple[list[dict], dict[str, Any]]:
        """The messages in flight (send order) and, against the last frame, what changed."""
        heads = {e.id for e in sim.enabled() if e.kind == DELIVER}
        sent_at = sim.monitors.sent_at
        old = self._msgs
        new: dict[str, tuple[Any, Any, dict]] = {}
        out: list[dict] = []
        add: list[dict] = []
        update: list[dict] = []
        for m in sim.inflight.values():
            mid = m.id
            sent = sent_at.get(m.seq)
            ok = mid in heads
            prev = old.get(mid)
            if prev is not None and prev[0] == m and prev[1] == sent:
                d = prev[2]
                if d["deliverable"] != ok:
                    d = {**d, "deliverable": ok}
                    update.append(d)
            else:
                d = {"id": mid, "src": m.src, "dst": m.dst, "type": m.kind,
                     "label": sim.protocol.message_label(m), "sent_step": sent,
                     "deliverable": ok}
                add.append(d)   # ids only grow going forward; time travel is a full frame
            new[mid] = (m, sent, d)
            out.append(d)
        removed = [mid for mid in old if mid not in new]
        self._msgs = new
        return out, {"add": add, "remove": removed, "update": update}

    def _remember(self, sim: Simulator, view: dict[str, Any]) -> None:
        self._sim = sim
        self._layout = view.get("layout")
        self._nodes = {n["id"]: n for n in view.get("nodes", [])}
        self._queues = {(q.get("node"), q.get("name")): q for q in view.get("queues", [])}
        self._edges = view.get("edges", [])
        self._extra = view.get("extra")

    def _patch(self, sim: Simulator, view: dict[str, Any]) -> dict[str, Any] | None:
        nodes = view.get("nodes", [])
        if view.get("layout") != self._layout or len(nodes) != len(self._nodes):
            return None
        changed = []
        old_nodes = self._nodes
        for n in nodes:
            prev = old_nodes.get(n["id"])
            if prev is None:
                return None
            if prev != n:
                changed.append(n)
        fields = None
        if len(changed) > FIELD_PATCH:
            changed, fields = _node_fields(changed, old_nodes)
        queues = {(q.get("node"), q.get("name")): q for q in view.get("queues", [])}
        q_changed = [q for key, q in queues.items() if self._queues.get(key) != q]
        q_changed += [{"node": key[0], "name": key[1], "items": [], "removed": True}
                      for key in self._queues if key not in queues]
        edges = view.get("edges", [])
        extra = view.get("extra")
        patch = {
            "nodes": changed,
            "queues": q_changed,
            "edges": edges if edges != self._edges else None,
            "cycles": view.get("cycles", []),
            "extra": extra if extra != self._extra else None,
            "messages": self._messages(sim)[1],
        }
        if fields is not None:
            patch["node_fields"] = fields
        self._nodes = {n["id"]: n for n in nodes}
        self._queues = queues
        self._edges = edges
        self._extra = extra
        return patch


def _node_fields(changed: list[dict], old: dict[Any, dict]) -> tuple[list[dict], dict]:
    """Split the changed nodes of a far jump into those sent whole (a key appeared or went)
    and, for the others, their changed values grouped by field: ``{field: {id: value}}``.
    At 100 processes a far ``goto`` changes most nodes by one or two fields; whole objects
    made it a 16 KB frame (issue 15)."""
    whole: list[dict] = []
    fields: dict[str, dict[str, Any]] = {}
    for n in changed:
        prev = old[n["id"]]
        if n.keys() != prev.keys():
            whole.append(n)
            continue
        nid = str(n["id"])
        for k, v in n.items():
            if prev[k] != v:
                fields.setdefault(k, {})[nid] = v
    return whole, fields
