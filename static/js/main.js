// Wires the viewer page: reads the page data, opens the websocket, loads the scenario, applies
// frames to the model and redraws once per animation frame. Each concern lives in its module.

import { Socket } from "./socket.js";
import { applyFrame, applyHistory, clearDirty, emptyModel, trace } from "./model.js";
import { makeStage, placeNodes, renderView } from "./views/common.js";
import { hooksFor } from "./views/index.js";
import { setupControls } from "./controls.js";
import { setupEvents } from "./events.js";
import { setupNarration } from "./narration.js";
import { setupMonitors } from "./monitors.js";
import { renderInspector } from "./inspector.js";
import { renderMetrics } from "./metrics.js";
import { addSpacetimeDefs, setupSpacetime } from "./spacetime.js";
import { setupLegend } from "./legend.js";
import { setupCorruptPicker } from "./corrupt.js";
import { setStyles } from "./messages.js";
import { hasFaults, setupFaultMenu } from "./faultmenu.js";
import { setupDiff } from "./diff.js";
import { setupMotion } from "./motion.js";

const $ = (id) => document.getElementById(id);
const page = JSON.parse($("page-data").textContent);
// On a classroom room's page (templates/room.html) the socket is the room's (static/js/room.js).
const room = $("room-data") ? JSON.parse($("room-data").textContent) : null;
const query = new URLSearchParams(location.search);
if (query.get("present") === "1") document.body.classList.add("present");
if (query.get("embed") === "1") document.body.classList.add("embed");

// Titles and the teaches line are cut to one line; a click or a tap shows all of it.
for (const id of ["scn-title", "teaches"]) {
  const e = $(id);
  if (e) e.addEventListener("click", () => e.classList.toggle("open"));
}

const model = emptyModel();
const stage = makeStage($("view"));
let hooks = hooksFor((page.protocol || {}).view_kind);
setStyles((page.protocol || {}).message_styles);
const ui = { speed: 4, selected: null, armed: null, corrupting: null, inspect: null, lastN: -1, forceAll: false, tab: "events" };

const wsUrl = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${room ? room.ws : "/ws"}`;
const socket = new Socket(wsUrl, {
  onFrame, onStatus,
  onReconnect: () => {
    // A session is rebuilt from scenario + schedule; the browser keeps the last 2000 steps only.
    if (!model.scenario) return load();     // nothing was loaded yet (e.g. "server busy")
    const complete = !model.history.length || model.history[0].step === 1;
    if (complete) return load({ schedule: trace(model), step: model.step });
    toast("reconnected; this run was longer than the browser keeps, so it starts again", "notice");
    return load();
  },
});

function onStatus(s) {
  const c = $("conn");
  c.textContent = s === "open" ? "live" : s === "connecting" ? "connecting…" : "reconnecting…";
  c.dataset.state = s;
}

/**
 * Show the short-message strip in the legend's row under the figure (app.css): at least as high
 * as the legend it stands in for, so that the figure keeps its size and is not fitted again.
 */
function showMessage(b) {
  // (no more than the folded legend's two rows: an unfolded legend of six rows would leave a
  // message in a large empty box)
  const h = Math.min($("legend").offsetHeight, 46);
  if (b.hidden) b.style.minHeight = h ? `${h}px` : "";
  b.hidden = false;
}

/** A short message under the view: errors in red, notices (why play stopped) in ink. */
function toast(message, kind = "error") {
  const b = $("fault-hint");
  showMessage(b);
  b.classList.toggle("error", kind === "error");
  b.textContent = message;
  clearTimeout(toast.t);
  toast.t = setTimeout(() => { b.classList.remove("error"); showArmed(); }, 3500);
}

const send = (cmd) => socket.send(cmd).catch((e) => toast(e.message));

function load(extra = {}) {
  // (a later load that worked, e.g. after "server busy", takes the first load's strip away)
  return socket.send(loadCmd(extra)).then((f) => { $("load-error")?.remove(); return f; },
                                           (e) => toast(e.message));
}

/**
 * The page's first load. A run its address cannot give (a schedule event that is not possible,
 * a step past it) is said in a strip that stays, with a way to open the scenario from its start:
 * a 3.5 s toast left an empty figure and "Nothing can happen now" with no word of why.
 */
function firstLoad() {
  const cmd = loadCmd();
  return socket.send(cmd).catch((e) => {
    // a link reopened under the variant it was switched to, whose run that variant cannot
    // take: the link as it was made (the menu follows the figure's variant)
    if (page.link && cmd.variant) { delete cmd.variant; return socket.send(cmd); }
    throw e;
  }).catch((e) => {
    const strip = document.createElement("div");
    strip.id = "load-error";
    strip.className = "banner load-error";
    strip.setAttribute("role", "alert");
    strip.append(`This page cannot show what its address asks for: ${e.message}. `);
    if (!page.link && ((page.schedule || []).length || (page.step !== null && page.step !== undefined))) {
      const a = document.createElement("a");
      const q = page.variant ? `?variant=${encodeURIComponent(page.variant)}` : "";
      a.href = `/sim/${encodeURIComponent(page.scenario)}${q}`;
      a.textContent = "Open the scenario from its start";
      strip.append(a);
    }
    $("banner").after(strip);
  });
}

function loadCmd(extra = {}) {
  const cmd = { op: "load" };
  if (page.link) cmd.link = page.link;
  else cmd.scenario = page.scenario;
  // A short link's page has its variant in the address only when it is the link's own or was
  // switched to (showVariant keeps it there): then it is asked for, or a reload after a switch
  // showed the link's variant under a menu naming the other one.
  if (page.variant && (!page.link || new URLSearchParams(location.search).has("variant"))) cmd.variant = page.variant;
  // (a short link's own schedule and step are the link's; a reconnect asks for the run shown)
  const schedule = extra.schedule ?? (page.link ? null : page.schedule);
  if (schedule && schedule.length) cmd.schedule = schedule;
  const step = extra.step ?? (page.link ? null : page.step);
  if (step !== null && step !== undefined) cmd.step = step;
  return cmd;
}

// ---------------------------------------------------------------- variants
/**
 * Another variant at the same moment: the same schedule and step where they still apply. The
 * variant's run may stop accepting the schedule at some event; then it opens at the last step
 * that applies and says so (issue 17 item 9).
 */
async function switchVariant(v) {
  const schedule = trace(model), step = model.step;
  const base = page.link ? { link: page.link } : { scenario: page.scenario };
  // (the address, page.variant and the menu change with the load's frame, in showVariant: a load
  // that failed left them naming a variant the figure was not drawn from)
  try {
    await socket.send({ op: "load", ...base, variant: v, schedule, step });
    toast(`variant ${v} at step ${step}, on the same schedule`, "notice");
  } catch (e) {
    const m = /schedule item (\d+)/.exec(e.message);
    if (!m) { toast(e.message); showVariant(model.protocol); return; }
    const k = +m[1];
    await send({ op: "load", ...base, variant: v, schedule: schedule.slice(0, k), step: Math.min(step, k) });
    toast(`variant ${v}: the schedule stops applying at step ${k + 1} (${schedule[k]} is not possible there); shown at step ${Math.min(step, k)}`, "notice");
  }
}

/**
 * The variant menu names the variant the figure is drawn from, whatever loaded it: the menu, an
 * address with ?variant=, a #s= link, a short link, a room's teacher, the check's counterexample,
 * a reconnect. Called with every load frame's protocol. Outside a room the address and
 * page.variant follow too, so that a reload, Back / Forward, "present" or a reconnect opens
 * this variant again (schedule and step leave the address: they were the old variant's run).
 */
function showVariant(p) {
  if (!p || !p.variant) return;
  const sel = $("variant");
  const names = p.variants || [];
  if (names.length && names.join("\n") !== Array.from(sel.options, (o) => o.value).join("\n")) {
    sel.replaceChildren(...names.map((v) => { const o = document.createElement("option"); o.value = v; o.textContent = v; return o; }));
  }
  if (sel.value !== p.variant) sel.value = p.variant;
  if (room || page.variant === p.variant) return;
  const was = page.variant;
  page.variant = p.variant;
  const q = new URLSearchParams(location.search);
  // (no variant before: the scenario's own, which an address without one opens as well)
  if (was && q.get("variant") !== p.variant) {
    q.set("variant", p.variant); q.delete("schedule"); q.delete("step");
    history.replaceState(history.state, "", `${location.pathname}?${q}${location.hash}`);
  }
}

// ---------------------------------------------------------------- actions
function showArmed() {
  const h = $("fault-hint");
  if (!ui.armed) { h.hidden = true; return; }
  // The corrupt picker says what to do itself; a second hint under it would only compete.
  if (ui.corrupting) { h.hidden = true; return; }
  showMessage(h);
  h.textContent = ui.armed === "drop" || ui.armed === "duplicate"
    ? `${ui.armed}: click a message in flight (Esc to cancel)` : `${ui.armed}: click a process (Esc to cancel)`;
}

const act = {
  model: () => model,
  page: () => page,
  trace: () => trace(model),
  armed: () => ui.armed,
  step: () => send({ op: "step" }),
  back: () => (model.step > 0 ? send({ op: "back" }) : null),
  goto: (k) => send({ op: "goto", step: Math.max(0, Math.min(model.total, k | 0)) }),
  togglePlay: () => send({ op: model.playing ? "pause" : "play" }),
  pause: () => send({ op: "pause" }),
  speed: (s) => { ui.speed = s; if (act.showSpeed) act.showSpeed(s); return send({ op: "speed", steps_per_second: s }); },
  scheduler: (kind, seed) => send(kind === "random" ? { op: "scheduler", kind, seed } : { op: "scheduler", kind }),
  deliver: (id) => send({ op: "deliver", event: id }),
  branch: (id, step) => send(step == null ? { op: "branch", branch: id } : { op: "branch", branch: id, step }),
  variant: (v) => switchVariant(v),
  // Disarming (Esc, cancel, a fault sent, another fault armed) also closes the corrupt picker.
  arm: (k) => { ui.armed = k; if (k !== "corrupt") ui.corrupting = null; menu.close(); showArmed(); render(); },
};

// A click on a process or a message with faults on offer opens its menu (static/js/faultmenu.js).
const menu = setupFaultMenu($("fault-menu"), {
  fire: (id, kind) => (kind === "deliver" ? act.deliver(id) : send({ op: "fault", event: id })),
  corrupt: (pid) => { ui.armed = "corrupt"; ui.corrupting = pid; showArmed(); render(); },
});
const elOf = (kind, id) => document.querySelector(`#view .layer.${kind} > g[data-id="${CSS.escape(String(id))}"]`);
// Right-click, a long press or the context-menu key: the menu with every fault the viewer can inject.
$("view").addEventListener("contextmenu", (ev) => {
  if (ui.follow) return;
  const g = ev.target.closest && ev.target.closest("#view .layer.messages > g, #view .layer.nodes > g");
  if (!g) return;
  ev.preventDefault();
  const target = g.parentNode.classList.contains("messages") ? { message: g.__m } : { node: g.__key };
  if (target.message === undefined && target.node === undefined) return;
  menu.open(model, target, g, true);
});

const handlers = {
  clickMessage(m) {
    if (ui.armed === "drop" || ui.armed === "duplicate") {
      send({ op: "fault", event: `f:${ui.armed === "drop" ? "drop" : "dup"}:${m.id}` });
      act.arm(null);
    } else if (!ui.follow && hasFaults(model, { message: m }) && elOf("messages", m.id)) {
      menu.open(model, { message: m }, elOf("messages", m.id));
    } else if (m.deliverable) act.deliver(m.id);
    else toast(`${m.id} is queued behind an older message on its channel (FIFO): deliver that one first`);
  },
  selectNode(id) {
    if (ui.armed === "crash") { send({ op: "fault", event: `f:crash:${id}` }); act.arm(null); return; }
    // Corrupt stays armed while its picker is open: clicking another process moves the picker.
    if (ui.armed === "corrupt") { ui.corrupting = id; showArmed(); render(); return; }
    ui.selected = ui.selected === id ? null : id;
    ui.forceAll = true;
    if (ui.selected) { showTab("inspect"); inspect(); } else renderInspector($("inspector"), null);
    menu.close();
    if (ui.selected && !ui.follow && hasFaults(model, { node: id }) && elOf("nodes", id)) {
      menu.open(model, { node: id }, elOf("nodes", id));
    }
    render();
  },
};

// After a long jump the log and the space-time diagram need the records in between: one range
// request at a time, for the latest need (docs/websocket.md, "history").
let historyAsked = null;
function fetchHistory() {
  const need = model.need;
  if (ui.follow) return;          // a room's follower gets every record with the room's frames
  if (!need || (historyAsked && historyAsked[0] === need[0] && historyAsked[1] === need[1])) return;
  historyAsked = need;
  socket.send({ op: "history", from: need[0], to: need[1] }).then((h) => {
    historyAsked = null;
    if (applyHistory(model, h)) { ui.fullSinceDraw = true; render(); }
  }).catch(() => { historyAsked = null; });
}

let inspectAt = 0;
function inspect() {
  if (!ui.selected || ui.follow) return;   // a room's follower has no session to inspect
  inspectAt = performance.now();
  socket.send({ op: "inspect", proc: ui.selected }).catch(() => {});
}

// ---------------------------------------------------------------- tabs
function showTab(name) {
  ui.tab = name;
  for (const t of document.querySelectorAll(".tab[data-tab]")) {
    t.classList.toggle("active", t.dataset.tab === name);
    t.setAttribute("aria-selected", String(t.dataset.tab === name));
  }
  for (const p of document.querySelectorAll(".pane")) p.classList.toggle("active", p.dataset.pane === name);
  if (name === "metrics") renderMetrics($("metrics"), model);
  if (name === "log") updNarration(model, false, true);
  if (name === "inspect") render();
}
for (const t of document.querySelectorAll(".tab[data-tab]")) t.addEventListener("click", () => showTab(t.dataset.tab));

// ---------------------------------------------------------------- frames and drawing
// the step diff (inspect tab) and the previews of enabled events (events tab): static/js/diff.js
const diff = setupDiff($("diff"), $("preview"), (cmd) => socket.send(cmd), $("inspector"));
act.preview = (id, label) => { if (!ui.follow) diff.preview(id, label); };
const updControls = setupControls(act);
const motion = setupMotion($("motion"), $("view"));
const updEvents = setupEvents($("events"), act);
const updNarration = setupNarration($("log"), $("log-proc"), $("log-type"), act);
const updMonitors = setupMonitors(act);
addSpacetimeDefs($("spacetime"));
const updSpacetime = setupSpacetime($("spacetime"), act);
const updLegend = setupLegend($("legend"));
const updCorrupt = setupCorruptPicker($("corrupt-picker"), {
  pick: (id) => { send({ op: "fault", event: id }); act.arm(null); },
  cancel: () => act.arm(null),
});
// A click on the background deselects. With a fault armed it must not fault the selected
// process: it closes an open corrupt picker, else it leaves the fault armed for another try.
$("view").addEventListener("click", () => {
  if (menu.isOpen()) menu.close();
  else if (ui.corrupting) act.arm(null);
  else if (!ui.armed && ui.selected) handlers.selectNode(ui.selected);
});

function onFrame(msg) {
  const t0 = performance.now();
  handleFrame(msg);
  timing.messages = (timing.messages || 0) + 1;
  timing.onmessage = (timing.onmessage || 0) + performance.now() - t0;
}

function handleFrame(msg) {
  if (msg.type === "inspect") {
    if (msg.proc === ui.selected) {
      renderInspector($("inspector"), { ...msg, protocol: (model.protocol || {}).id }, act);
      if (!ui.follow) diff.update(model, ui);
    }
    return;
  }
  if (msg.type === "error") { if (msg.reply_to == null) toast(msg.message); return; }
  if (msg.type === "history") return;      // handled where it was asked for
  if (msg.type !== "frame") return;
  if (msg.protocol && msg.protocol.view_kind) hooks = hooksFor(msg.protocol.view_kind);
  if (msg.protocol) { setStyles(msg.protocol.message_styles); showVariant(msg.protocol); }
  const before = model.step, wasPlaying = model.playing;
  const ta = performance.now();
  const kind = applyFrame(model, msg);
  placeNodes(hooks, model, msg);
  timing.apply += performance.now() - ta;
  if (kind === "full") ui.fullSinceDraw = true;
  fetchHistory();
  if (model.notice && msg.notice !== ui.lastNotice) toast(model.notice, "notice");
  ui.lastNotice = msg.notice;
  // Replaying a recorded stretch does not fire a monitor anew on the server, so stop here when
  // play crosses a marker of the timeline: a finding is always shown, never played through.
  const crossed = !ui.follow && wasPlaying && model.playing
    && model.findings.find((f) => f.step > before && f.step <= model.step);
  if (crossed) send({ op: "pause" }).then(() => { if (model.step !== crossed.step) act.goto(crossed.step); });
  if (ui.selected && (!model.playing || performance.now() - inspectAt > 500)) inspect();
  render();
  motion.after(model, before, ui.speed);
}

const timing = { frames: 0, view: 0, side: 0, spacetime: 0, other: 0, messages: 0, onmessage: 0,   // ms, for benchmarks
  apply: 0, controls: 0, events: 0, narration: 0, legend: 0 };
let pending = false;
function render() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(draw);
}

let metricsAt = 0;
function draw() {
  pending = false;
  const t0 = performance.now();
  renderView(stage, model, hooks, handlers, ui);
  const t1 = performance.now();
  updMonitors(model, stage);
  updControls(model);
  updCorrupt(model, ui.corrupting);
  menu.update(model);
  if (!ui.follow) diff.update(model, ui);
  const tc = performance.now();
  // While playing fast, the side lists and the diagram refresh a few times a second at most.
  const busy = model.playing && t1 - (ui.sideAt || 0) < 200;
  let te = tc;
  if (!busy) {
    ui.sideAt = t1;
    updEvents(model);
    te = performance.now();
    updNarration(model, ui.fullSinceDraw, ui.tab === "log");
    ui.fullSinceDraw = false;
  }
  const t2 = performance.now();
  if (!model.playing || t2 - (ui.stAt || 0) > 100) { ui.stAt = t2; updSpacetime(model); }
  const t3 = performance.now();
  updLegend(model);
  const tl = performance.now();
  if (ui.tab === "metrics" && t3 - metricsAt > 250) { metricsAt = t3; renderMetrics($("metrics"), model); }
  clearDirty(model);
  const b = document.body.dataset;
  b.step = String(model.step);
  b.total = String(model.total);
  b.playing = String(model.playing);
  b.ready = "1";
  window.dispatchEvent(new CustomEvent("allocscope:drawn", { detail: { step: model.step } }));
  const t4 = performance.now();
  timing.frames++; timing.view += t1 - t0; timing.side += t2 - t1; timing.spacetime += t3 - t2; timing.other += t4 - t3;
  // the parts of "side" and "other", for benchmarks/web_latency.py
  timing.controls += tc - t1; timing.events += te - tc; timing.narration += t2 - te; timing.legend += tl - t3;
}

window.addEventListener("resize", () => { ui.forceAll = true; render(); });
// The view also changes size without the window doing so (the legend below it gains a row as
// message types appear, the phone's panels settle): every figure is fitted again then, so that
// it always fills the view it has.
let viewSize = "";
new ResizeObserver(() => {
  const v = $("view"), sz = `${v.clientWidth}x${v.clientHeight}`;
  if (sz === viewSize) return;
  const first = viewSize === "";
  viewSize = sz;
  if (!first) { ui.forceAll = true; render(); }
}).observe($("view"));
window.allocscope = { model, act, ui, timing, socket };

// The explorer's "check" tools (static/js/check.js).
import("./check.js")
  .then((check) => check.startCheck({ model, page, socket, toast }))
  .catch((e) => console.error("check tools unavailable", e));
// In a room, room.js says hello on the room's socket instead of loading (the teacher's state).
if (room) {
  import("./room.js")
    .then((r) => r.startRoom({ room, model, page, socket, act, ui, toast, render, handlers }))
    .catch((e) => toast(`the room could not start: ${e.message}`));
} else {
  import("./room_start.js").then((r) => r.addRoomButton({ model, page, toast })).catch(() => {});
}
// Share / fork / export tools (static/js/share.js, when present) may first point `page` at a
// shared state carried by the link; then we load.
import("./share.js")
  .then((share) => share.startShare({ model, page, trace, toast }))
  .catch(() => true)
  .then((go) => { if (go !== false && !room) firstLoad(); });
