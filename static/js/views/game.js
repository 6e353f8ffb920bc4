// Game layout (task_game): one group per network node (its agent, with its pools on either
// side), a square per unit beside each pool (filled when in use), each pool's request queue
// with tickets and order forms under it, and the tasks in a row above the node that created
// them, their phase and ticket above them (the edges leave them downwards). Positions come from
// protocols/task_game/view.py; the sizes below are the ones tests/test_task_game.py checks for
// overlaps (keep the two in step).

import { el, keyed, text } from "../svg.js";

const CHAR = 7;          // px per character of 11-12 px text (the queue chips use the same)
const ROW = 36;          // px from one queue row (its name over its chips) to the next under it
const MAX_LEVELS = 3;    // queue rows under a row of pools: at most three levels

// The model the last place() saw (queueAnchor is given only the node, and a pool's queue row
// goes on the level levels() finds for it among all the pools), and the levels the last fit
// sized the figure for: the rows are drawn on those, so that a zoom changed after the fit (the
// drawing grown into the view, a phone's box fitted to the drawing) does not move a row
// past the bottom edge the fit left room for.
let current = null;
let fitted = null;

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

/** A small square per unit of each pool, on its right. */
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

/** How many tasks may queue at a pool (its chips and order forms are sized for them all). */
function interested(model, pool) {
  let m = 0;
  for (const n of model.view.nodes.values()) if (n.kind === "task" && (n.interest || []).includes(pool.id)) m += 1;
  return Math.max(1, m);
}

/** The longest task id (the chips' width), at least two characters. */
function idLength(model) {
  return Math.max(2, ...Array.from(model.view.nodes.values()).filter((t) => t.kind === "task").map((t) => String(t.id).length));
}

/**
 * The widest a pool's queue row gets, in user units: its name over a chip for each task that
 * may queue there (at most eight and a "+N"). The largest, not today's, so that the levels
 * below do not change while the run goes on.
 */
function rowWidth(model, pool, ctx) {
  const k = (ctx.k || 1) * (ctx.qf || 1), m = interested(model, pool);
  const chip = Math.max(24, (idLength(model) + 2) * CHAR + 8) + 3;
  // the name is the queue's ("Requests_P1"), as the server's layout counts it (9 more letters)
  let name = String(pool.id).length + 9;
  for (const q of model.view.queues.values()) if (String(q.node) === String(pool.id)) name = Math.max(name, String(q.name).length);
  return Math.max(name * CHAR + 6, Math.min(m, 8) * chip + (m > 8 ? 24 : 0)) * k;
}

/**
 * The level of each pool's queue row: 0 right under the pool, 1 a row lower, ... . The pools
 * of a row stand as close as the server's layout of a 1000-unit box allows (nine pools of one
 * node, game-restricted-locality-3), and a row wider than the gap to the next pool ran over
 * that pool's row (present mode's larger rows, or a short figure's smaller zoom): such a row
 * goes a level lower, the next one that fits back up (interval colouring, left to right).
 */
function levels(model, ctx, most = MAX_LEVELS) {
  const pools = Array.from(model.view.nodes.values()).filter((n) => n.kind === "pool")
    .sort((a, b) => a.y - b.y || a.x - b.x || String(a.id).localeCompare(String(b.id)));
  // (a gap of 12 px: the zoom may grow a little after the fit, and the rows with it)
  const out = new Map(), gap = 12 * (ctx.k || 1) * (ctx.qf || 1);
  let ends = [], y = null;
  for (const p of pools) {
    if (p.y !== y) { ends = []; y = p.y; }      // a new row of pools (stacked on a phone)
    const start = p.x - ctx.r;
    let l = ends.findIndex((e) => e <= start);
    if (l < 0 && ends.length < most) { l = ends.length; ends.push(0); }
    // (no level left: the one whose row ends first; a figure this short for its pools is
    // measured in tests/test_browser_present.py, not made taller without end: each level
    // made the zoom smaller, which widened every row again, until the figure was a stamp)
    if (l < 0) { l = ends.indexOf(Math.min(...ends)); out.short = true; }
    ends[l] = start + rowWidth(model, p, ctx) + gap;
    out.set(p.id, l);
  }
  return out;
}

/**
 * Everything drawn for a node, as [x0, y0, x1, y1], at its largest (so that the zoom does not
 * change while the run goes on): a task's three lines above it, a pool's units on its right
 * and its badge, order forms and queue under it.
 */
function extent(n, ctx, model) {
  const r = ctx.r, k = ctx.k || 1, lines = ctx.dense ? 0 : 1;
  if (n.kind === "task") {
    const w = Math.max(r, (10 * CHAR * k) / 2);
    return [n.x - w, n.y - r - (8 + 28 + 10) * k * lines - 2 * k, n.x + w, n.y + r + 2 * k];
  }
  if (n.kind === "pool") {
    const m = interested(model, n);
    const idLen = Math.max(2, ...Array.from(model.view.nodes.values()).filter((t) => t.kind === "task").map((t) => String(t.id).length));
    const chip = (Math.max(24, (idLen + 2) * CHAR + 8) + 3) * k;
    const q = Math.max((String(n.id).length + 9) * CHAR, 0) * k;
    const orders = ((7 + Math.min(m, 8) * (idLen + 3)) * CHAR * k) / 2 * lines;
    const units = r + 5 * k + Math.ceil(n.units.length / 3) * 14 * k;
    // only as many levels as the height the figure leaves unused (ctx.slack, from the fit's
    // first round, which has none) and a third of the view's more hold: levels make the figure
    // smaller when it has no height to spare, and unbounded they fed on themselves
    const room = ctx.slack == null ? 0 : ctx.slack + (ctx.H || 0) / 3;
    const most = Math.min(ctx.maxLevels ?? MAX_LEVELS, 1 + Math.floor(room / (ROW * (ctx.qf || 1))));
    // (only the fit's rounds, which pass slack, decide them: drawBack's boxes read them)
    let lv = ctx.slack === undefined && fitted ? fitted : levels(model, ctx, most);
    // levels that do not part the rows all the same would only make the figure smaller: none
    if (ctx.slack !== undefined && lv.short) lv = levels(model, ctx, 1);
    if (ctx.slack !== undefined) fitted = lv;
    const level = lv.get(n.id) || 0;
    return [n.x - Math.max(r, orders), n.y - r * 0.8, n.x + Math.max(units, orders, -r + Math.max(q, Math.min(m, 8) * chip + (m > 8 ? 24 * k : 0))),
            n.y + r + (2 * (ctx.lh || 14) + 9 + 30 * (ctx.qf || 1) + level * ROW * (ctx.qf || 1)) * k];
  }
  const w = Math.max(r, (9 * CHAR * k) / 2 * lines);
  return [n.x - w, n.y - r - 2 * k, n.x + w, n.y + r + (lines ? 20 : 2) * k];
}

/** A light box behind each network node: its agent and its pools. */
function drawBack(layer, model, ctx) {
  const nodes = Array.from(model.view.nodes.values());
  const groups = nodes.filter((n) => n.kind === "agent").map((a) => ({ a, members: nodes.filter((n) => n === a || (n.kind === "pool" && n.agent === a.id)) }));
  const k = ctx.k || 1;
  keyed(layer, groups, (gr) => gr.a.id,
    () => el("g", { class: "game-node" }),
    (g, gr) => {
      g.replaceChildren();
      const ex = gr.members.map((n) => {
        const e = extent(n, ctx, model);
        // the box holds the shapes, not the queue rows under the pools
        return n.kind === "pool" ? [n.x - ctx.r, e[1], n.x + ctx.r + 5 * k + Math.ceil(n.units.length / 3) * 14 * k, n.y + ctx.r * 0.8] : e;
      });
      const pad = 10 * k;
      const x0 = Math.min(...ex.map((e) => e[0])) - pad, x1 = Math.max(...ex.map((e) => e[2])) + pad;
      const y0 = Math.min(...ex.map((e) => e[1])) - pad, y1 = Math.max(...ex.map((e) => e[3])) + pad / 2;
      el("rect", { class: "game-node-box" + (gr.a.crashed ? " crashed" : ""), x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 10 * k }, g);
      text(el("title", {}, g), `network node of agent ${gr.a.id}: its pools ${gr.members.filter((n) => n.kind === "pool").map((n) => n.id).join(", ") || "(none)"}`);
    },
    (gr) => gr.members.map((n) => `${n.id}${n.x},${n.y}`).join("|") + ctx.r + k + ctx.dense);
}

/**
 * On a phone the projector's row of network nodes is stacked, one network node a row (its
 * tasks above it, its agent and pools, their queues under them): nine nodes across 390 px
 * overlapped (game-three-nodes). The server's positions are kept on each node (__sx, __sy; a
 * node patched by a step arrives with them again) so that a wider view gets them back.
 */
function place(model, stage) {
  current = model;
  const nodes = Array.from(model.view.nodes.values());
  for (const n of nodes) if (n.__sx === undefined) { n.__sx = n.x; n.__sy = n.y; }
  const agents = nodes.filter((n) => n.kind === "agent").sort((a, b) => a.__sx - b.__sx);
  const stack = (stage.svg.clientWidth || 900) < 600 && agents.length > 1;
  stage.svg.classList.toggle("stacked", stack);
  if (!stack) {
    // the server lays the nodes out for the 880 x 516 px figure of a 1280x720 projector; a
    // flatter figure (present mode with the space-time strip: 880 x 277) spreads them wider,
    // so that the queue rows under the pools are not squeezed into the middle third of it
    // (in present mode only, whose queue rows are 1.6 times larger: in normal mode a wider
    // layout moved game-lost-winning's Info messages onto each other, where the rows fit).
    // As much wider as the figure is flatter than what is drawn: the nodes' span with the
    // tasks' lines over them and the queue rows under the pools, in the server's units (about
    // a pixel each at 1280x720); spread wider than that, the figure was fitted to its width
    // and drawn a third of its size (game-restricted-locality-3 with the space-time strip)
    const xs = nodes.map((n) => n.__sx), ys = nodes.map((n) => n.__sy);
    const drawn = (Math.max(...xs) - Math.min(...xs) + 200) / (Math.max(...ys) - Math.min(...ys) + 80 + 101 + 60);
    const flat = (stage.svg.clientWidth || 900) / (stage.svg.clientHeight || 516) / drawn;
    const sx = document.body.classList.contains("present") && flat > 1.1 ? Math.min(2.5, flat) : 1;
    for (const n of nodes) { n.x = 500 + (n.__sx - 500) * sx; n.y = n.__sy; }
    return;
  }
  const ys = nodes.map((n) => n.__sy);
  const rowH = Math.max(...ys) - Math.min(...ys) + 80 + 101 + 40;   // tasks' lines, queues, a gap
  agents.forEach((a, i) => {
    for (const n of nodes) {
      if (n !== a && n.agent !== a.id) continue;
      n.x = n.__sx - a.__sx + 500;
      n.y = n.__sy + i * rowH;
    }
  });
}

export default {
  // detail lines of 12 px, 14 apart: the extents above count characters of 12 px text (CHAR)
  detailPx: 12,
  detailLh: 14,
  place,
  details,
  drawFront,
  drawBack,
  extent,
  edgeDirected: (e) => e.kind === "interest" || e.directed === true,
  nodeShape: (n) => (n.kind === "pool" ? "rect" : n.kind === "agent" ? "diamond" : "circle"),
  // (the last fit's levels could not part the queue rows: common.js draws them smaller)
  rowsMeet: () => !!(fitted && fitted.short),
  stackBadges: (n) => n.kind === "task",
  // Info messages from every pool to every task cross and converge between the rows: each
  // takes a clear place on its link (messages.js, spreadOut) instead of a fixed fraction
  spreadMessages: true,
  detailsAbove: (n) => n.kind === "task",
  // under the pool's badge and order forms: the name, then the tickets in a row
  // (its name's baseline two detail lines below the pool: lh is 18 px in present mode, where
  // the rows are larger by qf, and used to run into the "0/1 free" badge)
  // (a level lower when the row is wider than the gap to the next pool: levels())
  queueAnchor: (n, idx, ctx) => {
    const k = ctx.k || 1, qf = ctx.qf || 1;
    const lv = fitted || (current && levels(current, ctx));
    const level = (lv && lv.get(n.id)) || 0;
    return { x: n.x - ctx.r, y: n.y + ctx.r + (20 + 2 * (ctx.lh || 14) + 11.5 * qf + (idx + level) * ROW * qf) * k, right: true, stack: true };
  },
};
