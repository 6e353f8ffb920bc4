// The inspector: every variable of the selected process, and each of its guarded actions with
// the guard's truth value, the paper's line and what it waits for ("why can't it move?").

import { ref } from "./narration.js";

/** A value as a reader writes it: ⊥ for none, lists in brackets without JSON quotes. */
function fmt(v) {
  if (v === null || v === undefined) return "⊥";
  if (Array.isArray(v)) return `[${v.map(fmt).join(", ")}]`;
  if (typeof v === "object") return `{${Object.entries(v).map(([k, x]) => `${k}: ${fmt(x)}`).join(", ")}}`;
  return String(v);
}

/** Process variables as named fields: a nested record (coterie's req / mem, task_game's
 * parts) becomes one row per field, "req.phase", instead of a JSON blob. */
function rows(vars, prefix = "", depth = 0, out = []) {
  for (const [k, v] of Object.entries(vars || {})) {
    if (k === "@") continue;
    const name = prefix ? `${prefix}.${k}` : k;
    const records = Array.isArray(v) && v.length && depth < 2
      && v.every((x) => x && typeof x === "object" && !Array.isArray(x));
    if (v && typeof v === "object" && !Array.isArray(v) && depth < 2) {
      if (v["@"]) out.push([name, `(${v["@"]})`, true]);
      rows(v, name, depth + 1, out);
    } else if (records) {
      v.forEach((x, i) => { out.push([`${name}[${i}]`, x["@"] ? `(${x["@"]})` : "", true]); rows(x, `${name}[${i}]`, depth + 1, out); });
    } else out.push([name, fmt(v), false]);
  }
  return out;
}

function el(tag, cls, txt) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (txt !== undefined) e.textContent = txt;
  return e;
}

/** One guarded action: ✓/✗, its name, the paper's lines, what it waits for, and its events
 * (each one click or Enter away). */
function guardItem(g, data, act) {
  const li = el("li", g.holds ? "guard holds" : "guard blocked");
  li.appendChild(el("span", "mark", g.holds ? "✓" : "✗"));
  li.appendChild(el("span", "gname", g.name));
  const rf = ref({ algorithm: g.algorithm, lines: g.lines }, data.protocol || "");
  if (rf) li.appendChild(el("span", "ref", rf));
  // A receive guard holds only while a deliverable message of its kind is there (the
  // kernel's inspect_guards); then it names them.
  const kind = g.receives && g.receives !== "*" ? g.receives : "message";
  if (g.receives && !g.holds) {
    const why = g.waiting_for && !/message$/.test(g.waiting_for) ? ` (and ${g.waiting_for})` : "";
    li.appendChild(el("div", "waitfor", `no ${kind} can be delivered to ${data.proc} now${why}`));
  } else if (!g.holds && g.waiting_for) li.appendChild(el("div", "waitfor", `waits for ${g.waiting_for}`));
  if (g.holds && (g.events || []).length) {
    // a receive guard's events are message deliveries; any other guard's are local actions
    const d = el("div", "gevents", g.receives ? "deliverable: " : "enabled: ");
    for (const id of g.events) {
      const b = el("button", "gdeliver", id);
      b.type = "button";
      b.title = g.receives ? `deliver ${id} now` : `take ${id} now`;
      if (act) b.addEventListener("click", () => act.deliver(id));
      d.appendChild(b);
    }
    li.appendChild(d);
  }
  li.title = g.holds ? "this action may happen now" : "this action cannot happen now";
  return li;
}

export function renderInspector(box, data, act = null) {
  box.replaceChildren();
  if (!data) { box.appendChild(el("p", "hint", "Click a process to inspect it.")); return; }
  const h = el("h2", "insp-title", data.proc);
  const status = data.crashed ? "crashed" : data.in_cs ? "in its critical section" : data.waiting ? "waiting" : "not waiting";
  h.appendChild(el("span", "insp-status", status));
  box.appendChild(h);

  box.appendChild(el("h3", "", "guarded actions"));
  const guards = data.guards || [];
  // A resource of datta_ring has some twenty rules, most of them "receive X" with no X in
  // flight: with more than eight, those are folded under one line that names them, so that
  // what can happen now and what a local action waits for show without scrolling.
  const folded = guards.length > 8 ? guards.filter((g) => g.receives && !g.holds) : [];
  const gl = el("ul", "guards");
  for (const g of guards) if (!folded.includes(g)) gl.appendChild(guardItem(g, data, act));
  if (!guards.length) gl.appendChild(el("li", "hint", "no guarded actions"));
  box.appendChild(gl);
  if (folded.length) {
    const more = el("details", "guards-more");
    const kinds = folded.map((g) => (g.receives && g.receives !== "*" ? g.receives : g.name));
    more.appendChild(el("summary", "", `${folded.length} receive rules wait for a message: ${kinds.join(", ")}`));
    const ul = el("ul", "guards");
    for (const g of folded) ul.appendChild(guardItem(g, data, act));
    more.appendChild(ul);
    box.appendChild(more);
  }

  box.appendChild(el("h3", "", "variables"));
  const t = el("table", "vars");
  for (const [k, v, group] of rows(data.variables)) {
    const tr = el("tr", group ? "vgroup" : "");
    tr.appendChild(el("th", "", k));
    tr.appendChild(el("td", "", v));
    t.appendChild(tr);
  }
  box.appendChild(t);
  if ((data.inbox || []).length) box.appendChild(el("p", "inbox", `in flight to it: ${data.inbox.join(", ")}`));
}
