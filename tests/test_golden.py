"""Same scenario + schedule => same state_hash, forever: every gallery scenario under every variant
replays exactly the hashes recorded in tests/golden/hashes.json (see tests/golden/record.py)."""

from __future__ import annotations

import json

import pytest

from protocols.scenario import gallery
from tests.golden.record import FILE, MAX_STEPS, RANDOM_STEPS, SEEDS, _trace

GOLDEN = json.loads(FILE.read_text())


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_replay_matches_recorded_hashes(key: str) -> None:
    sid, variant, sched = key.split("/")
    sc = gallery()[sid]
    if sched == "own":
        got = _trace(sc, variant, None, None, MAX_STEPS)
    else:
        seed = int(sched.removeprefix("random"))
        assert seed in SEEDS
        got = _trace(sc, variant, "random", seed, RANDOM_STEPS)
    want = GOLDEN[key]
    for k, (a, b) in enumerate(zip(got["hashes"], want["hashes"], strict=False)):
        if a != b:
            ev = want["events"][k - 1] if k else "load"
            pytest.fail(f"{key}: state_hash differs first at step {k} (recorded event {ev!r}; "
                        f"now {got['events'][k - 1] if k else 'load'!r})")
    assert len(got["hashes"]) == len(want["hashes"]), f"{key}: run length changed"


def test_golden_covers_every_gallery_scenario() -> None:
    assert {k.split("/")[0] for k in GOLDEN} == set(gallery())
