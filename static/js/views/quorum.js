// Quorum layout (coterie): the process–resource sharing graph, each process's quorum outlined,
// and the quorum a request uses highlighted. D_v, X_v, W_v are in the inspector.

import { el, keyed } from "../svg.js";

/** Outline of a set of points: a rounded hull drawn as a padded polygon around them. */
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
  const out = h.map(([x, y]) => {
    const dx = x - cx, dy = y - cy, l = Math.hypot(dx, dy) || 1;
    return [x + (dx / l) * pad, y + (dy / l) * pad];
  });
  return "M" + out.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join("L") + "Z";
}

function drawBack(layer, model, ctx) {
  const x = model.view.extra || {};
  const quorums = x.quorums || {};
  const inUse = x.in_use || x.active || {};
  const items = [];
  for (const [pid, q] of Object.entries(quorums)) {
    const members = (Array.isArray(q) ? q : []).map(String).concat([String(pid)]);
    const pts = members.map((id) => model.view.nodes.get(id)).filter(Boolean);
    if (pts.length) items.push({ pid, pts, used: !!inUse[pid] || (Array.isArray(inUse) && inUse.includes(pid)) });
  }
  keyed(layer, items, (it) => it.pid,
    () => el("path", { class: "quorum" }),
    (p, it) => {
      p.setAttribute("d", hull(it.pts, ctx.r + 10));
      p.setAttribute("class", "quorum" + (it.used ? " in-use" : ""));
    },
    (it) => JSON.stringify(it.pts.map((n) => [n.x, n.y])) + it.used);
}

export default {
  drawBack,
  edgeDirected: (e) => e.directed === true,
  nodeShape: (n) => (n.kind === "resource" ? "rect" : "circle"),
};
