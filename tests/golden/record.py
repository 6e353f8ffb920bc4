"""Records the golden replays: the ``state_hash`` at every step of every gallery scenario under
every variant of its protocol (its own scheduler, then two seeded random schedulers), so a
refactor of the kernel or of a protocol's structure can prove it changed no behaviour.

Run ``python -m tests.golden.record`` to rewrite ``hashes.json`` — only when a behaviour change is
intended, and say which in the commit. Each entry keeps the 12-hex prefix of every step's hash (and of the
chosen event ids, so a diverging scheduler choice is named).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from protocols import registry
from protocols.runner import build, scheduler_for
from protocols.scenario import gallery

HERE = Path(__file__).parent
FILE = HERE / "hashes.json"
MAX_STEPS = 300
RANDOM_STEPS = 120
SEEDS = (1, 2)


def _trace(scenario: Any, variant: str, kind: str | None, seed: int | None,
           max_steps: int) -> dict[str, Any]:
    sim = build(scenario, variant)
    sched = scheduler_for(scenario, sim.variant, kind, seed)
    ids: list[str] = []
    hashes = [sim.state_hash()[:12]]
    while sim.step_no < max_steps:
        eid = sched.choose(sim)
        if eid is None:
            break
        sim.step(eid)
        ids.append(eid)
        hashes.append(sim.state_hash()[:12])
    return {"events": ids, "hashes": hashes}


def runs() -> dict[str, Any]:
    """Every (scenario, variant, scheduler) run, keyed ``id/variant/scheduler``."""
    out: dict[str, Any] = {}
    for sid, sc in gallery().items():
        proto = registry.get(sc.protocol)
        for v in proto.variants:
            out[f"{sid}/{v}/own"] = _trace(sc, v, None, None, MAX_STEPS)
            for s in SEEDS:
                out[f"{sid}/{v}/random{s}"] = _trace(sc, v, "random", s, RANDOM_STEPS)
    return out


def main() -> None:
    data = runs()
    FILE.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"{len(data)} runs, {sum(len(r['hashes']) for r in data.values())} states -> {FILE}")


if __name__ == "__main__":
    main()
