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
