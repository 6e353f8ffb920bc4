// The page's tiny state: the last frame's fields plus the view, kept as keyed maps so that
// incremental frames ("view_patch") can be applied in place and the views redraw only what changed.

export function emptyModel() {
  return {
    step: 0, total: 0, stateHash: "", event: null, playing: false,
    scheduler: { kind: "manual", seed: 0 }, enabled: [], narration: [],
    monitors: { safety: "ok", deadlock: null, livelock: null, violations: [], fired: [] },
    findings: [], metrics: {}, history: [], protocol: null, scenario: null, ownSteps: null,
    // records of steps after the current one (kept when stepping back, so going forward again
    // needs no answer from the server), the branches of the event tree, and a range of records
    // the page must fetch ({op: "history"}) after a long jump
    ahead: new Map(), branches: [], branch: 0, need: null,
    view: { layout: "ring", nodes: new Map(), edges: [], queues: new Map(), cycles: [],
            extra: {}, messages: new Map() },
    dirty: { nodes: new Set(), queues: true, edges: true, messages: true, cycles: true,
             extra: true, all: true },
  };
}

const qkey = (q) => `${q.node}\u0000${q.name}`;
const msgNo = (id) => { const n = parseInt(String(id).replace(/^\D+/, ""), 10); return Number.isNaN(n) ? 0 : n; };
const KEEP = 2000;   // records of the past the page keeps (the log and the space-time diagram)

function setView(m, v) {
  const view = m.view;
  view.layout = v.layout || view.layout;
  view.nodes = new Map((v.nodes || []).map((n) => [String(n.id), n]));
  view.edges = v.edges || [];
  view.queues = new Map((v.queues || []).map((q) => [qkey(q), q]));
  view.cycles = v.cycles || [];
  view.extra = v.extra || {};
  view.messages = new Map((v.messages || []).map((x) => [String(x.id), x]));
  m.dirty.all = true;
}

function patchView(m, p) {
  const view = m.view;
  for (const n of p.nodes || []) { view.nodes.set(String(n.id), n); m.dirty.nodes.add(String(n.id)); }
  // A far jump sends the changed values grouped by field, {field: {id: value}}: each node
  // changed gets a new object (views redraw a node when its object changed).
  const fresh = new Map();
  for (const [k, byId] of Object.entries(p.node_fields || {})) {
    for (const [id, v] of Object.entries(byId)) {
      const n = fresh.get(id) || { ...view.nodes.get(id) };
      n[k] = v;
      fresh.set(id, n);
    }
  }
  for (const [id, n] of fresh) { view.nodes.set(id, n); m.dirty.nodes.add(id); }
  if (p.queues && p.queues.length) {
    for (const q of p.queues) {
      if (q.removed) view.queues.delete(qkey(q));
      else view.queues.set(qkey(q), q);
    }
    m.dirty.queues = true;
  }
  if (p.edges) { view.edges = p.edges; m.dirty.edges = true; }
  if (p.cycles) {
    if (JSON.stringify(p.cycles) !== JSON.stringify(view.cycles)) m.dirty.cycles = true;
    view.cycles = p.cycles;
  }
  if (p.extra) { view.extra = p.extra; m.dirty.extra = true; }
  const mp = p.messages;
  if (mp) {
    for (const id of mp.remove || []) view.messages.delete(String(id));
    for (const x of mp.add || []) view.messages.set(String(x.id), x);
    for (const x of mp.update || []) view.messages.set(String(x.id), x);
    // Going back re-adds older messages: keep the map in send order (the oldest nearest dst).
    if ((mp.add || []).length) {
      view.messages = new Map([...view.messages].sort((a, b) => msgNo(a[0]) - msgNo(b[0])));
    }
    if ((mp.remove || []).length || (mp.add || []).length || (mp.update || []).length) m.dirty.messages = true;
  }
}

/** Apply one frame (full or incremental); returns what kind of change it was. */
export function applyFrame(m, f) {
  const prevStep = m.step;
  m.step = f.step ?? m.step;
  m.total = f.total ?? m.total;
  m.stateHash = f.state_hash ?? m.stateHash;
  m.event = f.event ?? null;
  m.playing = !!f.playing;
  if (f.scheduler) m.scheduler = f.scheduler;
  if (f.enabled) m.enabled = f.enabled;
  m.narration = f.narration || [];
  m.notice = f.notice || "";
  if (f.monitors) m.monitors = f.monitors;
  if (f.metrics) {
    // incremental frames carry only the served requests added since the previous frame
    const add = f.metrics.per_request_add, drop = f.metrics.per_request_drop || 0;
    const kept = (m.metrics.per_request || []).slice(0, Math.max(0, (m.metrics.per_request || []).length - drop));
    const cols = f.metrics.per_request_cols;      // a far jump: the last 60 by column
    const fromCols = cols ? cols.proc.map((proc, i) => ({ proc, requested_at: cols.requested_at[i],
      response: cols.response[i], waiting: cols.waiting[i] })) : null;
    const per = add ? kept.concat(add).slice(-200) : fromCols || f.metrics.per_request;
    m.metrics = { ...f.metrics, per_request: per || [] };
    delete m.metrics.per_request_add;
    delete m.metrics.per_request_drop;
    delete m.metrics.per_request_cols;
  }
  if (f.protocol) m.protocol = f.protocol;
  if (f.scenario) m.scenario = f.scenario;
  if ("own_steps" in f) m.ownSteps = f.own_steps;    // null: the whole recorded run is the variant's own
  let full = false;
  if (f.view) { setView(m, f.view); full = true; }
  else if (f.view_patch) patchView(m, f.view_patch);
  if (f.findings) m.findings = f.findings;
  else for (const x of (f.monitors && f.monitors.fired) || []) {
    if (!m.findings.some((y) => y.step === x.step && y.kind === x.kind)) m.findings.push(x);
  }
  m.findings = m.findings.filter((x) => x.step <= m.total);
  if (f.branches) m.branches = f.branches;
  if (f.branch != null) m.branch = f.branch;
  if (f.forget_after != null) {     // recorded steps changed (a fork, a branch switch, a load)
    const k = f.forget_after;
    m.history = m.history.filter((r) => r.step <= k);
    for (const s of [...m.ahead.keys()]) if (s > k) m.ahead.delete(s);
  }
  if (f.history) { m.history = f.history.filter(Boolean); m.ahead.clear(); full = true; }
  else if (f.step_record || (f.skipped_records && f.skipped_records.length)) {
    // Coalesced play frames carry the records of the steps they skipped, then this step's.
    const recs = (f.skipped_records || []).concat(f.step_record ? [f.step_record] : []);
    const first = recs[0].step;
    while (m.history.length && m.history[m.history.length - 1].step >= first) m.history.pop();
    fillFromAhead(m, first - 1);
    for (const r of recs) { m.history.push(r); m.ahead.delete(r.step); }
  }
  if (m.step < prevStep || m.history.length && m.history[m.history.length - 1].step > m.step) {
    while (m.history.length && m.history[m.history.length - 1].step > m.step) {
      const r = m.history.pop();
      m.ahead.set(r.step, r);
    }
  }
  fillFromAhead(m, m.step);
  if (m.history.length > KEEP) m.history.splice(0, m.history.length - KEEP);
  for (const s of [...m.ahead.keys()]) if (s > m.total) m.ahead.delete(s);
  // After a long jump forward the records in between come by range: say which are missing.
  const have = m.history.length ? m.history[m.history.length - 1].step : 0;
  const lo = Math.max(have, m.step - KEEP);
  m.need = m.step > have ? [lo, m.step] : null;
  if (m.need && have && lo > have) m.history = [];     // a gap: the old records are too far back
  return full ? "full" : "patch";
}

/** Move records from the "ahead" store onto the history while they continue it, up to step k. */
function fillFromAhead(m, k) {
  let last = m.history.length ? m.history[m.history.length - 1].step : 0;
  while (last < k && m.ahead.has(last + 1)) {
    last += 1;
    m.history.push(m.ahead.get(last));
    m.ahead.delete(last);
  }
}

/** Records fetched by range (answer to {op: "history"}): merge those that continue the past. */
export function applyHistory(m, h) {
  if (h.branch !== m.branch) return false;
  const recs = h.records.filter((r) => r.step <= m.step);
  const have = new Set(m.history.map((r) => r.step));
  const merged = m.history.concat(recs.filter((r) => !have.has(r.step)));
  merged.sort((a, b) => a.step - b.step);
  // keep the contiguous run that ends at the current step
  let i = merged.length - 1;
  while (i > 0 && merged[i - 1].step === merged[i].step - 1) i--;
  m.history = merged.slice(i).slice(-KEEP);
  const last = m.history.length ? m.history[m.history.length - 1].step : 0;
  m.need = last < m.step ? [Math.max(last, m.step - KEEP), m.step] : null;
  return true;
}

/** The event ids of the run so far (to rebuild the session after a reconnect). */
export function trace(m) {
  const past = m.history.filter((r) => r.step <= m.total).map((r) => r.event);
  let k = m.history.length ? m.history[m.history.length - 1].step : 0;
  while (m.ahead.has(k + 1)) { k += 1; past.push(m.ahead.get(k).event); }
  return past;
}

export function clearDirty(m) {
  m.dirty = { nodes: new Set(), queues: false, edges: false, messages: false, cycles: false,
              extra: false, all: false };
}
