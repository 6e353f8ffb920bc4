// Messages move (issue 17, as RaftScope's do): when a step delivers a message, a copy of its
// shape flies from where it waited to the process that receives it, in a time that follows the
// play speed (never longer than the step itself). It can be turned off (the "motion" box), and
// is off when the system asks for reduced motion. Only a drawing: the model is never touched.

import { shapePath, typeStyle } from "./messages.js";
import { SVGNS } from "./svg.js";

const KEY = "allocscope.motion";

/** Is motion wanted: the box's choice if made, else on unless reduced motion is asked for. */
function wanted() {
  const saved = localStorage.getItem(KEY);
  if (saved !== null) return saved === "1";
  return !matchMedia("(prefers-reduced-motion: reduce)").matches;
}

/**
 * Wire the "motion" checkbox; returns {after(model, prevStep, speed)}, which starts the flight
 * of the message the new step delivered, if any.
 */
export function setupMotion(box, svg) {
  if (box) {
    box.checked = wanted();
    box.addEventListener("change", () => localStorage.setItem(KEY, box.checked ? "1" : "0"));
  }
  const on = () => (box ? box.checked : wanted());
  function layer() {
    let l = svg.querySelector(".layer.flights");
    if (!l) { l = document.createElementNS(SVGNS, "g"); l.setAttribute("class", "layer flights"); svg.appendChild(l); }
    return l;
  }
  // Where the delivered message was drawn is read in `after`: the view is redrawn at the next
  // animation frame, so its element is still where it waited. (Noting every message's place
  // before each frame cost a query of them all per step.)
  function after(model, prevStep, speed) {
    if (!on() || model.step !== prevStep + 1) return;
    if (model.playing && speed > 11) return;   // too fast to see a flight: skip the work
    const id = model.event;
    const el = id && svg.querySelector(`.layer.messages > g[data-id="${CSS.escape(String(id))}"]`);
    const xy = el && /translate\(([-\d.]+),([-\d.]+)\)/.exec(el.getAttribute("transform") || "");
    const from = xy && [+xy[1], +xy[2], el.querySelector(".msg-shape")];
    const rec = model.history[model.history.length - 1];
    if (!from || !rec || rec.step !== model.step || rec.dst == null) return;
    const dst = model.view.nodes.get(String(rec.dst));
    if (!dst) return;
    // at most most of one step's time (play), at most 450 ms (one step by hand)
    const ms = Math.min(450, model.playing ? 700 / Math.max(speed, 0.25) : 450);
    if (ms < 60) return;
    const g = document.createElementNS(SVGNS, "g");
    g.setAttribute("class", "msg-flight");
    g.dataset.id = String(id);
    const p = document.createElementNS(SVGNS, "path");
    const d = from[2] ? from[2].getAttribute("d") : shapePath(typeStyle(String(rec.type)).shape, 8);
    p.setAttribute("d", d);
    p.setAttribute("fill", from[2] ? from[2].getAttribute("fill") : typeStyle(String(rec.type)).colour);
    g.appendChild(p);
    layer().appendChild(g);
    const [x0, y0] = from, x1 = dst.x, y1 = dst.y;
    const t0 = performance.now();
    const tick = (now) => {
      const t = Math.min(1, (now - t0) / ms), e = t * t * (3 - 2 * t);   // smoothstep
      g.setAttribute("transform", `translate(${(x0 + (x1 - x0) * e).toFixed(1)},${(y0 + (y1 - y0) * e).toFixed(1)}) scale(${(1 - 0.5 * e).toFixed(2)})`);
      if (t < 1) requestAnimationFrame(tick); else g.remove();
    };
    tick(t0);
  }
  return { after, enabled: on };
}
