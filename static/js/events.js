// The side list of everything that may happen now: deliveries, local actions, environment
// events, timeouts and faults. Clicking one makes it happen (the manual scheduler's choice).

import { typeStyle, shapePath } from "./messages.js";
import { SVGNS } from "./svg.js";

const KIND_NAMES = { deliver: "deliveries", local: "local actions", env: "environment",
  timeout: "timeouts", fault: "faults" };

export function setupEvents(list, act) {
  let last = "";
  return function update(m) {
    const sig = JSON.stringify(m.enabled);
    if (sig === last) return;
    last = sig;
    if (act.preview) act.preview(null);   // the list changed: what was previewed may be gone
    list.replaceChildren();
    if (!m.enabled.length) {
      const li = document.createElement("li");
      li.className = "hint";
      li.textContent = "Nothing can happen now.";
      list.appendChild(li);
      return;
    }
    let kind = null;
    const shown = m.enabled.slice(0, 300);
    for (const e of shown) {
      if (e.kind !== kind) {
        kind = e.kind;
        const h = document.createElement("li");
        h.className = "ev-head";
        h.textContent = KIND_NAMES[kind] || kind;
        list.appendChild(h);
      }
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
      list.appendChild(li);
    }
    if (m.enabled.length > shown.length) {
      const li = document.createElement("li");
      li.className = "hint";
      li.textContent = `… and ${m.enabled.length - shown.length} more`;
      list.appendChild(li);
    }
  };
}
