"""The CPU-time bound (``max_cpu_seconds`` / ``--max-cpu-seconds``): it counts only this
process's CPU, so time spent waiting for a core (a loaded machine) does not end a search early,
unlike the wall-clock ``max_seconds``; a stopped row says which bound stopped it."""

from __future__ import annotations

import json
import time

import protocols.verify.families as fams
from app.cli import main
from protocols.explorer import check
from protocols.scenario import gallery, parse
from protocols.verify import tasks
from protocols.verify.runner import verify_instance


def _small():
    """A datta_ring instance the explorer exhausts in well under a CPU second (1,066 states,
    about 0.08 s)."""
    task = next(t for t in tasks(fams.get("datta_ring", "two"), "full", quick=True, seeds=0)
                if t["name"].endswith("C1:R1R2 C2:R2R1"))
    return parse(task["scenario"])


def test_a_cpu_bound_stops_the_search_and_says_so():
    res = check(gallery()["datta-fig1"], "full", 200_000, progress_every=200,
                max_cpu_seconds=1e-6)
    assert res["result"] == "limit" and res["stopped"] == "cpu_time"
    assert res["states"] < 1_000          # at the first poll, not at the state bound


def test_waiting_for_a_core_ends_a_wall_bound_but_not_a_cpu_bound():
    sc = _small()
    full = check(sc, "full", 200_000)
    assert full["result"] == "ok" and full["states"] > 1_000

    def stalled() -> bool:                # a search that keeps losing its core for 0.05 s
        time.sleep(0.05)
        return False

    kw = {"progress_every": 20, "should_stop": stalled}
    wall = check(sc, "full", 200_000, max_seconds=0.4, **kw)
    cpu = check(sc, "full", 200_000, max_cpu_seconds=0.4, **kw)
    assert wall["result"] == "limit" and wall["stopped"] == "timeout"
    assert cpu["result"] == "ok" and cpu["states"] == full["states"]


def test_a_verify_row_names_the_bound_and_the_explorers_cpu_time():
    # Fig. 1 with the token (86,443 states): the bound is polled every 10,000 new states
    task = next(t for t in tasks(fams.get("datta_ring", "two"), "full", seeds=0,
                                 max_cpu_seconds=1e-6)
                if t["name"].endswith("token@R1 C1:R1R2 C2:R2R1"))
    row = verify_instance(task)
    assert row["result"] == "limit" and row["explorer"]["stopped"] == "cpu_time"
    assert 0 < row["explorer"]["cpu_seconds"] <= row["cpu_seconds"]


def test_cli_takes_a_cpu_bound_and_a_list_of_indices(capsys):
    assert main(["verify", "coterie", "--family", "small", "--only", "1,4", "--seeds", "0",
                 "--max-cpu-seconds", "60", "--workers", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["index"] for r in out["rows"]] == [1, 4]
    assert all(r["result"] == "ok" for r in out["rows"])
    assert out["summary"]["limits_by_bound"] == {}
    for bad, word in ((["--only", "1,x"], "--only"), (["--max-cpu-seconds", "0"],
                                                       "--max-cpu-seconds")):
        assert main(["verify", "coterie", "--family", "small", *bad]) == 2
        assert word in capsys.readouterr().err
