"""The sweep on the headless kernel core gives the simulator's distributions: same outcome and
the same metric values seed by seed, with runs not all-served re-run on the simulator."""

from __future__ import annotations

import pytest

from app.cli import main
from protocols.scenario import gallery
from protocols.verify.sweep import core_fits, one_run, sweep_chunk


def _chunk(sc, variant, lo, hi, engine):
    return sweep_chunk({"scenario": sc.model_dump(mode="json", exclude_none=True),
                        "variant": variant, "seeds": (lo, hi), "steps": sc.steps,
                        "engine": engine})


@pytest.mark.parametrize("sid, variant, seeds", [
    ("datta-stress", "full", 12), ("datta-fig3", "full", 12), ("kout-random", "full", 8),
    ("kout-fig3", "as-printed", 8), ("game-three-nodes", "full", 3),
])
def test_core_runs_give_the_simulators_metrics_seed_by_seed(sid, variant, seeds):
    sc = gallery()[sid]
    assert core_fits(sc)
    for seed in range(seeds):
        sim_out, sim_vals, _ = one_run(sc, variant, seed, sc.steps)
        core_out, core_vals, _ = one_run(sc, variant, seed, sc.steps, "core")
        if core_out == "all-served":     # what the sweep takes from the core
            assert (core_out, core_vals) == (sim_out, sim_vals), seed
    a = _chunk(sc, variant, 0, seeds, "simulator")
    b = _chunk(sc, variant, 0, seeds, "core")
    assert (a["outcomes"], a["metrics"]) == (b["outcomes"], b["metrics"])


def test_a_run_the_simulator_calls_a_livelock_is_rerun_on_it():
    # kout-fig3's printed guard starves p2 (a livelock by the simulator's memory, which the
    # core does not keep): the chunk's outcomes are still the simulator's
    sc = gallery()["kout-fig3-printed-guard"]
    v = sc.variant
    a = _chunk(sc, v, 0, 3, "simulator")
    b = _chunk(sc, v, 0, 3, "core")
    assert (a["outcomes"], a["metrics"]) == (b["outcomes"], b["metrics"])
    assert b["reruns"] == sum(n for k, n in b["outcomes"].items() if k != "all-served")


def test_core_is_refused_where_it_does_not_fit(capsys):
    assert not core_fits(gallery()["coterie-fig1"])
    assert not core_fits(gallery()["game-fault"])                  # crashes
    assert not core_fits(gallery()["kout-reset-keeps-prio"])       # duplicates
    assert main(["sweep", "coterie-fig1", "--seeds", "1", "--engine", "core"]) == 2
    assert "--engine core" in capsys.readouterr().err
