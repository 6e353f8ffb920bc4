"""Every gallery scenario, under every variant of its protocol, gives the outcome in its expect."""

from __future__ import annotations

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
