// A horizontal bar chart in SVG (the predict tally, the experiment histogram), readable from the
// back of a lecture hall: one row per option, its count at the bar's end. Labels via textContent.

const NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** rows: [{id, label, n, mark?, mine?}] -> an <svg> element. `mark` = the right answer.
 * `compact`: short labels (the experiment's outcomes) beside their bars, half the height. */
export function chartBars(rows, { compact = false } = {}) {
  const W = 320, row = compact ? 24 : 42, lw = compact ? 92 : 0;
  const max = Math.max(1, ...rows.map((r) => r.n));
  const s = svg("svg", { class: "room-chart", viewBox: `0 0 ${W} ${rows.length * row + 4}`, role: "img",
                         "aria-label": rows.map((r) => `${r.label}: ${r.n}`).join(", ") });
  rows.forEach((r, i) => {
    const y = i * row + 2;
    const g = svg("g", { class: `bar${r.mark ? " right" : ""}${r.mine ? " mine" : ""}`, "data-id": r.id, "data-n": r.n });
    const label = r.label.length > 38 ? `${r.label.slice(0, 37)}…` : r.label;
    // the label above its bar (beside it when compact), the count at the bar's end: long
    // message labels stay whole
    g.append(svg("text", { x: 0, y: compact ? y + row - 8 : y + 14, class: "bar-label" }, (r.mark ? "✓ " : "") + label));
    const w = Math.round(((W - lw - 40) * r.n) / max);
    g.append(svg("rect", { x: lw, y: compact ? y + 3 : y + 19, width: Math.max(2, w), height: compact ? row - 6 : row - 24, rx: 3 }));
    g.append(svg("text", { x: lw + Math.max(2, w) + 6, y: y + row - 7, class: "bar-n" }, String(r.n)));
    s.append(g);
  });
  return s;
}
