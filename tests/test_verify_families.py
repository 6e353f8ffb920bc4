"""The CI subset of every family: `full` must have no counterexample on any instance.

Each quick instance is its own test (explorer under a state bound + seeded random schedules,
crash runs for task_game's locality). A counterexample FAILS the test. The instances listed in
KNOWN are failures of `full` found by the families and not yet repaired on this branch: they are
``xfail(strict=True)`` with the counterexample, so the test turns red the day the repair lands
(then delete the entry). `limit` passes (nothing found in the part explored) and is reported by
``allocscope verify`` as limit, never as ok.
"""

from __future__ import annotations

import pytest

import protocols.verify.families as fams
from protocols.verify import tasks
from protocols.verify.runner import verify_instance

# Per-family CI budget: random seeds per instance and the state bound (≤ the family's).
CI = {"seeds": 2, "max_states": 30_000}
CI_FAMILY = {("task_game", "conflicts"): {"seeds": 1, "max_states": 3_000},
             ("kout_tree", "small"): {"seeds": 2, "max_states": 10_000},
             ("kout_tree", "chaos"): {"seeds": 2, "max_states": 20_000}}

# Families whose CI subset must be *exhausted* (`ok`), not merely free of counterexamples
# within the bound: kout_tree's, since its explorer's counter rotation and the families'
# congestion bound made its quick instances finite and small (docs/explorer.md).
EXHAUSTED = {("kout_tree", "small"), ("kout_tree", "small-quiet"), ("kout_tree", "chaos")}

KNOWN: dict[tuple[str, str, str], str] = {
    # (protocol, family, instance name): "reason, with the counterexample". Emptied when the
    # repairs branch fixed datta_ring full's repeated-request deadlock (family `repeat`,
    # "m2 no token C1:R1R2/R1R2 C2:R2R1/R2R1": deadlock in 62 steps before the repair): the
    # strict xfail turned red on the merge, as intended, and the instance is now a plain test.
}


def _cases() -> list:
    out = []
    for (proto, name), fam in sorted(fams.families().items()):
        if not fam.ci:
            continue
        budget = {**CI, **CI_FAMILY.get((proto, name), {})}
        for t in tasks(fam, "full", quick=True, **budget):
            why = KNOWN.get((proto, name, t["name"]))
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            # no worst-case bound search here: nothing below asserts it (the verdict is the
            # explorer's and the judged runs'), and it was a third of this file's CPU (coterie
            # three 9.4 of 10.7 s); bounds.worst_case is asserted in test_verify.py on the same
            # families' instances (kout_tree small, coterie small)
            t = {**t, "exhaust": (proto, name) in EXHAUSTED, "worst": None}
            out.append(pytest.param(t, id=f"{proto}/{name}/{t['name']}", marks=marks))
    return out


@pytest.mark.parametrize("task", _cases())
def test_full_has_no_counterexample(task):
    row = verify_instance(task)
    assert row["result"] in ("ok", "limit"), (
        f"{row['kind']} found by {row['found_by']}: {row['finding']}; schedule "
        f"{' '.join(row['schedule'])}")
    if task["exhaust"]:
        assert row["explorer"]["result"] == "ok", (
            f"{task['name']}: the explorer stopped at {row['explorer']['states']} states "
            f"({row['explorer']['stopped']}) instead of exhausting the instance")


def test_every_ci_family_has_a_quick_subset():
    for (proto, name), fam in fams.families().items():
        if fam.ci:
            assert fams.instances(fam, quick=True), f"{proto}/{name} has no CI subset"
