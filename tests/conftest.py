"""Fixtures for the real-browser tests: a real uvicorn on a free loopback port, and Playwright
driving Debian's chromium (/usr/bin/chromium, never a downloaded browser).

The server runs in a subprocess with its own link store in a temporary directory, so the tests
exercise exactly what `allocscope serve` runs. Browser tests are skipped, with the reason, only
when /usr/bin/chromium is missing (CI installs it).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
SCREENSHOTS = ROOT / "test-output" / "screenshots"
VIEWPORT = {"width": 1280, "height": 720}   # a classroom projector


_CHECKOUT_DATA = ROOT / "data"
_HAD_DATA = _CHECKOUT_DATA.exists()


def pytest_configure(config: pytest.Config) -> None:
    """From the very start (import-time code and session fixtures included) the link store is a
    temporary folder, never the checkout's data/; the module fixture below then gives each test
    module a fresh one."""
    if not os.environ.get("ALLOCSCOPE_DATA"):
        import tempfile
        os.environ["ALLOCSCOPE_DATA"] = tempfile.mkdtemp(prefix="allocscope-tests-")
    # The load governor refuses new sessions when a worker's event loop runs late; on a CI
    # machine at load 20-32 the loop is late because of the *other* processes, and a test that
    # is not about refusal was refused ("answers commands 651 ms late"). Every app and server
    # the tests start (in-process, uvicorn subprocesses, rooms' workers: they inherit this
    # environment) refuses only past an hour; tests/test_governor.py drives refusal itself with
    # a lateness signal it holds (app.governor.Governor(lateness=...)).
    os.environ.setdefault("ALLOCSCOPE_REFUSE_LAG_MS", "3600000")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The promise is checked, not hoped: a run that created the checkout's data/ fails."""
    if not _HAD_DATA and _CHECKOUT_DATA.exists():
        print(f"\nconftest: the tests created {_CHECKOUT_DATA}, which they must never touch")
        session.exitstatus = 1


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a real uvicorn serving app.main:app on a free loopback port."""
    from app.devserver import server
    with server(tmp_path_factory.mktemp("data")) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("browser tests need Debian's chromium at /usr/bin/chromium "
                    "(apt-get install chromium); scripts/test.sh installs it")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def _browser_context(browser: Any) -> Iterator[dict[str, Any]]:
    """The browser context a module's pages open in, kept warm between its tests.

    Opening a page in a brand-new context costs about a second more than in one that has a
    page open (a renderer to start, every ES module fetched and compiled again: 1.4-1.7 s
    against 0.6-0.8 s for /sim/datta-fig1, benchmarks/README "Suite round 1"). So a module's
    tests share one context holding a blank "keeper" page, and each test still gets a page of
    its own; the ``page`` fixture wipes what a test stored (localStorage, sessionStorage,
    cookies) before the next one starts, or starts a new context when it cannot be sure."""
    box: dict[str, Any] = {"context": None}
    try:
        yield box
    finally:
        if box["context"] is not None:
            box["context"].close()


def _clean(pg: Any, origins: set[str]) -> bool:
    """Wipe the page's web storage and the context's cookies; True when nothing a test stored
    can reach the next test (every origin the page visited is the one it is on, now empty)."""
    pg.context.clear_cookies()
    if not origins:
        return True
    if pg.is_closed() or len(origins) > 1:
        return False
    try:      # wait_for_function, not evaluate: bounded by a timeout if the page hangs
        here = pg.wait_for_function(
            "() => { if (location.origin !== 'null') { localStorage.clear(); sessionStorage.clear(); }"
            " return [location.origin, localStorage.length + sessionStorage.length]; }",
            timeout=5_000).json_value()
    except Exception:       # a page that navigated away mid-teardown, a hung or crashed renderer
        return False
    return here[0] in origins and here[1] == 0


@pytest.fixture()
def page(browser: Any, request: pytest.FixtureRequest,
         _browser_context: dict[str, Any]) -> Iterator[Any]:
    """A fresh 1280×720 page; any uncaught JavaScript error fails the test.

    The page is new for every test, in the module's warm context (see ``_browser_context``):
    nothing a previous test stored is visible to it."""
    box = _browser_context
    if box["context"] is None:
        box["context"] = browser.new_context(viewport=VIEWPORT)
        box["context"].new_page().goto("about:blank")          # keeps the context warm
    context = box["context"]
    pg = context.new_page()
    errors: list[str] = []
    origins: set[str] = set()
    pg.on("pageerror", lambda e: errors.append(str(e)))
    # a Content-Security-Policy refusal (an inline script or handler crept in) is an error too
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" and (
        "Content Security Policy" in m.text or "Refused to" in m.text) else None)
    # every origin the page's frames visit: storage is wiped at each, or the context dropped
    pg.on("framenavigated", lambda f: origins.add(_origin(f.url)) if _origin(f.url) else None)
    pg.set_default_timeout(10_000)
    try:
        yield pg
    finally:
        clean = False
        try:
            clean = _clean(pg, origins)
        finally:
            if clean:
                pg.close()
            else:
                box["context"] = None
                context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def _origin(url: str) -> str | None:
    """``scheme://host:port`` of an http(s) URL, None for about:blank, data: and the like."""
    from urllib.parse import urlsplit
    u = urlsplit(url)
    return f"{u.scheme}://{u.netloc}" if u.scheme in ("http", "https") else None


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(scope="module", autouse=True)
def _private_link_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Short links made in-process by any test module go to a temporary folder of that module,
    never to the checkout's data/."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ALLOCSCOPE_DATA", str(tmp_path_factory.mktemp("links")))
    from app.store import reset_stores
    reset_stores()
    yield
    mp.undo()
    reset_stores()
