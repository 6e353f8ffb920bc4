// Ring layout (token_ring, datta_ring): resources on the rooted ring (root marked, token holder
// lit), clients around it, each resource's Q_strong / Q_weak / Q_token as ordered chips on the
// inside of the ring, dependency arrows, a travelling seekLoop with the path it followed, Lock.

import { el, keyed, text } from "../svg.js";

const CX = 500, CY = 350;   // the ring's centre in the server's coordinates

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
  const k = (ctx.k || 1) * (ctx.qf || 1);
  if (n.kind !== "resource") {
    return { x: n.x + ctx.r + 6 * k, y: n.y + ctx.r + (8 + idx * 20) * k, right: true };
  }
  if (CY - n.y <= 0) return { x: n.x, y: n.y - ctx.r - (14 + idx * 20) * k, centre: true };
  const lines = ctx.dense ? 0 : details(n).length + ((n.badges || []).some((b) => b !== "token") ? 1 : 0);
  // (under the detail lines: a line is lh screen pixels, 14 × qf in present mode)
  const line = Math.max(14 * (ctx.qf || 1), ctx.lh || 14) * (ctx.k || 1);
  return { x: n.x, y: n.y + ctx.r + (14 + idx * 20) * k + lines * line, centre: true };
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
  placeSeekLabels(layer, ctx);
}

const hit = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
  && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;

/** A seekLoop's label goes above its node, else below, right or left, wherever it covers no
 * other text and no node and lies inside the figure; when every side is taken it is left out
 * (the halo's tooltip still names it). (Outside the figure it was cut by the edge on a phone,
 * or the phone's fit grew the figure's box to hold it: see fitToDrawing in common.js; on
 * datta-stress's ring its label lay on client C14 at 1280x720.) */
function placeSeekLabels(layer, ctx) {
  const svg = layer.ownerSVGElement;
  if (!svg) return;
  const labels = Array.from(layer.querySelectorAll(".seek-label"));
  if (!labels.length) return;
  const area = svg.getBoundingClientRect();
  const inside = (b) => !area.width || (b.left >= area.left + 2 && b.right <= area.right - 2
    && b.top >= area.top + 2 && b.bottom <= area.bottom - 2);
  const fixed = Array.from(svg.querySelectorAll("text"))
    .filter((t) => !layer.contains(t) && t.textContent.trim())
    .map((t) => t.getBoundingClientRect()).filter((r) => r.width > 0);
  for (const b of svg.querySelectorAll(".layer.nodes > g > .body")) fixed.push(b.getBoundingClientRect());
  const kept = [];
  const k = ctx.k || 1, r = ctx.r;
  const spots = [[0, -r - 16 * k, "middle"], [0, r + 26 * k, "middle"], [r + 14 * k, 5 * k, "start"],
    [-r - 14 * k, 5 * k, "end"], [0, -r - 34 * k, "middle"], [0, r + 44 * k, "middle"]];
  for (const t of labels) {
    // (a label left out last time is measured shown: hidden, its box is empty and "fitted"
    // the first spot, over R2 and R3's names at datta-fig3's step 21 after a jump)
    t.style.display = "";
    let ok = false;
    for (const [x, y, anchor] of spots) {
      t.setAttribute("x", String(x)); t.setAttribute("y", String(y)); t.setAttribute("text-anchor", anchor);
      const b = t.getBoundingClientRect();
      if (inside(b) && !fixed.some((f) => hit(f, b)) && !kept.some((q) => hit(q, b))) { kept.push(b); ok = true; break; }
    }
    t.style.display = ok ? "" : "none";
  }
}

/**
 * Two resources sit at the top and bottom of the server's ring, so the ring link, the
 * dependency arcs, the cycle, both queues and the messages all crowd one short vertical line
 * (issue 17 item 3). Turn that ring a quarter and stretch it across the canvas: R1 left, R2
 * right, the clients above and below. A pure function of (x, y), applied to every node that
 * arrives (full frames and patches alike).
 */
function relayout(view) {
  const res = Array.from(view.nodes.values()).filter((n) => n.kind === "resource");
  const clients = view.nodes.size - res.length;
  if (view.layout !== "ring" || !res.length) return null;
  const cx = CX, cy = CY;
  if (res.length !== 2) {
    if (clients <= 12) {
      // a few clients: the resources' ring widens to 1.35 of its radius (the clients stay,
      // between the resources' angles), and the queues go to the table beside the figure:
      // kept inside the ring, R1's rows met R3's and the clients' detail lines
      // (datta-printed-double-cs), and the view is wider than it is high anyway
      return (n) => {
        if (n.__placed) return n;
        if (n.kind === "resource") { n.x = cx + (n.x - cx) * 1.35; n.y = cy + (n.y - cy) * 1.35; }
        n.__placed = true; n.__crowd = true;
        return n;
      };
    }
    // many clients: both circles grow (the ring and its cycle are what a class looks at, so the
    // ring gets the larger share), the clients a ring's gap outside it so that none sits on a
    // resource (the queues are drawn in a table beside the figure: queueColumn)
    return (n) => {
      if (n.__placed) return n;
      const f = n.kind === "client" ? 1.75 : 2.0;
      n.x = cx + (n.x - cx) * f; n.y = cy + (n.y - cy) * f; n.__placed = true; n.__crowd = true;
      return n;
    };
  }
  return (n) => {
    if (n.__placed) return n;
    const x = n.x, y = n.y;
    n.x = cx + (y - cy) * (n.kind === "resource" ? 1.9 : 0.9);
    n.y = cy - (x - cx) * (n.kind === "resource" ? 1 : 0.95);
    // a client turned onto the R1–R2 line (the third of three: datta-fairness's C3 sat on R1)
    // goes below or above it, halfway in
    if (n.kind !== "resource" && Math.abs(n.y - cy) < 120) {
      n.y = cy + 260 * (n.x >= cx ? 1 : -1);
      n.x = cx + (n.x - cx) * 0.5;
    }
    n.__placed = true; n.__turned = true;
    return n;
  };
}

/** Under this many screen pixels of height the turned ring's queues go beside its resources. */
const SHORT_VIEW = 300;

/**
 * With the ring turned, every resource is on the "lower half": queues go under the node. In a
 * short, wide view (present mode with "more" and the space-time strip open: 880x277 at
 * 1280x720) three rows under R1 and R2 need some 180 screen pixels below the R1–R2 line, more
 * than half the view: the fit shrank the ring until C2 sat on R2's rows and Q_token still fell
 * past the bottom edge. There the rows go outside the ring, left of R1 and right of R2, one over
 * another level with the node, where the width is to spare.
 */
function queueAnchor2(n, idx, ctx) {
  const k = (ctx.k || 1) * (ctx.qf || 1);
  if (n.kind !== "resource" || !n.__turned) return queueAnchor(n, idx, ctx);
  if (ctx.H < SHORT_VIEW && ctx.W >= 2 * ctx.H) {
    const right = n.x >= CX, y = n.y + (idx - 1) * 22 * k;
    return { x: n.x + (right ? 1 : -1) * (ctx.r + 14 * (ctx.k || 1)), y, right };
  }
  const lines = ctx.dense ? 0 : details(n).length + ((n.badges || []).some((b) => b !== "token") ? 1 : 0);
  const line = Math.max(15 * (ctx.qf || 1), (ctx.lh || 14) + 1) * (ctx.k || 1);
  // a narrow projector's figure (1024x768 in present mode: 624 px): rows centred under R1 and
  // R2 reached the clients between them (datta-fairness: R2's Q_strong on C1, its Q_token on
  // C1's D=(R1,R2)); there each row's name goes over its chips (a row half as wide)
  if (ctx.W >= 600 && ctx.W < 760) {
    return { x: n.x, y: n.y + ctx.r + (32 + idx * 38) * k + lines * line, centre: true, stack: true };
  }
  return { x: n.x, y: n.y + ctx.r + (16 + idx * 22) * k + lines * line, centre: true };
}

/** A ring of three or more resources shows its queues as a table beside the figure. */
function queueColumn(view) {
  for (const n of view.nodes.values()) return !!n.__crowd;
  return false;
}

export default {
  relayout,
  queueColumn,
  details,
  drawFront,
  queueAnchor: queueAnchor2,
  edgeDirected: (e) => e.directed !== false,
  nodeShape: (n) => (n.kind === "resource" ? "rect" : "circle"),
};
