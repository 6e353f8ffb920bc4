"""Records the explorer's answers on every gallery scenario under every variant, with the default
reductions and with none, under a small state bound: result, state count, stop reason and the
counterexample schedule. A refactor of the kernel or the explorer must leave them equal
(``tests/test_explorer.py::test_explorer_matches_recorded_answers``).

Run ``python -m tests.golden.explorer_record`` to rewrite ``explorer.json`` — only when a change of
the explorer's answers is intended, and say which in the commit. ``--missing`` records only the
keys the file lacks (a new gallery scenario or variant) and leaves every recorded answer as it is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from protocols import registry
from protocols.explorer import check
from protocols.scenario import gallery

FILE = Path(__file__).parent / "explorer.json"
MAX_STATES = 1500
MODES = {"default": {}, "plain": {"symmetry": False, "partial_order": False, "forget": False}}


def answer(sid: str, variant: str, mode: str) -> dict[str, Any]:
    """The recorded part of one ``check`` answer."""
    r = check(gallery()[sid], variant, MAX_STATES, **MODES[mode])
    ce = r["counterexample"]
    return {"result": r["result"], "states": r["states"], "stopped": r["stopped"],
            "schedule": ce["schedule"] if ce else None}


def keys() -> list[str]:
    out = []
    for sid, sc in sorted(gallery().items()):
        for v in registry.get(sc.protocol).variants:
            for mode in MODES:
                out.append(f"{sid}/{v}/{mode}")
    return out


def main(missing_only: bool = False) -> None:
    data = json.loads(FILE.read_text()) if missing_only else {}
    new = [k for k in keys() if k not in data]
    for k in new:
        sid, v, mode = k.split("/")
        data[k] = answer(sid, v, mode)
    FILE.write_text(json.dumps(data, sort_keys=True, indent=0) + "\n")
    print(f"{len(new)} recorded, {len(data)} checks -> {FILE}")


if __name__ == "__main__":
    import sys

    main(missing_only="--missing" in sys.argv[1:])
