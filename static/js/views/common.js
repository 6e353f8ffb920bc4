// The generic drawing every layout shares: edges, nodes with their state, queues as ordered
// chips, wait-for/dependency cycles in red, and the in-flight messages. A layout module
// (ring.js, tree.js, ...) only adds what is particular to it, through the hooks below; with no
// hooks, or when a protocol's extra fields are missing, this still draws a sensible picture.

import { attr, el, keyed, text, tip } from "../svg.js";
import { drawMessages } from "../messages.js";
import { GAP, MARGIN, drawQueueTable, planTable, planWidth, tableRows } from "./queue_table.js";

// A node's detail lines ("head C1", "D=(R3,R1)") are 14 screen pixels (app.css, .node .detail,
// through --detail-px), readable on a projector at 1280x720 (they were 12), 17 pixels apart; a
// layout sized for other text says so (hooks.detailPx, hooks.detailLh: the game's).
export const DETAIL_PX = 14;
export const DETAIL_LH = 17;

const CX = 500, CY = 350;

/** Sizes that keep a 200-node ring readable and a 4-node ring big enough for a projector. */
export function sizing(n) {
  const r = n <= 8 ? 34 : Math.max(5, Math.min(28, 640 / n));
  return { r, msgSize: Math.max(4, Math.min(13, r * 0.4)), labels: n <= 40 };
}

export function nodeClasses(n) {
  const c = ["node", `kind-${String(n.kind || "process").replace(/[^a-z0-9_-]/gi, "")}`];
  if (n.cs) c.push("cs");
  if (n.waiting) c.push("waiting");
  if (n.crashed) c.push("crashed");
  if (n.token || n.holder || n.has_token) c.push("token");
  if (n.root || n.kind === "root") c.push("root");
  return c.join(" ");
}

function shapeOf(n, hooks) {
  if (hooks.nodeShape) return hooks.nodeShape(n);
  return n.kind === "resource" ? "rect" : n.kind === "controller" ? "diamond" : "circle";
}

function stateWord(n) {
  if (n.crashed) return "crashed";
  if (n.cs) return "in its critical section";
  if (n.waiting) return "waiting";
  return n.phase || "idle";
}

/** Build the layered SVG once; returns the stage object used by the renderer. */
export function makeStage(svg) {
  svg.replaceChildren();
  const defs = el("defs", {}, svg);
  for (const [id, cls] of [["arrow", "arrowhead"], ["arrow-red", "arrowhead red"], ["arrow-dep", "arrowhead dep"]]) {
    const m = el("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
      markerHeight: 7, orient: "auto-start-reverse", markerUnits: "userSpaceOnUse" }, defs);
    attr(m, "markerWidth", 12); attr(m, "markerHeight", 12);
    el("path", { d: "M0,0L10,5L0,10z", class: cls }, m);
  }
  const layer = (name) => el("g", { class: `layer ${name}` }, svg);
  return { svg, back: layer("back"), edges: layer("edges"), cycles: layer("cycles"),
           nodes: layer("nodes"), queues: layer("queues"), messages: layer("messages"),
           front: layer("front") };
}

/** Point on the border of a node of radius r, from centre a towards b. */
export function trim(a, b, ra, rb) {
  const dx = b.x - a.x, dy = b.y - a.y, len = Math.hypot(dx, dy) || 1;
  return [a.x + (dx / len) * ra, a.y + (dy / len) * ra, b.x - (dx / len) * rb, b.y - (dy / len) * rb];
}

/** Edge kinds drawn as a bow (so that they do not hide the straight link they parallel). */
const BOWED = new Set(["dependency", "grant", "wait"]);

export function drawEdges(stage, model, ctx, hooks) {
  const nodes = model.view.nodes;
  const items = model.view.edges.filter((e) => nodes.has(String(e.src)) && nodes.has(String(e.dst)));
  keyed(stage.edges, items, (e) => `${e.src}|${e.dst}|${e.kind || ""}`,
    () => el("path", {}),
    (path, e) => {
      const a = nodes.get(String(e.src)), b = nodes.get(String(e.dst));
      const [x1, y1, x2, y2] = trim(a, b, ctx.r + 2, ctx.r + 4);
      const directed = hooks.edgeDirected ? hooks.edgeDirected(e) : e.directed !== false;
      const kind = String(e.kind || "edge").replace(/[^a-z0-9_-]/gi, "");
      if (BOWED.has(kind)) {
        const mx = (x1 + x2) / 2, my = (y1 + y2) / 2, dx = x2 - x1, dy = y2 - y1;
        attr(path, "d", `M${x1.toFixed(1)},${y1.toFixed(1)}Q${(mx + dy * 0.25).toFixed(1)},${(my - dx * 0.25).toFixed(1)} ${x2.toFixed(1)},${y2.toFixed(1)}`);
      } else {
        attr(path, "d", `M${x1.toFixed(1)},${y1.toFixed(1)}L${x2.toFixed(1)},${y2.toFixed(1)}`);
      }
      const flags = ["in_use", "using", "requested"].filter((f) => e[f]).map((f) => ` ${f.replace("_", "-")}`).join("");
      attr(path, "class", `edge kind-${kind}${e.dashed ? " dashed" : ""}${flags}`);
      if (directed) attr(path, "marker-end", kind === "dependency" ? "url(#arrow-dep)" : "url(#arrow)");
      else path.removeAttribute("marker-end");
      tip(path, `${e.kind || "edge"}: ${e.src} → ${e.dst}${e.client ? " (client " + e.client + ")" : ""}`);
    },
    // (where its ends are, too: a layout that places nodes itself, hooks.place, moves them
    // when the figure changes shape, and the tree's edges stayed where the nodes had been)
    (e) => {
      const a = nodes.get(String(e.src)), b = nodes.get(String(e.dst));
      return JSON.stringify(e) + ctx.r + `@${a.x},${a.y},${b.x},${b.y}`;
    });
}

/** Classes other modules put on a node's <g> (cycles, monitors, the last actor, previews,
 * lessons): a redraw of the node keeps them, so that they are set again only when they change. */
const MARKS = ["in-cycle", "culprit", "acted", "previewed", "lesson-hl"];

/**
 * Draw the nodes. With `only` (the ids a patch changed, the set of nodes unchanged) just those
 * are looked at: comparing all 500 nodes' JSON each step was a third of the view's time.
 */
export function drawNodes(stage, model, ctx, hooks, handlers, only = null) {
  const r = ctx.r;
  const create = (n) => {
    const g = el("g", { "data-id": String(n.id), tabindex: "0", role: "button" });
    g.addEventListener("click", (ev) => { ev.stopPropagation(); handlers.selectNode(g.__key); });
    // keyboard: Enter / space inspects (and, with a fault armed, faults) the process
    g.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); ev.stopPropagation(); handlers.selectNode(g.__key); }
    });
    return g;
  };
  const update = (g, n) => {
    g.replaceChildren();
    const marks = MARKS.filter((c) => g.classList.contains(c)).map((c) => " " + c).join("");
    attr(g, "class", nodeClasses(n) + (ctx.selected === String(n.id) ? " selected" : "") + marks);
    attr(g, "transform", `translate(${n.x},${n.y})`);
    const how = [n.cs && "in its critical section", n.waiting && "waiting", n.crashed && "crashed"].filter(Boolean).join(", ");
    attr(g, "aria-label", `${n.kind || "process"} ${n.label ?? n.id}${how ? ": " + how : ""} — Enter to inspect`);
    const shape = shapeOf(n, hooks);
    const rr = n.kind === "client" ? r * 0.8 : r;
    if (shape === "rect") el("rect", { class: "body", x: -rr, y: -rr * 0.8, width: 2 * rr, height: 1.6 * rr, rx: 6 }, g);
    else if (shape === "diamond") el("path", { class: "body", d: `M0,${-rr}L${rr},0L0,${rr}L${-rr},0Z` }, g);
    else el("circle", { class: "body", r: rr }, g);
    if (n.waiting) el("circle", { class: "wait-ring", r: rr + 5 }, g);
    if (n.crashed) el("path", { class: "cross", d: `M${-rr * .6},${-rr * .6}L${rr * .6},${rr * .6}M${rr * .6},${-rr * .6}L${-rr * .6},${rr * .6}` }, g);
    // a token dot only where the algorithm has a token (coterie's resources have a holder,
    // not a token: their holder is written under them instead)
    if (n.token || n.has_token) {
      el("circle", { class: "token-dot", r: Math.max(3, rr * 0.32), cx: rr * 0.78, cy: -rr * 0.78 }, g);
    }
    if (ctx.labels) {
      const t = el("text", { class: "label", "text-anchor": "middle", dy: "0.35em" }, g);
      text(t, n.label ?? n.id);
    }
    const lines = hooks.details ? hooks.details(n, model) : [];
    const badges = (n.badges || []).filter((b) => b !== "token");
    if (ctx.labels && !ctx.dense) {
      // A layout may stack the badges one per line, and put the lines above the node (so
      // that the edges leaving it downwards do not run through them).
      const all = lines.concat(!badges.length ? [] : hooks.stackBadges && hooks.stackBadges(n) ? badges : [badges.join(" · ")]);
      const k = ctx.k || 1;
      const above = hooks.detailsAbove && hooks.detailsAbove(n);
      const lh = ctx.lh || DETAIL_LH;   // the line height: 15 px detail text in present mode needs 18
      let y = above ? -rr - 8 * k - lh * k * (all.length - 1) : rr + 16 * k;
      for (const line of all) {
        text(el("text", { class: "detail", "text-anchor": "middle", y }, g), line);
        y += lh * k;
      }
    }
    tip(g, `${n.label ?? n.id}: ${stateWord(n)}${n.token || n.holder ? ", holds the token" : ""}` +
      (lines.length ? "\n" + lines.join("\n") : "") + "\nclick to inspect; right-click for its faults");
  };
  // the zoom is part of it: detail lines are spaced in screen pixels (a refit that changed
  // only the zoom used to leave them spaced for the old one, under text sized for the new)
  // (and the lines a layout gives it: the tree's, in present mode, come and go with the room
  // between its rows, and kout-fig2's root kept lines drawn before the space-time strip opened)
  const sig = (n) => JSON.stringify(n) + (ctx.selected === String(n.id) ? "*" : "") + ctx.r + ctx.dense + "," + ctx.k
    + (hooks.details ? "|" + hooks.details(n, model).join("|") : "");
  const els = stage.nodeEls;
  if (only && els && els.size === model.view.nodes.size
      && Array.from(only).every((id) => els.has(id) && model.view.nodes.has(id))) {
    for (const id of only) {
      const g = els.get(id), n = model.view.nodes.get(id), s = sig(n);
      if (g.__sig !== s) { update(g, n); g.__sig = s; }
    }
    return;
  }
  keyed(stage.nodes, Array.from(model.view.nodes.values()), (n) => String(n.id), create, update, sig);
  stage.nodeEls = new Map(Array.from(stage.nodes.children, (g) => [g.__key, g]));
  stage.nodesGen = (stage.nodesGen || 0) + 1;    // elements may be new: marks are set anew
}

/**
 * A layout may move the server's positions (the two-resource ring turned a quarter, a crowded
 * ring widened): every node a frame brought. The viewer and a lesson's figure both call it
 * after applying a frame, so that a lesson draws the figure the viewer draws (without it a
 * lesson's two-resource ring stood upright, its messages crossing both queue blocks).
 */
export function placeNodes(hooks, model, msg) {
  if (!hooks.relayout) return;
  const place = hooks.relayout(model.view);
  if (!place) return;
  if (msg.view) for (const n of model.view.nodes.values()) place(n);
  else if (msg.view_patch) {
    const ids = ((msg.view_patch.nodes) || []).map((n) => String(n.id));
    for (const byId of Object.values(msg.view_patch.node_fields || {})) ids.push(...Object.keys(byId));
    for (const id of new Set(ids)) place(model.view.nodes.get(id));
  }
}

/** Queues drawn as ordered chips, head first, beside their node (outward by default). */
export function drawQueues(stage, model, ctx, hooks) {
  const nodes = model.view.nodes;
  // (a layout that lists its rows elsewhere, the tree's in a short figure under its counters)
  if (hooks.rowsListed) { stage.queues.replaceChildren(); return; }
  const perNode = new Map();
  const items = [];
  // With many queues (datta_ring has three per resource) the empty ones are left out: a chip
  // row appears when a queue fills, and the inspector lists them all.
  const crowded = model.view.queues.size > 6;
  for (const q of model.view.queues.values()) {
    const n = nodes.get(String(q.node));
    if (!n || (crowded && !(q.items || []).length)) continue;
    const idx = perNode.get(q.node) || 0;
    perNode.set(q.node, idx + 1);
    const a = hooks.queueAnchor ? hooks.queueAnchor(n, idx, ctx) : defaultAnchor(n, idx, ctx);
    items.push({ q, n, idx, a });
  }
  if (hooks.queueColumn && hooks.queueColumn(model.view)) {
    // on a phone there is no room beside the ring: the inspector lists the queues instead
    const rows = (ctx.W || 900) < 600 || !stage.table ? [] : tableRows(model.view);
    const k = ctx.k || 1;
    const xs = Array.from(nodes.values()).map((n) => n.x), ys = Array.from(nodes.values()).map((n) => n.y);
    let x0 = Math.max(...xs) + ctx.r + GAP * k;
    // level with the ring's middle, never above the top of what is shown
    const mid = (Math.min(...ys) + Math.max(...ys)) / 2;
    const h = stage.table ? rows.length * 2 * stage.table.px * k : 0;
    let y0 = Math.max(ctx.top != null ? ctx.top + (stage.table ? stage.table.px : 14) * k : -Infinity, mid - h / 2);
    if (stage.table && stage.table.below) {   // under the ring, centred on it (fitBesideTable)
      x0 = (Math.min(...xs) + Math.max(...xs)) / 2 - (stage.table.w / 2) * k;
      y0 = Math.max(...ys) + ctx.r + 2 * stage.table.px * k;
    }
    drawQueueTable(stage.queues, rows, stage.table || { px: 13, m: 1 }, x0, y0, k);
    return;
  }
  keyed(stage.queues, items, (it) => `${it.q.node}|${it.q.name}`,
    () => el("g", { class: "queue" }),
    (g, it) => {
      g.replaceChildren();
      const { q, a } = it;
      g.setAttribute("transform", `translate(${a.x.toFixed(1)},${a.y.toFixed(1)})`);
      const items = q.items || [];
      const k = (ctx.k || 1) * (ctx.qf || 1);
      const h = 17 * k;
      // a.stack: the queue's name on a line of its own above the chips (a narrower row).
      const name = el("text", { class: "qname", x: 0, y: a.stack ? -h / 2 - 3 * k : 4 * k }, g);
      const called = a.label || q.name;
      text(name, called);
      const x0 = a.stack ? 0 : (called.length * 7 + 6) * k;
      const label = (item) => String(typeof item === "object" ? (item.label ?? item.id ?? JSON.stringify(item)) : item);
      let x = x0;
      items.slice(0, 8).forEach((item, i) => {
        const s = label(item);
        const w = Math.max(24, s.length * 7 + 8) * k;   // a chip as wide as its text
        const cg = el("g", { class: "chip-g", transform: `translate(${x},${-h / 2})` }, g);
        const meta = (q.tickets || q.entries || [])[i];
        const order = meta && typeof meta === "object" && meta.order;   // task_game order form
        el("rect", { class: "qchip" + (i === 0 ? " head" : "") + (order ? " order" : ""), width: w, height: h, rx: 4 }, cg);
        text(el("text", { class: "qitem", x: w / 2, y: 12.5 * k, "text-anchor": "middle" }, cg), s);
        x += w + 3 * k;
      });
      if (items.length > 8) { text(el("text", { class: "qmore", x, y: 4 * k }, g), `+${items.length - 8}`); x += 24 * k; }
      if (!items.length) { text(el("text", { class: "qitem empty", x: x0, y: 4 * k }, g), "∅"); x += 14 * k; }
      const total = x;
      // (a stacked row's name longer than its chips ends where they do, the node's side, when
      // the row is left of its node: its width is the wider of the two, kept clear of the node)
      if (a.stack && !a.right) name.setAttribute("x", Math.min(0, total - called.length * 7 * k).toFixed(1));
      if (a.centre) {   // centred under / over its node
        g.setAttribute("transform", `translate(${(a.x - total / 2).toFixed(1)},${a.y.toFixed(1)})`);
      } else if (!a.right) {   // anchored on the left of its node: the row ends at the anchor
        g.setAttribute("transform", `translate(${(a.x - total).toFixed(1)},${a.y.toFixed(1)})`);
      }
      const detail = (q.entries || q.tickets || items).map((i) => typeof i === "object" ? JSON.stringify(i) : i);
      tip(g, `${q.name} at ${q.node}: ${items.length ? detail.join(", ") : "empty"} (head first)`);
    },
    // the row moves when its anchor does (and redraws when the projector size changes) (another queue of the node filled or emptied, the
    // node's detail lines changed): the anchor is part of what makes a row stale
    (it) => JSON.stringify(it.q) + JSON.stringify(it.a) + ctx.r + "," + ctx.k + "," + ctx.qf);
}

function defaultAnchor(n, idx, ctx) {
  const dx = n.x - CX, dy = n.y - CY, len = Math.hypot(dx, dy) || 1;
  const right = dx >= -1;
  const k = ctx.k || 1;
  const off = ctx.r + 14 * k;
  return { x: n.x + (dx / len) * off + (right ? 6 : -6) * k, y: n.y + (dy / len) * off + idx * 21 * k, right };
}

/** Red cycles: the view's dependency cycles and the deadlock monitor's wait-for cycle. */
export function drawCycles(stage, model, ctx) {
  const nodes = model.view.nodes;
  const cycles = (model.view.cycles || []).map((c) => ({ c, from: "view" }));
  const dl = model.monitors && model.monitors.deadlock;
  if (dl && dl.cycle && dl.cycle.length && dl.step <= model.step) cycles.push({ c: dl.cycle, from: "deadlock" });
  const segs = [];
  const seen = new Set();
  for (const { c } of cycles) {
    const ids = c.map(String).filter((id) => nodes.has(id));
    if (ids.length < 2) {
      if (ids.length === 1) segs.push({ key: `self|${ids[0]}`, a: nodes.get(ids[0]), b: null });
      continue;
    }
    ids.forEach((id, i) => {
      const nxt = ids[(i + 1) % ids.length];
      const key = `${id}|${nxt}`;
      if (seen.has(key)) return;
      seen.add(key);
      segs.push({ key, a: nodes.get(id), b: nodes.get(nxt) });
    });
  }
  const involved = new Set(cycles.flatMap(({ c }) => c.map(String)));
  const mark = `${stage.nodesGen}|${Array.from(involved).sort().join(",")}`;
  if (stage.cycleMark !== mark) {    // (node redraws keep the class: see MARKS)
    stage.cycleMark = mark;
    for (const g of stage.nodes.children) g.classList.toggle("in-cycle", involved.has(g.__key));
  }
  keyed(stage.cycles, segs, (s) => s.key,
    () => el("path", { class: "cycle-edge", "marker-end": "url(#arrow-red)" }),
    (p, s) => {
      if (!s.b) { attr(p, "d", `M${s.a.x - ctx.r - 8},${s.a.y}a${ctx.r + 8},${ctx.r + 8} 0 1,0 1,0`); return; }
      const [x1, y1, x2, y2] = trim(s.a, s.b, ctx.r + 6, ctx.r + 8);
      // Bow the arrow a little so that it stays visible next to the ring edge it follows.
      const mx = (x1 + x2) / 2, my = (y1 + y2) / 2, dx = x2 - x1, dy = y2 - y1;
      const bend = 0.18;
      attr(p, "d", `M${x1.toFixed(1)},${y1.toFixed(1)}Q${(mx - dy * bend).toFixed(1)},${(my + dx * bend).toFixed(1)} ${x2.toFixed(1)},${y2.toFixed(1)}`);
    },
    (s) => `${s.a.x},${s.a.y},${s.b ? s.b.x + "," + s.b.y : ""}`);
  return cycles.length;
}

/**
 * Zoom to the nodes' bounding box (plus room for labels, details and queue chips) and tell the
 * CSS how many user units make one screen pixel (--k), so that text stays readable at any zoom.
 */
function fitViewBox(stage, model, ctx, hooks) {
  const ns = Array.from(model.view.nodes.values());
  if (!ns.length) return;
  const xs = ns.map((n) => n.x), ys = ns.map((n) => n.y);
  const W = stage.svg.clientWidth || 900, H = stage.svg.clientHeight || 450;
  const lines = hooks.details ? Math.max(0, ...ns.map((n) => hooks.details(n, model).length)) : 0;
  let k = 1;
  let box = null;
  let near = Infinity;
  if (ns.length <= 80) {
    for (let i = 0; i < ns.length; i++) for (let j = i + 1; j < ns.length; j++) {
      near = Math.min(near, Math.hypot(ns[i].x - ns[j].x, ns[i].y - ns[j].y));
    }
  }
  if (hooks.extent) {   // the layout knows what it draws around each node: fit exactly that
    const r = Number.isFinite(near) ? Math.max(ctx.r, Math.min(34, near * 0.32)) : ctx.r;
    // to the fixed point (at most eight rounds): what a node draws may grow with the zoom
    // (game.js puts a pool's queue row a level lower when rows would meet at it)
    // (slack: the screen px of height the first round left unused, which a layout may spend on
    // what it would otherwise draw on top of each other, without making the figure smaller)
    let slack = null;
    for (let i = 0, last = 0; i < 8 && Math.abs(k - last) > 1e-3 * k; i++) {
      last = k;
      const dense = near / k < 95;
      // the radius the drawing will give the nodes at this zoom (renderView: a small figure's
      // nodes at least 20 px, 26 in present mode): a pool's rows hang under it
      const rk = ns.length <= 16 ? Math.max(r, Math.min(((ctx.qf || 1) > 1 ? 26 : 20) * k, near * 0.45)) : r;
      const ex = ns.map((n) => hooks.extent(n, { ...ctx, r: rk, k, dense, slack, H }, model));
      const pad = 10 * k;
      const x0 = Math.min(...ex.map((e) => e[0])) - pad, x1 = Math.max(...ex.map((e) => e[2])) + pad;
      const y0 = Math.min(...ex.map((e) => e[1])) - pad, y1 = Math.max(...ex.map((e) => e[3])) + pad;
      box = [x0, y0, x1 - x0, y1 - y0];
      k = 1 / (Math.min(W / box[2], H / box[3]) || 1);
      // (then from the start again, as a fit without slack would have gone)
      if (slack === null) { slack = Math.max(0, H - box[3] / k); k = 1; last = 0; }
    }
  }
  stage.table = null;
  if (!hooks.extent && hooks.queueColumn && hooks.queueColumn(model.view) && W >= 600) {
    box = fitBesideTable(stage, model, ctx, { xs, ys, W, H, lines, near });
    k = 1 / (Math.min(W / box[2], H / box[3]) || 1);
  }
  // Nodes closer than ~95 screen pixels have no room for detail lines (tooltips and the
  // inspector still have them).
  // A layout whose detail lines hang under nodes stacked in rows (the tree) needs the lines'
  // height between two rows as well, and room for the tokens travelling on the edges there.
  const crowded = (kk) => near / kk < (hooks.rowsBelow ? Math.max(95, 2 * Math.min(34, near * 0.32) / kk + 70 + ((ctx.room || 15) - 1) * lines) : 95);
  // padding is in screen pixels, so it depends on the zoom: iterate to the fixed point
  const fit = (room) => {
    let kk = 1, b = null;
    for (let i = 0; i < (hooks.leftBox ? 40 : 2); i++) {
      // (on a phone the queue rows hang under their nodes, half a row's width each side: less)
      // (a layout that keeps its rows nearer says how much room they need right of the nodes)
      const padX = ctx.r + (hooks.rightBox ?? (model.view.queues.size ? (W < 600 ? 75 : 130) : 50)) * kk;
      // a layout's box of counters left of the figure (the tree's tokens) gets a margin of its own
      const padL = Math.max(padX, ctx.r + (W >= 600 && hooks.leftBox || 0) * kk);
      // (queue rows over a node are larger by qf in present mode: coterie-example4's X_u2 row
      // was cut by the top edge)
      // (a phone's tree puts its counters under it: hooks.leftBox lines of room there instead)
      const padTop = ctx.r + (30 + (model.view.queues.size ? 30 * ((ctx.qf || 1) - 1) : 0)) * kk, padBottom = ctx.r + (22 + (ctx.room || 15) * (room + 1) + (W < 600 && hooks.leftBox ? 30 : 0) + (hooks.boxBelow || 0)) * kk;
      const x1 = Math.max(...xs) + padX;
      const y0 = Math.min(...ys) - padTop, y1 = Math.max(...ys) + padBottom;
      const x0 = Math.min(...xs) - padL;
      b = [x0, y0, x1 - x0, y1 - y0];
      kk = 1 / (Math.min(W / b[2], H / b[3]) || 1);
    }
    return [b, kk];
  };
  if (!hooks.extent && !stage.table) {
    [box, k] = fit(lines);
    // a tree too crowded for its detail lines does not draw them: the room under its bottom
    // row goes to the tree when it is still too crowded without it (kout-random at 1280x720
    // kept ~100 px empty under the tree, its rows 56 px apart and p12's RSet row on a token)
    if (hooks.rowsBelow && lines && crowded(k)) {
      const [b0, k0] = fit(0);
      if (crowded(k0)) [box, k] = [b0, k0];
    }
  }
  stage.H = H;
  stage.W = W;
  setBox(stage, box);
  stage.dense = crowded(k);
  stage.near = near;
}

/**
 * The box of a ring with its queue table beside it (queue_table.js), solved for the zoom k
 * (user units per screen px) rather than iterated: every margin is r user units plus some
 * screen px, so the height and the width each give k in closed form. The ring takes the height
 * first; the table gets the width left beside it (fewer chips, smaller present-mode text when
 * that is short) and only a table wider than that makes the ring smaller. (The fixed-point
 * iteration this replaces had no fixed point once the table was wider than the view less the
 * margins: present mode's 1.6x table on datta-stress at 1280x720 zoomed out to k = 40,000.)
 */
function fitBesideTable(stage, model, ctx, { xs, ys, W, H, lines, near }) {
  const r = ctx.r, qf = ctx.qf || 1;
  const spanX = Math.max(...xs) - Math.min(...xs) + 2 * r, spanY = Math.max(...ys) - Math.min(...ys) + 2 * r;
  // screen px kept around the ring: left of it the node labels and details (its queues are in
  // the table), over it a label or a message, under it the detail lines; a ring too crowded
  // for detail lines (fewer than 95 px between nodes: they are not drawn) keeps only a label's
  // room, over it as under it (datta-stress: 106 px of 327 were kept for lines never drawn;
  // what is drawn past the box all the same widens it after the drawing: growToDrawing)
  const left = 50;
  let top = 30 + 30 * (qf - 1), bottom = 22 + (ctx.room || 15) * (lines + 1);
  let kh = spanY / Math.max(1, H - top - bottom);
  if (near / kh < 95) { top = bottom = 14 * qf; kh = spanY / Math.max(1, H - top - bottom); }
  const rows = tableRows(model.view);
  const ringW = spanX / kh + left;
  // (when no table fits beside the ring at its full height, the ring gives up to a fifth of
  // its width: else fig5-6's lesson showed "R1 strong C3 +1" for a ring 10 % larger, where
  // its point is C2 behind C3)
  const plan = planTable(rows, [W - ringW - GAP - MARGIN, W - RING_KEEP * ringW - GAP - MARGIN],
                         H - top, TABLE_PX_PRESENT(qf));
  const kw = spanX / Math.max(1, W - left - GAP - plan.w - MARGIN);
  const k = Math.max(kh, kw);
  // A figure about as high as it is wide (present mode at 1024x768: 624 x 572 px) has more
  // room for the ring over the table than beside it: datta-stress's table took 370 px of the
  // width and left the ring 170 px across, 30 clients' names on one another, 300 px of height
  // empty. The table goes under the ring, in at most half the height, when that draws the
  // ring a quarter larger or more.
  const under = planTable(rows, [W - 2 * MARGIN], (H - top - bottom) / 2, TABLE_PX_PRESENT(qf));
  const ku = Math.max(spanY / Math.max(1, H - top - bottom - under.px - under.h - MARGIN),
                      spanX / Math.max(1, W - 2 * left));
  if (under.w <= W - 2 * MARGIN && ku * 1.25 <= k) {
    stage.table = { ...under, below: true };
    const cx = (Math.min(...xs) + Math.max(...xs)) / 2;
    return [cx - (W / 2) * ku, Math.min(...ys) - r - top * ku, W * ku, H * ku];
  }
  stage.table = plan;
  return [Math.min(...xs) - r - left * k, Math.min(...ys) - r - top * k,
          spanX + (left + GAP + plan.w + MARGIN) * k, spanY + (top + bottom) * k];
}

const RING_KEEP = 0.8;

/** Present mode's queue rows: this many times normal mode's size (app.css reads --qf). */
const QF = 1.6;

/** The table's text: 13 px, and as much larger as the other queue rows in present mode. */
const TABLE_PX_PRESENT = (qf) => Math.round(13 * qf * 10) / 10;

/**
 * Render the whole view: called once per animation frame at most, with the model's dirty
 * flags deciding which layers to touch.
 */
export function renderView(stage, model, hooks, handlers, state) {
  const n = model.view.nodes.size;
  const present = document.body.classList.contains("present");
  // queue rows a size larger on a projector (names and chips ≥ 16 px at 1920×1080)
  const ctx = { ...sizing(n), selected: state.selected, armed: state.armed,
                qf: present ? stage.qf || QF : 1, lh: present ? 18 : hooks.detailLh || DETAIL_LH };
  ctx.room = present ? 15 : ctx.lh + 1;   // the fit's room per detail line (present mode: as it was)
  const detailPx = String(hooks.detailPx || DETAIL_PX);
  if (stage.detailPx !== detailPx) { stage.detailPx = detailPx; stage.svg.style.setProperty("--detail-px", detailPx); }
  const d = model.dirty;
  const geometryChanged = state.lastN !== n;
  state.lastN = n;
  // the queue table got wider than the fit left room for (a row grew while stepping): refit
  const wider = hooks.queueColumn && d.queues && stage.table && hooks.queueColumn(model.view)
    && planWidth(tableRows(model.view), stage.table) > stage.table.w + 1;
  const all = d.all || geometryChanged || state.forceAll || wider;
  state.forceAll = false;
  if (hooks.place) hooks.place(model, stage);   // a layout that moves nodes for this view's size
  if (all && !state.keepBox) {
    ctx.qf = present ? QF : 1;
    fitViewBox(stage, model, ctx, hooks);
    // a layout whose queue rows still meet at present mode's size (hooks.rowsMeet: the game's
    // pools in a figure too short for the levels that would part them) draws them smaller, in
    // steps down to normal mode's, on two levels at most (more fed on themselves: each made
    // the figure smaller, which widened every row again): game-restricted-locality-3 with the
    // space-time strip, nine pools 70 px apart, their 133 px rows on one level and the names on
    // each other, has them at 1.3 times normal mode's on two levels, the figure 16 % smaller
    for (const qf of [1.4, 1.3, 1.2, 1.1, 1.0]) {
      if (!present || !hooks.rowsMeet || !hooks.rowsMeet()) break;
      ctx.qf = qf;
      ctx.maxLevels = 2;
      fitViewBox(stage, model, ctx, hooks);
    }
    delete ctx.maxLevels;
    // (none parts them: the rows as large as they were, the figure as large as it was)
    if (ctx.qf !== (present ? QF : 1) && hooks.rowsMeet()) { ctx.qf = QF; fitViewBox(stage, model, ctx, hooks); }
    if (stage.qf !== ctx.qf) { stage.qf = ctx.qf; stage.svg.style.setProperty("--qf", String(ctx.qf)); }
  }
  // Small views get bigger nodes: at least ~20 screen pixels of radius on a projector.
  // Nodes as big as their spacing allows (a third of the distance to the nearest one).
  if (Number.isFinite(stage.near)) ctx.r = Math.max(ctx.r, Math.min(34, stage.near * 0.32));
  // (never so big that two nodes touch: a 15-process tree on a phone)
  if (n <= 16 && stage.k) ctx.r = Math.max(ctx.r, Math.min((present ? 26 : 20) * stage.k, (stage.near || Infinity) * 0.45));
  ctx.msgSize = Math.max(ctx.msgSize, n <= 16 && stage.k ? 8 * stage.k : 0);
  ctx.k = stage.k || 1;
  ctx.H = stage.H;
  ctx.W = stage.W;
  ctx.top = stage.top;
  ctx.left = stage.left;
  ctx.dense = !!stage.dense;
  // Node labels fit inside their node: at most 15 px, less on a crowded ring.
  const labelPx = Math.max(8, Math.min(present ? 19 : 15, (ctx.r / ctx.k) * 0.95));
  // (set only when it changes: a custom property on the root restyles every node under it)
  if (stage.labelPx !== labelPx.toFixed(1)) {
    stage.labelPx = labelPx.toFixed(1);
    stage.svg.style.setProperty("--label-px", stage.labelPx);
  }
  if (all || d.edges) drawEdges(stage, model, ctx, hooks);
  // (a layout that moves nodes itself, hooks.place, may have moved any of them)
  if (all || d.nodes.size) drawNodes(stage, model, ctx, hooks, handlers, all || hooks.place ? null : d.nodes);
  if (all || d.queues || d.nodes.size || (d.messages && hooks.queuesFollowMessages)) drawQueues(stage, model, ctx, hooks);
  if (hooks.drawBack && (all || d.extra || d.nodes.size || d.queues)) hooks.drawBack(stage.back, model, ctx);
  drawCycles(stage, model, ctx);
  // the process that just acted (the one the last step's record names) is marked
  const last = model.history[model.history.length - 1];
  const acted = last && last.step === model.step && last.proc != null ? String(last.proc) : null;
  if (acted !== state.acted || stage.nodesGen !== state.actedGen) {
    for (const g of stage.nodes.children) g.classList.toggle("acted", g.__key === acted);
    state.acted = acted;
    state.actedGen = stage.nodesGen;
  }
  // (and when a queue row moved or grew: the messages keep off the rows)
  if (all || d.messages || d.queues || d.nodes.size) drawMessages(stage.messages, model, { click: handlers.clickMessage }, { ...ctx, spread: !!hooks.spreadMessages });
  // (with the handlers: the tree's listed RSet rows select their node, as the node does)
  if (hooks.drawFront) hooks.drawFront(stage.front, model, ctx, handlers);
  // A phone has no pixel to spare: the padding the fit guessed (room for rows, chips and
  // labels that may not be there) is swapped for what was drawn, and drawn again at that zoom
  // (its labels keep their screen size, so a zoom in only brings them closer). Labels placed
  // at the guessed zoom can reach far out (datta-fairness's seekLoop label, 300 px left of
  // R2), and at the new zoom they are placed nearer: so fit to the drawing again, up to three
  // rounds, until the box holds. (One round left that phone's figure a quarter too small, its
  // labels on one another, until anything redrew it.)
  for (let round = 0; round < 3 && all && !state.keepBox && (stage.W || 900) < 600
       && fitToDrawing(stage); round++) {
    state.keepBox = true;
    state.forceAll = true;
    try { renderView(stage, model, hooks, handlers, state); } finally { state.keepBox = false; }
  }
  // Wider views guess their padding too, and the guess can fall short: a task's phase and
  // ticket over the top row (game-conflict at 1280x720: "TRYING" wholly above the top edge),
  // a message label over the top row, three queue rows under the bottom resources. What was
  // drawn past the shown area widens the box (never narrows it, so the zoom does not jitter
  // while stepping) and is drawn again at that zoom, at most twice in a row.
  if (!state.keepBox && (stage.W || 900) >= 600 && n <= 80
      && (all || d.messages || d.queues || d.nodes.size || d.extra) && growToDrawing(stage)) {
    state.keepBox = true;
    state.forceAll = true;
    try {
      renderView(stage, model, hooks, handlers, state);
      if (growToDrawing(stage)) { state.forceAll = true; renderView(stage, model, hooks, handlers, state); }
    } finally { state.keepBox = false; }
  }
}

/** Show ``box``: its zoom (--k, the arrowheads) and the top of what is shown (the box is centred
 * when the view is wider than it needs), for the layouts; the one place a view box is set. */
function setBox(stage, box) {
  const k = 1 / (Math.min(stage.W / box[2], stage.H / box[3]) || 1);
  attr(stage.svg, "viewBox", box.map((v) => v.toFixed(0)).join(" "));
  stage.k = k;
  stage.top = box[1] - Math.max(0, (stage.H * k - box[3]) / 2);
  stage.left = box[0] - Math.max(0, (stage.W * k - box[2]) / 2);   // (and its left)
  stage.svg.style.setProperty("--k", k.toFixed(3));
  for (const m of stage.svg.querySelectorAll("marker")) {
    attr(m, "markerWidth", (12 * k).toFixed(1));
    attr(m, "markerHeight", (12 * k).toFixed(1));
  }
}

/**
 * Widen the view box to hold what the nodes, queues, messages and front layers drew (plus 6
 * screen px) when some of it lies outside the area shown (the box, centred in the view);
 * true if it changed.
 */
function growToDrawing(stage) {
  const old = (stage.svg.getAttribute("viewBox") || "").split(" ").map(Number);
  if (old.length !== 4 || !stage.W || !stage.H || !stage.k) return false;
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const layer of [stage.nodes, stage.queues, stage.messages, stage.front]) {
    let b;
    try { b = layer.getBBox(); } catch { continue; }
    if (!b || (!b.width && !b.height)) continue;
    x0 = Math.min(x0, b.x); y0 = Math.min(y0, b.y);
    x1 = Math.max(x1, b.x + b.width); y1 = Math.max(y1, b.y + b.height);
  }
  if (!Number.isFinite(x0)) return false;
  const k = stage.k, sw = stage.W * k, sh = stage.H * k;
  const sx = old[0] - (sw - old[2]) / 2, sy = old[1] - (sh - old[3]) / 2;   // the area shown
  const tol = k;   // one screen pixel
  if (x0 >= sx - tol && y0 >= sy - tol && x1 <= sx + sw + tol && y1 <= sy + sh + tol) return false;
  const pad = 6 * k;
  const nx0 = Math.min(old[0], x0 - pad), ny0 = Math.min(old[1], y0 - pad);
  const nx1 = Math.max(old[0] + old[2], x1 + pad), ny1 = Math.max(old[1] + old[3], y1 + pad);
  setBox(stage, [nx0, ny0, nx1 - nx0, ny1 - ny0]);
  return true;
}

// Labels that find themselves a place inside the figure (or are left out): not part of the
// drawing a fit holds. A fit that held them fed on itself: a label keeps its screen size, so at
// each round's smaller zoom it was larger in user units and the box grew again (datta-fig5-6 at
// step 26 on a phone: three seekLoop labels, the ring drawn 130 px wide in a 390 px figure).
const FLOATING = ".seek-label";

/** Set the view box to the drawing's own box (plus 6 screen px); true if it changed. */
function fitToDrawing(stage) {
  let b;
  const floating = Array.from(stage.svg.querySelectorAll(FLOATING)).filter((t) => t.style.display !== "none");
  for (const t of floating) t.style.display = "none";
  try { b = stage.svg.getBBox(); } catch { return false; } finally { for (const t of floating) t.style.display = ""; }
  if (!b || !b.width || !b.height || !stage.k) return false;
  const pad = 6 * stage.k;
  const box = [b.x - pad, b.y - pad, b.width + 2 * pad, b.height + 2 * pad];
  const old = (stage.svg.getAttribute("viewBox") || "").split(" ").map(Number);
  if (old.length === 4 && box.every((v, i) => Math.abs(v - old[i]) < 0.02 * Math.max(old[2], old[3]))) return false;
  setBox(stage, box);
  return true;
}
