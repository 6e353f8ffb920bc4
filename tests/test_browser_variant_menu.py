"""The viewer's variant menu names the variant the figure is drawn from, whichever way the variant
came: a #s= link, a short link reopened after a switch, a reconnect, a room's teacher, the check
panel's "replay the counterexample", a switch the server refused. Each of these left the menu
(or the figure) on the other variant before static/js/main.js showVariant.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from protocols.scenario import gallery
from tests.test_browser import open_viewer
from tests.test_rooms_browser import join, start_room_from

pytestmark = pytest.mark.browser

SHOWN = """() => ({menu: document.getElementById('variant').value,
                  figure: (window.allocscope.model.protocol || {}).variant,
                  address: new URLSearchParams(location.search).get('variant')})"""


def shown(page: Any) -> dict[str, Any]:
    return page.evaluate(SHOWN)


def wait_variant(page: Any, v: str) -> None:
    page.wait_for_function("v => (window.allocscope.model.protocol || {}).variant === v && "
                           "document.body.dataset.step === String(window.allocscope.model.step)", arg=v)


def make_link(base: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(f"{base}/api/links", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def naive_link(base: str) -> dict[str, Any]:
    """A link to datta-fig1 (its own variant: full) under naive, three steps in."""
    schedule = gallery()["datta-fig1"].schedule_for("naive")[:3]
    return make_link(base, {"scenario": "datta-fig1", "variant": "naive", "schedule": schedule,
                            "step": 3})


def test_a_fragment_link_to_another_variant(page: Any, live_server: str) -> None:
    """/sim/datta-fig1#s=… naming naive: the page is rendered with the scenario's own variant
    (full) selected, the figure loads naive (the menu said "full" over a naive figure)."""
    frag = naive_link(live_server)["fragment_url"]
    path = "/sim/datta-fig1#" + frag.split("#", 1)[1]
    open_viewer(page, live_server, path)
    wait_variant(page, "naive")
    assert shown(page)["menu"] == "naive", shown(page)


def test_a_short_link_reopened_after_a_switch(page: Any, live_server: str) -> None:
    """A short link (naive), switched to full, then reloaded: the address says full and the
    page used to load the link under its own variant (naive figure, "full" menu). Now it opens
    full again; menu, figure and address agree."""
    open_viewer(page, live_server, naive_link(live_server)["url"])
    wait_variant(page, "naive")
    page.select_option("#variant", "full")
    wait_variant(page, "full")
    assert shown(page) == {"menu": "full", "figure": "full", "address": "full"}
    page.reload()
    page.wait_for_function("() => document.body.dataset.ready === '1' && window.allocscope.model.protocol")
    page.wait_for_function("() => window.allocscope.model.stateHash")
    assert shown(page) == {"menu": "full", "figure": "full", "address": "full"}, shown(page)


def test_a_reconnect_after_a_switch_on_a_short_link(page: Any, live_server: str) -> None:
    """The socket drops after the switch: the page rebuilds its session. It used to load the
    link as it was made (the link's variant, naive) under a menu that still said full."""
    open_viewer(page, live_server, naive_link(live_server)["url"])
    wait_variant(page, "naive")
    page.select_option("#variant", "full")
    wait_variant(page, "full")
    before = page.evaluate("() => [window.allocscope.model.step, window.allocscope.model.stateHash]")
    page.evaluate("() => window.allocscope.socket.ws.close()")
    page.wait_for_function("() => document.getElementById('conn').dataset.state !== 'open'")
    page.wait_for_function("() => document.getElementById('conn').dataset.state === 'open'")
    page.wait_for_function("h => window.allocscope.model.stateHash === h || "
                           "window.allocscope.model.protocol.variant !== 'full'", arg=before[1])
    assert shown(page)["figure"] == "full" and shown(page)["menu"] == "full", shown(page)
    assert page.evaluate("() => [window.allocscope.model.step, window.allocscope.model.stateHash]") == before


def test_a_room_follower_gets_the_teachers_variant(page: Any, browser: Any, live_server: str) -> None:
    """The teacher picks naive: every follower's figure turns naive, and its menu says so (it
    kept saying full). A follower's own pick is refused, and its menu goes back to naive (it
    kept the refused pick)."""
    open_viewer(page, live_server, "/sim/datta-fig1")
    code = start_room_from(page)
    errors: list[str] = []
    students = join(browser, errors, live_server, code, 1)
    try:
        page.select_option("#variant", "naive")
        wait_variant(page, "naive")
        wait_variant(students[0], "naive")
        assert shown(students[0])["menu"] == "naive", shown(students[0])
        assert shown(page)["menu"] == "naive"
        # a follower who picks another variant is told to fork first; the menu stays the class's
        students[0].select_option("#variant", "full")
        students[0].wait_for_function("() => /explore on my own/.test(document.getElementById('fault-hint').textContent)")
        assert shown(students[0]) == {"menu": "naive", "figure": "naive", "address": None}, shown(students[0])
    finally:
        for s in students:
            s.context.close()
    assert not errors, errors


def test_the_counterexample_replays_under_the_variant_checked(page: Any, live_server: str) -> None:
    """Check under lossy, switch to reliable while the panel shows the result, then "replay the
    counterexample": the schedule is lossy's run, so the figure and the menu are lossy again (it
    was loaded under the menu's variant, where its drop is not possible)."""
    open_viewer(page, live_server, "/sim/token-ring-lossy")
    page.click("#btn-check")
    page.wait_for_selector("#btn-replay-cex", timeout=60_000)
    page.select_option("#variant", "reliable")
    wait_variant(page, "reliable")
    page.click("#btn-replay-cex")
    page.wait_for_selector("#cex-notice")
    wait_variant(page, "lossy")
    assert shown(page) == {"menu": "lossy", "figure": "lossy", "address": "lossy"}, shown(page)


def test_a_refused_switch_leaves_the_menu_on_the_figures_variant(page: Any, live_server: str) -> None:
    """The server refuses the load of the other variant (here: the socket's answer is made an
    error): the figure stays full, and so do the menu and the address (they said naive)."""
    open_viewer(page, live_server, "/sim/datta-fig1")
    page.evaluate("""() => { const s = window.allocscope.socket, send = s.send.bind(s);
        s.send = (cmd) => cmd.op === 'load' ? Promise.reject(new Error('server busy: try again'))
                                            : send(cmd); }""")
    page.select_option("#variant", "naive")
    page.wait_for_function("() => /server busy/.test(document.getElementById('fault-hint').textContent)")
    assert shown(page) == {"menu": "full", "figure": "full", "address": None}, shown(page)


def test_a_short_link_to_an_own_scenario_under_another_variant(page: Any, live_server: str) -> None:
    """A scenario of one's own (its file says full), shared under naive (the viewer's "share"
    after a switch does this): /s/<id> opens /sim/-?link=<id>, rendered with the file's variant
    selected; the figure is the link's naive, and the menu said full."""
    sc = gallery()["datta-fig1"].model_dump(mode="json")
    sc["id"] = "my-fig1"
    schedule = gallery()["datta-fig1"].schedule_for("naive")[:3]
    made = make_link(live_server, {"scenario": sc, "variant": "naive", "schedule": schedule, "step": 3})
    open_viewer(page, live_server, made["url"])
    wait_variant(page, "naive")
    assert shown(page)["menu"] == "naive", shown(page)
