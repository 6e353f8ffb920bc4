// Game layout (task_game): agents in the middle, their pools with units (a square per unit
// beside the pool, filled when in use), each pool's request queue with tickets, order forms, and the tasks
// outside with their phase.

import { el, keyed, text } from "../svg.js";

function details(n) {
  const out = [];
  if (n.kind === "task") return out;   // phase and ticket are its badges
  if (n.kind === "pool") {
    if ((n.orders || []).length) out.push(`orders ${n.orders.map((o) => `${o.task}:${o.ticket}`).join(" ")}`);
    return out;
  }
  if (n.kind === "agent") return [];
  if (n.phase) out.push(`phase ${n.phase}`);
  return out;
}

/** A small square per unit of each pool, under it: filled (and named) when a task uses it. */
function drawFront(layer, model, ctx) {
  const k = ctx.k || 1;
  const pools = Array.from(model.view.nodes.values()).filter((n) => Array.isArray(n.units));
  keyed(layer, pools, (n) => n.id,
    () => el("g", { class: "units" }),
    (g, n) => {
      g.replaceChildren();
      const s = 11 * k, gap = 3 * k, perCol = 3;
      const rows = Math.min(perCol, n.units.length);
      n.units.forEach((u, i) => {
        const col = Math.floor(i / perCol), row = i % perCol;
        const r = el("rect", { x: n.x + ctx.r + 5 * k + col * (s + gap), y: n.y - (rows * (s + gap) - gap) / 2 + row * (s + gap), width: s, height: s,
          class: "unit" + (u.user ? " used" : "") }, g);
        text(el("title", {}, r), `unit ${u.id}: ${u.user ? "used by " + u.user : "free"}`);
      });
    },
    (n) => JSON.stringify(n.units) + n.x + n.y + ctx.r + k);
}

export default {
  details,
  drawFront,
  edgeDirected: (e) => e.kind === "interest" || e.directed === true,
  nodeShape: (n) => (n.kind === "pool" ? "rect" : n.kind === "agent" ? "diamond" : "circle"),
  queueAnchor: (n, idx, ctx) => ({ x: n.x - ctx.r, y: n.y + ctx.r + (26 + idx * 20) * (ctx.k || 1), right: true }),
};
