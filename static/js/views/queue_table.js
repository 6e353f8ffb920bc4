// The queues of a ring of three or more resources, as a table beside the ring: one row per
// resource with a non-empty queue ("R3  strong C22 C24 …  weak C19 C6"), in the resources'
// order. Kept inside the ring, R1's chip rows met R3's and the clients' detail lines.
//
// The table is sized in screen pixels: its text is TABLE_PX (13, like the other text a class
// reads on a projector; it was 11), larger in present mode. The ring is what a class looks at,
// so it gets its full height first; the table takes the width that leaves, showing fewer chips
// per queue (then "+N": the inspector lists them all) and, in present mode, smaller text (never
// under 13 px) when it would not fit. Without that budget present mode's 1.6x table on
// datta-stress was wider than its 880 px figure and the ring was drawn as a dot.

import { el, keyed, text, tip } from "../svg.js";

export const TABLE_PX = 13;
export const GAP = 30;        // screen px between the ring's right edge and the table
export const MARGIN = 16;     // and after the table, inside the figure's right edge
export const MIN_W = 160;     // what the fit keeps for a table with no rows yet (the ring
                              // does not jump when the first queue fills)
const PART_MAX = 4;

let canvas = null;
let family = null;
const widths = new Map();

/** Width in screen px of ``s`` drawn at ``px`` (the figure's own font; a canvas measures it). */
function textW(s, px, weight = 400) {
  const key = `${weight}|${px}|${s}`;
  let w = widths.get(key);
  if (w !== undefined) return w;
  if (!canvas) {
    canvas = document.createElement("canvas").getContext("2d");
    family = getComputedStyle(document.body).fontFamily || "sans-serif";
  }
  if (canvas) {
    canvas.font = `${weight} ${px}px ${family}`;
    w = canvas.measureText(String(s)).width;
  } else {
    w = String(s).length * px * 0.7;
  }
  if (widths.size > 4000) widths.clear();
  widths.set(key, w);
  return w;
}

/** The table's rows: per node, its non-empty queues (datta: strong, weak, token), in the
 * nodes' order. */
export function tableRows(view) {
  const byNode = new Map();
  for (const q of view.queues.values()) {
    if (!(q.items || []).length || !view.nodes.has(String(q.node))) continue;
    const id = String(q.node);
    if (!byNode.has(id)) byNode.set(id, []);
    byNode.get(id).push(q);
  }
  const rows = [];
  for (const [id, n] of view.nodes) if (byNode.has(id)) rows.push({ n, parts: byNode.get(id) });
  return rows;
}

/**
 * A row's pieces at text size ``px`` with at most ``m`` chips per queue, x in screen px from
 * the row's left: what is measured for the fit is exactly what is drawn.
 */
function layoutRow(row, px, m) {
  const out = [];
  const name = String(row.n.label ?? row.n.id);
  out.push({ kind: "res", x: 0, s: name });
  let x = textW(name, px, 700) + 0.8 * px;
  for (const q of row.parts) {
    const tag = String(q.name).replace(/^Q_/, "");
    out.push({ kind: "tag", x, s: tag });
    x += textW(tag, px) + 0.5 * px;
    const its = q.items || [];
    its.slice(0, m).forEach((item, j) => {
      const w = Math.max(2 * px, textW(item, px) + 0.8 * px);
      out.push({ kind: "chip", x, w, s: String(item), head: j === 0, tag });
      x += w + 3;
    });
    if (its.length > m) {
      const more = `+${its.length - m}`;
      out.push({ kind: "more", x: x + 2, s: more });
      x += textW(more, px) + 4;
    }
    x += 0.9 * px;
  }
  return { pieces: out, width: x - 0.9 * px };
}

const rowH = (px) => 2 * px;

/**
 * The table's text size and chips per queue for ``rows`` within ``budgets`` (widths in screen
 * px, tried in turn) x ``budgetH``: the largest text (``want`` px, down to TABLE_PX) and then
 * the most chips (down to one) that fit the first budget any plan fits; the smallest of both
 * when none does. {px, m, w, h}
 */
export function planTable(rows, budgets, budgetH, want) {
  const width = (px, m) => Math.max(MIN_W, ...rows.map((r) => layoutRow(r, px, m).width));
  const sizes = [];
  for (let px = want; px > TABLE_PX; px -= 1) sizes.push(Math.round(px * 10) / 10);
  sizes.push(TABLE_PX);
  // the chips shown first (down to two a queue), then the size, then down to one chip
  const tries = [];
  for (const px of sizes) for (let m = PART_MAX; m >= 2; m--) tries.push([px, m]);
  tries.push([TABLE_PX, 1]);
  for (const budgetW of budgets) {
    for (const [px, m] of tries) {
      const w = width(px, m), h = rows.length * rowH(px);
      if (w <= budgetW && h <= budgetH) return { px, m, w, h };
    }
  }
  return { px: TABLE_PX, m: 1, w: width(TABLE_PX, 1), h: rows.length * rowH(TABLE_PX) };
}

/** The widest row at a plan's size (to see a table outgrow the room the fit left it). */
export function planWidth(rows, plan) {
  return Math.max(MIN_W, ...rows.map((r) => layoutRow(r, plan.px, plan.m).width));
}

/**
 * Draw the table into ``layer`` at (x0, y0) in user units, ``k`` user units per screen px.
 * The text size is the layer's --table-px (app.css), so the text is the size that was measured.
 */
export function drawQueueTable(layer, rows, plan, x0, y0, k) {
  const px = plan.px;
  layer.style.setProperty("--table-px", String(px));
  keyed(layer, rows, (row) => `row|${row.n.id}`,
    () => el("g", { class: "queue qrow" }),
    (g, row) => {
      g.replaceChildren();
      const i = rows.indexOf(row);
      g.setAttribute("transform", `translate(${x0.toFixed(1)},${(y0 + i * rowH(px) * k).toFixed(1)})`);
      const h = (px + 7) * k, base = 0.36 * px * k;     // chip height; text baseline on the row's middle
      for (const p of layoutRow(row, px, plan.m).pieces) {
        if (p.kind === "chip") {
          const cg = el("g", { class: "chip-g", transform: `translate(${(p.x * k).toFixed(1)},${(-h / 2).toFixed(1)})` }, g);
          el("rect", { class: `qchip q-${p.tag}` + (p.head ? " head" : ""), width: p.w * k, height: h, rx: 4 }, cg);
          text(el("text", { class: "qitem", x: (p.w * k) / 2, y: h / 2 + base, "text-anchor": "middle" }, cg), p.s);
        } else {
          const cls = p.kind === "res" ? "qname qres" : p.kind === "more" ? "qmore" : "qname";
          text(el("text", { class: cls, x: (p.x * k).toFixed(1), y: base.toFixed(1) }, g), p.s);
        }
      }
      tip(g, `${row.n.label ?? row.n.id}: ` + row.parts.map((q) => `${q.name} ${(q.items || []).join(", ")}`).join("; ") + " (head first)");
    },
    (row) => JSON.stringify(row.parts) + rows.indexOf(row) + "," + x0 + "," + y0 + "," + k + "," + px + "," + plan.m);
}
