// Quorum layout (coterie): the process–resource sharing graph, the quorum each requester uses
// outlined and highlighted, the selected process's other quorums outlined lightly, grants
// (W_v) as arrows. D_v, X_v, W_v and every other variable are in the inspector.

import { el, keyed } from "../svg.js";

/**
 * The convex hull of some points as a closed path. Drawn with a wide round stroke of the same
 * colour (CSS), it becomes a rounded blob around the members, whatever their arrangement.
 */
function hull(points) {
  const pts = points.map((p) => [p.x, p.y]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  if (pts.length === 1) return `M${pts[0][0]},${pts[0][1]}Z`;
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower = [], upper = [];
  for (const p of pts) { while (lower.length >= 2 && cross(lower.at(-2), lower.at(-1), p) <= 0) lower.pop(); lower.push(p); }
  for (const p of pts.slice().reverse()) { while (upper.length >= 2 && cross(upper.at(-2), upper.at(-1), p) <= 0) upper.pop(); upper.push(p); }
  const h = lower.slice(0, -1).concat(upper.slice(0, -1));
  return "M" + h.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join("L") + "Z";
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
    (p, it) => {
      p.setAttribute("d", hull(it.pts));
      p.setAttribute("class", it.cls);
      p.setAttribute("stroke-width", (2 * ctx.r + 22 * (ctx.k || 1)).toFixed(1));
    },
    (it) => it.cls + JSON.stringify(it.pts.map((n) => [n.x, n.y])) + ctx.r);
}

// Whether the figure drawn now is a flat one in present mode (place() looks before each fit).
let flat = false;

/** Nodes stay where the server put them; only the figure's shape is noted (queueColumn). */
function place(model, stage) {
  const w = stage.svg.clientWidth || 900, h = stage.svg.clientHeight || 450;
  flat = document.body.classList.contains("present") && w >= 600 && w / h > 2.4;
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
  // a process's badges one per line ("query", "Q-region", "W=u5"): joined, the line was wider
  // than the gap to the next process (coterie-random at its figure moment)
  stackBadges: (n) => n.kind !== "resource",
  // four processes or more stand too close for a row of X_v chips over each (coterie-random:
  // u2's row ran over u3; coterie-example4 at 1280x720: u2's three chips over X_u3): their
  // queues go to the table beside the figure (common.js)
  // (so do three in a flat present-mode figure, 880 x 277 px with the space-time strip open:
  // rows 1.6 times larger over three processes some 80 px apart, and the width beside them
  // empty; coterie-race-stale-preempt's X_u1 ∅ and X_u2's chip ran into each other)
  queueColumn: (view) => flat || Array.from(view.nodes.values()).filter((n) => n.kind !== "resource").length >= 4,
  place,
  queueAnchor: (n, idx, ctx) => ({ x: n.x, y: n.y - ctx.r - (14 + idx * 20) * (ctx.k || 1), centre: true }),
};
