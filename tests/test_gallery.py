"""Every gallery scenario, under every variant of its protocol, gives the outcome in its expect."""

from __future__ import annotations

from typing import Any

import pytest

from protocols import registry
from protocols.runner import mismatches, run
from protocols.scenario import gallery

CASES = [(sid, v) for sid, sc in gallery().items()
         for v in registry.get(sc.protocol).variants]


@pytest.mark.parametrize("sid, variant", CASES, ids=[f"{s}[{v}]" for s, v in CASES])
def test_gallery_outcome_matches_expect(sid, variant):
    sc = gallery()[sid]
    assert sc.expect is not None, f"{sid} has no expect"
    res = run(sc, variant)
    assert mismatches(res, sc.expect) == [], res["outcome"]


def test_every_gallery_scenario_says_what_it_teaches():
    for sc in gallery().values():
        assert sc.title and sc.teaches, sc.id


def test_each_protocol_declares_a_distinct_style_for_every_message_type_it_sends() -> None:
    """Issue 17 item 2: a fixed glyph + colour + short label per message type, distinct within
    the protocol, for every type the gallery's runs send (so styles never depend on the order
    types appear in, nor collide)."""
    from protocols import registry
    from protocols.runner import build, drive, scheduler_for
    sent: dict[str, set[str]] = {}
    for sc in gallery().values():
        sim = build(sc, None)
        drive(sim, scheduler_for(sc, sim.variant), min(sc.steps, 400))
        sent.setdefault(sc.protocol, set()).update(sim.monitors.metrics()["messages_by_type"])
    for pid, types in sent.items():
        styles = registry.get(pid).message_styles
        assert types <= set(styles), f"{pid}: no style for {sorted(types - set(styles))}"
        pairs = [(g, c) for g, c, _ in styles.values()]
        assert len(set(pairs)) == len(pairs), f"{pid}: two message types share glyph and colour"
        shorts = [s for _, _, s in styles.values()]
        assert len(set(shorts)) == len(shorts) and all(0 < len(s) <= 10 for s in shorts)


def test_the_gallery_page_links_to_the_lessons_and_every_erratum_page() -> None:
    """A teacher landing on / finds the guided lessons and the four erratum pages, and each
    link answers (no dead link from the front page)."""
    from fastapi.testclient import TestClient

    from app.main import create_app
    with TestClient(create_app()) as client:
        page = client.get("/").text
        for href in ("/lessons", "/paper/datta_ring", "/paper/kout_tree", "/paper/coterie",
                     "/paper/task_game"):
            assert f'href="{href}"' in page, href
            assert client.get(href).status_code == 200, href


FAILED = ("violation", "deadlock", "livelock")


def _fired_by(sc, variant: str, step: int) -> bool:
    """Whether ``variant``'s run of ``sc`` has had a monitor fire by ``step``."""
    from protocols.runner import build, drive, report, scheduler_for
    sim = build(sc, variant)
    drive(sim, scheduler_for(sc, variant), step)
    return report(sim, sc)["outcome"] in FAILED


def test_a_bookmark_that_names_a_failure_is_shown_only_where_it_happens() -> None:
    """A bookmark at or after the step where the scenario's own variant fails names that
    failure ("deadlock", "Lemma 1 broken"); under a variant whose run has not failed there it
    would tell the class something false (coterie-race-stale-preempt's "Lemma 1 broken" under
    `full`, where the check says ok): such a bookmark lists its variants."""
    wrong = []
    for sid, sc in gallery().items():
        marks = [b for b in sc.bookmarks if b.variants is None]
        if not marks:
            continue
        own = registry.get(sc.protocol).default_variant if sc.variant is None else sc.variant
        res = run(sc, own)
        if res["outcome"] not in FAILED:
            continue
        fired = res["steps"]
        for b in marks:
            if b.step < fired:
                continue
            wrong += [f"{sid}: {b.label!r} (step {b.step}) under {v}"
                      for v in registry.get(sc.protocol).variants
                      if v != own and not _fired_by(sc, v, b.step)]
    assert wrong == [], wrong


# ---- every bookmark under every variant it is shown for --------------------------------------
# A bookmark is shown under each variant its `variants` lists (all when it has none), at its step
# of the run the viewer opens: the scenario's schedule for that variant, then its scheduler. Its
# label tells the class what happens there, so each claim that can be read mechanically is
# checked on that run at that step: datta-prose-remote-unloop's "deadlock: R1 waits" was shown
# under `naive`, whose deadlock is the plain cycle R1 → R2 → R1, and its "RemoteKillLoop to R2"
# and "R2 breaks the cycle" under three variants where neither happens at steps 11 and 14.

FAILURE_WORDS = {   # words of a label -> the monitor that must have fired by its step
    "deadlock": "deadlock", "wait for ever": "deadlock", "livelock": "livelock",
    "Lemma 1 broken": "violation", "used twice": "violation", "both use": "violation",
    "a second time": "violation", "a second Token": "violation", "ResT for 3 units": "violation"}

# "<process> <verb>" -> what the narration of that step says (a regex; {p} is the process)
VERBS = {
    "locks": r"{p}\b[^/]*\blocks\b", "is given": r"{p}\b[^/]*\blocks\b", "gets": r"{p}\b[^/]*\blocks\b",
    "enters": r"{p}\b[^/]*\benters\b", "served": r"{p}\b[^/]*(enters|leaves) its critical section|{p} has a RESPONSE from all .* accesses",
    "crashes": r"{p} crashes", "withdraws": r"{p} withdraws", "executes": r"{p} has resources .* ACCESSING",
    "wins": r"{p} (wins|has distributed its order forms: WINNING)", "advances": r"{p} sends an advancing form",
    "requests": r"{p} requests|at {p} requests", "sends": r"{p}\b[^/]*\bsends?\b",
    "defers": r"{p} defers", "answers": r"{p}\b[^/]*(sends|answers) \w+ (a )?RESPONSE|{p} answers",
    "leaves": r"{p} leaves", "takes": r"{p} takes", "reserves": r"{p} reserves",
    "keeps the token": r"{p} leaves its critical section and forgets the token",
}

# Labels that name what a step does in the papers' own words: the narration must say it too.
SAID = {
    "RemoteKillLoop to R2": r"RemoteKillLoop to R2",
    "R2 breaks the cycle": r"R2: Score of C2 \+ 1",
    "detection: seekLoop": r"seekLoop", "seekLoop starts": r"seekLoop",
    "cycle found: RemoteKillLoop": r"RemoteKillLoop",
    "cycle broken by the unloop": r"moves C2's request from Q_strong back to Q_weak",
    "cycle broken": r"back to Q_weak",
    "unloop at the ≺-minimum R1": r"R1 locks and starts the unloop",
    "unloop of C3 at R1": r"R1 locks and starts the unloop(?: of C3)?: KillLoop\(C3\)",
    "Fig. 6: after": r"moves C3's request from Q_strong back to Q_weak",
    "the Done is lost (line 80)": r"the Done is lost",
    "C1 sends Done": r"C1 leaves its critical section and sends Done",
    "the token stops at R2 for C2": r"R2 receives the token; Q_token ← C2",
    "the unloop moves C2 behind C3": r"R2: Score of C2 \+ 1",
    "C3 served: line 75 pops C2's copy": r"line 75 pops the oldest copy in Q_token, which is C2's",
    "a second NoLoop stays in flight": r"NoLoop to R1",
    "the old NoLoop is dropped (M7)": r"NoLoop .* stale, dropped",
    "1st unloop of C1": r"starts the unloop(?: of C1)?: KillLoop\(C1\)",
    "2nd unloop of C1": r"starts the unloop(?: of C1)?: KillLoop\(C1\)",
    "3rd unloop of C1": r"starts the unloop(?: of C1)?: KillLoop\(C1\)",
    "a fault duplicates the PrioT": r"fault: PrioT .* duplicated",
    "2 PrioT counted: reset": r"2 PrioT counted .* reset traversal",
    "a takes a PrioT below the reset": r"a takes the priority token",
    "the reset returns: a keeps Prio": r"as printed, Prio stays",
    "the reset traversal ends": r"the controller is back",
    "a reset traversal": r"\(reset\)",
    "the controller counts too many": r"too many, so the root starts a reset traversal",
    "e served: the tour is done": r"e leaves its critical section",
    "1st PREEMPT": r"sends PREEMPT", "2nd": r"sends PREEMPT", "3rd": r"sends PREEMPT",
    "4th": r"sends PREEMPT", "5th PREEMPT": r"sends PREEMPT",
    "p1 enters; p2 waits": r"p1 has every REPLY and enters",
    "T1's winning form is lost": r"T1's winning form is lost",
    "T2's alarm rings": r"T2's alarm rings",
    "the pusher takes a's unit although a holds the PrioT": r"the pusher makes a release",
    "the pusher makes a release it": r"the pusher makes a release",
    "a holds the PrioT and keeps its unit on the pusher": r"a passes the pusher",
    "a takes the PrioT (one unit of two)": r"a takes the priority token",
    "a reserves one token": r"a reserves the ResT",
    "r and b enter": r"b has 1 reserved token .* EnterCS",
    "r and b enter again: one period of Fig. 3": r"b has 1 reserved token .* EnterCS",
    "C2 leaves": r"C2 leaves",
    "cycle found: RemoteKillLoop to R2": r"found a dependency cycle.*RemoteKillLoop to R2",
    "unloop at R2": r"R2 locks and starts the unloop",
    "c waits for y": r"c is in its Q-region .* it waits for updates",
    "b waits for x and y": r"b is in its Q-region .* fewer than 2 free resources: it waits",
    "then u3": r"u3 has a RESPONSE from all .* it locks",
    "a second resAllowed to C1": r"resAllowed to C1",
    "the cycle again (C1's 2nd request)": r"moves C1's weak request from Q_weak to the tail of Q_strong",
}

# Labels about the state (who waits for whom) are read on the protocol's wait-for graph; the
# rest describe a state the papers' figures show and are checked by the lessons (allocscope
# lessons --check) or are the figure's own name.
UNCHECKED = {
    "Fig. 5: before": "the figure's name (datta-fig5-6 opens there; the lesson checks its state)",
    "(i) all three request": "a state: all three processes have requested (kout-fig3's lesson checks it)",
    "all four request": "a state: the four requests (kout-fig2's lesson checks it)",
    "(viii) = (i): livelock": "checked as a livelock above",
    "the state of step 9 recurs (nine controller traversals later): livelock": "checked as a livelock",
    "T3 learns T2 precedes it": "an Info message's content; the step's event is the same under every variant",
    "the reset returns: a keeps Prio": "checked by SAID",
}


def _claims(label: str, pids: set[str]) -> list[tuple[str, Any]]:
    """What ``label`` claims, as (kind, detail) pairs the test below can check."""
    import re
    out: list[tuple[str, Any]] = []
    for words, kind in FAILURE_WORDS.items():
        if words in label:
            out.append(("fired", kind))
    if label in SAID:
        out.append(("said", SAID[label]))
    # a wait-for path or cycle: "cycle R1 → R2 → R1", "u2 → u4 → u3 wait", "T1 ⇄ T2"
    for chain in re.findall(r"\w+(?: (?:→|⇄) \w+)+", label):
        names = re.split(r" (→|⇄) ", chain)
        for i in range(0, len(names) - 2, 2):
            a, arrow, b = names[i], names[i + 1], names[i + 2]
            out.append(("edge", (a, b)))
            if arrow == "⇄":
                out.append(("edge", (b, a)))
    m = re.match(r"(\w+) and (\w+) wait for each other", label)
    if m:
        out += [("edge", (m[1], m[2])), ("edge", (m[2], m[1]))]
    # "deadlock: R1 waits" says one process waits on what never comes, not a wait-for cycle
    # (under `naive` datta-prose-remote-unloop's deadlock is the cycle R1 → R2 → R1)
    if re.match(r"deadlock: \w+ waits", label):
        out.append(("deadlock without a cycle", None))
    m = re.match(r"((?:\w+, )+\w+) in conflict", label)
    if m:
        out.append(("cycle through", set(m[1].split(", "))))
    m = re.search(r"a (\d)-(?:process wait|resource cycle)", label)
    if m:
        out.append(("cycle of", int(m[1])))
    # "<process> <verb> ...": the step's narration says that process does it
    m = re.match(r"(\w+)(?:'s)? (.*)", label)
    if m and m[1] in pids and label not in SAID:
        for verb, pattern in VERBS.items():
            if m[2].startswith(verb) or f"; {m[1]} {verb}" in label:
                out.append(("said", pattern.format(p=re.escape(m[1]))))
                break
    return out


def _false_claims(sid: str, proto: Any, sim: Any, marks: list, last: int) -> list[str]:
    """The claims of ``marks`` (bookmarks at steps up to ``last``) that ``sim``'s recorded run
    does not bear out at their steps."""
    import re

    import networkx as nx
    false = []
    for b in marks:
        if b.step > last:      # beyond the timeline, or past the variant's own run: not shown
            continue
        sim.goto(b.step)
        said = " / ".join(n.text for n in sim.narrations[b.step - 1]) if b.step else ""
        kinds = {f.kind for f in sim.monitors.findings.values() if f.step <= b.step}
        dl = sim.monitors.first("deadlock")
        wf = proto.wait_for(sim)
        where = f"{sid} [{sim.variant}] step {b.step} {b.label!r}"
        for kind, detail in _claims(b.label, set(map(str, sim.pids))):
            if kind == "fired" and detail not in kinds:
                false.append(f"{where}: no {detail} by then")
            elif kind == "said" and not re.search(detail, said):
                false.append(f"{where}: the step says {said[:120]!r}")
            elif kind == "edge" and not wf.has_edge(*detail):
                false.append(f"{where}: {detail[0]} does not wait for {detail[1]}")
            elif kind == "cycle of" and not any(len(c) == detail for c in nx.simple_cycles(wf)):
                false.append(f"{where}: no wait-for cycle of {detail}")
            elif kind == "deadlock without a cycle" and dl is not None and dl.cycle:
                false.append(f"{where}: the deadlock is the wait-for cycle {dl.cycle}")
            elif kind == "cycle through" and not any(detail <= set(c) for c in nx.simple_cycles(wf)):
                false.append(f"{where}: no wait-for cycle through {sorted(detail)}")
    return false


def test_every_bookmark_is_true_under_every_variant_it_is_shown_for() -> None:
    """Each bookmark under each variant it is shown for, on the viewer's own run of that variant
    (app.session.Session, as /sim/<id>?variant=<v> opens it), at its step: a failure it names has
    fired there, a wait-for edge or cycle it names is in the protocol's wait-for graph, and a
    process action it names is in that step's narration. Every bookmark makes at least one such
    checked claim, or UNCHECKED says why not."""
    from app.session import Session
    false, unread = [], []
    for sid, sc in gallery().items():
        proto = registry.get(sc.protocol)
        for v in proto.variants:
            marks = sc.bookmarks_for(v)
            if not marks:
                continue
            s = Session()
            try:
                s.load(sid, variant=v)
            except Exception:       # the viewer cannot open this variant: it shows no bookmark
                continue
            unread += [f"{sid}: {b.label!r}" for b in marks
                       if not _claims(b.label, set(map(str, s.sim.pids))) and b.label not in UNCHECKED]
            false += _false_claims(sid, proto, s.sim, marks, len(s.sim.trace))
    assert (unread, false) == ([], []), ("bookmarks whose claim no rule reads (add one, or say "
                                         f"why in UNCHECKED): {unread}\nfalse:\n" + "\n".join(false))


def test_a_bookmark_is_shown_only_as_far_as_the_run_is_its_variants_own() -> None:
    """The viewer's variant switch replays the current run's schedule under the other variant
    (main.js, switchVariant); that run may part from the variant's own, and a bookmark past
    the parting would describe events that do not happen (full's run of
    datta-prose-remote-unloop under prose: no "R2 breaks the cycle" at 14, no deadlock at 16).
    The session says how far the run is the variant's own (``own_steps``, in the load frame),
    and the viewer shows bookmarks only up to there: every one it shows is true."""
    import re

    from app.session import Session, SessionError
    false = []
    for sid, sc in gallery().items():
        proto = registry.get(sc.protocol)
        for a in proto.variants:
            s = Session()
            try:
                s.load(sid, variant=a)
            except Exception:
                continue
            trace = list(s.sim.trace)
            for b in proto.variants:
                if b == a or not sc.bookmarks_for(b):
                    continue
                t, sched = Session(), trace
                try:
                    t.load(sid, variant=b, schedule=sched, step=len(sched))
                except SessionError as exc:      # as the viewer does: up to where it applies
                    m = re.search(r"schedule item (\d+)", str(exc))
                    if not m:
                        continue
                    sched = trace[:int(m[1])]
                    t.load(sid, variant=b, schedule=sched, step=len(sched))
                own = getattr(t, "own_steps", None)
                last = min(len(t.sim.trace), len(t.sim.trace) if own is None else own)
                false += [f"(from {a}) {x}" for x in _false_claims(sid, proto, t.sim, sc.bookmarks_for(b), last)]
    assert false == [], "\n".join(false)
