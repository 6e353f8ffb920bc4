// The narration log: one entry per step with the paper's algorithm and line numbers, filterable
// by process and by message type so that a long run stays readable.

const MAX_ROWS = 400;

/**
 * A reference as the paper writes it: numbered pseudocode ("Alg. 2 l.50–58"); coterie's
 * AllocResource is written in Cases ("AllocResource, Case 4"); the game of tasks cites pages of
 * its sections ("Sec. 3, p. 15").
 */
export function ref(r, protocol = "") {
  if (!r || !r.algorithm) return "";
  const ls = r.lines || [];
  const span = (pre, sep) => (ls.length === 0 ? "" : ls.length === 1 ? `${sep}${pre}${ls[0]}`
    : `${sep}${pre}${ls[0]}–${ls[ls.length - 1]}`);
  if (protocol === "coterie") return `${r.algorithm}${span(ls.length > 1 ? "Cases " : "Case ", ", ")}`;
  if (protocol === "task_game" || /^(Sec|Section)\b/.test(String(r.algorithm))) return `${r.algorithm}${span(ls.length > 1 ? "pp. " : "p. ", ", ")}`;
  const alg = /^\d/.test(String(r.algorithm)) ? `Alg. ${r.algorithm}` : String(r.algorithm);
  return `${alg}${span("l.", " ")}`;
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
    // a step the protocol did not narrate (e.g. a message that only updates what its receiver
    // knows) still says what happened, in words, not a bare event id
    const plain = r.kind === "deliver" && r.type
      ? `${r.dst} receives ${r.type} from ${r.src} (${r.event})` : r.event;
    const lines = r.narration && r.narration.length ? r.narration : [{ text: plain, ref: null }];
    for (const n of lines) {
      const p = document.createElement("p");
      p.textContent = n.text;
      const rf = ref(n.ref, ((act.model().protocol) || {}).id);
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

  /**
   * Bring the list up to date (called once per drawn frame, not per websocket frame): append the
   * records that arrived since, or rebuild after a jump. While the log is hidden nothing is
   * drawn; it is rebuilt when shown.
   */
  let stale = true;
  return function update(m, full, visible) {
    for (const n of m.view.nodes.keys()) addOption(procSel, procs, n);
    if (full) stale = true;
    if (!visible) return;
    for (const r of m.history.slice(-50)) addOption(typeSel, types, r.type);
    const lastShown = rendered.length ? rendered[rendered.length - 1] : 0;
    const first = m.history.length ? m.history[0].step : 0;
    if (stale || (m.history.length && lastShown >= m.history[m.history.length - 1].step + 1)
        || (lastShown && first > lastShown + 1)) {
      stale = false;
      rebuild(m);
      return;
    }
    for (const r of m.history) {
      if (r.step <= lastShown) continue;
      if (keep(r)) { list.appendChild(row(r)); rendered.push(r.step); }
    }
    while (rendered.length > MAX_ROWS) { rendered.shift(); list.firstChild.remove(); }
    mark(m);
  };
}
