// The narration log: one entry per step with the paper's algorithm and line numbers, filterable
// by process and by message type so that a long run stays readable.

const MAX_ROWS = 400;

function ref(r) {
  if (!r || !r.algorithm) return "";
  const ls = r.lines || [];
  const lines = ls.length === 0 ? "" : ls.length === 1 ? ` l.${ls[0]}` : ` l.${ls[0]}–${ls[ls.length - 1]}`;
  return `Alg. ${r.algorithm}${lines}`;
}

export function setupNarration(list, procSel, typeSel, act) {
  let filterProc = "", filterType = "";
  const procs = new Set(), types = new Set();
  let rendered = [];   // step numbers in the list, in order

  procSel.addEventListener("change", () => { filterProc = procSel.value; rebuild(act.model()); });
  typeSel.addEventListener("change", () => { filterType = typeSel.value; rebuild(act.model()); });

  function keep(r) {
    if (filterType && r.type !== filterType) return false;
    if (filterProc) {
      const about = [r.proc, r.src, r.dst, ...(r.narration || []).map((n) => n.proc)];
      if (!about.includes(filterProc)) return false;
    }
    return true;
  }

  function addOption(sel, set, v) {
    if (!v || set.has(v)) return;
    set.add(v);
    const o = document.createElement("option");
    o.value = v;
    o.textContent = v;
    sel.appendChild(o);
  }

  function row(r) {
    const li = document.createElement("li");
    li.dataset.step = String(r.step);
    const s = document.createElement("button");
    s.type = "button";
    s.className = "log-step";
    s.textContent = String(r.step);
    s.title = `Go to step ${r.step}`;
    s.addEventListener("click", () => act.goto(r.step));
    li.appendChild(s);
    const body = document.createElement("div");
    body.className = "log-body";
    const lines = r.narration && r.narration.length ? r.narration : [{ text: r.event, ref: null }];
    for (const n of lines) {
      const p = document.createElement("p");
      p.textContent = n.text;
      const rf = ref(n.ref);
      if (rf) {
        const span = document.createElement("span");
        span.className = "ref";
        span.textContent = rf;
        span.title = "algorithm and pseudocode lines in the paper";
        p.appendChild(span);
      }
      body.appendChild(p);
    }
    li.appendChild(body);
    return li;
  }

  function rebuild(m) {
    list.replaceChildren();
    rendered = [];
    const recs = m.history.filter(keep).slice(-MAX_ROWS);
    for (const r of recs) { list.appendChild(row(r)); rendered.push(r.step); }
    mark(m);
  }

  function mark(m) {
    const cur = list.querySelector("li.current");
    if (cur) cur.classList.remove("current");
    const li = list.querySelector(`li[data-step="${m.step}"]`);
    if (li) { li.classList.add("current"); li.scrollIntoView({ block: "nearest" }); }
  }

  for (const p of act.page().pids || []) addOption(procSel, procs, p);

  return function update(m, kind) {
    for (const n of m.view.nodes.keys()) addOption(procSel, procs, n);
    for (const r of m.history.slice(-50)) addOption(typeSel, types, r.type);
    const last = m.history[m.history.length - 1];
    if (kind === "full" || !last) { rebuild(m); return; }
    while (rendered.length && rendered[rendered.length - 1] >= last.step) {
      rendered.pop();
      list.lastChild && list.lastChild.remove();
    }
    if (keep(last)) { list.appendChild(row(last)); rendered.push(last.step); }
    while (rendered.length > MAX_ROWS) { rendered.shift(); list.firstChild.remove(); }
    mark(m);
  };
}
