// The legend: what node colours, rings, dots and shapes mean. Rebuilt only when a new message
// type appears.

import { el as svgEl } from "./svg.js";
import { knownTypes, shapePath, typeStyle } from "./messages.js";

function swatch(draw) {
  const svg = svgEl("svg", { viewBox: "-10 -10 20 20", class: "sw" });
  draw(svg);
  return svg;
}

const ITEMS = [
  ["in critical section", (s) => svgEl("circle", { r: 7, class: "lg-cs" }, s)],
  ["waiting", (s) => { svgEl("circle", { r: 6, class: "lg-idle" }, s); svgEl("circle", { r: 9, class: "lg-wait" }, s); }],
  ["idle", (s) => svgEl("circle", { r: 7, class: "lg-idle" }, s)],
  ["holds the token", (s) => { svgEl("circle", { r: 7, class: "lg-idle" }, s); svgEl("circle", { r: 3.5, cx: 5, cy: -5, class: "lg-token" }, s); }],
  ["crashed", (s) => { svgEl("circle", { r: 7, class: "lg-crashed" }, s); svgEl("path", { d: "M-4,-4L4,4M4,-4L-4,4", class: "lg-cross" }, s); }],
  ["wait-for / dependency cycle", (s) => svgEl("path", { d: "M-9,4Q0,-8 9,4", class: "lg-cycle" }, s)],
];

// What each kind of edge means, shown only when such an edge is drawn.
const EDGES = {
  ring: ["ring link", "edge"],
  tree: ["tree edge", "edge"],
  dependency: ["dependency (Def. 3.1)", "edge kind-dependency"],
  "strong-request": ["strong request (client → resource)", "edge kind-strong-request"],
  "weak-request": ["weak request", "edge kind-weak-request"],
  alpha: ["may use (α)", "edge kind-alpha"],
  grant: ["permission granted", "edge kind-grant"],
  interest: ["task needs pool", "edge kind-interest"],
  manages: ["agent manages", "edge kind-manages"],
};

function edgeKinds(model) {
  const out = new Set();
  for (const e of (model && model.view.edges) || []) out.add(e.kind);
  if (model && model.view.extra && model.view.extra.quorums) out.add("quorum");
  return Array.from(out).filter((k) => EDGES[k] || k === "quorum");
}

export function setupLegend(box) {
  let last = "";
  return function update(model) {
    const types = knownTypes();
    const kinds = edgeKinds(model);
    // "holds the token" only where the algorithm has a token that someone holds or that travels
    const tokens = !!model && (Array.from(model.view.nodes.values()).some((n) => n.token || n.has_token)
      || types.some((t) => /tok/i.test(t)));
    const sig = types.join("|") + "#" + kinds.join("|") + tokens;
    if (sig === last && box.childElementCount) return;
    last = sig;
    box.replaceChildren();
    const add = (label, draw, cls = "") => {
      const span = document.createElement("span");
      span.className = "lg " + cls;
      span.appendChild(swatch(draw));
      span.appendChild(document.createTextNode(label));
      box.appendChild(span);
    };
    for (const [label, draw] of ITEMS) if (tokens || label !== "holds the token") add(label, draw);
    for (const k of kinds) {
      if (k === "quorum") { add("quorum (hull)", (s) => svgEl("rect", { x: -8, y: -6, width: 16, height: 12, rx: 6, class: "lg-hull" }, s)); continue; }
      const [label, cls] = EDGES[k];
      add(label, (s) => svgEl("path", { d: "M-9,0L9,0", class: cls }, s), "lg-edge");
    }
    for (const t of types) {
      const st = typeStyle(t);
      const label = st.short && st.short !== t ? `${t} (${st.short})` : t;
      add(label, (s) => svgEl("path", { d: shapePath(st.shape, 7), fill: st.colour }, s), "lg-msg");
    }
    clamp(box);
  };
}

/**
 * Beside a wide figure the legend keeps to two rows, with a button for the rest: datta's
 * fifteen message types made it four rows at 1280x720, taken from datta-stress's ring.
 * (A phone's legend is under the figure and takes nothing from it: left whole.)
 */
function clamp(box) {
  box.classList.remove("clamped", "open");
  if (innerWidth < 600) return;
  // a legend in a column (a room's page: beside the figure, scrolling) has a row per item:
  // two rows were two items, "in critical section" and "waiting", and "+11 more"
  if (getComputedStyle(box).flexDirection === "column") return;
  const items = Array.from(box.querySelectorAll(".lg"));
  if (!items.length) return;
  box.classList.add("clamped");     // measured with the room the button takes
  const tops = Array.from(new Set(items.map((i) => i.offsetTop))).sort((a, b) => a - b);
  // (present mode: one row, the figure needs the height more than a projector's class the key)
  const rows = document.body.classList.contains("present") ? 1 : 2;
  if (tops.length <= rows) { box.classList.remove("clamped"); return; }
  const hidden = items.filter((i) => i.offsetTop > tops[rows - 1]).length;
  const more = document.createElement("button");
  more.type = "button";
  more.className = "lg-more";
  const label = () => { more.textContent = box.classList.contains("open") ? "fewer" : `+${hidden} more`; };
  more.addEventListener("click", () => {
    box.classList.toggle("open");
    more.setAttribute("aria-expanded", String(box.classList.contains("open")));
    label();
  });
  more.setAttribute("aria-expanded", "false");
  label();
  box.appendChild(more);
}
