// The side list of everything that may happen now: deliveries, local actions, environment
// events, timeouts and faults. Clicking one makes it happen (the manual scheduler's choice).

import { typeStyle, shapePath } from "./messages.js";
import { SVGNS } from "./svg.js";

const KIND_NAMES = { deliver: "deliveries", local: "local actions", env: "environment",
  timeout: "timeouts", fault: "faults" };

export function setupEvents(list, act) {
  let last = "";
  // One <li> per event id (and per kind heading), kept between updates: a step changes one or
  // two events, so the list moves one or two rows instead of being rebuilt. Rebuilding its 300
  // buttons cost 7–17 ms a step at 500 processes, and the layout of the new rows as much again.
  const rows = new Map();

  function eventRow(e) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.className = `ev kind-${String(e.kind).replace(/[^a-z]/g, "")}`;
    b.dataset.event = e.id;
    b.title = `Make this happen now (${e.id})`;
    if (e.type) {
      const st = typeStyle(String(e.type));
      const svg = document.createElementNS(SVGNS, "svg");
      svg.setAttribute("viewBox", "-7 -7 14 14");
      svg.setAttribute("class", "ev-icon");
      const p = document.createElementNS(SVGNS, "path");
      p.setAttribute("d", shapePath(st.shape, 6));
      p.setAttribute("fill", st.colour);
      svg.appendChild(p);
      b.appendChild(svg);
    }
    b.appendChild(document.createTextNode(e.label || e.id));
    b.addEventListener("click", () => act.deliver(e.id));
    // Pointing at a delivery points at its message in the view.
    const hot = (on) => { const g = document.querySelector(`#view .msg[data-id="${CSS.escape(e.id)}"]`); if (g) g.classList.toggle("hot", on); };
    // ... and previews what it would change (static/js/diff.js)
    const label = e.label || e.id;
    b.addEventListener("mouseenter", () => { hot(true); if (act.preview) act.preview(e.id, label); });
    b.addEventListener("mouseleave", () => { hot(false); if (act.preview) act.preview(null); });
    b.addEventListener("focus", () => { if (act.preview) act.preview(e.id, label); });
    b.addEventListener("blur", () => { if (act.preview) act.preview(null); });
    li.appendChild(b);
    return li;
  }

  function textRow(cls, s) {
    const li = document.createElement("li");
    li.className = cls;
    li.textContent = s;
    return li;
  }

  return function update(m) {
    const sig = JSON.stringify(m.enabled);
    if (sig === last) return;
    last = sig;
    if (act.preview) act.preview(null);   // the list changed: what was previewed may be gone
    const want = [];                       // [key, make] in the order shown
    if (!m.enabled.length) want.push(["hint:none", () => textRow("hint", "Nothing can happen now.")]);
    let kind = null, heads = 0;
    const shown = m.enabled.slice(0, 300);
    for (const e of shown) {
      if (e.kind !== kind) {
        kind = e.kind;
        const k = kind;
        want.push([`head:${k}:${heads++}`, () => textRow("ev-head", KIND_NAMES[k] || k)]);
      }
      // an id whose label or type changed is a new row
      want.push([`ev:${e.id}\u0000${e.kind}\u0000${e.type || ""}\u0000${e.label || ""}`, () => eventRow(e)]);
    }
    const more = m.enabled.length - shown.length;
    if (more > 0) want.push([`more:${more}`, () => textRow("hint", `… and ${more} more`)]);
    const keep = new Set(want.map(([k]) => k));
    for (const [k, li] of rows) if (!keep.has(k)) { li.remove(); rows.delete(k); }
    let prev = null;
    for (const [k, make] of want) {
      let li = rows.get(k);
      if (!li) { li = make(); rows.set(k, li); }
      const at = prev ? prev.nextSibling : list.firstChild;
      if (at !== li) list.insertBefore(li, at);
      prev = li;
    }
  };
}
