"""`allocscope` command line: the documented JSON keys and exit codes (0 / 1 / 2)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.cli import main

KEYS = {"scenario", "protocol", "variant", "steps", "state_hash", "cs_entries", "messages",
        "violations", "deadlock", "livelock", "served_all", "metrics"}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True)


def test_scenarios_json_lists_the_gallery(capsys):
    assert main(["scenarios", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    ids = {r["id"] for r in rows}
    assert {"token-ring", "token-ring-lossy"} <= ids
    assert all(set(r) == {"id", "title", "protocol", "variant"} for r in rows)


def test_run_token_ring_prints_the_documented_json(capsys):
    assert main(["run", "token-ring", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert KEYS <= set(res)
    assert res["served_all"] is True and res["violations"] == [] and res["deadlock"] is None
    assert res["cs_entries"] == 10 and len(res["state_hash"]) == 64
    assert res["metrics"]["messages_by_type"]["Token"] == res["messages"]


def test_run_exits_1_on_a_deadlock_and_names_it(capsys):
    assert main(["run", "token-ring-lossy", "--json"]) == 1
    res = json.loads(capsys.readouterr().out)
    assert res["deadlock"]["step"] == 7
    assert sorted(res["deadlock"]["cycle"]) == ["p0", "p1", "p2", "p3"]


@pytest.mark.parametrize("content, needle", [
    ("{not json", "not valid JSON"),
    ('{"id": "x", "title": "t", "protocol": "nope"}', "scenario.protocol: unknown protocol 'nope'"),
    ('{"id": "x", "title": "t", "protocol": "token_ring", "params": {"n": 1}}', "scenario.params.n"),
    ('{"id": "x", "title": "t", "protocol": "token_ring", "bogus": 1}', "scenario.bogus: Extra inputs"),
    ('{"id": "x", "title": "t", "protocol": "token_ring", "steps": -3}', "scenario.steps"),
    ('{"id": "x", "title": "t", "protocol": "token_ring", "variant": "zzz"}', "variant 'zzz'"),
    ('{"id": "x", "title": "t", "protocol": "token_ring", "scheduler": {"kind": "scripted"},'
     ' "schedule": ["m7"]}', "schedule item 0 ('m7') is not enabled"),
    ('[1, 2]', "must be a JSON object"),
])
def test_bad_scenario_files_exit_2_naming_the_problem(tmp_path, capsys, content, needle):
    # in-process through main() (an interpreter start per case cost ~1 s each); an exception
    # escaping main() would fail the test as a traceback would; the console entry's exit code
    # and stderr are the subprocess test below
    f = tmp_path / "bad.json"
    f.write_text(content)
    assert main(["run", str(f), "--json"]) == 2
    out, err = capsys.readouterr()
    assert needle in err and out == ""
    assert "Traceback" not in err


def test_unknown_gallery_id_exits_2():
    """The one subprocess: `python -m app.cli` exits 2 with the sentence on stderr."""
    r = cli("run", "no-such-scenario")
    assert r.returncode == 2 and "no gallery scenario 'no-such-scenario'" in r.stderr
    assert r.stdout == "" and "Traceback" not in r.stderr


def test_variant_override_and_scheduler_options(capsys):
    assert main(["run", "token-ring-lossy", "--variant", "reliable", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["variant"] == "reliable"
    assert main(["run", "token-ring", "--scheduler", "round-robin", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["served_all"] is True
    assert main(["run", "token-ring", "--steps", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"] == 3


def test_check_with_partial_order_reduction_finds_the_printed_race(capsys):
    assert main(["check", "coterie-race-stale-preempt", "--variant", "as-printed", "--por",
                 "--json"]) == 1
    res = json.loads(capsys.readouterr().out)
    assert res["result"] == "violation" and res["counterexample"]["confirmed_by_monitor"]
    assert res["reductions"]["partial_order"] and not res["reductions"]["livelock_checked"]
    assert main(["check", "coterie-race-stale-preempt", "--variant", "full", "--por"]) == 0
    assert " ok after " in capsys.readouterr().out


def test_check_por_on_a_protocol_without_the_hooks_exits_2_naming_them(capsys):
    assert main(["check", "token-ring", "--por"]) == 2
    assert "token_ring does not declare por_senders / por_signature" in capsys.readouterr().err


def test_coterie_checks_use_partial_order_reduction_unless_told_not_to(capsys):
    """coterie declares it cannot livelock, so the reduction is its default; --no-por gives
    back the full search with its livelock check."""
    assert main(["check", "coterie-race-stale-preempt", "--variant", "full", "--json"]) == 0
    red = json.loads(capsys.readouterr().out)["reductions"]
    assert red["partial_order"] and not red["livelock_checked"]
    assert main(["check", "coterie-race-stale-preempt", "--variant", "full", "--no-por",
                 "--json"]) == 0
    red = json.loads(capsys.readouterr().out)["reductions"]
    assert not red["partial_order"] and red["livelock_checked"]
    assert main(["check", "datta-fig1", "--variant", "naive", "--json"]) == 1
    assert not json.loads(capsys.readouterr().out)["reductions"]["partial_order"]
