// Ring layout (token_ring, datta_ring): resources on the rooted ring, the root marked, the token
// holder lit, clients around it, queues as chips outward, a travelling seekLoop and Lock shown.

import { el, keyed, text } from "../svg.js";

const FIELDS = [["Lock", "Lock"], ["lock", "Lock"], ["phase", ""], ["state", ""]];

function details(n) {
  const out = [];
  for (const [k, name] of FIELDS) {
    if (n[k] === undefined || n[k] === null || n[k] === "") continue;
    if (k === "phase" && (n.cs || n.waiting || n[k] === "idle")) continue;
    const v = typeof n[k] === "object" ? JSON.stringify(n[k]) : String(n[k]);
    out.push(name ? `${name}=${v}` : v);
  }
  if (n.root) out.unshift("root");
  return out;
}

/** seekLoop (datta_ring) if the protocol reports one: a marker travelling round the ring. */
function drawFront(layer, model, ctx) {
  const x = model.view.extra || {};
  const seeks = [].concat(x.seek_loops || x.seekLoops || (x.seek_loop ? [x.seek_loop] : []));
  const items = seeks.map((s, i) => ({ s, i, n: model.view.nodes.get(String(s.at ?? s.node ?? s.position)) }))
    .filter((it) => it.n);
  keyed(layer, items, (it) => `seek${it.i}`,
    () => el("g", { class: "seekloop" }),
    (g, it) => {
      g.replaceChildren();
      g.setAttribute("transform", `translate(${it.n.x},${it.n.y})`);
      el("circle", { r: ctx.r + 11, class: "seek-halo" }, g);
      text(el("text", { y: -ctx.r - 16, "text-anchor": "middle", class: "seek-label" }, g),
        `seekLoop${it.s.origin ? " from " + it.s.origin : ""}`);
    });
}

export default {
  details,
  drawFront,
  edgeDirected: (e) => e.kind !== "client" && e.directed !== false,
  nodeShape: (n) => (n.kind === "resource" ? "rect" : "circle"),
};
