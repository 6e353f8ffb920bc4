// The inspector: every variable of the selected process, and each of its guarded actions with
// the guard's truth value, the paper's line and what it waits for ("why can't it move?").

function fmt(v) {
  if (v === null || v === undefined) return "—";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function el(tag, cls, txt) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (txt !== undefined) e.textContent = txt;
  return e;
}

export function renderInspector(box, data) {
  box.replaceChildren();
  if (!data) { box.appendChild(el("p", "hint", "Click a process to inspect it.")); return; }
  const h = el("h2", "insp-title", data.proc);
  const status = data.crashed ? "crashed" : data.in_cs ? "in its critical section" : data.waiting ? "waiting" : "not waiting";
  h.appendChild(el("span", "insp-status", status));
  box.appendChild(h);

  box.appendChild(el("h3", "", "guarded actions"));
  const gl = el("ul", "guards");
  for (const g of data.guards || []) {
    const li = el("li", g.holds ? "guard holds" : "guard blocked");
    li.appendChild(el("span", "mark", g.holds ? "✓" : "✗"));
    li.appendChild(el("span", "gname", g.name));
    if (g.algorithm) {
      const ls = g.lines || [];
      const lines = ls.length ? ` l.${ls[0]}${ls.length > 1 ? "–" + ls[ls.length - 1] : ""}` : "";
      li.appendChild(el("span", "ref", `Alg. ${g.algorithm}${lines}`));
    }
    if (!g.holds && g.waiting_for) li.appendChild(el("div", "waitfor", `waits for ${g.waiting_for}`));
    li.title = g.holds ? "this action may happen now" : "this action cannot happen now";
    gl.appendChild(li);
  }
  if (!(data.guards || []).length) gl.appendChild(el("li", "hint", "no guarded actions"));
  box.appendChild(gl);

  box.appendChild(el("h3", "", "variables"));
  const t = el("table", "vars");
  for (const [k, v] of Object.entries(data.variables || {})) {
    const tr = el("tr");
    tr.appendChild(el("th", "", k));
    tr.appendChild(el("td", "", fmt(v)));
    t.appendChild(tr);
  }
  box.appendChild(t);
  if ((data.inbox || []).length) box.appendChild(el("p", "inbox", `in flight to it: ${data.inbox.join(", ")}`));
}
