"""Accessibility (issue 17): axe-core (bundled in the axe-playwright-python package, nothing
committed) finds no violation, of any impact, on the pages a lesson uses."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .conftest import VIEWPORT

pytestmark = pytest.mark.browser


@pytest.fixture()
def apage(browser: Any) -> Iterator[Any]:
    """A page whose context lets axe's script in (the app's CSP refuses eval, as it should)."""
    context = browser.new_context(viewport=VIEWPORT, bypass_csp=True)
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    try:
        yield pg
    finally:
        context.close()


def ready(pg: Any) -> None:
    pg.wait_for_function("() => document.body.dataset.ready === '1' && "
                         "window.allocscope.model.view.nodes.size > 0")


def _log_tab(pg: Any) -> None:
    pg.click('.tab[data-tab="log"]')


def _inspect(pg: Any) -> None:
    pg.click('#view .node[data-id="c"] .body')   # (the group's middle may be its detail lines)
    pg.wait_for_selector("#inspector .guards, #inspector table, #inspector dl")


def _phone(pg: Any) -> None:
    """A phone's figure: kout-random's RSet rows listed under the counters, each a button."""
    pg.set_viewport_size({"width": 390, "height": 844})
    pg.wait_for_selector("#view .counters .listed-row")


PAGES: dict[str, tuple[str, Callable[[Any], None] | None]] = {
    "gallery": ("/", None),
    "viewer-datta-fig1": ("/sim/datta-fig1", None),
    "viewer-deadlock-banner": ("/sim/token-ring-lossy", None),
    "kout-fig3-log": ("/sim/kout-fig3", _log_tab),
    "coterie-fig1-inspector": ("/sim/coterie-fig1", _inspect),
    "kout-random-phone-listed-rows": ("/sim/kout-random", _phone),
    "embed": ("/sim/datta-fig1?embed=1", None),
    "present": ("/sim/datta-fig1?present=1", None),
    "editor": ("/editor", None),
}


@pytest.mark.parametrize("name", list(PAGES))
def test_no_axe_violations(apage: Any, live_server: str, name: str) -> None:
    from axe_playwright_python.sync_playwright import Axe
    path, then = PAGES[name]
    apage.goto(live_server + path)
    if path.startswith("/sim/"):
        ready(apage)
        apage.wait_for_timeout(300)
    else:
        apage.wait_for_load_state("networkidle")
    if then:
        then(apage)
        apage.wait_for_timeout(300)
    results = Axe().run(apage)
    found = [(v["id"], v["impact"], len(v["nodes"]),
              [n.get("target") for n in v["nodes"][:3]]) for v in results.response["violations"]]
    assert found == [], f"{name}: {found}"
