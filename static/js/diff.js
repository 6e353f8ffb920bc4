// What changed (issue 17, DSLabs' diff and Stateright's next actions): the inspect tab opens
// with what the last step changed, and pointing at an enabled event (hover or focus) previews
// what it would change before it is clicked. Both come from the server's `effect` op, computed
// on a scratch copy (app/effects.py), so a preview never moves the run. Scenario text only
// ever goes in with textContent.

/** A value as short as a reader needs it: records as Name(fields), ⊥ for none. */
export function short(v) {
  if (v === null || v === undefined) return "⊥";
  if (Array.isArray(v)) return `[${v.map(short).join(", ")}]`;
  if (typeof v === "object") {
    const fields = Object.entries(v).filter(([k]) => k !== "@").map(([k, x]) => (v["@"] ? short(x) : `${k}: ${short(x)}`));
    return v["@"] ? `${v["@"]}(${fields.join(", ")})` : `{${fields.join(", ")}}`;
  }
  return String(v);
}

function el(tag, cls, txt) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (txt !== undefined) e.textContent = txt;
  return e;
}

/** The lines of an effect: variables, messages, critical sections, crashes. */
export function effectLines(eff) {
  const out = [];
  for (const c of eff.changes || []) out.push({ kind: "var", proc: c.proc, text: `${c.proc}.${c.name}: ${short(c.before)} → ${short(c.after)}` });
  if (eff.more) out.push({ kind: "var", text: `… and ${eff.more} more variables` });
  for (const m of eff.consumed || []) out.push({ kind: "recv", proc: m.dst, text: `${m.dst} receives ${m.type} from ${m.src} (${m.id})` });
  for (const m of eff.sent || []) out.push({ kind: "send", proc: m.src, text: `${m.src} sends ${m.type} to ${m.dst} (${m.id})` });
  for (const p of eff.entered_cs || []) out.push({ kind: "cs", proc: p, text: `${p} enters its critical section` });
  for (const p of eff.left_cs || []) out.push({ kind: "cs", proc: p, text: `${p} leaves its critical section` });
  for (const p of eff.crashed || []) out.push({ kind: "crash", proc: p, text: `${p} crashes` });
  if (!out.length) out.push({ kind: "none", text: "no variable changes" });
  return out;
}

/** Draw an effect into box under a heading. */
export function renderEffect(box, eff, heading) {
  box.replaceChildren();
  box.appendChild(el("h2", "diff-title", heading));
  const said = (eff.narration || []).map((n) => n.text).filter(Boolean).join(" ");
  if (said) box.appendChild(el("p", "diff-said", said));
  const ul = el("ul", "diff-list");
  for (const l of effectLines(eff)) {
    const li = el("li", `diff-${l.kind}`, l.text);
    if (l.proc) li.dataset.proc = l.proc;
    ul.appendChild(li);
  }
  box.appendChild(ul);
}

/**
 * Mark the inspector's rows that the last step changed (and say what they were). A list of
 * records is shown one row per record ("Q_strong[1]", then its fields): only the records that
 * differ are marked.
 */
export function markChangedRows(inspector, eff, proc) {
  if (!eff || !proc) return;
  const was = new Map();
  for (const c of (eff.changes || []).filter((x) => x.proc === proc)) {
    was.set(c.name, c.before);
    if (Array.isArray(c.before) || Array.isArray(c.after)) {
      const a = c.before || [], b = c.after || [];
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        if (JSON.stringify(a[i]) !== JSON.stringify(b[i])) was.set(`${c.name}[${i}]`, a[i]);
      }
    }
  }
  for (const th of inspector.querySelectorAll("table.vars th")) {
    const tr = th.parentElement, name = th.textContent;
    const rec = /^(.*?\[\d+\])\./.exec(name);     // a field of a record row: its record decides
    const key = was.has(name) ? name : rec && was.has(rec[1]) ? rec[1] : null;
    tr.classList.toggle("changed", key !== null);
    if (key !== null) tr.title = `changed at this step; was ${short(was.get(key))}`;
  }
}

/**
 * Wire the step diff (box in the inspect pane) and the previews (box in the events pane).
 * `ask(cmd)` sends a command and resolves with its answer. Returns {update(model, ui), preview(id|null)}.
 */
export function setupDiff(diffBox, previewBox, ask, inspector) {
  let askedFor = null, last = null, timer = 0, want = null;
  function update(model, ui) {
    const key = `${model.branch}|${model.step}|${model.stateHash}`;
    if (ui.tab !== "inspect" || key === askedFor) { markChangedRows(inspector, last, ui.selected); return; }
    if (model.playing && performance.now() - (update.at || 0) < 500) return;
    update.at = performance.now();
    askedFor = key;
    ask({ op: "effect" }).then((eff) => {
      if (askedFor !== key) return;
      last = eff;
      if (eff.step === 0) { diffBox.replaceChildren(el("p", "hint", "Step 0: nothing has happened yet.")); return; }
      const rec = model.history.find((r) => r.step === eff.step);
      renderEffect(diffBox, eff, `step ${eff.step} changed (${rec && rec.type ? `${rec.type} ${rec.src}→${rec.dst}` : eff.event})`);
      markChangedRows(inspector, eff, ui.selected);
    }).catch(() => { askedFor = null; });
  }
  function clearMarks() { for (const g of document.querySelectorAll("#view .node.previewed")) g.classList.remove("previewed"); }
  /** Preview event id (null: stop). Asked after a short pause, so that sweeping the list is cheap. */
  function preview(id, label) {
    want = id;
    clearTimeout(timer);
    if (id === null) { previewBox.hidden = true; clearMarks(); return; }
    timer = setTimeout(() => {
      ask({ op: "effect", event: id }).then((eff) => {
        if (want !== id) return;
        renderEffect(previewBox, eff, `if ${label || id} happens now:`);
        previewBox.hidden = false;
        clearMarks();
        const procs = new Set(effectLines(eff).map((l) => l.proc).filter(Boolean));
        for (const p of procs) {
          const g = document.querySelector(`#view .layer.nodes > g[data-id="${CSS.escape(p)}"]`);
          if (g) g.classList.add("previewed");
        }
      }).catch(() => {});
    }, 120);
  }
  return { update, preview, reset: () => { askedFor = null; } };
}
