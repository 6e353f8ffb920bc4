// Tree layout (kout_tree): root at the top, both directions of every channel with their FIFO
// queues of tokens (the shared message layer draws each direction on its own side of the
// edge), the virtual ring as a dashed tour hugging the tree, per-process State/Need/RSet/Prio,
// and the token counts and the root controller's counters in a corner box.

import { el, keyed, text } from "../svg.js";

function fmt(v) {
  if (Array.isArray(v)) return `{${v.join(",")}}`;
  if (v && typeof v === "object") return JSON.stringify(v);
  return v === null || v === undefined ? "⊥" : String(v);
}

function details(n) {
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

/** Tokens in circulation vs expected, legitimacy, and the root's controller counters. */
function drawFront(layer, model, ctx) {
  const x = model.view.extra || {};
  const rows = [];
  if (x.ell !== undefined) rows.push(`${x.k ?? "k"}-out-of-${x.ell}`);
  const tok = x.tokens || {}, exp = x.expected_tokens || {};
  for (const k of Object.keys(tok)) rows.push(`${k}: ${tok[k]}${exp[k] !== undefined ? " / " + exp[k] : ""}`);
  if (x.legitimate !== undefined) rows.push(x.legitimate ? "legitimate ✓" : "not yet legitimate ✗");
  const root = model.view.nodes.get(String(x.root));
  if (root) for (const k of ["SToken", "SPush", "SPrio", "Reset"]) if (root[k] !== undefined) rows.push(`${k}=${fmt(root[k])}`);
  const xs = Array.from(model.view.nodes.values()).map((n) => n.x);
  const ys = Array.from(model.view.nodes.values()).map((n) => n.y);
  const k = ctx.k || 1;
  keyed(layer, rows.length ? [rows] : [], () => "counters",
    () => el("g", { class: "counters" }),
    (g, rs) => {
      g.replaceChildren();
      if ((ctx.W || 900) < 600) {
        // a phone has no margin left of the tree: the counts go under it, three to a line
        // (under the bottom row's detail lines when those are shown: kout-fig3's ran into them;
        // and under the line of badges after them, "1 ResT": kout-fig3-livelock's lesson at step 8)
        const lines = ctx.dense ? 0 : Math.max(0, ...Array.from(model.view.nodes.values()).map((n) =>
          details(n).length + ((n.badges || []).some((b) => b !== "token") ? 1 : 0)));
        g.setAttribute("transform", `translate(${Math.min(...xs) - ctx.r},${Math.max(...ys) + ctx.r + (22 + (ctx.lh || 14) * lines) * k})`);
        for (let i = 0; i < rs.length; i += 3) text(el("text", { y: (i / 3) * 16 * k }, g), rs.slice(i, i + 3).join(" · "));
        return;
      }
      // in a margin of its own left of every node (common.js fits leftBox px for it), so that
      // no node's RSet chips or messages run under it
      // (a projector's is larger by PRESENT: the counts are what the stabilisation lesson is about)
      const f = present() ? PRESENT : 1;
      g.setAttribute("transform", `translate(${Math.min(...xs) - ctx.r - LEFT_BOX * f * k},${Math.min(...ys) - ctx.r})`);
      text(el("text", { class: "counters-title" }, g), "tokens");
      rs.forEach((r, i) => text(el("text", { y: (i + 1) * 16 * f * k }, g), r));
    },
    (rs) => rs.join("|") + k + ((ctx.W || 900) < 600) + ctx.dense + present());
}

export default {
  details,
  drawBack,
  drawFront,
  edgeDirected: (e) => e.directed === true,
  get leftBox() { return LEFT_BOX * (present() ? PRESENT : 1) + 10; },
  rowsBelow: true,
  // Above-right of the node, in the gap between rows: beside it, a wide tree's next node in the
  // same row would sit under the chips.
  queueAnchor: (n, idx, ctx) => ({ x: n.x + ctx.r * 0.7, y: n.y - ctx.r - (9 + idx * 18) * (ctx.k || 1), right: true }),
};
