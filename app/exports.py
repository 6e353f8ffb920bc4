"""Trace export: a viewer state as a scenario file the CLI replays to the same ``state_hash``.

``allocscope run FILE --scheduler scripted`` builds the scenario, replays ``schedule`` and stops
when it ends (``scheduler.then`` is null) or after ``steps``. ``protocols.runner.drive`` also stops
early when a monitor fires or when a protocol whose tokens circulate forever has served everyone;
a state past such a point cannot be reproduced by ``run``, and neither can step 0 (``steps`` is at
least 1 and an empty scripted schedule hands over to "oldest"). The export checks this by running
the file through the same runner and says so in ``warning`` rather than pretending.
"""

from __future__ import annotations

from typing import Any

from protocols.runner import report, run
from protocols.scenario import ScenarioError, parse

from .linkstate import Opened


def trace_file(opened: Opened) -> tuple[dict[str, Any], str]:
    """The scenario file for an opened link, and a warning ('' when the CLI reproduces it)."""
    rec, sim = opened.record, opened.sim
    k = rec.step
    data = opened.scenario.model_dump(mode="json", exclude_defaults=True)
    outcome = report(sim, opened.scenario)["outcome"]
    data.update({
        "variant": rec.variant,
        "scheduler": {"kind": "scripted", "seed": opened.scenario.scheduler.seed, "then": None},
        "schedule": list(rec.schedule[:k]),
        "steps": max(k, 1),
        "expect": {"outcome": outcome,
                   "notes": f"exported at step {k}; state_hash {rec.state_hash}; replay with "
                            "`allocscope run FILE --scheduler scripted --json`"},
    })
    return data, _check(data, k, rec.state_hash)


def _check(data: dict[str, Any], k: int, want: str) -> str:
    try:
        res = run(parse(data), scheduler="scripted")
    except ScenarioError as exc:  # pragma: no cover - the file was built from a valid scenario
        return f"the exported file does not replay: {exc}"
    except Exception as exc:  # the CLI would fail the same way: say so instead of failing here
        return f"the exported file does not replay ({type(exc).__name__}: {exc})"
    if res["steps"] == k and res["state_hash"] == want:
        return ""
    if k == 0:
        return ("step 0 cannot be exported exactly: `allocscope run` takes at least one step; "
                "run it with --steps 0")
    if res["steps"] < k:
        return (f"`allocscope run` stops this file at step {res['steps']}, before step {k} "
                "(a monitor fired there, or everyone was served, and the runner stops at "
                "that point); the state past it opens from a share link, not from `run`")
    return (f"`allocscope run` reaches state_hash {res['state_hash'][:12]}… at step "
            f"{res['steps']}, not {want[:12]}…")
