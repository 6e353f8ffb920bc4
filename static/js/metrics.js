// Small SVG charts: messages sent by type (bars in each type's colour), critical-section entries
// and requests, and the waiting time of each served request.

import { el, text } from "./svg.js";
import { typeStyle } from "./messages.js";

export function renderMetrics(box, m) {
  const x = m.metrics || {};
  box.replaceChildren();
  const para = (s) => { const p = document.createElement("p"); p.textContent = s; box.appendChild(p); };
  para(`critical-section entries ${x.cs_entries ?? 0} · requests ${x.requests ?? 0} · served ${x.served ?? 0}`);
  para(`messages sent ${x.messages ?? 0} · delivered ${x.delivered ?? 0}`);

  const byType = Object.entries(x.messages_by_type || {});
  const h4 = document.createElement("h3");
  h4.textContent = "messages by type";
  box.appendChild(h4);
  const W = 300, bh = 18;
  const svg = el("svg", { class: "chart", viewBox: `0 0 ${W} ${Math.max(1, byType.length) * (bh + 4)}`, width: W });
  const max = Math.max(1, ...byType.map(([, v]) => v));
  byType.forEach(([k, v], i) => {
    const y = i * (bh + 4);
    text(el("text", { x: 0, y: y + 13, class: "axis" }, svg), k);
    el("rect", { x: 90, y, width: Math.max(1, ((W - 140) * v) / max), height: bh, fill: typeStyle(k).colour, class: "bar" }, svg);
    text(el("text", { x: 94 + ((W - 140) * v) / max, y: y + 13, class: "axis" }, svg), String(v));
  });
  box.appendChild(svg);

  const per = x.per_request || [];
  const h5 = document.createElement("h3");
  h5.textContent = `waiting time per served request (steps; mean ${x.response_time?.mean ?? "—"}, max ${x.response_time?.max ?? "—"})`;
  box.appendChild(h5);
  const n = Math.min(per.length, 60), recent = per.slice(-n);
  const H = 70;
  const s2 = el("svg", { class: "chart", viewBox: `0 0 ${W} ${H + 14}`, width: W });
  const mx = Math.max(1, ...recent.map((r) => r.response));
  const bw = n ? Math.min(26, (W - 10) / n) : 0;
  recent.forEach((r, i) => {
    const h = (H * r.response) / mx;
    const b = el("rect", { x: 5 + i * bw, y: H - h, width: Math.max(1, bw - 2), height: h, class: "bar wait" }, s2);
    if (bw >= 18) text(el("text", { x: 5 + i * bw + (bw - 2) / 2, y: H + 12, class: "axis", "text-anchor": "middle" }, s2), r.proc);
    text(el("title", {}, b), `${r.proc} requested at step ${r.requested_at}, served after ${r.response} steps`);
  });
  if (!n) text(el("text", { x: 5, y: 30, class: "axis" }, s2), "no request served yet");
  box.appendChild(s2);
}
