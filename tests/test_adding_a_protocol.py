"""docs/adding-a-protocol.md builds the fifth protocol: its Python blocks, one after the other,
are protocols/ricart_agrawala.py, and the module they make runs like the registered one."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

from protocols.kernel import Simulator
from protocols.kernel.protocol import Protocol
from protocols.runner import build, scheduler_for
from protocols.scenario import gallery

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "adding-a-protocol.md"
MODULE = ROOT / "protocols" / "ricart_agrawala.py"


def snippets() -> list[str]:
    return re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_the_guides_blocks_are_the_whole_module_in_order():
    assert len(snippets()) >= 6
    assert _lines("\n".join(snippets())) == _lines(MODULE.read_text())


def test_the_module_built_from_the_guide_runs_like_the_registered_one():
    mod = types.ModuleType("protocols._from_the_guide")
    mod.__package__ = "protocols"
    sys.modules[mod.__name__] = mod
    try:
        exec(compile("\n".join(snippets()), "adding-a-protocol.md", "exec"), mod.__dict__)
    finally:
        del sys.modules[mod.__name__]
    built = mod.RicartAgrawala()
    assert isinstance(built, Protocol) and built.variants == ("ricart-agrawala", "eager-reply")
    sc = gallery()["ricart-agrawala"]
    for variant in built.variants:
        ref = build(sc, variant)
        mine = Simulator(built, sc, variant)
        sched = scheduler_for(sc, variant)
        while ref.step_no < 200:
            assert mine.state_hash() == ref.state_hash()
            eid = sched.choose(ref)
            if eid is None:
                break
            ref.step(eid)
            mine.step(eid)
        assert ref.step_no > 10


def test_every_hook_the_guide_names_is_declared_on_protocol():
    text = GUIDE.read_text()
    for hook in ("violations", "wait_for", "served_all", "quiescent_ok", "report", "unfinished",
                 "is_progress", "message_label", "message_kinds", "describe", "corruptions",
                 "permute_state", "permute_message", "forget", "por_senders", "por_signature",
                 "por_default", "view", "inspect_guards", "scenario_model", "variant_table"):
        assert hasattr(Protocol, hook), hook
        if hook not in ("inspect_guards",):
            assert f"`{hook}" in text, f"the guide does not mention {hook}"
