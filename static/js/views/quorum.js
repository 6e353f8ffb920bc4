// Quorum layout (coterie): the process–resource sharing graph, the quorum each requester uses
// outlined and highlighted, the selected process's other quorums outlined lightly, grants
// (W_v) as arrows. D_v, X_v, W_v and every other variable are in the inspector.

import { el, keyed } from "../svg.js";

/** A padded convex outline around some points (a circle around one). */
function hull(points, pad) {
  if (points.length === 1) {
    const [p] = points;
    return `M${p.x - pad},${p.y}a${pad},${pad} 0 1,0 ${2 * pad},0a${pad},${pad} 0 1,0 ${-2 * pad},0Z`;
  }
  const pts = points.map((p) => [p.x, p.y]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower = [], upper = [];
  for (const p of pts) { while (lower.length >= 2 && cross(lower.at(-2), lower.at(-1), p) <= 0) lower.pop(); lower.push(p); }
  for (const p of pts.slice().reverse()) { while (upper.length >= 2 && cross(upper.at(-2), upper.at(-1), p) <= 0) upper.pop(); upper.push(p); }
  const h = lower.slice(0, -1).concat(upper.slice(0, -1));
  const cx = h.reduce((s, p) => s + p[0], 0) / h.length, cy = h.reduce((s, p) => s + p[1], 0) / h.length;
  // Push each corner outwards from the centre; a two-point hull becomes a slim lozenge.
  const out = [];
  for (const [x, y] of h) {
    const dx = x - cx, dy = y - cy, l = Math.hypot(dx, dy) || 1;
    out.push([x + (dx / l) * pad - (dy / l) * pad * 0.7, y + (dy / l) * pad + (dx / l) * pad * 0.7]);
    out.push([x + (dx / l) * pad + (dy / l) * pad * 0.7, y + (dy / l) * pad - (dx / l) * pad * 0.7]);
  }
  return "M" + out.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join("L") + "Z";
}

function drawBack(layer, model, ctx) {
  const x = model.view.extra || {};
  const nodes = model.view.nodes;
  const items = [];
  const add = (key, ids, cls) => {
    const pts = ids.map(String).map((id) => nodes.get(id)).filter(Boolean);
    if (pts.length) items.push({ key, pts, cls });
  };
  for (const [u, q] of Object.entries(x.active_quorum || {})) add(`use|${u}`, q, "quorum in-use");
  const sel = ctx.selected && nodes.get(ctx.selected);
  if (sel) (x.quorums || {})[ctx.selected]?.forEach((q, i) => add(`sel|${i}`, q, "quorum"));
  keyed(layer, items, (it) => it.key,
    () => el("path", {}),
    (p, it) => { p.setAttribute("d", hull(it.pts, ctx.r + 8 * (ctx.k || 1))); p.setAttribute("class", it.cls); },
    (it) => it.cls + JSON.stringify(it.pts.map((n) => [n.x, n.y])) + ctx.r);
}

function details(n) {
  if (n.kind === "resource") return n.holder ? [`held by ${n.holder}`] : [];
  const out = [];
  if (n.clock !== undefined) out.push(`C=${n.clock}`);
  if (n.quorum) out.push(`q={${n.quorum.join(",")}}`);
  return out;
}

export default {
  details,
  drawBack,
  edgeDirected: (e) => e.kind === "grant",
  nodeShape: (n) => (n.kind === "resource" ? "rect" : "circle"),
  queueAnchor: (n, idx, ctx) => ({ x: n.x - ctx.r, y: n.y - ctx.r - (14 + idx * 20) * (ctx.k || 1), right: true }),
};
