"""The editor reads the protocol's JSON Schema (GET /api/schema/{protocol}): it offers the
knob names a section declares, puts bounds and choices on the inputs, and shows each error
beside its own input (real Chromium, the fixtures of tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.browser


def test_schema_route_types_params_and_names_unknown_protocols(live_server: str) -> None:
    s = httpx.get(f"{live_server}/api/schema/coterie").json()
    params = s["$defs"]["Params"]
    assert params["additionalProperties"] is False
    assert params["properties"]["strategy"]["enum"] == ["lowest", "arbitrary", "preference"]
    assert s["properties"]["protocol"]["const"] == "coterie"
    r = httpx.get(f"{live_server}/api/schema/nope")
    assert r.status_code == 404 and "unknown protocol 'nope'" in r.json()["detail"]


def test_editor_completes_knobs_and_marks_errors_inline(page: Any, live_server: str) -> None:
    page.goto(f"{live_server}/editor?scenario=ricart-agrawala")
    page.wait_for_function("() => document.getElementById('ed-status').textContent.startsWith('valid')")
    page.wait_for_function("() => document.querySelector('input[data-field=\"scenario.params.n\"]').max === '200'")
    n = 'input[data-field="scenario.params.n"]'
    assert page.get_attribute(n, "title") == "how many processes"
    page.fill(n, "500")
    page.wait_for_function("() => document.querySelector('.ed-inline') && "
                           "document.querySelector('.ed-inline').textContent.includes('from 2 to 200')")
    assert "invalid" in page.get_attribute(n, "class")
    # an invalid scenario cannot be opened or saved, and the page says why beside the buttons
    page.wait_for_function("() => document.getElementById('ed-open').disabled")
    assert page.is_disabled("#ed-save")
    assert page.is_visible("#ed-why")
    assert "fix the" in page.text_content("#ed-why") and "listed above" in page.text_content("#ed-why")
    assert not page.is_visible("#ed-links")          # no empty link fields before a save
    # a bad id too: the server names only the id, but n's own error stays beside n and listed
    page.fill('input[data-field="scenario.id"]', "Bad Id!")
    page.wait_for_function("() => document.getElementById('ed-errors').textContent.includes('scenario.id')")
    inline = page.eval_on_selector_all(".ed-inline", "es => es.map(e => e.textContent)")
    assert any("from 2 to 200" in t for t in inline) and len(inline) == 2, inline
    assert "scenario.params.n" in page.text_content("#ed-errors")
    assert page.text_content("#ed-status") == "2 problems"
    assert "fix the 2 problems" in page.text_content("#ed-why")
    page.fill('input[data-field="scenario.id"]', "ricart-agrawala")
    page.fill(n, "3")
    page.wait_for_function("() => document.getElementById('ed-status').textContent.startsWith('valid')")
    assert page.query_selector(".ed-inline") is None
    assert page.is_enabled("#ed-open") and page.is_enabled("#ed-save")
    assert not page.is_visible("#ed-why")
    # completion: token_ring's params offer the keys not set yet
    page.goto(f"{live_server}/editor?scenario=token-ring")
    page.wait_for_function("() => document.getElementById('ed-add-keys').options.length > 0")
    offered = page.eval_on_selector_all("#ed-add-keys option", "os => os.map(o => o.value)")
    assert offered == ["lossy", "note"]                 # n and requests are already set
    page.fill("#ed-add-key", "nn")
    page.fill("#ed-add-value", "3")
    page.click("#ed-add")
    page.wait_for_function("() => document.getElementById('ed-errors').textContent.includes('scenario.params.nn')")
    assert "Extra inputs are not permitted" in page.text_content("#ed-errors")
