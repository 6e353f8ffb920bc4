"""The executable erratum: the docs are generated from the erratum files (no drift), and every
entry's counterexample replays to its stated outcome under the printed variant and the repair."""

from __future__ import annotations

import pytest

from protocols.erratum.model import FILES, Erratum, coverage, load, protocols
from protocols.erratum.render import DOCS, render
from protocols.erratum.replay import run_side

PAPERS = ("coterie", "datta_ring", "kout_tree", "task_game")
REPLAYS = [(p, e.id) for p in protocols() for e in load(p).entries() if e.replay]


def test_one_erratum_per_paper() -> None:
    assert tuple(protocols()) == PAPERS
    assert sorted(p.stem for p in FILES.glob("*.json")) == list(PAPERS)


@pytest.mark.parametrize("protocol", PAPERS)
def test_docs_are_generated_from_the_erratum(protocol: str) -> None:
    doc = (DOCS / f"{protocol}.md").read_text(encoding="utf-8")
    assert doc == render(load(protocol)), (
        f"docs/protocols/{protocol}.md and protocols/erratum/files/{protocol}.json drifted: edit "
        f"the erratum file and run python -m protocols.erratum.render")


@pytest.mark.parametrize("protocol", PAPERS)
def test_every_paper_has_replayable_entries(protocol: str) -> None:
    er = load(protocol)
    assert sum(1 for e in er.entries() if e.replay) >= 3
    missing = [e.id for e in er.entries() if e.verification is None]
    assert not missing, f"entries without a verification status: {missing}"


# Entries with nothing to run by nature (a name, a notation, a proof's wording or reference, a
# case that cannot arise): the only ones allowed a no_replay reason. The set may only shrink; any
# other entry, old or new, must bring a replay (issue 18: "every entry replayable").
NOT_RUNNABLE = {
    "coterie:O1", "coterie:O2", "datta_ring:D1", "datta_ring:D11", "datta_ring:D12",
    "datta_ring:D13", "kout_tree:K10", "kout_tree:K11", "kout_tree:K12", "kout_tree:K13",
    "task_game:item 12", "task_game:item 17",
}


def test_every_entry_is_replayable_or_has_nothing_to_run() -> None:
    cov = coverage()
    assert cov["missing"] == [], f"entries with neither a replay nor a no_replay reason: {cov['missing']}"
    extra = sorted(set(cov["not-applicable"]) - NOT_RUNNABLE)
    gone = sorted(NOT_RUNNABLE - set(cov["not-applicable"]))
    assert not extra, f"give these a replay (no_replay is for names and notation only): {extra}"
    assert not gone, f"replayable now, take them off NOT_RUNNABLE: {gone}"


def test_a_replay_and_a_reason_exclude_each_other() -> None:
    data = load("coterie").model_dump(exclude_none=True)
    entry = next(e for s in data["sections"] for e in s["entries"] if e.get("replay"))
    entry["no_replay"] = "a name only; nothing differs at run time"
    with pytest.raises(ValueError, match="exclude each other"):
        Erratum.model_validate(data)


@pytest.mark.parametrize("protocol, entry_id", REPLAYS)
def test_replay_reaches_its_stated_outcome(protocol: str, entry_id: str) -> None:
    e = next(x for x in load(protocol).entries() if x.id == entry_id)
    r = e.replay
    assert r is not None
    printed, repaired = run_side(r, r.printed), run_side(r, r.repair)
    assert printed.outcome == r.printed.outcome, f"{entry_id} under {r.printed.variant}"
    assert repaired.outcome == r.repair.outcome, f"{entry_id} under {r.repair.variant}"
    # a counterexample that ends all-served must have been followed to its end (not cut short)
    assert printed.followed == len(printed.trace) or printed.outcome != "all-served" or r.step
    if r.step is not None:      # judged at a moment: both runs really got there
        assert len(printed.trace) == r.step or printed.outcome != "incomplete"
        assert len(repaired.trace) == r.step or repaired.outcome != "incomplete"
    assert all(ok for _c, ok in printed.claims + repaired.claims), (printed.claims, repaired.claims)
    assert repaired.followed >= 1 or not r.schedule   # the repair really replays the same start


@pytest.mark.parametrize("protocol", PAPERS)
def test_paper_page_lists_every_entry_with_its_replays(protocol: str) -> None:
    from fastapi.testclient import TestClient
    from markupsafe import escape

    from app.main import create_app
    client = TestClient(create_app())
    r = client.get(f"/paper/{protocol}", headers={"accept": "text/html"})
    assert r.status_code == 200
    for e in load(protocol).entries():
        assert f'data-entry="{e.id}"' in r.text
        if e.no_replay:
            assert "nothing to run: " in r.text
        for c in (e.replay.printed.claims + e.replay.repair.claims) if e.replay else []:
            assert f"<code>{escape(c)}</code>" in r.text, (e.id, c)
        if e.replay:
            assert f"/sim/{e.replay.scenario}?variant={e.replay.printed.variant}" in r.text
            assert f"/sim/{e.replay.scenario}?variant={e.replay.repair.variant}" in r.text
    assert client.get("/paper/token_ring", headers={"accept": "text/html"}).status_code == 404


def test_lessons_api_never_sends_the_answer() -> None:
    from fastapi.testclient import TestClient

    from app.main import create_app
    client = TestClient(create_app())
    data = client.get("/api/lessons/datta-fig1-deadlock").json()
    ch = next(c for c in data["chapters"] if c["id"] == "cycle")
    assert set(ch["prediction"]) == {"question", "answer_on", "choices"}
    assert ch["step"] == 10 and len(ch["schedule"]) == 10
    r = client.post("/api/lessons/datta-fig1-deadlock/cycle/answer", json={"answer": "C1"})
    assert r.json()["correct"] is True and r.json()["reveal"]["step"] == 27
    bad = client.post("/api/lessons/datta-fig1-deadlock/cycle/answer", json={"answer": "x" * 500})
    assert bad.status_code in (400, 422)
    assert client.post("/api/lessons/nope/x/answer", json={"answer": "C1"}).status_code == 400
