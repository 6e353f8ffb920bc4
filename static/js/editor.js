// The scenario editor (templates/editor.html): a form for the common knobs and a raw JSON tab,
// both editing one scenario object, validated by the server as you type
// (POST /api/scenarios/validate answers errors that name the field, e.g. "scenario.params.n").
// Sources, from the URL: ?link=<id> or #s=<payload> (fork at a shared state), ?scenario=<id>&
// variant=&schedule=&step= (fork from a viewer state), ?scenario=<id> (a gallery file as it is).
// The protocol's JSON Schema (GET /api/schema/{protocol}, schema.js) completes knob names,
// puts each knob's description, bounds and choices on its input, and marks errors inline.
// All user-visible text is set with textContent; no inline scripts (CSP).

import { createShortLink, saveBlob } from "./links.js";
import { quickCheck, schemaOf, sectionFields } from "./schema.js";

const $ = (id) => document.getElementById(id);
const form = $("ed-form");
const jsonArea = $("ed-json");
const SECTIONS = ["params", "topology", "workload"];

let scenario = {};
let protocols = new Map();   // protocol id -> variants
let schema = null;           // the JSON Schema of the current protocol's scenarios (or null)
let timer = null;
let seq = 0;

function status(text, ok = false) {
  const el = $("ed-status");
  el.textContent = text;
  el.classList.toggle("ok", ok);
}

async function getJson(url, init) {
  const res = await fetch(url, init);
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new Error((data && data.detail) || `${url}: HTTP ${res.status}`);
  return data;
}

function scheduleOf(sc) {
  const s = sc.schedule;
  if (Array.isArray(s)) return s;
  if (s && typeof s === "object") return s[sc.variant || ""] || [];
  return [];
}

// ---------------------------------------------------------------- loading
async function loadSource() {
  const q = new URLSearchParams(location.search);
  const frag = /^#s=([A-Za-z0-9_-]+)$/.exec(location.hash);
  let sc; let fork = false; let source;
  if (q.get("link")) {
    sc = await getJson(`/api/export?link=${encodeURIComponent(q.get("link"))}`);
    fork = true; source = `fork of link ${q.get("link")}`;
  } else if (frag) {
    sc = await getJson("/api/export", { method: "POST", headers: { "Content-Type": "application/json" },
                                        body: JSON.stringify({ fragment: frag[1] }) });
    fork = true; source = "fork of a shared state";
  } else if (q.get("scenario") && (q.has("step") || q.has("schedule"))) {
    const p = new URLSearchParams({ scenario: q.get("scenario"), variant: q.get("variant") || "",
                                    schedule: q.get("schedule") || "", step: q.get("step") || "" });
    sc = await getJson(`/api/export?${p}`);
    fork = true; source = `fork of ${q.get("scenario")} at step ${q.get("step") || "end"}`;
  } else {
    const id = q.get("scenario") || "token-ring";
    sc = await getJson(`/api/scenario-file/${encodeURIComponent(id)}`);
    source = `gallery scenario ${id}`;
  }
  if (fork) {
    sc.id = `${sc.id}-fork`.slice(0, 80);
    sc.title = `Fork of ${sc.title}`.slice(0, 200);
    delete sc.expect;                                   // the fork is a new scenario
    sc.scheduler = { ...(sc.scheduler || {}), then: "oldest" };   // go on after the schedule
  }
  $("ed-source").textContent = source;
  setScenario(sc);
}

async function loadProtocols() {
  try {
    for (const s of await getJson("/api/scenarios")) {
      if (!protocols.has(s.protocol)) protocols.set(s.protocol, s.variants || []);
    }
  } catch { /* the list is a convenience: the protocol field is still validated */ }
}

// ---------------------------------------------------------------- object <-> form / JSON
function setScenario(sc) {
  scenario = sc;
  fillForm();
  jsonArea.value = JSON.stringify(scenario, null, 2);
  validateSoon();
}

function fillForm() {
  const sel = $("ed-protocol");
  sel.replaceChildren();
  const names = new Set([...protocols.keys(), scenario.protocol].filter(Boolean));
  for (const p of names) {
    const o = document.createElement("option");
    o.value = p; o.textContent = p;
    sel.appendChild(o);
  }
  const dl = $("ed-variants");
  dl.replaceChildren();
  for (const v of protocols.get(scenario.protocol) || []) {
    const o = document.createElement("option");
    o.value = v;
    dl.appendChild(o);
  }
  const get = (path) => path.split(".").reduce((o, k) => (o == null ? undefined : o[k]), scenario);
  for (const el of form.elements) {
    if (!el.name) continue;
    const v = get(el.name);
    if (el.type === "checkbox") el.checked = Boolean(v);
    else el.value = v == null ? "" : String(v);
  }
  $("ed-schedule-len").textContent = String(scheduleOf(scenario).length);
  $("ed-clear-schedule").checked = false;
  buildKnobs();
  loadSchema();
}

function buildKnobs() {
  const list = $("ed-knob-list");
  list.replaceChildren();
  for (const sec of SECTIONS) {
    const obj = scenario[sec] || {};
    for (const key of Object.keys(obj)) {
      const v = obj[key];
      const label = document.createElement("label");
      const input = document.createElement("input");
      input.dataset.section = sec;
      input.dataset.key = key;
      input.dataset.field = `scenario.${sec}.${key}`;
      if (typeof v === "boolean") {
        input.type = "checkbox"; input.checked = v; input.dataset.kind = "bool";
      } else if (typeof v === "number") {
        input.type = "number"; input.value = String(v); input.dataset.kind = "number";
      } else if (typeof v === "string") {
        input.value = v; input.dataset.kind = "string";
      } else {
        input.value = JSON.stringify(v); input.dataset.kind = "json"; input.size = 40;
      }
      label.append(`${sec}.${key} `, input);
      label.title = `scenario.${sec}.${key}`;
      hint(input, sec, key);
      list.appendChild(label);
    }
  }
  completeKeys();
}

/** Put what the schema says of a knob on its input: description, bounds, choices. */
function hint(input, sec, key) {
  const f = sectionFields(schema, sec).fields.find((x) => x.key === key);
  if (!f) return;
  if (f.description) input.title = f.description;
  if (input.type === "number") {
    if (f.min !== undefined) input.min = String(f.min);
    if (f.max !== undefined) input.max = String(f.max);
  }
  if (f.choices.length && input.dataset.kind === "string") {
    const id = `ed-choices-${sec}-${key}`.replace(/[^A-Za-z0-9_-]/g, "_");
    let dl = document.getElementById(id);
    if (!dl) { dl = document.createElement("datalist"); dl.id = id; $("ed-knob-list").appendChild(dl); }
    dl.replaceChildren(...f.choices.map((c) => { const o = document.createElement("option"); o.value = String(c); return o; }));
    input.setAttribute("list", id);
  }
}

/** The names the schema declares for the chosen section that the scenario does not set yet. */
function completeKeys() {
  const sec = $("ed-add-section").value;
  const dl = $("ed-add-keys");
  const have = new Set(Object.keys(scenario[sec] || {}));
  dl.replaceChildren();
  for (const f of sectionFields(schema, sec).fields) {
    if (have.has(f.key)) continue;
    const o = document.createElement("option");
    o.value = f.key;
    o.label = f.description || f.key;
    dl.appendChild(o);
  }
}

async function loadSchema() {
  const want = scenario.protocol;
  const s = await schemaOf(want);
  if (scenario.protocol !== want) return;
  schema = s;
  buildKnobs();
}

function readForm() {
  const sc = structuredClone(scenario);
  const set = (path, value) => {
    const keys = path.split(".");
    let o = sc;
    for (const k of keys.slice(0, -1)) { if (typeof o[k] !== "object" || o[k] === null) o[k] = {}; o = o[k]; }
    const last = keys[keys.length - 1];
    if (value === undefined) delete o[last]; else o[last] = value;
  };
  for (const el of form.elements) {
    if (!el.name) continue;
    if (el.type === "checkbox") set(el.name, el.checked);
    else if (el.type === "number") set(el.name, el.value === "" ? undefined : Number(el.value));
    else set(el.name, el.value === "" && !["id", "title"].includes(el.name) ? undefined : el.value);
  }
  for (const input of $("ed-knob-list").querySelectorAll("input")) {
    const { section, key, kind } = input.dataset;
    let v;
    if (kind === "bool") v = input.checked;
    else if (kind === "number") v = input.value === "" ? null : Number(input.value);
    else if (kind === "string") v = input.value;
    else { try { v = JSON.parse(input.value); } catch { v = input.value; } }
    sc[section] = { ...(sc[section] || {}), [key]: v };
  }
  if ($("ed-clear-schedule").checked) delete sc.schedule;
  return sc;
}

// ---------------------------------------------------------------- validation
function activeTab() {
  return document.querySelector("[data-edpane].active").dataset.edpane;
}

function currentText() {
  if (activeTab() === "json") return jsonArea.value;
  scenario = readForm();
  jsonArea.value = JSON.stringify(scenario, null, 2);
  return jsonArea.value;
}

function validateSoon() {
  clearTimeout(timer);
  timer = setTimeout(validateNow, 250);
}

async function validateNow() {
  const mine = ++seq;
  const text = currentText();
  let res;
  try {
    res = await getJson("/api/scenarios/validate", { method: "POST", body: text,
                                                     headers: { "Content-Type": "application/json" } });
  } catch (e) {
    res = { ok: false, errors: [{ field: "scenario", message: e.message }] };
  }
  if (mine !== seq) return res;          // a newer edit is being checked
  showErrors(res);
  return res;
}

/** Each error also beside its own input (a knob, or a form field), not only in the list. */
function markInline(errors) {
  for (const el of document.querySelectorAll(".ed-inline")) el.remove();
  for (const err of errors) {
    const input = document.querySelector(`#ed-form [data-field="${CSS.escape(err.field)}"]`);
    if (!input || !input.parentElement) continue;
    const note = document.createElement("span");
    note.className = "ed-inline";
    note.textContent = err.message;
    input.parentElement.appendChild(note);
  }
}

/** What the protocol's schema finds wrong with the form's knobs (none on the raw JSON tab). */
function quickErrors() {
  if (!schema || activeTab() !== "form") return [];
  const sc = readForm();
  return SECTIONS.flatMap((sec) => quickCheck(schema, sec, sc[sec]));
}

/** The schema's own verdict while typing in the form (the server's answer follows). */
function checkQuickly() {
  if (!schema || activeTab() !== "form") return;
  const found = quickErrors();
  for (const el of document.querySelectorAll("#ed-knob-list .invalid")) el.classList.remove("invalid");
  for (const err of found) {
    const input = document.querySelector(`#ed-form [data-field="${CSS.escape(err.field)}"]`);
    if (input) input.classList.add("invalid");
  }
  markInline(found);
}

/** Open and save only a scenario the server accepted; otherwise say why, beside the buttons
 * (a button that looked ready but did nothing on a broken scenario misled the class). */
function actionsFor(res) {
  const why = $("ed-why");
  for (const id of ["ed-open", "ed-save"]) $(id).disabled = !res.ok;
  const n = res.ok ? 0 : res.errors.length;
  why.textContent = res.ok ? "" : `To open or save it, fix the ${n === 1 ? "problem" : `${n} problems`} listed above first.`;
  why.hidden = res.ok;
}

function showErrors(res) {
  // the server stops at the first bad section (a bad id hides params.n = 500): the knobs' own
  // errors the schema finds are kept beside them and in the list, not wiped by its answer
  if (!res.ok) {
    const known = new Set(res.errors.map((e) => e.field));
    res = { ...res, errors: res.errors.concat(quickErrors().filter((e) => !known.has(e.field))) };
  }
  actionsFor(res);
  const ul = $("ed-errors");
  ul.replaceChildren();
  for (const el of document.querySelectorAll(".invalid")) el.classList.remove("invalid");
  markInline(res.ok ? [] : res.errors);
  if (res.ok) {
    const s = res.summary || {};
    status(`valid: ${s.protocol} / ${s.variant}, ${s.processes} processes, schedule of ${s.schedule} events`, true);
    return;
  }
  status(`${res.errors.length} problem${res.errors.length === 1 ? "" : "s"}`);
  for (const err of res.errors) {
    const li = document.createElement("li");
    const f = document.createElement("span");
    f.className = "field";
    f.textContent = err.field;
    li.append(f, `: ${err.message}`);
    ul.appendChild(li);
    for (const el of document.querySelectorAll("[data-field]")) {
      const df = el.dataset.field;
      if (err.field === df || err.field.startsWith(`${df}.`) || (df === "scenario")) el.classList.add("invalid");
    }
  }
}

// ---------------------------------------------------------------- actions
function parsedOrNull() {
  try { return JSON.parse(currentText()); } catch { return null; }
}

async function saveLink() {
  const res = await validateNow();
  const sc = parsedOrNull();
  if (!res.ok || !sc) { status("fix the problems listed below first"); return null; }
  const sched = scheduleOf(sc);
  const made = await createShortLink({ scenario: sc, variant: sc.variant || null,
                                       schedule: sched, step: sched.length });
  $("ed-links").hidden = false;
  $("ed-short").value = new URL(made.url, location.origin).href;
  $("ed-fragment").value = new URL(made.fragment_url, location.origin).href;
  status(`saved: ${made.url}`, true);
  return made;
}

function showTab(name) {
  for (const t of document.querySelectorAll("[data-edtab]")) {
    t.classList.toggle("active", t.dataset.edtab === name);
    t.setAttribute("aria-selected", String(t.dataset.edtab === name));
  }
  for (const p of document.querySelectorAll("[data-edpane]")) p.classList.toggle("active", p.dataset.edpane === name);
}

function wire() {
  for (const tab of document.querySelectorAll("[data-edtab]")) {
    tab.addEventListener("click", () => {
      const to = tab.dataset.edtab;
      if (to === activeTab()) return;
      if (to === "json") { jsonArea.value = JSON.stringify(readForm(), null, 2); }
      else {
        try { scenario = JSON.parse(jsonArea.value); fillForm(); } catch {
          status("the JSON does not parse: fix it before switching to the form"); return;
        }
      }
      showTab(to);
      validateSoon();
    });
  }
  form.addEventListener("input", () => { checkQuickly(); validateSoon(); });
  $("ed-add-section").addEventListener("change", completeKeys);
  $("ed-add-key").addEventListener("input", () => {   // the default as the value's placeholder
    const f = sectionFields(schema, $("ed-add-section").value).fields
      .find((x) => x.key === $("ed-add-key").value.trim());
    const known = f && f.default !== undefined && f.default !== null;
    $("ed-add-value").placeholder = known ? `default ${JSON.stringify(f.default)}`
      : "value (number, text or JSON)";
  });
  form.addEventListener("change", (ev) => {
    if (ev.target.name === "protocol") { scenario = readForm(); fillForm(); }
    validateSoon();
  });
  jsonArea.addEventListener("input", validateSoon);
  $("ed-add").addEventListener("click", () => {
    const key = $("ed-add-key").value.trim();
    if (!key) { status("give the new knob a name"); return; }
    const raw = $("ed-add-value").value;
    let value;
    try { value = JSON.parse(raw); } catch { value = raw; }
    scenario = readForm();
    const sec = $("ed-add-section").value;
    scenario[sec] = { ...(scenario[sec] || {}), [key]: value };
    $("ed-add-key").value = "";
    $("ed-add-value").value = "";
    fillForm();
    jsonArea.value = JSON.stringify(scenario, null, 2);
    validateSoon();
  });
  $("ed-save").addEventListener("click", () => saveLink().catch((e) => status(e.message)));
  $("ed-open").addEventListener("click", async () => {
    try { const made = await saveLink(); if (made) location.href = made.url; } catch (e) { status(e.message); }
  });
  $("ed-download").addEventListener("click", () => {
    const text = currentText();
    const sc = parsedOrNull();
    const name = `${(sc && typeof sc.id === "string" && sc.id) || "scenario"}.json`;
    saveBlob(new Blob([text.endsWith("\n") ? text : `${text}\n`], { type: "application/json" }), name);
  });
  $("ed-upload").addEventListener("change", async (ev) => {
    const file = ev.target.files && ev.target.files[0];
    if (!file) return;
    const text = await file.text();
    try { setScenario(JSON.parse(text)); } catch {
      showTab("json");
      jsonArea.value = text;
      validateSoon();
    }
    $("ed-source").textContent = `uploaded ${file.name}`;
  });
}

wire();
loadProtocols().then(loadSource).catch((e) => {
  status(`cannot load: ${e.message}`);
  $("ed-why").textContent = "Nothing to open or save: the scenario could not be loaded (see above). Upload a file or edit the raw JSON.";
});
