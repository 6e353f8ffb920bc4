"""AllocResource (Kakugawa & Yamashita, Section 4): one handler per numbered Case.

Narration references use ``algorithm="AllocResource"`` and ``lines=(case,)``: the paper numbers
the cases of its event-driven algorithm, not lines.

Variants are the named features of ``VARIANTS`` (docs/protocols/coterie.md has the races and
the reasoning):
- ``as-printed``: the Cases literally. Case (8)'s "if it has sent back an UNLOCK" is read as LOCK
  (a preempted process answers RETURN only while it has not locked yet). W_v := ⊥ when the LOCK
  of W_v arrives, by the definition of W_v (Case 6 does not say it).
- ``full``: the smallest repair we found that makes mutual exclusion, Lemma 1 and deadlock-
  freedom hold on exhaustively explored instances: R1, R2, R3 (and C6, the prose's Case 6).
  ``Coterie.ablated`` switches one off to show it is needed (benchmarks/coterie.py --ablate).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..kernel import ENV, Ctx, Message, Setup
from ..kernel.rules import RuleProtocol, receive, rule
from ..kernel.variants import Feature, table
from . import forget as forgetting
from . import monitors, view
from .config import Config, Fields, build, quorum_for, select
from .forget import forget as forget_dead
from .state import Member, Proc, Requester

ALG = "AllocResource"

VARIANTS = table(
    features=(
        Feature("R1", "RESPONSE, PREEMPT and RETURN carry the stamp of the QUERY they answer; a "
                "stale one is ignored (Cases 3, 5, 8)", "coterie:R1"),
        Feature("R2", "on w's LOCK, v removes w's QUERY from X_v, re-queued by a crossed "
                "PREEMPT (Case 6)", "coterie:R2"),
        Feature("R3", "while a PREEMPT to W_v is unanswered, Case 7 sends W_v no update",
                "coterie:R3"),
        Feature("C6", "Case 6 goes on with Case 5 only when W_v = ⊥, not whenever X_v is "
                "non-empty", "coterie:O3"),
    ),
    variants={"as-printed": (), "full": ("R1", "R2", "R3", "C6")},
    default="full")


def _lock_wait(cfg: Config, pid: str, s: Proc) -> str:
    """What Case 1's wait (a RESPONSE from all of q, then k free resources) still needs."""
    r = s.req
    if r.phase != "query":
        return "a pending request"
    have = {c[0] for c in r.copies}
    missing = [v for v in r.q if v not in have]
    if missing:
        return "a RESPONSE from " + ", ".join(missing)
    return f"{r.k} free resources in A_{pid} (has {len(r.A(cfg.S.alpha[pid]))})"


def _request_label(cfg: Config, pid: str, s: Proc) -> str:
    k = cfg.workload[pid][s.req.done]
    return f"{pid} requests {k} resource{'s' * (k > 1)}"


class Coterie(RuleProtocol):
    id = "coterie"
    title = "Local coteries and AllocResource (Kakugawa & Yamashita)"
    version = "1"
    variant_table = VARIANTS
    scenario_model = Fields
    channels = "fifo"
    view_kind = "quorum"
    # A fixed glyph, colour and short label per message type (distinct pairs; the label is
    # always drawn too, so colour never carries the meaning alone): read by the viewer.
    message_styles = {
        "QUERY": ("circle", "#0072B2", "QRY"),
        "RESPONSE": ("square", "#E69F00", "RSP"),
        "LOCK": ("diamond", "#000000", "LCK"),
        "UNLOCK": ("diamond", "#56B4E9", "ULK"),
        "PREEMPT": ("star", "#CC79A7", "PRE"),
        "RETURN": ("vee", "#7a5a00", "RET"),
    }
    fault_kinds = ("drop", "duplicate", "crash")
    paper = "004_f96f560584c998c8.txt"

    # ---- building -------------------------------------------------------------------------
    def setup(self, scenario: Any, variant: str) -> Setup:
        cfg = build(scenario)
        states = tuple(Proc(mem=Member(D=tuple((r, None, 0) for r in cfg.R_of[v])))
                       for v in cfg.S.U)   # D_v(r) = (⊥, 0) initially
        return Setup(cfg.S.U, states, cfg, capacity={r: 1 for r in cfg.S.R})

    # ---- environment: the resource access phase -------------------------------------------
    @rule(ENV, title="request (Case 1)", algorithm=ALG, lines=(1,), progress=False,
          when=lambda cfg, u, s: s.req.phase == "idle" and s.req.done < len(cfg.workload[u]),
          waits=lambda cfg, u, s: "being idle" if s.req.done < len(cfg.workload[u])
          else "no requests left in the workload",
          label=_request_label)
    def request(self, ctx: Ctx, u: str, _arg: str) -> None:
        # Case (1): pick q ∈ Q_u, send ⟨QUERY, u, C_u⟩ to every process in q, then wait.
        cfg: Config = ctx.config
        s = ctx.get(u)
        k = cfg.workload[u][s.req.done]
        q = quorum_for(cfg, u, s.req.done)
        C = s.C + 1
        ts = (C, cfg.rank[u])
        ctx.put(u, replace(s, C=C, req=Requester("query", k, q, ts, (), (), s.req.done + 1)))
        ctx.request(u)
        for v in q:
            ctx.send(u, v, "QUERY", ts)
        ctx.say(f"{u} wants {k} of α({u}) = {{{', '.join(cfg.S.alpha[u])}}} and sends "
                f"QUERY stamped {ts} to its quorum {{{', '.join(q)}}}", u, ALG, (1,))

    @rule(ENV, title="release (Case 2)", algorithm=ALG, lines=(2,),
          when=lambda cfg, u, s: s.req.phase == "cs", waits="holding resources",
          label=lambda cfg, u, s: f"{u} releases {', '.join(s.req.G)}")
    def release(self, ctx: Ctx, u: str, _arg: str) -> None:
        # Case (2): send ⟨UNLOCK, u, C_u, G_u⟩ to every v ∈ q.
        s = ctx.get(u)
        C = s.C + 1
        for v in s.req.q:
            ctx.send(u, v, "UNLOCK", (C, s.req.G))
        ctx.exit_cs(u)
        ctx.put(u, replace(s, C=C, req=replace(s.req, phase="idle", G=(), copies=(), k=0)))
        ctx.say(f"{u} releases {', '.join(s.req.G)} and sends UNLOCK to "
                f"{{{', '.join(s.req.q)}}}", u, ALG, (2,))

    # ---- requester side ---------------------------------------------------------------------
    @receive("RESPONSE", title="receive RESPONSE, then lock (Cases 3, 1)", algorithm=ALG,
             lines=(3, 1), waits=_lock_wait)
    def on_RESPONSE(self, ctx: Ctx, msg: Message) -> None:
        # Case (3): keep the latest D_v (FIFO channels: the last one received is the latest).
        u, v = msg.dst, msg.src
        d, stamp = msg.body
        s = ctx.get(u)
        if s.req.phase != "query" or (ctx.has("R1") and stamp != s.req.ts):
            why = "no request is pending" if s.req.phase != "query" else \
                f"it answers the old request {stamp}, not {s.req.ts} (R1)"
            ctx.say(f"{u} discards a RESPONSE from {v}: {why}", u, ALG, (3,))
            return
        ctx.put(u, replace(s, req=s.req.with_copy(v, d)))
        ctx.say(f"{u} stores D_{v} from {v}'s RESPONSE", u, ALG, (3,))
        self._try_lock(ctx, u)

    def _try_lock(self, ctx: Ctx, u: str) -> None:
        # Case (1), second half: once every v ∈ q answered and |A_u| ≥ k, LOCK k of A_u.
        cfg: Config = ctx.config
        s = ctx.get(u)
        if not s.req.has_all():
            return
        monitors.check_lemma1_on_entry(ctx, u)
        A = s.req.A(cfg.S.alpha[u])
        if len(A) < s.req.k:
            ctx.say(f"{u} is in its Q-region but A_{u} = {{{', '.join(A)}}} has fewer than "
                    f"{s.req.k} free resources: it waits for updates", u, ALG, (1,))
            return
        G = select(cfg, u, A, s.req.k, s.req.done - 1)
        C = s.C + 1
        for v in s.req.q:
            ctx.send(u, v, "LOCK", (C, G))
        ctx.put(u, replace(s, C=C, req=replace(s.req, phase="cs", G=G, copies=())))
        ctx.enter_cs(u, G)
        ctx.say(f"{u} has a RESPONSE from all of {{{', '.join(s.req.q)}}}, A_{u} = "
                f"{{{', '.join(A)}}}: it locks {', '.join(G)} and accesses "
                f"{'them' if len(G) > 1 else 'it'}", u, ALG, (1,))

    @receive("PREEMPT", title="receive PREEMPT (Case 8)", algorithm=ALG, lines=(8,))
    def on_PREEMPT(self, ctx: Ctx, msg: Message) -> None:
        # Case (8): give v's permission back unless the LOCK is already on its way.
        w, v = msg.dst, msg.src
        s = ctx.get(w)
        stale = s.req.phase != "query" or (ctx.has("R1") and msg.body != s.req.ts)
        if stale:
            why = "it has already sent its LOCK" if s.req.phase != "query" else \
                f"it preempts the old request {msg.body} (R1)"
            ctx.say(f"{w} ignores the PREEMPT from {v}: {why}", w, ALG, (8,))
            return
        ctx.put(w, replace(s, req=s.req.without_copy(v)))
        ctx.send(w, v, "RETURN", s.req.ts if ctx.has("R1") else None)
        ctx.say(f"{w} is preempted by {v}: it discards D_{v}, sends RETURN and waits for a new "
                "RESPONSE", w, ALG, (8,))

    # ---- quorum-member side -----------------------------------------------------------------
    def _respond(self, ctx: Ctx, v: str, u: str, m: Member, case: int) -> None:
        """Send ⟨RESPONSE, v, D_v⟩ (the part on α(u)) to u, stamped with T_v in ``full``."""
        d = m.D_for(ctx.config.S.alpha[u])
        ctx.send(v, u, "RESPONSE", (d, m.T if ctx.has("R1") else None))

    def _grant_next(self, ctx: Ctx, v: str, m: Member, case: int, why: str) -> Member:
        # Case (5): take the top QUERY of X_v, send it a RESPONSE, W_v := x, T_v := t.
        if not m.X:
            return replace(m, W=None, T=None, preempting=False)
        (t, x), rest = m.X[0], m.X[1:]
        m = replace(m, W=x, T=t, X=rest, preempting=False)
        self._respond(ctx, v, x, m, case)
        ctx.say(f"{v} {why}: the top of X_{v} is {x}'s QUERY {t}, so {v} sends {x} a RESPONSE",
                v, ALG, (case, 5) if case != 5 else (5,))
        return m

    @receive("QUERY", title="receive QUERY (Case 4)", algorithm=ALG, lines=(4,))
    def on_QUERY(self, ctx: Ctx, msg: Message) -> None:
        # Case (4).
        v, u, t = msg.dst, msg.src, msg.body
        s = ctx.get(v)
        m = s.mem
        C = max(s.C, t[0]) + 1
        if m.W is None:
            m = replace(m, W=u, T=t)
            self._respond(ctx, v, u, m, 4)
            ctx.say(f"{v} is free: it sends its RESPONSE to {u} (W_{v} := {u}, T_{v} := {t})",
                    v, ALG, (4,))
        elif m.T < t:
            m = m.enqueue(t, u)
            ctx.say(f"{v} has granted {m.W} (stamp {m.T} < {t}): {u}'s QUERY waits in X_{v}",
                    v, ALG, (4,))
        elif m.preempting:
            m = m.enqueue(t, u)
            ctx.say(f"{v} already awaits {m.W}'s reply to a PREEMPT: {u}'s QUERY waits in X_{v}",
                    v, ALG, (4,))
        else:
            w = m.W
            m = replace(m.enqueue(m.T, w).enqueue(t, u), preempting=True)
            ctx.send(v, w, "PREEMPT", m.T if ctx.has("R1") else None)
            ctx.say(f"{u}'s QUERY {t} beats {w}'s {m.T}: {v} sends PREEMPT to {w} and queues "
                    "both QUERYs in X_" + v, v, ALG, (4,))
        ctx.put(v, replace(s, C=C, mem=m))

    @receive("RETURN", title="receive RETURN (Case 5)", algorithm=ALG, lines=(5,))
    def on_RETURN(self, ctx: Ctx, msg: Message) -> None:
        # Case (5).
        v, w = msg.dst, msg.src
        s = ctx.get(v)
        m = s.mem
        if ctx.has("R1") and not (m.preempting and m.W == w and m.T == msg.body):
            ctx.say(f"{v} ignores a stale RETURN from {w} (R1)", v, ALG, (5,))
            return
        m = self._grant_next(ctx, v, m, 5, f"gets its permission back from {w}")
        ctx.put(v, replace(s, mem=m))

    @receive("LOCK", title="receive LOCK (Case 6)", algorithm=ALG, lines=(6,))
    def on_LOCK(self, ctx: Ctx, msg: Message) -> None:
        # Case (6): D_v(r) := (w, t) for r ∈ G_w; then Case 5 if X_v is not empty.
        v, w = msg.dst, msg.src
        t, G = msg.body
        s = ctx.get(v)
        m = s.mem.with_D({r: (w, t) for r in G})
        if m.W == w:            # the definition of W_v: v no longer waits for a LOCK
            m = replace(m, W=None, T=None, preempting=False)
        if ctx.has("R2"):     # (R2) w's QUERY re-queued by a crossed PREEMPT is answered
            m = replace(m, X=tuple(e for e in m.X if e[1] != w))
        ctx.say(f"{v} records that {w} locked {', '.join(G)} (D_{v} updated)", v, ALG, (6,))
        if m.X and (m.W is None or not ctx.has("C6")):
            m = self._grant_next(ctx, v, m, 6, f"got {w}'s LOCK")
        ctx.put(v, replace(s, C=max(s.C, t) + 1, mem=m))

    @receive("UNLOCK", title="receive UNLOCK (Case 7)", algorithm=ALG, lines=(7,))
    def on_UNLOCK(self, ctx: Ctx, msg: Message) -> None:
        # Case (7): D_v(r) := (⊥, t); send the new D_v to W_v, else continue Case 5.
        v, w = msg.dst, msg.src
        t, G = msg.body
        s = ctx.get(v)
        m = s.mem.with_D({r: (None, t) for r in G})
        ctx.say(f"{v} records that {w} freed {', '.join(G)}", v, ALG, (7,))
        if m.W is not None:
            if m.preempting and ctx.has("R3"):
                ctx.say(f"{v} sends no update to {m.W}: its PREEMPT is unanswered (R3)",
                        v, ALG, (7,))
            else:
                self._respond(ctx, v, m.W, m, 7)
                ctx.say(f"{v} sends the updated D_{v} to W_{v} = {m.W}", v, ALG, (7,))
        elif m.X:
            m = self._grant_next(ctx, v, m, 7, f"got {w}'s UNLOCK")
        ctx.put(v, replace(s, C=max(s.C, t) + 1, mem=m))

    # ---- partial-order reduction (protocols/explorer/por.py) ------------------------------
    # Every Case handler reads and writes only the process it runs at (ctx.get/put of u or v),
    # and messages go between a requester and the members of its quorums, both ways. The
    # explorer checks both on every transition it computes.
    # Default on in `allocscope check`: AllocResource cannot livelock on a finite workload
    # (every run is finite, docs/protocols/coterie.md), so the skipped livelock search loses
    # nothing.
    por_default = True

    def por_senders(self, config: Config) -> dict[str, tuple[str, ...]]:
        peers: dict[str, set[str]] = {u: set() for u in config.S.U}
        for u in config.S.U:
            for q in config.Q[u]:
                for v in q:
                    peers[u].add(v)
                    peers[v].add(u)
        return {u: tuple(sorted(p)) for u, p in peers.items()}

    def por_signature(self, config: Config, pid: str, s: Proc) -> bool:
        # What violations() reads of one process besides the critical sections: whether it is
        # in its Q-region (Lemma 1). Case 1's in-step Lemma 1 check runs when u has every
        # RESPONSE: on entering the Q-region (this signature changes) or on locking (its
        # critical section changes), both visible; or on an update while u stays in its
        # Q-region, where it can only report a pair violations() already reports.
        return monitors.in_q_region(s)

    def forget(self, config: Config, pids: tuple[str, ...], procs: tuple, messages: tuple):
        # Lamport times no future step reads (forget.py), erased for the explorer's keys.
        return forget_dead(config, pids, procs, messages)

    # ``forget`` in parts (context, one process state, one message content), so the explorer
    # erases each process state and message once per context instead of on every state.
    forget_parts = (forgetting.context, forgetting.forget_proc, forgetting.forget_content)
    # and the context itself from parts: each process state's and message content's part
    # worked out once, the ranks combined from them.
    forget_context_parts = (forgetting.context_proc, forgetting.context_content,
                            forgetting.context_of, forgetting.context_reads_contents)
    # The erasure touches Lamport times only; violations() reads critical sections, phases,
    # quorums and whose copies are held (the explorer's audit checks it on sampled states).
    forget_keeps_violations = True

    # ---- monitors, inspection, view ---------------------------------------------------------
    def violations(self, sim: Any) -> list[str]:
        return monitors.violations(sim)

    def wait_for(self, sim: Any):
        return monitors.wait_for(sim)

    def served_all(self, sim: Any) -> bool:
        cfg: Config = sim.config
        return not sim.waiting and not sim.cs and all(
            s.req.done == len(cfg.workload[u]) for u, s in zip(sim.pids, sim.procs, strict=True))

    def report(self, sim: Any) -> dict[str, Any]:
        cfg: Config = sim.config
        return {"coterie": {u: [list(q) for q in cfg.Q[u]] for u in cfg.S.U},
                "coterie_kind": cfg.coterie_kind}

    def message_label(self, msg: Message) -> str:
        if msg.kind == "QUERY":
            return f"QUERY{msg.body}"
        if msg.kind in ("LOCK", "UNLOCK"):
            return f"{msg.kind} {{{', '.join(msg.body[1])}}}"
        return msg.kind

    def view(self, sim: Any) -> dict[str, Any]:
        return view.build(sim)
