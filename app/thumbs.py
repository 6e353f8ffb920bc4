"""Gallery thumbnails: a small SVG of a scenario's initial view (nodes and edges only).

Drawn on the server from ``protocol.view(sim)`` at step 0, so the gallery shows each topology
before any JavaScript runs. Labels are escaped; the SVG is served as an image (``<img>``), where
browsers run no scripts anyway. Rendered once per scenario and kept in memory.
"""

from __future__ import annotations

import math
import threading
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from protocols.runner import build
from protocols.scenario import gallery

WIDTH, HEIGHT = 1000, 700        # the view box protocols lay nodes out in
_cache: dict[str, str] = {}
_lock = threading.Lock()

_NODE_FILL = {"process": "#4c78a8", "resource": "#f58518", "client": "#54a24b"}


def _num(v: Any, default: float) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) \
        and math.isfinite(v) else default


def render(view: dict[str, Any], title: str = "") -> str:
    """An SVG document for a view dict (layout, nodes with x/y, edges src/dst)."""
    nodes = [n for n in view.get("nodes", []) if isinstance(n, dict)]
    pos = {str(n.get("id")): (_num(n.get("x"), WIDTH / 2), _num(n.get("y"), HEIGHT / 2))
           for n in nodes}
    r = max(6.0, min(40.0, 600.0 / max(1, len(nodes)) ** 0.5 / 2))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="-50 -50 {WIDTH + 100} '
           f'{HEIGHT + 100}" width="200" height="150" role="img" aria-label={quoteattr(title)}>',
           f"<title>{escape(title)}</title>",
           '<g stroke="#888" stroke-width="4" fill="none">']
    for e in view.get("edges", []) or []:
        if not isinstance(e, dict):
            continue
        a, b = pos.get(str(e.get("src"))), pos.get(str(e.get("dst")))
        if a is None or b is None:
            continue
        dash = ' stroke-dasharray="12 8"' if e.get("dashed") else ""
        out.append(f'<line x1="{a[0]:.1f}" y1="{a[1]:.1f}" x2="{b[0]:.1f}" y2="{b[1]:.1f}"{dash}/>')
    out.append("</g><g stroke=\"#222\" stroke-width=\"2\">")
    for n in nodes:
        x, y = pos[str(n.get("id"))]
        fill = _NODE_FILL.get(str(n.get("kind")), "#4c78a8")
        if n.get("kind") == "resource":
            out.append(f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" '
                       f'height="{2 * r:.1f}" fill="{fill}"/>')
        else:
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{fill}"/>')
    out.append("</g></svg>")
    return "\n".join(out)


def thumbnail(scenario_id: str) -> str | None:
    """The cached SVG of a gallery scenario, or None when there is no such scenario."""
    with _lock:
        if scenario_id in _cache:
            return _cache[scenario_id]
    sc = gallery().get(scenario_id)
    if sc is None:
        return None
    try:
        sim = build(sc)
        svg = render(sim.protocol.view(sim), sc.title)
    except Exception as exc:  # a broken protocol view must not break the gallery page
        svg = render({"nodes": [], "edges": []}, f"{sc.title} (no preview: {type(exc).__name__})")
    with _lock:
        _cache[scenario_id] = svg
    return svg
