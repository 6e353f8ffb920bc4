"""`allocscope verify` / `sweep`: families enumerate what docs/explorer.md says, the runner finds
and saves replayable counterexamples, and a real Dask LocalCluster gives the local pool's rows."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import protocols.verify.families as fams
from app.cli import main
from protocols.scenario import parse
from protocols.verify import tasks, verify
from protocols.verify.families.kout_tree import rooted_trees
from protocols.verify.runner import run_tasks, verify_instance
from protocols.verify.sweep import sweep

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True,
                          text=True, cwd=cwd or ROOT, timeout=600)


def test_every_family_is_documented_with_its_enumeration():
    doc = (ROOT / "docs" / "explorer.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Families"):]
    for (proto, name), fam in fams.families().items():
        assert re.search(rf"`{proto}`.*`{name}`", section), f"{proto}/{name} not in the docs"
        assert fam.doc


def test_rooted_trees_are_counted_as_in_the_literature():
    # unordered rooted trees with n nodes (OEIS A000081): 1, 1, 2, 4, 9, 20
    assert [len(rooted_trees(n)) for n in range(1, 7)] == [1, 1, 2, 4, 9, 20]


@pytest.mark.parametrize("proto,name,count", [
    ("datta_ring", "two", 42),       # m=2: 4 requests; 1 client: 4, 2 clients: 10; × 3 tokens
    ("datta_ring", "departures", 42),
    ("datta_ring", "four", 90),      # m=4: 12 ordered pairs; 1 client: 12, 2 clients: 78
    ("kout_tree", "small", 24),
    ("coterie", "small", 7),
    ("task_game", "conflicts", 42),  # (4 chains + 3 cycles) × 3 node counts × private or not
])
def test_small_families_have_their_documented_size_and_every_instance_builds(proto, name,
                                                                             count):
    from protocols.runner import build
    xs = fams.instances(fams.get(proto, name))
    assert len(xs) == count
    assert len({x.name for x in xs}) == count and len({x.scenario["id"] for x in xs}) == count
    for x in xs:
        build(parse(x.scenario))


def test_datta_clients_are_taken_up_to_renaming():
    names = [x.name for x in fams.instances(fams.get("datta_ring", "two"))]
    assert "m2 no token C1:R1R2 C2:R2R1" in names
    assert "m2 no token C1:R2R1 C2:R1R2" not in names      # the same instance, renamed


def test_coterie_structures_are_taken_up_to_renaming():
    names = [x.name for x in fams.instances(fams.get("coterie", "small"))]
    assert "u1:r1[1] u2:r2[1]" in names
    assert sum(1 for n in names if n.count("r1r2") == 0 and "r2" in n) == 1


def test_a_counterexample_is_found_saved_and_replays(tmp_path, capsys):
    # the console entry (python -m app.cli): its exit code and JSON on stdout
    out = cli("verify", "datta_ring", "--family", "two", "--variant", "naive", "--quick",
              "--seeds", "2", "--workers", "1", "--save", str(tmp_path), "--json")
    assert out.returncode == 1, out.stderr
    res = json.loads(out.stdout)
    s = res["summary"]
    assert s["counterexample"] >= 1 and s["instances"] == 14
    assert s["ok"] + s["limit"] + s["counterexample"] == s["instances"]
    ce = next(c for c in s["counterexamples"] if c["instance"] == "m2 no token C1:R1R2 C2:R2R1")
    assert ce["kind"] == "deadlock" and ce["found_by"] == "explorer"
    capsys.readouterr()
    assert main(["run", ce["file"], "--json"]) == 1      # the saved file replays (in-process)
    assert json.loads(capsys.readouterr().out)["deadlock"] is not None


def test_limit_is_reported_as_limit_never_as_ok():
    task = next(t for t in tasks(fams.get("datta_ring", "two"), "full", quick=True,
                                 max_states=20, seeds=1) if "C2:R2R1" in t["name"])
    row = verify_instance(task)
    assert row["explorer"]["result"] == "limit" and row["result"] == "limit"


@pytest.mark.parametrize("args, words", [
    (["--family", "nope"], ["no family 'nope'", "two"]),
    (["--family", "two", "--variant", "bogus"], ["bogus"]),
    (["--family", "two", "--max-states", "0"], ["--max-states"]),
    (["--family", "two", "--quick", "--scheduler-address", "tcp://127.0.0.1:9"],
     ["cannot reach the Dask scheduler"]),
], ids=["family", "variant", "max-states", "scheduler"])
def test_bad_input_exits_2_naming_it(args, words, capsys, monkeypatch):
    # in-process through the CLI's main() (one interpreter start for all, not one each; the
    # `python -m app.cli` entry is exercised by the subprocess tests above and below); the
    # unreachable scheduler is given up on after 1 s instead of the CLI's 10 s: the same
    # refused connection, the same error path, nine seconds less waiting
    from protocols.verify import runner
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT", "1s")
    assert main(["verify", "datta_ring", *args]) == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words), err


def test_the_table_for_people_has_a_row_per_instance():
    out = cli("verify", "coterie", "--family", "small", "--first", "2", "--seeds", "1",
              "--workers", "2", "--max-states", "2000", "--progress")
    assert out.returncode == 0, out.stderr
    assert "] 2/2" in out.stderr and "ok 2" in out.stderr          # the progress bar
    lines = out.stdout.splitlines()
    assert lines[0].split()[:4] == ["instance", "states", "result", "seconds"]
    assert len([ln for ln in lines if ln.startswith("u1:")]) == 2
    assert "2 instances" in lines[-1]


def test_sweep_writes_distributions_with_the_bound(tmp_path):
    from protocols.scenario import resolve
    res = sweep(resolve("kout-fig3"), "full", 6, workers=2, chunk=3, out=str(tmp_path / "k"))
    w = res["metrics"]["waiting_time"]
    assert w["bound"]["value"] == 3 * (2 * 3 - 3) ** 2 and w["over_bound"] == 0
    assert w["count"] >= 6 and w["max"] <= w["bound"]["value"]
    svg = (tmp_path / "k.svg").read_text()
    assert svg.startswith("<svg") and "upper bound 27" in svg and "waiting_time" in svg
    data = json.loads((tmp_path / "k.json").read_text())
    assert sum(data["histograms"]["waiting_time"].values()) == w["count"]


# --------------------------------------------------------------- a real Dask cluster

@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as lc:
        yield lc.scheduler_address


def _key(row: dict) -> tuple:
    return (row["index"], row["result"], row["states"], row["explorer"]["transitions"],
            row["random"]["outcomes"], row.get("schedule"))


def test_a_family_on_a_local_cluster_gives_the_local_pools_rows(cluster):
    fam = fams.get("datta_ring", "two")
    kw = {"quick": True, "seeds": 2, "max_states": 5000}
    local = sorted(map(_key, verify(fam, "naive", workers=2, **kw)))
    remote = sorted(map(_key, verify(fam, "naive", scheduler_address=cluster, **kw)))
    assert remote == local and len(local) == 14
    assert any(k[1] == "counterexample" for k in local)


def test_the_cluster_runs_tasks_on_several_worker_processes(cluster):
    pids = set(run_tasks(_pid, [{"i": i} for i in range(40)], scheduler_address=cluster))
    assert len(pids) >= 2


def _pid(task: dict) -> int:
    import os
    import time
    time.sleep(0.05)
    return os.getpid()


def test_a_sweep_on_the_cluster_equals_the_local_one(cluster, tmp_path):
    from protocols.scenario import resolve
    sc = resolve("datta-fig1")
    a = sweep(sc, "full", 12, workers=2, chunk=4, out=None)
    b = sweep(sc, "full", 12, scheduler_address=cluster, chunk=4, out=None)
    assert a["metrics"] == b["metrics"] and a["outcomes"] == b["outcomes"]


def test_grouped_starts_on_a_local_cluster_give_the_local_pools_rows(cluster):
    """``--group-starts`` takes the same path: one task per group, its rows back together."""
    fam = fams.get("kout_tree", "chaos")
    kw = {"only": {5, 6, 7}, "seeds": 1, "max_states": 3000, "group_starts": True}
    local = sorted(map(_key, verify(fam, "no-controller", workers=1, **kw)))
    remote = sorted(map(_key, verify(fam, "no-controller", scheduler_address=cluster, **kw)))
    assert remote == local and [k[1] for k in local] == ["ok", "counterexample",
                                                         "counterexample"]


def test_cli_verify_takes_a_scheduler_address(cluster, tmp_path, capsys):
    assert main(["verify", "coterie", "--family", "small", "--first", "3", "--seeds", "1",
                 "--max-states", "3000", "--scheduler-address", cluster, "--json"]) == 0
    s = json.loads(capsys.readouterr().out)["summary"]
    assert s["instances"] == 3 and s["where"] == f"dask {cluster}"


def test_worst_case_waiting_time_is_searched_over_every_schedule():
    from protocols.kernel import Simulator
    from protocols.registry import get
    from protocols.verify.bounds import worst_case
    x = next(i for i in fams.instances(fams.get("kout_tree", "small"))
             if i.name == "n2 (()) ℓ=1 k=1 r:1 p1:1")
    sc = parse(x.scenario)
    wc = worst_case(sc, "no-controller", "waiting_time", 5_000)
    assert wc["result"] == "ok" and wc["bound"] == 1
    assert wc["max"] == 1 and not wc["over_bound"]       # reached: p1 enters while r waits
    sim = Simulator(get("kout_tree"), sc, "no-controller")
    sim.replay(wc["witness"])                            # the witness is a real schedule
    # ... ending where the root's request is satisfied (it holds its token, Theorem 2's end
    # of waiting) after one entry by p1, before the root's own EnterCS
    r = sim.proc("r")
    assert r.State == "Req" and len(r.RSet) == r.Need == 1 and "r" not in sim.cs
    assert sim.monitors.cs_entries == 1 and "r" in sim.waiting
    small = worst_case(sc, "no-controller", "waiting_time", 50)
    assert small["result"] == "limit" and small["stopped"] == "max_states"


def test_worst_case_coterie_messages_per_request_covers_every_random_run():
    from protocols.coterie.charging import charged_run
    from protocols.verify.bounds import worst_case
    fam = fams.get("coterie", "small")
    assert fam.worst == "messages_per_request"
    x = next(i for i in fams.instances(fam) if i.name == "u1:r1[1] u2:r1r2[2]")
    sc = parse(x.scenario)
    wc = worst_case(sc, "full", "messages_per_request", 20_000)
    assert wc["result"] == "ok" and wc["bound"] == 1 and not wc["capped"]
    # every seeded run's charged counts lie within the searched extremes (the search covers
    # every schedule, random ones included)
    q = {u: len(sc_q[0]) for u, sc_q in charged_run(sc, "full", "random", 0)[1].config.Q.items()}
    for seed in range(8):
        charges, _ = charged_run(sc, "full", "random", seed)
        for (u, _ts), c in charges.items():
            assert sum(c.values()) <= wc["max_messages"]
            assert sum(c.values()) / (4 * q[u]) >= wc["min_over_best"]
    assert wc["min_over_best"] == 1.0            # Section 6's best case 4|q|, met exactly
    assert wc["max_messages"] > 4 * max(q.values())   # contention costs more than 4|q|
    cut = worst_case(sc, "full", "messages_per_request", 100)
    assert cut["result"] == "limit" and cut["max"] <= wc["max"]


def test_cli_verify_runs_a_slice_of_a_family(capsys):
    # in-process through main() (two interpreter starts less); the console entry is covered above
    assert main(["verify", "coterie", "--family", "small", "--skip", "5", "--seeds", "0",
                 "--max-states", "2000", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["index"] for r in rows] == [5, 6]
    assert main(["verify", "coterie", "--family", "small", "--skip", "3", "--first", "3"]) == 2
    assert "--skip" in capsys.readouterr().err


def test_rows_are_written_as_they_arrive_and_survive_a_stopped_run(tmp_path, capsys,
                                                                    monkeypatch):
    import protocols.verify as pv
    real = pv.verify

    def stops_after_one(*args, **kw):             # a run killed after its first instance
        gen = real(*args, **kw)
        yield next(gen)
        raise KeyboardInterrupt
    log = tmp_path / "rows.jsonl"
    monkeypatch.setattr(pv, "verify", stops_after_one)
    with pytest.raises(KeyboardInterrupt):
        main(["verify", "coterie", "--family", "small", "--skip", "5", "--seeds", "0",
              "--max-states", "2000", "--workers", "1", "--rows", str(log)])
    kept = [json.loads(ln) for ln in log.read_text().splitlines()]
    assert [(r["index"], r["result"], r["family"], r["variant"]) for r in kept] == [
        (5, "ok", "small", "full")]
    assert "schedule" not in kept[0]["explorer"]
    monkeypatch.setattr(pv, "verify", real)       # a second run appends, nothing is lost
    assert main(["verify", "coterie", "--family", "small", "--skip", "5", "--seeds", "0",
                 "--max-states", "2000", "--rows", str(log), "--json"]) == 0
    capsys.readouterr()
    again = [json.loads(ln)["index"] for ln in log.read_text().splitlines()]
    assert again[0] == 5 and sorted(again[1:]) == [5, 6]    # in the order the workers finish
    assert main(["verify", "coterie", "--family", "small", "--first", "1",
                 "--rows", str(tmp_path / "no" / "such" / "dir.jsonl")]) == 2
    assert "--rows" in capsys.readouterr().err


def test_sample_takes_every_shape_class_and_the_same_indices_for_the_same_seed():
    fam = fams.get("datta_ring", "repeat")
    every = fams.instances(fam)
    picked, classes = fams.sample(fam, 2, seed=14)
    shapes = [fam.shape(inst.scenario) for inst in every]
    assert sorted(classes) == sorted(set(shapes))            # every class is there
    assert sum(v[0] for v in classes.values()) == len(every)
    for cls, (size, *idx) in classes.items():
        assert size == shapes.count(cls) and len(idx) == min(2, size)
        assert all(shapes[i] == cls for i in idx)
    assert [i for i, _ in picked] == sorted(i for v in classes.values() for i in v[1:])
    for i, inst in picked:                                   # index i is the family's i-th
        assert inst.scenario == every[i].scenario
    again, _ = fams.sample(fam, 2, seed=14)
    assert [i for i, _ in again] == [i for i, _ in picked]
    # another seed picks otherwise, and over a few seeds more than the first two of a large
    # class are drawn (a "sample" that always kept the first N would fail both)
    other, _ = fams.sample(fam, 2, seed=15)
    assert [i for i, _ in other] != [i for i, _ in picked]
    big = max(classes, key=lambda c: classes[c][0])
    drawn = {i for s in range(8) for i, inst in fams.sample(fam, 2, seed=s)[0]
             if shapes[i] == big}
    assert len(drawn) > 4


def test_cli_verify_runs_a_seeded_sample_and_records_it(capsys):
    args = ["verify", "datta_ring", "--family", "repeat", "--sample", "1", "--sample-seed",
            "7", "--seeds", "1", "--max-states", "300", "--workers", "1", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    samp = out["summary"]["sample"]
    assert samp["per_class"] == 1 and samp["seed"] == 7
    assert sum(c["size"] for c in samp["classes"].values()) == 460
    want = sorted(i for c in samp["classes"].values() for i in c["picked"])
    assert len(want) == len(samp["classes"]) == 8
    assert [r["index"] for r in out["rows"]] == want
    assert main(args) == 0
    assert [r["index"] for r in json.loads(capsys.readouterr().out)["rows"]] == want
    assert main(["verify", "datta_ring", "--family", "repeat", "--sample", "1", "--first",
                 "3"]) == 2
    assert "--sample" in capsys.readouterr().err
    assert main(["verify", "datta_ring", "--family", "repeat", "--sample", "0"]) == 2
    assert "--sample must be at least 1" in capsys.readouterr().err


def test_sample_classes_keeps_the_unfiltered_picks_of_the_matching_classes(capsys):
    fam = fams.get("datta_ring", "repeat")
    picked, classes = fams.sample(fam, 3, seed=2)
    some, kept = fams.sample(fam, 3, seed=2, classes=r"clients=2 asks<=2")
    assert kept and set(kept) < set(classes)
    assert all("clients=2 asks<=2" in c for c in kept)
    assert kept == {c: classes[c] for c in kept}
    assert [i for i, _ in some] == sorted(i for c in kept for i in classes[c][1:])
    assert main(["verify", "datta_ring", "--family", "repeat", "--sample", "1",
                 "--sample-classes", "nothing-like-this"]) == 2
    assert "matches --sample-classes" in capsys.readouterr().err
    assert main(["verify", "datta_ring", "--family", "repeat", "--sample-classes", "m2"]) == 2
    assert "--sample-classes needs --sample" in capsys.readouterr().err
