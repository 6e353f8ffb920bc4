// Ring layout (token_ring, datta_ring): resources on the rooted ring (root marked, token holder
// lit), clients around it, each resource's Q_strong / Q_weak / Q_token as ordered chips on the
// inside of the ring, dependency arrows, a travelling seekLoop with the path it followed, Lock.

import { el, keyed, text } from "../svg.js";

const CY = 350;

function details(n) {
  const out = [];
  if (n.kind === "resource") {
    if (n.in_use_by && n.in_use_by.length) out.push(`used by ${n.in_use_by.join(",")}`);
    if (n.head) out.push(`head ${n.head}`);
    return out;
  }
  if (n.kind === "client") {
    if (n.phase && !["idle", "waiting", "cs"].includes(n.phase)) out.push(n.phase);
    if (Array.isArray(n.D) && n.D.some((d) => d)) out.push(`D=(${n.D.map((d) => d ?? "⊥").join(",")})`);
    return out;
  }
  if (n.phase && !n.cs && !n.waiting && n.phase !== "idle") out.push(n.phase);
  return out;
}

/**
 * Resources keep their queues on the inside of the ring, where there is room: stacked above a
 * node on the lower half of the ring, below (after its detail lines) a node on the upper half.
 */
function queueAnchor(n, idx, ctx) {
  const k = ctx.k || 1;
  if (n.kind !== "resource") {
    return { x: n.x + ctx.r + 6 * k, y: n.y + ctx.r + (8 + idx * 20) * k, right: true };
  }
  if (CY - n.y <= 0) return { x: n.x, y: n.y - ctx.r - (14 + idx * 20) * k, centre: true };
  const lines = ctx.dense ? 0 : details(n).length + ((n.badges || []).some((b) => b !== "token") ? 1 : 0);
  return { x: n.x, y: n.y + ctx.r + (14 + lines * 14 + idx * 20) * k, centre: true };
}

/** seekLoops (datta_ring): the dependency path each has followed, and a halo where it is. */
function drawFront(layer, model, ctx) {
  const x = model.view.extra || {};
  const seeks = [].concat(x.seekLoops || x.seek_loops || []);
  const nodes = model.view.nodes;
  const items = seeks.map((s, i) => ({ s, i, n: nodes.get(String(s.at ?? s.node)) })).filter((it) => it.n);
  keyed(layer, items, (it) => `seek${it.s.message ?? it.i}`,
    () => el("g", { class: "seekloop" }),
    (g, it) => {
      g.replaceChildren();
      const pts = (it.s.path || []).map((id) => nodes.get(String(id))).filter(Boolean);
      if (pts.length > 1) {
        el("path", { class: "seek-path", d: "M" + pts.map((p) => `${p.x},${p.y}`).join("L") }, g);
      }
      const h = el("g", { transform: `translate(${it.n.x},${it.n.y})` }, g);
      el("circle", { r: ctx.r + 11 * (ctx.k || 1), class: "seek-halo" }, h);
      text(el("text", { y: -ctx.r - 16 * (ctx.k || 1), "text-anchor": "middle", class: "seek-label" }, h),
        `seekLoop of ${it.s.init ?? "?"}${it.s.r_min !== undefined ? " (r_min " + it.s.r_min + ")" : ""}`);
      text(el("title", {}, g), `seekLoop started by ${it.s.init}, at ${it.s.at}, going to ${it.s.to}; path ${(it.s.path || []).join(" → ")}`);
    });
}

export default {
  details,
  drawFront,
  queueAnchor,
  edgeDirected: (e) => e.directed !== false,
  nodeShape: (n) => (n.kind === "resource" ? "rect" : "circle"),
};
