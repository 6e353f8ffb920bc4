"""The ``page`` fixture's promise (tests/conftest.py): every test gets a page of its own in its
module's warm browser context, and nothing a test stored reaches the next one. The tests run
in this order (one file goes whole to one worker); each checks what the one before left."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser

SEEN: dict[str, Any] = {}

STORED_JS = """() => [localStorage.length, sessionStorage.length, document.cookie,
  localStorage.getItem('allocscope.motion')]"""


def test_a_test_stores_things(page: Any, live_server: str) -> None:
    page.goto(f"{live_server}/lessons")
    page.evaluate("() => { localStorage.setItem('allocscope.motion', '0');"
                  " sessionStorage.setItem('x', '1'); document.cookie = 'left=behind; path=/'; }")
    assert page.evaluate(STORED_JS) == [1, 1, "left=behind", "0"]
    SEEN["context"], SEEN["page"] = page.context, page


def test_the_next_test_finds_none_of_it_in_the_same_warm_context(page: Any, live_server: str) -> None:
    assert page is not SEEN["page"] and SEEN["page"].is_closed()
    assert page.context is SEEN["context"]              # warm: the same context, a new page
    page.goto(f"{live_server}/lessons")
    assert page.evaluate(STORED_JS) == [0, 0, "", None]
    # a second origin (localhost besides 127.0.0.1): the fixture cannot wipe both from one
    # page, so it drops this context after the test
    other = live_server.replace("127.0.0.1", "localhost")
    page.goto(f"{other}/lessons")
    page.evaluate("() => localStorage.setItem('allocscope.motion', '1')")
    SEEN["context2"] = page.context


def test_after_two_origins_a_new_context(page: Any, live_server: str) -> None:
    assert page.context is not SEEN["context2"]
    for base in (live_server, live_server.replace("127.0.0.1", "localhost")):
        page.goto(f"{base}/lessons")
        assert page.evaluate(STORED_JS) == [0, 0, "", None], base
