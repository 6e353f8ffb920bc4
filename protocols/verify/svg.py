"""A small SVG writer for a sweep: one histogram per metric, the paper's bound as a red line."""

from __future__ import annotations

from collections import Counter
from typing import Any
from xml.sax.saxutils import escape

W, H, PAD = 720, 200, 48


def histograms(res: dict[str, Any], merged: dict[str, Counter]) -> str:
    """The whole plot: a title, then a panel per metric (sorted by name)."""
    names = sorted(merged)
    height = 40 + len(names) * (H + 30)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" '
           f'viewBox="0 0 {W} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{height}" fill="white"/>',
           f'<text x="{PAD}" y="24" font-size="15">{escape(res["scenario"])} '
           f'[{escape(res["protocol"])}/{escape(res["variant"])}], {res["seeds"]} seeds</text>']
    for i, name in enumerate(names):
        out += _panel(name, merged[name], res["metrics"][name], 40 + i * (H + 30))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _panel(name: str, c: Counter, st: dict[str, Any], top: int) -> list[str]:
    bound = st.get("bound")
    xs = sorted(c)
    lo = min(xs[0], bound["value"]) if bound and xs else (xs[0] if xs else 0)
    hi = max(xs[-1], bound["value"]) if bound and xs else (xs[-1] if xs else 1)
    if bound:                      # keep the bound off the panel's edges, so it reads as a line
        pad = ((hi - lo) or 1) * 0.05
        lo, hi = lo - pad, hi + pad
    bins = 40
    span = (hi - lo) or 1
    counts = [0] * bins
    for x, n in c.items():
        counts[min(bins - 1, int((x - lo) / span * bins))] += n
    peak = max(counts) or 1
    pw, ph = W - 2 * PAD, H - 50
    x0, y0 = PAD, top + 20 + ph
    out = [f'<text x="{PAD}" y="{top + 12}">{escape(name)}: n {st["count"]}, mean '
           f'{st["mean"]}, p99 {st["p99"]}, max {st["max"]}</text>',
           f'<line x1="{x0}" y1="{y0}" x2="{x0 + pw}" y2="{y0}" stroke="#333"/>',
           f'<line x1="{x0}" y1="{y0 - ph}" x2="{x0}" y2="{y0}" stroke="#333"/>',
           f'<text x="{x0 - 4}" y="{y0 - ph + 10}" text-anchor="end">{peak}</text>',
           f'<text x="{x0 - 4}" y="{y0}" text-anchor="end">0</text>']
    bw = pw / bins
    for i, n in enumerate(counts):
        if n:
            h = ph * n / peak
            out.append(f'<rect x="{x0 + i * bw:.1f}" y="{y0 - h:.1f}" width="{bw - 1:.1f}" '
                       f'height="{h:.1f}" fill="#4a7bb7"><title>{n}</title></rect>')
    for v in (lo, lo + span / 2, hi):
        v = round(v, 3)
        x = x0 + (v - lo) / span * pw
        out.append(f'<text x="{x:.1f}" y="{y0 + 14}" text-anchor="middle">{v:g}</text>')
    if bound:
        x = x0 + (bound["value"] - lo) / span * pw
        out.append(f'<line x1="{x:.1f}" y1="{top + 16}" x2="{x:.1f}" y2="{y0}" stroke="#c00" '
                   f'stroke-width="2" stroke-dasharray="5,3"/>')
        anchor = "end" if x > W / 2 else "start"
        dx = -4 if anchor == "end" else 4
        out.append(f'<text x="{x + dx:.1f}" y="{top + 34}" fill="#c00" text-anchor="{anchor}">'
                   f'{bound["kind"]} bound {bound["value"]:g}: {escape(bound["what"])}</text>')
    return out
