// Tree layout (kout_tree): root at the top, both directions of every channel with their FIFO
// queues of tokens (drawn by the shared message layer, one side per direction), the virtual
// ring as a dashed tour, per-process State/Need/RSet/Prio and the controller's counters.

import { el, keyed, text } from "../svg.js";

const KEYS = [["State", "State"], ["state", "State"], ["Need", "Need"], ["need", "Need"],
  ["RSet", "RSet"], ["rset", "RSet"], ["Prio", "Prio"], ["prio", "Prio"]];

function fmt(v) {
  if (Array.isArray(v)) return `{${v.join(",")}}`;
  if (v && typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function details(n) {
  const out = [];
  const seen = new Set();
  for (const [k, name] of KEYS) {
    if (n[k] === undefined || n[k] === null || seen.has(name)) continue;
    seen.add(name);
    out.push(`${name}=${fmt(n[k])}`);
  }
  // Two per line keeps the tree compact.
  const lines = [];
  for (let i = 0; i < out.length; i += 2) lines.push(out.slice(i, i + 2).join(" "));
  return lines;
}

/** The virtual ring: a dashed closed tour through the nodes listed in extra.tour / virtual_ring. */
function drawBack(layer, model) {
  const x = model.view.extra || {};
  const tour = (x.tour || x.virtual_ring || x.ring || []).map(String);
  const pts = tour.map((id) => model.view.nodes.get(id)).filter(Boolean);
  keyed(layer, pts.length > 1 ? [pts] : [], () => "tour",
    () => el("path", { class: "tour" }),
    (p, ps) => p.setAttribute("d", "M" + ps.map((n) => `${n.x},${n.y}`).join("L") + "Z"));
}

/** Controller counters (extra.controller: an object of name -> value) in the top-left corner. */
function drawFront(layer, model) {
  const c = (model.view.extra || {}).controller;
  const items = c && typeof c === "object" ? [c] : [];
  keyed(layer, items, () => "ctrl",
    () => el("g", { class: "counters", transform: "translate(-40,-20)" }),
    (g, cc) => {
      g.replaceChildren();
      text(el("text", { class: "counters-title" }, g), "controller");
      Object.entries(cc).forEach(([k, v], i) => text(el("text", { y: 18 + i * 16 }, g), `${k} = ${fmt(v)}`));
    });
}

export default {
  details,
  drawBack,
  drawFront,
  edgeDirected: (e) => e.directed === true,
  queueAnchor: (n, idx, ctx) => ({ x: n.x + ctx.r + 8, y: n.y - ctx.r + idx * 18, right: true }),
};
