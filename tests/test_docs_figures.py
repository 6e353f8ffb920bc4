"""Figures the docs quote must match the measured record in benchmarks/README.md.

The docs were written rounds before the searches they quote were re-run, and went stale
(issues 14 and 15 called such rows a defect). These tests read the record's consolidated
tables and check the few figures the docs repeat, so the next re-measurement that changes
the record makes the doc that quotes it fail here instead of going stale quietly.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _section(title: str) -> str:
    """The record's text from a heading containing ``title`` to the next heading."""
    start = RECORD.index(title)
    end = RECORD.find("\n#", start + len(title))
    return RECORD[start:] if end < 0 else RECORD[start:end]


def _family_rows() -> dict[tuple[str, str, str], list[str]]:
    """Issue 14's consolidated table: (protocol, family, variant) -> the row's cells."""
    rows = {}
    for line in _section("Issue 14's families: the consolidated table").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 6 and cells[0] in ("datta_ring", "kout_tree", "coterie", "task_game"):
            rows[(cells[0], cells[1].strip("`"), cells[2])] = cells
    return rows


def _ok(protocol: str, family: str) -> int:
    return int(_number(_family_rows()[(protocol, family, "full")][5].strip("*")))


def _coterie_fig1_goal() -> tuple[str, float]:
    """The goals table's latest coterie Fig. 1 exhaustion: states and CPU seconds."""
    goals = _section("Where each speed goal of issue 15 stands")
    row = next(line for line in goals.splitlines() if line.startswith("| coterie Fig. 1 exhausted"))
    found = re.search(r"ok, ([\d,]+) states in \*\*([\d.]+) CPU s\*\*", row)
    assert found, row
    return found.group(1), _number(found.group(2))


def test_the_readme_quotes_the_latest_coterie_fig1_exhaustion():
    states, cpu = _coterie_fig1_goal()
    line = next(ln for ln in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
                if "check coterie-fig1" in ln)
    assert states in line, line
    assert f"{round(cpu)} CPU s" in line, line


def test_explorer_doc_quotes_the_latest_coterie_fig1_exhaustion():
    states, cpu = _coterie_fig1_goal()
    doc = (ROOT / "docs" / "explorer.md").read_text(encoding="utf-8")
    limits = doc[doc.index("**`limit` is not `ok`.**"):doc.index("**`ok` with partial-order")]
    assert states in limits and f"{round(cpu)} CPU s" in limits, limits


def test_datta_ring_livelock_claim_counts_the_ring_of_two_families():
    ring_two = sum(_ok("datta_ring", f) for f in ("two", "repeat", "departures"))
    doc = (ROOT / "docs" / "protocols" / "datta_ring.md").read_text(encoding="utf-8")
    quoted = re.search(r"([\d,]+)\s+instances of ring 2", doc)
    assert quoted and int(_number(quoted.group(1))) == ring_two, (quoted, ring_two)


def test_kout_tree_doc_quotes_the_clean_start_families():
    doc = (ROOT / "docs" / "protocols" / "kout_tree.md").read_text(encoding="utf-8")
    small, quiet = _ok("kout_tree", "small"), _ok("kout_tree", "small-quiet")
    assert small == quiet  # the doc says "each"; if they differ, the sentence must change
    assert f"`small` and `small-quiet` {small} / {small} ok each" in " ".join(doc.split())


def test_coterie_doc_quotes_the_local_coterie_instance_as_exhausted():
    # benchmarks/coterie.py's "local (q = U), requests [1, 1, 1]" is `three` #0 (same config,
    # same initial state): the plain search's "undecided" must name the explorer's answer.
    lead = _section("coterie `three` #0 and #2 exhausted")
    row = next(line for line in lead.splitlines() if line.startswith("| 0 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "**ok**", row
    doc = " ".join((ROOT / "docs" / "protocols" / "coterie.md").read_text(encoding="utf-8").split())
    assert f"three` #0, and `full` is exhausted there: ok, {cells[3]} states" in doc
