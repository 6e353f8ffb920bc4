"""Fuzzing scenario files: whatever a user pastes, the answer is a result or a clear
ScenarioError/SimError naming the problem — never another exception."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocols.kernel import SimError
from protocols.runner import run
from protocols.scenario import ScenarioError, gallery, parse_text

GALLERY = sorted(gallery())

junk = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _mutate(base: dict, path: list[str], value) -> dict:
    data = json.loads(json.dumps(base))
    node = data
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[path[-1]] = value
    return data


@st.composite
def mutated_scenarios(draw):
    sid = draw(st.sampled_from(GALLERY))
    base = gallery()[sid].model_dump(mode="json", exclude_none=True)
    section = draw(st.sampled_from(["params", "topology", "workload", None]))
    if section and base.get(section):
        key = draw(st.sampled_from(sorted(base[section])))
    else:
        key = draw(st.sampled_from(["id", "title", "protocol", "variant", "channels", "steps",
                                    "schedule", "scheduler", "faults", "expect", "symmetry"]))
    path = [section, key] if section else [key]
    value = draw(junk)
    return _mutate(base, path, value)


def _run_or_clear_error(text: str) -> None:
    try:
        sc = parse_text(text)
        res = run(sc, steps=min(sc.steps, 300))
    except (ScenarioError, SimError) as exc:
        msg = str(exc)
        assert msg and "Traceback" not in msg
        return
    assert res["outcome"] in {"all-served", "deadlock", "livelock", "violation", "incomplete"}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_scenarios())
def test_mutated_gallery_scenarios_get_a_result_or_a_clear_error(data):
    _run_or_clear_error(json.dumps(data))


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200) | junk.map(json.dumps))
def test_garbage_text_is_a_clear_error(text):
    _run_or_clear_error(text)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(GALLERY), st.integers(1, 400))
def test_truncated_files_are_clear_errors(sid, cut):
    text = json.dumps(gallery()[sid].model_dump(mode="json", exclude_none=True))
    _run_or_clear_error(text[: max(0, len(text) - cut)])
