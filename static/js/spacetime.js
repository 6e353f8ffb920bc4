// Space-time diagram (message sequence chart): one lane per process, time left to right, an
// arrow per delivered message from its send step to its delivery step, a dot per local event.
// Synced with the timeline (a cursor at the current step); clicking an arrow goes there.

import { attr, el, keyed, text, tip } from "./svg.js";
import { typeStyle } from "./messages.js";

const WINDOW = 60;      // steps shown at once
const LEFT = 54;

export function setupSpacetime(svg, act) {
  const lanesG = el("g", { class: "lanes" }, svg);
  const arrowsG = el("g", { class: "arrows" }, svg);
  const dotsG = el("g", { class: "dots" }, svg);
  const cursor = el("line", { class: "st-cursor" }, svg);
  const axis = el("text", { class: "st-axis" }, svg);
  // The diagram's size comes from a ResizeObserver, not from clientWidth on each update: that
  // read, after the frame's other DOM writes, forced a layout of the whole page every step
  // (30–70 ms per step at 500 processes under load, the largest part of a step's time).
  let W = svg.clientWidth || 800, H = svg.clientHeight || 140, last = null;
  new ResizeObserver((entries) => {
    const r = entries[entries.length - 1].contentRect;
    if (!r.width || (Math.round(r.width) === W && Math.round(r.height) === H)) return;
    W = Math.round(r.width); H = Math.round(r.height) || 140;
    if (last) update(last);
  }).observe(svg);

  return update;
  function update(m) {
    last = m;
    attr(svg, "viewBox", `0 0 ${W} ${H}`);
    const hi = Math.max(m.step + 8, Math.min(m.total, WINDOW));
    const lo = Math.max(0, Math.min(m.step - WINDOW + 8, hi - WINDOW));
    const recs = m.history.filter((r) => r.step > lo && r.step <= hi);
    // One lane per process while they fit (≥ 13 px each); otherwise only the processes that
    // took part in the steps shown.
    let ids = Array.from(m.view.nodes.keys());
    const fit = Math.max(2, Math.floor((H - 18) / 13));
    if (ids.length > fit) {
      const used = new Set();
      for (const r of recs) for (const p of [r.src, r.dst, r.proc]) if (p != null) used.add(String(p));
      ids = ids.filter((id) => used.has(id)).slice(0, fit);
    }
    const lane = new Map(ids.map((id, i) => [id, i]));
    const lh = (H - 18) / Math.max(1, ids.length);
    // lane names as large as their lanes allow (a name's box is ~1.17 em tall), 11 to 14 px:
    // 11 px for every lane read poorly on a projector where six lanes have 18 px each
    // (present mode shows the strip only when asked, 200 px high: its names up to 18 px)
    const most = document.body.classList.contains("present") ? 18 : 14;
    const lanePx = String(Math.max(11, Math.min(most, Math.floor((lh - 1) / 1.17))));
    if (lanesG.style.getPropertyValue("--lane-px") !== lanePx) lanesG.style.setProperty("--lane-px", lanePx);
    const ly = (id) => 6 + lh * (lane.get(String(id)) + 0.5);
    const sx = (s) => LEFT + ((W - LEFT - 10) * (s - lo)) / Math.max(1, hi - lo);

    keyed(lanesG, ids, (id) => id,
      () => { const g = el("g", { class: "lane" }); el("line", {}, g); el("text", { x: 4 }, g); return g; },
      (g, id) => {
        const y = ly(id);
        const [line, label] = g.children;
        attr(line, "x1", LEFT); attr(line, "x2", W - 10); attr(line, "y1", y); attr(line, "y2", y);
        attr(label, "y", y + 4);
        text(label, id);
      },
      (id) => `${id}|${ly(id)}|${W}`);

    const msgs = recs.filter((r) => r.kind === "deliver" && lane.has(String(r.dst)));
    keyed(arrowsG, msgs, (r) => `a${r.step}`,
      () => {
        const g = el("g", { class: "st-msg", tabindex: "0", role: "button" });
        g.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); act.goto(g.__r.step); } });
        el("line", { class: "hit" }, g);
        el("line", { class: "shaft", "marker-end": "url(#st-arrow)" }, g);
        g.addEventListener("click", () => act.goto(g.__r.step));
        return g;
      },
      (g, r) => {
        g.__r = r;
        let x1 = sx(r.sent_step ?? r.step - 1), y1 = lane.has(String(r.src)) ? ly(r.src) : ly(r.dst) - lh * 0.4;
        const x2 = sx(r.step), y2 = ly(r.dst);
        // sent before the steps shown: the same line, cut at the window's left edge (it ran
        // from x < 0 across the lanes' names: game-restricted-locality-3 at its figure moment)
        if (x1 < LEFT && x2 > LEFT) { y1 += ((y2 - y1) * (LEFT - x1)) / (x2 - x1); x1 = LEFT; }
        for (const line of g.children) {
          attr(line, "x1", x1.toFixed(1)); attr(line, "y1", y1.toFixed(1));
          attr(line, "x2", x2.toFixed(1)); attr(line, "y2", y2.toFixed(1));
        }
        g.children[1].setAttribute("stroke", typeStyle(String(r.type || "msg")).colour);
        attr(g, "class", "st-msg" + (r.step > m.step ? " future" : ""));
        tip(g, `step ${r.step}: ${r.type || "message"} ${r.src}→${r.dst} (sent at step ${r.sent_step ?? "?"}) — click to go there`);
      },
      (r) => `${r.step}|${lo}|${hi}|${W}|${H}|${ids.length}|${r.step > m.step}`);

    const dots = recs.filter((r) => r.kind !== "deliver" && lane.has(String(r.proc)));
    keyed(dotsG, dots, (r) => `d${r.step}`,
      () => { const c = el("circle", { r: 4 }); c.addEventListener("click", () => act.goto(c.__r.step)); return c; },
      (c, r) => {
        c.__r = r;
        attr(c, "cx", sx(r.step).toFixed(1)); attr(c, "cy", ly(r.proc).toFixed(1));
        attr(c, "class", `st-dot kind-${String(r.kind).replace(/[^a-z]/g, "")}` + (r.step > m.step ? " future" : ""));
        tip(c, `step ${r.step}: ${(r.narration && r.narration[0] && r.narration[0].text) || r.event}`);
      },
      (r) => `${r.step}|${lo}|${hi}|${W}|${H}|${ids.length}|${r.step > m.step}`);

    const cx = sx(m.step).toFixed(1);
    attr(cursor, "x1", cx); attr(cursor, "x2", cx); attr(cursor, "y1", 2); attr(cursor, "y2", H - 14);
    attr(axis, "x", LEFT); attr(axis, "y", H - 3);
    text(axis, `steps ${lo}–${hi} · cursor at step ${m.step}`);
  }
}

/** The arrowhead marker of the diagram (added once). */
export function addSpacetimeDefs(svg) {
  const defs = el("defs", {}, svg);
  const mk = el("marker", { id: "st-arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 6,
    markerHeight: 6, orient: "auto" }, defs);
  el("path", { d: "M0,0L10,5L0,10z", class: "st-head" }, mk);
}
