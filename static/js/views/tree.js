// Tree layout (kout_tree): root at the top, both directions of every channel with their FIFO
// queues of tokens (the shared message layer draws each direction on its own side of the
// edge), the virtual ring as a dashed tour hugging the tree, per-process State/Need/RSet/Prio,
// and the token counts and the root controller's counters in a corner box.

import { el, keyed, text, tip } from "../svg.js";
import { layoutMessages } from "../messages.js";

function fmt(v) {
  if (Array.isArray(v)) return `{${v.join(",")}}`;
  if (v && typeof v === "object") return JSON.stringify(v);
  return v === null || v === undefined ? "⊥" : String(v);
}

// Present mode, when place() found no room for the detail lines in the figure as it is now;
// and when the counters go under the tree (a narrow figure), underPx() high.
let bare = false;
let under = false;
// Present mode beside the counters (a figure 800 px wide or more): the px kept right of the
// nodes for RSet rows, fewer than the 130 of every other layout (rows go above, below and
// left as well: 116-120 px were left empty right of kout-random's and kout-chaos's trees).
const RIGHT_PX = 60;
let right = null;
// Normal mode in a short figure narrower than 800 px (800x600 with the space-time strip: 610 x
// 253 px), when the tree's levels cannot stand far enough apart for a row of chips between
// them: the RSet rows are listed under the counters instead ("p8: p2 p2"), and the margin kept
// right of the nodes for them goes to the tree. (kout-random's five levels were drawn 35 px
// apart, 300 x 140 px: p8's row lay on p2, p12's on p10, whatever place a row was given.)
// So on a phone (390 x 320 px: kout-random's levels 39 px apart, p8's row on p14), where they
// flow after the queue's name under the counters. A listed row is a button for its node.
let listed = false;
// the px between two levels under which the rows are listed: two node radii (16 px), a row
// (17 px) and a gap each side of it
const LEVEL_PX = 60;
// (three lines of 24 px and a gap of 40 over them in present mode; of 16 px and 10 in normal
// mode, whose fit keeps 37 px more under the bottom row all the same)
const underPx = () => (present() ? 3 * 16 * 1.5 + 40 : 3 * 16 + 10);

function details(n) {
  if (bare && (present() || under)) return [];
  const out = [];
  if (n.State !== undefined) out.push(`State=${fmt(n.State)} Need=${fmt(n.Need)}`);
  if (n.RSet !== undefined) {
    const prio = n.Prio === null || n.Prio === undefined ? "⊥" : (n.Prio_from ?? n.Prio);
    out.push(`RSet=${fmt(n.RSet_from ?? n.RSet)} Prio=${prio}`);
  }
  if (n.myC !== undefined) out.push(`myC=${fmt(n.myC)} Succ→${fmt(n.Succ_to ?? n.Succ)}`);
  return out;
}

/**
 * The virtual ring (extra.virtual_ring: the Euler tour of the tree) drawn as a dashed loop
 * that runs down one side of each edge and up the other, as the tokens travel.
 */
function drawBack(layer, model, ctx) {
  const x = model.view.extra || {};
  const tour = (x.virtual_ring || x.tour || []).map(String);
  const pts = tour.map((id) => model.view.nodes.get(id)).filter(Boolean);
  const off = ctx.r + 9 * (ctx.k || 1);
  const segs = [];
  for (let i = 0; i < pts.length; i++) {
    const a = pts[i], b = pts[(i + 1) % pts.length];
    if (a === b) continue;
    const dx = b.x - a.x, dy = b.y - a.y, l = Math.hypot(dx, dy) || 1;
    const nx = (-dy / l) * off * 0.6, ny = (dx / l) * off * 0.6;
    const ux = (dx / l) * off, uy = (dy / l) * off;
    segs.push(`M${(a.x + ux + nx).toFixed(1)},${(a.y + uy + ny).toFixed(1)}L${(b.x - ux + nx).toFixed(1)},${(b.y - uy + ny).toFixed(1)}`);
  }
  keyed(layer, segs.length ? [segs.join("")] : [], () => "tour",
    () => { const p = el("path", { class: "tour" }); text(el("title", {}, p), "the virtual ring: the tour tokens follow"); return p; },
    (p, d) => p.setAttribute("d", d));
}

const LEFT_BOX = 150;   // px: the counters box's width ("not yet legitimate ✗" at 13 px) and a gap
const PRESENT = 1.5;    // present mode: the counters at 19.5 px (app.css), their box as much wider
const present = () => document.body.classList.contains("present");

/** The counters' lines: tokens in circulation vs expected, legitimacy, the root's counters. */
function counterRows(model) {
  const x = model.view.extra || {};
  const rows = [];
  if (x.ell !== undefined) rows.push(`${x.k ?? "k"}-out-of-${x.ell}`);
  const tok = x.tokens || {}, exp = x.expected_tokens || {};
  for (const k of Object.keys(tok)) rows.push(`${k}: ${tok[k]}${exp[k] !== undefined ? " / " + exp[k] : ""}`);
  if (x.legitimate !== undefined) rows.push(x.legitimate ? "legitimate ✓" : "not yet legitimate ✗");
  const root = model.view.nodes.get(String(x.root));
  if (root) for (const k of ["SToken", "SPush", "SPrio", "Reset"]) if (root[k] !== undefined) rows.push(`${k}=${fmt(root[k])}`);
  return rows;
}

/**
 * The non-empty queue rows, when they are listed (see listed): per queue name ("RSet") the
 * nodes' rows in the nodes' order, each as its line's text ("p8: p2 p2", at most six chips and
 * "+N": the inspector lists them all) and the tooltip the drawn row has.
 */
function listedRows(model) {
  const byName = new Map();
  for (const n of model.view.nodes.values()) {
    for (const q of rowsAt(model, n)) {
      const items = q.items || [];
      if (!items.length) continue;
      const label = (it) => String(typeof it === "object" ? (it.label ?? it.id ?? JSON.stringify(it)) : it);
      const chips = items.slice(0, 6).map(label).join(" ") + (items.length > 6 ? ` +${items.length - 6}` : "");
      // (common.js's drawQueues says the same of a drawn row)
      const detail = (q.entries || q.tickets || items).map((i) => typeof i === "object" ? JSON.stringify(i) : i);
      if (!byName.has(q.name)) byName.set(q.name, []);
      byName.get(q.name).push({ node: String(n.id), text: `${n.id}: ${chips}`,
                                tip: `${q.name} at ${n.id}: ${detail.join(", ")} (head first)` });
    }
  }
  return Array.from(byName, ([name, rows]) => ({ name, rows }));
}

/**
 * One listed row, a button for its node: a click, Enter or Space does what they do on the
 * node itself (handlers.selectNode: the viewer inspects it, a lesson takes it as the answer),
 * since the row stands away from its node and its chips alone name no process.
 */
function listedRow(parent, row, x, y, handlers) {
  const g = el("g", { class: "listed-row", tabindex: "0", role: "button", "data-node": row.node,
                      "aria-label": `${row.tip} — Enter to inspect ${row.node}` }, parent);
  const t = text(el("text", { x, y }, g), row.text);
  tip(g, `${row.tip}\nclick to inspect ${row.node}`);
  const select = handlers && handlers.selectNode;
  if (select) {
    g.addEventListener("click", (ev) => { ev.stopPropagation(); select(row.node); });
    g.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); ev.stopPropagation(); select(row.node); }
    });
  }
  return t;
}

/**
 * Tokens in circulation vs expected, legitimacy, and the root's controller counters; under
 * them the listed RSet rows, when listed (a heading per queue name, bold as the box's own).
 */
function drawFront(layer, model, ctx, handlers) {
  const rows = counterRows(model);
  const groups = listed ? listedRows(model) : [];
  const xs = Array.from(model.view.nodes.values()).map((n) => n.x);
  const ys = Array.from(model.view.nodes.values()).map((n) => n.y);
  const k = ctx.k || 1;
  keyed(layer, rows.length ? [rows] : [], () => "counters",
    () => el("g", { class: "counters" }),
    (g, rs) => {
      g.replaceChildren();
      if ((ctx.W || 900) < 600 || under) {
        // a phone has no margin left of the tree: the counts go under it, three to a line
        // (so does a narrow projector's figure in present mode: under, from place())
        // (under the bottom row's detail lines when those are shown: kout-fig3's ran into them;
        // and under the line of badges after them, "1 ResT": kout-fig3-livelock's lesson at step 8)
        const lines = ctx.dense ? 0 : Math.max(0, ...Array.from(model.view.nodes.values()).map((n) =>
          details(n).length + ((n.badges || []).some((b) => b !== "token") ? 1 : 0)));
        // (present mode's 19.5 px counters rise 6 px higher over their baseline than 13 px ones)
        g.setAttribute("transform", `translate(${Math.min(...xs) - ctx.r},${Math.max(...ys) + ctx.r + (22 + (under ? 8 : 0) + (ctx.lh || 14) * lines) * k})`);
        const lh = under && present() ? 16 * PRESENT : 16;
        for (let i = 0; i < rs.length; i += 3) text(el("text", { y: (i / 3) * lh * k }, g), rs.slice(i, i + 3).join(" · "));
        // then each queue's listed rows after its name, as many to a line as the tree is wide
        // (a phone: kout-random's three holders on one line, not a line each under a 320 px
        // figure that would then draw the tree smaller)
        const width = Math.max(...xs) - Math.min(...xs) + 2 * ctx.r, gap = 12 * k;
        let y = Math.ceil(rs.length / 3) * lh * k;
        for (const { name, rows: listedRs } of groups) {
          const head = text(el("text", { y, class: "counters-title" }, g), name);
          let x = head.getComputedTextLength() + gap;
          for (const row of listedRs) {
            const t = listedRow(g, row, x, y, handlers);
            const w = t.getComputedTextLength();
            if (x > 0 && x + w > width) { x = 0; y += lh * k; t.setAttribute("x", "0"); t.setAttribute("y", String(y)); }
            x += w + gap;
          }
          y += lh * k;
        }
        return;
      }
      // in a margin of its own left of every node (common.js fits leftBox px for it), so that
      // no node's RSet chips or messages run under it
      // (a projector's is larger by PRESENT: the counts are what the stabilisation lesson is about)
      const f = present() ? PRESENT : 1;
      const n = rs.length + groups.reduce((sum, q) => sum + 1 + q.rows.length, 0);
      // level with the top node; higher when the rows would run past the bottom of a short
      // figure (found-kout-tree-as-printed-extra-resource-token's ten rows, 277 px high with
      // the space-time strip: "Reset=false" was cut), but never above its top
      // (and its rows closer, down to 1.05 times the text's size, when even that is too short)
      let y = Math.min(...ys) - ctx.r, lh = 16 * f;
      if (ctx.top != null && ctx.H) {
        const bottom = ctx.top + ctx.H * k - 6 * k, first = ctx.top + 18 * f * k;
        lh = Math.max(13 * f * 1.05, Math.min(lh, (bottom - first) / k / (n + 0.25)));
        y = Math.max(first, Math.min(y, bottom - (n + 0.25) * lh * k));
      }
      // (and never nearer the figure's left edge than 12 px: present mode's nodes are drawn
      // larger than the fit reckoned, and pushed the box onto the edge)
      const x = Math.max(ctx.left != null ? ctx.left + 12 * k : -Infinity, Math.min(...xs) - ctx.r - LEFT_BOX * f * k);
      g.setAttribute("transform", `translate(${x},${y})`);
      text(el("text", { class: "counters-title" }, g), "tokens");
      rs.forEach((r, i) => text(el("text", { y: (i + 1) * lh * k }, g), r));
      let i = rs.length;
      for (const { name, rows: listedRs } of groups) {
        text(el("text", { y: ++i * lh * k, class: "counters-title" }, g), name);
        for (const row of listedRs) listedRow(g, row, 0, ++i * lh * k, handlers);
      }
    },
    // (where the nodes are and which have lines under them, too: the box under a narrow tree
    // stayed where step 1 put it, under a badge that came later: kout-fig1 at 1024x768)
    (rs) => rs.join("|") + JSON.stringify(groups) + k + ((ctx.W || 900) < 600) + under + ctx.dense + present() + "," + ctx.top + "," + ctx.left + "," + ctx.H
      + `@${Math.min(...xs)},${Math.max(...ys)},${ctx.r},` + Array.from(model.view.nodes.values()).map((n) => details(n).length + (n.badges || []).length).join(""));
}

/**
 * Present mode: the server lays the tree out root on top in a 1000 x 700 box, whatever the
 * figure's shape; a projector's figure (880 x 516 px at 1280x720, 880 x 277 with the space-time
 * strip, 644 x 420 at 1024x768) less the counters' margin has another. The tree is stretched to
 * the area left for it (its rows as far apart as the height allows: kout-random's fifteen
 * processes used 230 of 516 px, their RSet rows on the next row's names), and laid on its side,
 * root on the left, when that puts its nodes further apart (kout-chaos's chain of five levels
 * in a 277 px high figure: 37 px between rows). The server's positions are kept on each node
 * (__sx, __sy) so that normal mode, and a phone, get them back.
 *
 * The detail lines under each node (State, RSet, myC) are drawn only when they fit between
 * the rows and beside the neighbours of this layout; else they are left to the tooltip and
 * the inspector, and the room the fit kept under the bottom row for them goes to the tree
 * (a figure 277 px high spent 97 of them on lines it then did not draw).
 */
function place(model, stage) {
  current = model;
  placed = [];
  under = false;
  right = null;
  listed = false;
  const nodes = Array.from(model.view.nodes.values());
  for (const n of nodes) if (n.__sx === undefined) { n.__sx = n.x; n.__sy = n.y; }
  const W = stage.svg.clientWidth || 900, H = stage.svg.clientHeight || 450;
  bare = false;
  // a figure narrower than 800 px (1024x768 beside the 400 px side panel: 624) has no room
  // for the counters' 235 px margin: they go under the tree, three to a line, as on a phone
  // (kout-random's tree was left 207 px of 624); and so in normal mode (1024x768 beside the
  // 340 px side panel: 684 px), where the tree, fitted root on top in the server's 1000 x 700
  // box beside the counters, was drawn 42 px between nodes and p12's RSet row lay on p14
  // (not in a figure too short for the counters under the tree as well: normal mode at
  // 800x600 with the space-time strip, 201 px high, had the tree's rows on one another)
  under = W >= 600 && W < 800 && (present() || H >= 320);
  // (the gap between levels at best: the figure's height less the fit's margins, over the
  // levels; the server's levels are its distinct y positions)
  const levels = new Set(nodes.map((n) => Math.round(n.__sy))).size;
  // (and on a phone, whose figure is 390 x 320 px in the viewer and in a lesson: kout-random's
  // five levels 39 px apart, p8's row on p14 at the kout-printed-slips lesson's step 605)
  listed = (W < 600 || (!present() && W >= 600 && W < 800 && H < 320)) && nodes.length <= 80
    && levels > 1 && (H - 100) / (levels - 1) < LEVEL_PX;
  if ((!present() && !under) || W < 600 || nodes.length < 2 || nodes.length > 80) {
    for (const n of nodes) { n.x = n.__sx; n.y = n.__sy; }
    return;
  }
  // (under the tree too: the fit keeps as much left of the nodes as right when the counters
  // are not there, so 130 px a side left kout-random's tree 442 px of 624, 55 px between
  // nodes, and the fit, as wide as that, made it smaller still: rows 70 px apart, not 81)
  right = RIGHT_PX;
  // screen px of what the fit keeps around the nodes (common.js, fitViewBox, present mode):
  // the counters' margin on the left, the queue rows' on the right, a chip row over the top
  // row, the detail lines (15 px each, and a gap) under the bottom one; nodes of 26 px
  const r = 26, chips = 34, lh = 18;
  const lines = Math.max(0, ...nodes.map((n) => details(n).length + ((n.badges || []).some((b) => b !== "token") ? 1 : 0)));
  const lineW = Math.max(0, ...nodes.map((n) => Math.max(0, ...details(n).map((t) => t.length)))) * 9;
  const aw = Math.max(120, W - (under ? right : LEFT_BOX * PRESENT + 10) - right - 2 * r);
  const span = (vs) => Math.max(...vs) - Math.min(...vs);
  const layout = (side, ah) => {
    const us = nodes.map((n) => (side ? n.__sy : n.__sx)), vs = nodes.map((n) => (side ? n.__sx : n.__sy));
    const u0 = Math.min(...us), v0 = Math.min(...vs);
    // px per unit each way: the whole area, a span of nothing (one row) centred in it
    const fu = span(us) ? aw / span(us) : 0, fv = span(vs) ? ah / span(vs) : 0;
    return nodes.map((n, i) => [(us[i] - u0) * fu + (fu ? 0 : aw / 2), (vs[i] - v0) * fv + (fv ? 0 : ah / 2)]);
  };
  const near = (pts) => {
    let m = Infinity;
    for (let i = 0; i < pts.length; i++) for (let j = i + 1; j < pts.length; j++) {
      m = Math.min(m, Math.hypot(pts[i][0] - pts[j][0], pts[i][1] - pts[j][1]));
    }
    return m;
  };
  // the lines fit when no other node stands within a line's width beside them and the lines
  // and the next row's chips' height under them
  const linesFit = (pts) => pts.every(([x, y], i) => pts.every(([x2, y2], j) => i === j
    || Math.abs(x2 - x) >= Math.max(lineW, 2 * r + 8) || y2 < y - 2 * r || y2 - y >= 2 * r + 16 + lines * lh + chips));
  let pts = null;
  for (const withLines of lines ? [true, false] : [false]) {
    const ah = Math.max(60, H - (present() ? 48 : 30) - (withLines ? 22 + 15 * (lines + 1) : 37) - 2 * r - (under ? underPx() : 0));
    const top = layout(false, ah), side = layout(true, ah);
    pts = near(side) > 1.3 * near(top) ? side : top;
    if (!withLines || linesFit(pts)) break;
    bare = true;
  }
  // in the server's units (the tree's 880 units wide at 1280x720): the sizes that follow from
  // them (node radius, message size) stay what they were
  const s = 880 / Math.max(aw, 1);
  nodes.forEach((n, i) => { n.x = 60 + pts[i][0] * s; n.y = 60 + pts[i][1] * s; });
}

// The model the last place() saw (queueAnchor is given only the node, and looks at the others)
// and the queue rows placed since (place() runs before each drawing, drawQueues places them all).
let current = null;
let placed = [];

/** A queue row's width in user units, as common.js's drawQueues draws it (name, then chips). */
function rowWidth(q, k, name = q.name) {
  const items = q.items || [];
  const label = (item) => String(typeof item === "object" ? (item.label ?? item.id ?? JSON.stringify(item)) : item);
  let w = String(name).length * 7 + 6;
  for (const it of items.slice(0, 8)) w += Math.max(24, label(it).length * 7 + 8) + 3;
  if (items.length > 8) w += 24;
  if (!items.length) w += 14;
  return w * k;
}

/** The queues drawn at a node, in drawQueues's order (the empty ones left out when crowded). */
function rowsAt(model, n) {
  const crowded = model.view.queues.size > 6;
  return Array.from(model.view.queues.values()).filter((q) => String(q.node) === String(n.id) && (!crowded || (q.items || []).length));
}

/**
 * Where a node's idx-th queue row (its RSet: the tokens it holds) goes: above-right of it, in
 * the gap between two rows of the tree; if another node's circle, name or lines lie there
 * (a crowded tree: kout-chaos on a phone, the RSet row of p2 on p1), above-left, then
 * below-right, below-left, beside it right and left; the first that is clear, else
 * above-right.
 */
function queueAnchor(n, idx, ctx) {
  const k = ctx.k || 1, r = ctx.r, qf = ctx.qf || 1;
  const up = n.y - r - (9 + idx * 18) * k;
  const def = { x: n.x + r * 0.7, y: up, right: true };
  const model = current;
  if (!model || model.view.nodes.size > 80) return def;
  const q = rowsAt(model, n)[idx];
  if (!q) return def;
  const w = rowWidth(q, k * qf), h = 17 * k * qf;
  const lh = (ctx.lh || 14) * k;
  const own = ctx.dense ? 0 : details(n).length + ((n.badges || []).some((b) => b !== "token") ? 1 : 0);
  const down = n.y + r + (own ? 16 * k + own * lh : 0) + (9 + idx * 18) * k;
  const boxes = [];   // what the row must not lie on: the other nodes and their lines under them
  for (const m of model.view.nodes.values()) {
    if (m === n) continue;
    boxes.push([m.x - r - 2 * k, m.y - r - 2 * k, m.x + r + 2 * k, m.y + r + 2 * k]);
    const lines = ctx.dense ? 0 : details(m).length + ((m.badges || []).some((b) => b !== "token") ? 1 : 0);
    if (lines) {
      const half = Math.max(0, ...details(m).map((t) => t.length), ...(m.badges || []).map((t) => String(t).length)) * 4.5 * k;
      boxes.push([m.x - half, m.y + r, m.x + half, m.y + r + 16 * k + lines * lh]);
    }
  }
  // and the counters: left of every node (their margin), or under the tree on a phone
  const ns = Array.from(model.view.nodes.values());
  // (and within the margin the fit keeps right of the nodes: a row out beyond the tree made a
  // phone's drawing wider and the fit to it smaller, kout-fig2-deadlock's tree half its figure)
  const phone = (ctx.W || 900) < 600;
  const end = Math.max(...ns.map((m) => m.x)) + r + (phone ? 0 : (right ?? 130) * k);
  boxes.push([end, -Infinity, Infinity, Infinity]);
  // (in their margin, only as far down as they go, when they are there: under them, a row
  // left of the leftmost nodes is clear of them; kout-random at step 48 had nowhere else for
  // p8's row than across its link to p2)
  if (!phone) {
    const f = present() ? PRESENT : 1, left = Math.min(...ns.map((m) => m.x)) - r;
    if (!under) boxes.push([-Infinity, -Infinity, left, Math.min(...ns.map((m) => m.y)) - r + (counterRows(model).length * 16 * f + 6) * k]);
    // (and never past the margin's own left end, the figure's edge: the counters' margin, or
    // the queue rows' as on the right when a narrow projector's counters are under the tree)
    boxes.push([-Infinity, -Infinity, left - (under ? right ?? 130 : LEFT_BOX * f) * k, Infinity]);
    if (under) boxes.push([-Infinity, Math.max(...ns.map((m) => m.y)) + r + 16 * k, Infinity, Infinity]);
  }
  else {
    boxes.push([-Infinity, Math.max(...ns.map((m) => m.y)) + r + 16 * k, Infinity, Infinity]);
    boxes.push([-Infinity, -Infinity, Math.min(...ns.map((m) => m.x)) - r, Infinity]);
  }
  // (an option's own width and top: a stacked row, its name over its chips, is narrower)
  // nor past the top or bottom of what the figure shows (the lower places: with the space-time
  // strip open found-kout-tree-as-printed-extra-resource-token's r had its row under the edge)
  if (ctx.top != null && ctx.H) {
    boxes.push([-Infinity, -Infinity, Infinity, ctx.top]);
    boxes.push([-Infinity, ctx.top + ctx.H * k, Infinity, Infinity]);
  }
  const clear = (x0, yc, ww = w, top = yc - h / 2 - 4 * k) => boxes.every(([a0, b0, a1, b1]) =>
    x0 + ww <= a0 || x0 >= a1 || yc + h / 2 <= b0 || top >= b1);
  const options = [
    [n.x + r * 0.7, up, { x: n.x + r * 0.7, y: up, right: true }],
    [n.x - r * 0.7 - w, up, { x: n.x - r * 0.7, y: up, right: false }],
    [n.x + r * 0.7, down, { x: n.x + r * 0.7, y: down, right: true }],
    [n.x - r * 0.7 - w, down, { x: n.x - r * 0.7, y: down, right: false }],
    // beside it, level with its centre (a chain of one node a row: p3 under p2 under p1)
    [n.x + r + 6 * k, n.y, { x: n.x + r + 6 * k, y: n.y, right: true }],
    [n.x - r - 6 * k - w, n.y, { x: n.x - r - 6 * k, y: n.y, right: false }],
  ];
  // then above and below clear of the row of nodes it stands in (a present-mode row is 1.6
  // times higher, and reached onto its neighbours' circles: kout-random at step 113, p12)
  const up2 = Math.min(up, n.y - r - 3 * k - h / 2), down2 = Math.max(down, n.y + r + 7 * k + h / 2);
  for (const y of [up2, down2]) {
    options.push([n.x + r * 0.7, y, { x: n.x + r * 0.7, y, right: true }]);
    options.push([n.x - r * 0.7 - w, y, { x: n.x - r * 0.7, y, right: false }]);
  }
  // then in the middle of the gap over or under its row of nodes, where that gap, between the
  // nodes the row would pass over, is higher than the row (kout-random at 1280x720, step 113:
  // p12's row, 17 px high, in the 24 px between p7 and p10, rather than on the token on p3's
  // link to p7: the places above and under it were each a few px onto a node). Such a row
  // reaches under the next node, so it says whose it is ("p12's RSet"), when that fits.
  const called = `${n.id}'s ${q.name}`, wc = rowWidth(q, k * qf, called);
  for (const [ww, label] of [[wc, called], [w, undefined]]) {
    for (const [x0, right] of [[n.x + r * 0.7, true], [n.x - r * 0.7 - ww, false]]) {
      const across = Array.from(model.view.nodes.values()).filter((m) => m.x + r + 2 * k > x0 && m.x - r - 2 * k < x0 + ww);
      const gapMid = (below) => {
        let near = below ? n.y + r + (own ? 16 * k + own * lh : 0) : n.y - r, far = below ? Infinity : -Infinity;
        for (const m of across) {
          if (Math.abs(m.y - n.y) < r) near = below ? Math.max(near, m.y + r) : Math.min(near, m.y - r);
          else if (below && m.y > n.y) far = Math.min(far, m.y - r);
          else if (!below && m.y < n.y) far = Math.max(far, m.y + r);
        }
        // (the middle of a narrow gap; in a wide one, near its own row of nodes: kout-chaos at
        // 1024x768, p3's row was 66 px under p3, half way to p6)
        // (else the middle: kout-chaos's p3 row near its own went onto p1)
        if (!Number.isFinite(far) || Math.abs(far - near) < h + 5 * k) return [];
        const mid = (near + far) / 2;
        return [below ? Math.min(mid, near + h / 2 + 8 * k) : Math.max(mid, near - h / 2 - 8 * k), mid];
      };
      for (const below of [false, true]) {
        for (const y of gapMid(below)) options.push([x0, y, { x: right ? x0 : x0 + ww, y, right, label }, ww, y - h / 2]);
      }
    }
  }
  // last, the row stacked (its name on a line over its chips, as wide as the wider of the two)
  // above-left and above-right: kout-random at 1024x768, p8 at the figure's left edge, its
  // neighbours close, and its row across its link to p2 else; then beside it, the name and
  // chips level with its centre (kout-random at 1024x768, step 48: p14's row, stacked
  // above-left, had its name on p8: its width was the chips' alone)
  const sw = Math.max(w - (String(q.name).length * 7 + 6) * k * qf, String(q.name).length * 7 * k * qf);
  const sup = up - 12 * k * qf, stop = sup - h / 2 - 14 * k * qf;
  options.push([n.x - r * 0.7 - sw, sup, { x: n.x - r * 0.7, y: sup, right: false, stack: true }, sw, stop]);
  options.push([n.x + r * 0.7, sup, { x: n.x + r * 0.7, y: sup, right: true, stack: true }, sw, stop]);
  const sby = n.y + 7 * k * qf, sbtop = sby - h / 2 - 14 * k * qf;
  options.push([n.x + r + 6 * k, sby, { x: n.x + r + 6 * k, y: sby, right: true, stack: true }, sw, sbtop]);
  options.push([n.x - r - 6 * k - sw, sby, { x: n.x - r - 6 * k, y: sby, right: false, stack: true }, sw, sbtop]);
  // A place nearer another node than its own says whose row it is ("p12's RSet", wider by as
  // much): kout-random at 1024x768, p12's row between p3 and p7, nearer to both than to p12.
  const gapTo = (m, x0, top, x1, bottom) => Math.max(0, Math.hypot(Math.max(x0 - m.x, 0, m.x - x1), Math.max(top - m.y, 0, m.y - bottom)) - r);
  const whose = (o) => {
    const [x0, yc, a, ww = w, top = yc - h / 2 - 4 * k] = o;
    if (a.label) return o;
    const own = gapTo(n, x0, top, x0 + ww, yc + h / 2);
    if (Array.from(model.view.nodes.values()).every((m) => m === n || gapTo(m, x0, top, x0 + ww, yc + h / 2) >= own)) return o;
    const w2 = a.stack ? Math.max(ww, called.length * 7 * k * qf) : ww + (called.length - String(q.name).length) * 7 * k * qf;
    return [a.right ? x0 : a.x - w2, yc, { ...a, label: called }, w2, top];
  };
  // (the places as they were, unnamed, come after: a crowd where no named row is clear of
  // the nodes, kout-chaos at 1024x768 with eight tokens about p3, had it on p1 else)
  const plain = options.filter((o) => whose(o) !== o);
  options.splice(0, options.length, ...options.map(whose));
  // then a named place to the right that its name made reach past the margin, moved left to
  // end there, while it still starts over its node (kout-chaos in present mode at 1024x768,
  // step 28: "p3's RSet" under p3 was 10 px too long; the row went unnamed under p5)
  for (const o of options.slice()) {
    const [x0, yc, a, ww = w, top] = o;
    if (a.right && a.label && x0 + ww > end && end - ww >= n.x - r) {
      options.push([end - ww, yc, { ...a, x: end - ww }, ww, top]);
    }
  }
  // (and the rows placed before it in this drawing: kout-fig2's RSet rows of a and d met)
  for (const [x0, y0, x1, y1] of placed) boxes.push([x0, y0, x1, y1]);
  // and off the links, where the tokens travel: first off every link (a row that stays put
  // while they come and go), else off those with a token on them now (kout-random at step 48:
  // p8's row above-right lay across its link to p2, the PushT star on its "R")
  const band = 2.5 * (ctx.msgSize || 8);   // a message's offset from its link and its size
  const links = (busy) => {
    const out = [];
    const on = new Set(Array.from(model.view.messages.values()).map((m) => `${m.src}|${m.dst}`));
    for (const e of model.view.edges) {
      if (busy && !on.has(`${e.src}|${e.dst}`) && !on.has(`${e.dst}|${e.src}`)) continue;
      const a = model.view.nodes.get(String(e.src)), b = model.view.nodes.get(String(e.dst));
      if (a && b && a !== b) out.push([a, b]);
    }
    return out;
  };
  const offLinks = (ls) => (x0, yc, ww = w, top = yc - h / 2 - 4 * k) => ls.every(([a, b]) => {
    const len = Math.hypot(b.x - a.x, b.y - a.y), steps = Math.ceil(len / band) + 1;
    for (let i = 0; i <= steps; i++) {
      const t = i / steps, x = a.x + (b.x - a.x) * t, y = a.y + (b.y - a.y) * t;
      if (Math.hypot(x - a.x, y - a.y) < r || Math.hypot(x - b.x, y - b.y) < r) continue;
      if (x > x0 - band && x < x0 + ww + band && y > top - band && y < yc + h / 2 + band) return false;
    }
    return true;
  });
  const all = offLinks(links(false)), busy = offLinks(links(true));
  // none clear: the place that lies on the least of them (kout-fig2 with the space-time strip:
  // d's row, above-right, took r's detail line "RSet={} Prio=⊥" when the first place was the rule)
  const least = (os) => {
    const area = ([x0, yc, , ww = w, top = yc - h / 2 - 4 * k]) => boxes.reduce((sum, [a0, b0, a1, b1]) =>
      sum + Math.max(0, Math.min(x0 + ww, a1) - Math.max(x0, a0)) * Math.max(0, Math.min(yc + h / 2, b1) - Math.max(top, b0)), 0);
    let best = os[0], most = area(best);
    for (const o of os.slice(1)) {
      const a = area(o);
      if (a < most - 1e-6) { best = o; most = a; }
    }
    return best;
  };
  const pick = (os) => os.find(([x0, yc, , ww, top]) => clear(x0, yc, ww, top) && all(x0, yc, ww, top))
    || os.find(([x0, yc, , ww, top]) => clear(x0, yc, ww, top) && busy(x0, yc, ww, top))
    || fewest(os.filter(([x0, yc, , ww, top]) => clear(x0, yc, ww, top)), n, w, h, ctx);
  const ok = pick(options) || pick(plain) || least([...options, ...plain]);
  placed.push([ok[0], ok[4] ?? ok[1] - h / 2 - 4 * k, ok[0] + (ok[3] ?? w), ok[1] + h / 2]);
  return ok[2];
}

/**
 * Of the row's places clear of every node and row, but none off the links with tokens on
 * them, the one with the fewest tokens' shapes on it where they are drawn now (kout-chaos:
 * eight tokens on the link p1 to p2 and every place round p2 near a busy link).
 */
function fewest(options, n, w, h, ctx) {
  if (!options.length) return null;
  const k = ctx.k || 1, e = (ctx.msgSize || 8) * 1.6;
  const at = layoutMessages(Array.from(current.view.messages.values()), current.view.nodes, ctx.msgSize || 8, ctx.r);
  const on = ([x0, yc, , ww = w, top = yc - h / 2 - 4 * k]) => at.filter((p) => p.x + e > x0 && p.x - e < x0 + ww
    && p.y + e > top && p.y - e < yc + h / 2).length;
  let best = options[0], most = on(best);
  for (const o of options.slice(1)) {
    const c = on(o);
    if (c < most) { best = o; most = c; }
  }
  return best;
}

export default {
  place,
  details,
  drawBack,
  drawFront,
  edgeDirected: (e) => e.directed === true,
  get leftBox() { return under ? 0 : LEFT_BOX * (present() ? PRESENT : 1) + 10; },
  // (the counters' lines under the tree, when they are there: common.js's fit keeps their room)
  get boxBelow() { return under ? underPx() : 0; },
  // (rows listed under the counters: a label's room right of the nodes, not a row's)
  get rightBox() { return listed ? 40 : right ?? undefined; },
  // (common.js's drawQueues draws no rows round the nodes then)
  get rowsListed() { return listed; },
  rowsBelow: true,
  // (a row keeps off the links with tokens on them now: placed again when those change)
  queuesFollowMessages: true,
  // Above-right of the node, in the gap between rows: beside it, a wide tree's next node in the
  // same row would sit under the chips. (Elsewhere around it when another node is there:
  // queueAnchor above.)
  queueAnchor,
};
