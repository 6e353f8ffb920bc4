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

export function setupLegend(box) {
  let last = "";
  return function update() {
    const types = knownTypes();
    const sig = types.join("|");
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
    for (const [label, draw] of ITEMS) add(label, draw);
    for (const t of types) {
      const st = typeStyle(t);
      add(t, (s) => svgEl("path", { d: shapePath(st.shape, 7), fill: st.colour }, s), "lg-msg");
    }
  };
}
