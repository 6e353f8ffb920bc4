"""The game-of-tasks view is readable on the classroom projector: in every state the four gallery
scenarios go through, no two labelled things drawn by static/js/views/game.js + common.js
overlap (node shapes, their badge / order lines, the unit squares, the request-queue rows).

The boxes are computed from the view's positions with the sizes the front end uses, at the
zoom common.js's fitViewBox picks for the viewer's SVG at 1280 x 720 (940 x 358-410 px,
measured);
text is measured as DejaVu Sans renders it (about 8.5 px per capital, 6.5 px per other
character at 12 px). Keep these in step with game.js / common.js."""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import pytest

from protocols.runner import build, scheduler_for
from protocols.scenario import resolve

SCENARIOS = ("game-three-nodes", "game-conflict", "game-fault", "game-lost-winning",
             "game-locality-chain", "game-restricted-locality-3")
VARIANTS = ("restricted", "complete", "full")
W, H = 940, 350          # #view at a 1280 x 720 viewport, with the side panel (as low
                         # as 358 px when the legend and the narration take two lines)
CHAR = 7                 # game.js / common.js estimate of a character (queue chips)
Box = tuple[float, float, float, float]


def text_width(s: str, px: float = 12) -> float:
    return sum((8.5 if c.isupper() else 6.5) for c in s) * px / 12


def _extent(n: dict[str, Any], view: dict[str, Any], r: float, k: float, dense: bool) -> Box:
    """game.js extent()."""
    lines = 0 if dense else 1
    x, y = n["x"], n["y"]
    if n["kind"] == "task":
        w = max(r, 10 * CHAR * k / 2)
        return (x - w, y - r - (8 + 28 + 10) * k * lines - 2 * k, x + w, y + r + 2 * k)
    if n["kind"] == "pool":
        tasks = [t for t in view["nodes"] if t["kind"] == "task"]
        m = max(1, sum(1 for t in tasks if n["id"] in t["interest"]))
        id_len = max([2] + [len(t["id"]) for t in tasks])
        chip = (max(24, (id_len + 2) * CHAR + 8) + 3) * k
        q = (len(n["id"]) + 9) * CHAR * k
        orders = (7 + min(m, 8) * (id_len + 3)) * CHAR * k / 2 * lines
        units = r + 5 * k + math.ceil(len(n["units"]) / 3) * 14 * k
        return (x - max(r, orders), y - r * 0.8,
                x + max(units, orders, -r + max(q, min(m, 8) * chip + (24 * k if m > 8 else 0))),
                y + r + 67 * k)
    w = max(r, 9 * CHAR * k / 2 * lines)
    return (x - w, y - r - 2 * k, x + w, y + r + (20 if lines else 2) * k)


def zoom(view: dict[str, Any]) -> tuple[float, float, bool]:
    """(r, k, dense) as common.js renderView / fitViewBox compute them for this view."""
    ns = view["nodes"]
    n = len(ns)
    r0 = 34 if n <= 8 else max(5, min(28, 640 / n))
    near = min(math.hypot(a["x"] - b["x"], a["y"] - b["y"]) for a, b in combinations(ns, 2))
    r = max(r0, min(34, near * 0.32))
    k = 1.0
    for _ in range(3):
        ex = [_extent(m, view, r, k, near / k < 95) for m in ns]
        pad = 10 * k
        bw = max(e[2] for e in ex) - min(e[0] for e in ex) + 2 * pad
        bh = max(e[3] for e in ex) - min(e[1] for e in ex) + 2 * pad
        k = 1 / min(W / bw, H / bh)
    if n <= 16:
        r = max(r, 20 * k)
    return r, k, near / k < 95


def boxes(view: dict[str, Any]) -> list[tuple[str, Box]]:
    """Every labelled thing drawn, named, as (x0, y0, x1, y1) in view units."""
    r, k, dense = zoom(view)
    out: list[tuple[str, Box]] = []
    for n in view["nodes"]:
        x, y, nid = n["x"], n["y"], n["id"]
        hy = 0.8 * r if n["kind"] == "pool" else r
        out.append((f"{nid} shape", (x - r, y - hy, x + r, y + hy)))
        if n["kind"] == "pool":                       # game.js drawFront: a square per unit
            rows = min(3, len(n["units"]))
            for i in range(len(n["units"])):
                ux = x + r + 5 * k + (i // 3) * 14 * k
                uy = y - (rows * 14 * k - 3 * k) / 2 + (i % 3) * 14 * k
                out.append((f"{nid} unit {i}", (ux, uy, ux + 11 * k, uy + 11 * k)))
        if dense:
            continue
        lines = []                                    # common.js drawNodes detail lines
        if n["kind"] == "pool" and n["orders"]:
            lines.append("orders " + " ".join(f"{o['task']}:{o['ticket']}" for o in n["orders"]))
        badges = [b for b in n["badges"] if b != "token"]
        lines += badges if n["kind"] == "task" else ([" · ".join(badges)] if badges else [])
        above = n["kind"] == "task"
        ly = -r - 8 * k - 14 * k * (len(lines) - 1) if above else r + 16 * k
        for line in lines:
            w = text_width(line) * k
            out.append((f"{nid} line {line!r}", (x - w / 2, y + ly - 10 * k, x + w / 2, y + ly + 3 * k)))
            ly += 14 * k
    for q in view["queues"]:                 # game.js queueAnchor, stacked row
        n = next(m for m in view["nodes"] if m["id"] == q["node"])
        ax, ay = n["x"] - r, n["y"] + r + 58 * k
        h = 17 * k
        ny = ay - h / 2 - 3 * k
        out.append((f"{q['name']} name", (ax, ny - 9 * k, ax + len(q["name"]) * 6.5 * k, ny + 2 * k)))
        cx = 0.0
        for item in q["items"][:8]:
            w = max(24, len(item) * CHAR + 8) * k
            out.append((f"{q['name']} chip {item}", (ax + cx, ay - h / 2, ax + cx + w, ay + h / 2)))
            cx += w + 3 * k
        if not q["items"]:
            out.append((f"{q['name']} empty", (ax, ay - 8 * k, ax + 10 * k, ay + 4 * k)))
    return out


def overlaps(view: dict[str, Any]) -> list[tuple[str, str]]:
    bs = boxes(view)
    return [(a, b) for (a, p), (b, q) in combinations(bs, 2)
            if p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3]]


def _states(sid: str, variant: str, limit: int = 400):
    sc = resolve(sid)
    sim = build(sc, variant)
    sched = scheduler_for(sc, variant)
    yield 0, sim
    for step in range(1, min(limit, sc.steps) + 1):
        eid = sched.choose(sim)
        if eid is None:
            return
        sim.step(eid)
        yield step, sim


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("sid", SCENARIOS)
def test_nothing_labelled_overlaps(sid: str, variant: str) -> None:
    checked = 0
    for step, sim in _states(sid, variant):
        view = sim.protocol.view(sim)
        assert all(0 <= n["x"] <= 1000 and 0 <= n["y"] <= 700 for n in view["nodes"])
        bad = overlaps(view)
        assert not bad, f"{sid} ({variant}) step {step}: {bad[:5]}"
        checked += 1
    assert checked > 10


# Scenarios whose 1280 x 720 figure is still dense (common.js hides the badges: phase, ticket):
# game-restricted-locality-3 is the family's instance as found, nine pools on one node in one
# row (its badges show in present mode at 1920 x 1080). Strict: once clean, take it off.
DENSE_YET = {"game-restricted-locality-3"}


@pytest.mark.parametrize("sid", SCENARIOS)
def test_readable_on_the_projector(sid: str) -> None:
    """Badges are shown (the nodes are not so close that common.js hides them) and the zoom
    keeps text at least 80 % of its CSS size."""
    sim = build(resolve(sid), None)
    r, k, dense = zoom(sim.protocol.view(sim))
    assert k <= 1.25, (r, k, dense)
    assert dense == (sid in DENSE_YET), (sid, r, k, dense)


def test_the_check_sees_the_old_cramped_layout() -> None:
    """The overlap check catches the defect it was written for: the queue labels of the old
    circular layout ran over the agents' diamonds and the pools' boxes."""
    sim = build(resolve("game-three-nodes"), None)
    view = sim.protocol.view(sim)
    for n in view["nodes"]:                           # the old layout, pools pulled in
        if n["kind"] == "pool":
            a = next(m for m in view["nodes"] if m["id"] == n["agent"])
            n["x"], n["y"] = a["x"] + 40, a["y"] + 30
    assert overlaps(view)
