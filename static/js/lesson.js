// The lesson player: one chapter at a time (#chapter in the URL), Continue / Back, the live
// figure beside the text, predictions and try-its judged by the simulator, "explore from here"
// into the viewer. Progress and answers live in this browser only (localStorage).

import { setupFigure } from "./lesson_figure.js";
import { showPrediction, showTry } from "./lesson_quiz.js";

const $ = (id) => document.getElementById(id);
const lesson = JSON.parse($("lesson-data").textContent);
const query = new URLSearchParams(location.search);
if (query.get("present") === "1") document.body.classList.add("present");
if (query.get("embed") === "1") document.body.classList.add("embed");

{
  const t = $("present-toggle");
  const q = new URLSearchParams(location.search);
  const on = q.get("present") === "1";
  t.textContent = on ? "normal size" : "present";
  if (on) q.delete("present"); else q.set("present", "1");
  t.addEventListener("click", (e) => { e.preventDefault(); location.search = q.toString(); });
}

const KEY = `allocscope.lesson.${lesson.id}`;
function progress() {
  try { return JSON.parse(localStorage.getItem(KEY)) || { answers: {}, solved: {}, seen: {} }; }
  catch { return { answers: {}, solved: {}, seen: {} }; }
}
function save(p) { try { localStorage.setItem(KEY, JSON.stringify(p)); } catch { /* private mode */ } }

let index = 0;
let mode = null;        // {kind: "prediction", quiz} | {kind: "try", check} | null
let ch = lesson.chapters[0];

const figure = setupFigure($("view"), {
  onStatus: (s) => { const c = $("conn"); c.textContent = s === "open" ? "live" : "connecting…"; c.dataset.state = s; },
  onFrame: (model) => { drawHead(model); drawEvents(model); },
  onNode: (id) => {
    if (mode && mode.kind === "prediction" && mode.quiz.kind === "node") mode.quiz.answer(id);
  },
  onMessage: (m) => {
    if (mode && mode.kind === "prediction" && mode.quiz.kind === "message") return mode.quiz.answer(m.id);
    if (mode && mode.kind === "try") {
      if (!m.deliverable) return hint(`${m.id} is queued behind an older message on its channel`);
      return act(m.id);
    }
    return hint("In this chapter the figure is for looking; use “explore from here” to play with it.");
  },
});

function hint(text) {
  const h = $("fault-hint");
  h.hidden = false;
  h.textContent = text;
  clearTimeout(hint.t);
  hint.t = setTimeout(() => { h.hidden = true; }, 3000);
}

function act(eventId) {
  return figure.deliver(eventId).then(() => mode && mode.kind === "try" && mode.check(figure.events(ch.step)))
    .catch((e) => hint(e.message));
}

function drawHead(model) {
  $("fig-step").textContent = `step ${model.step}`;
  $("fig-variant").textContent = model.protocol ? `${model.protocol.variant || ch.variant}` : ch.variant;
  const mon = model.monitors || {};
  const bad = mon.violations && mon.violations.length ? "safety violation" : mon.deadlock ? "deadlock" : mon.livelock ? "livelock" : "";
  $("fig-monitor").textContent = bad ? `● ${bad}` : "● monitors ok";
  $("fig-monitor").dataset.state = bad ? "bad" : "ok";
}

/** A try-it also lists the enabled events that are not drawn as messages (local actions). */
function drawEvents(model) {
  const box = $("fig-events");
  box.hidden = !(mode && mode.kind === "try");
  if (box.hidden) return;
  const list = $("fig-event-list");
  list.replaceChildren();
  for (const e of model.enabled.slice(0, 14)) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "ev";
    b.dataset.event = e.id;
    b.textContent = e.label ? `${e.id}: ${e.label}` : e.id;
    b.addEventListener("click", () => act(e.id));
    list.appendChild(b);
  }
}

function showChapter(i, push = true) {
  index = Math.max(0, Math.min(lesson.chapters.length - 1, i));
  ch = lesson.chapters[index];
  if (push && location.hash !== `#${ch.id}`) history.replaceState(null, "", `#${ch.id}`);
  const p = progress();
  p.seen[ch.id] = true;
  p.last = ch.id;
  save(p);
  document.body.dataset.chapter = ch.id;
  $("lesson-count").textContent = `chapter ${index + 1} of ${lesson.chapters.length}`;
  $("lesson-cite").textContent = ch.cite;
  $("ch-title").textContent = ch.title;
  const text = $("ch-text");
  text.replaceChildren();
  for (const para of ch.text) { const e = document.createElement("p"); e.textContent = para; text.appendChild(e); }
  const claims = $("ch-claims");
  claims.replaceChildren();
  for (const c of ch.claims) { const li = document.createElement("li"); const code = document.createElement("code"); code.textContent = c; li.appendChild(code); claims.appendChild(li); }
  $("btn-prev").disabled = index === 0;
  $("btn-next").textContent = index === lesson.chapters.length - 1 ? "Done ✓" : "Continue ▶";
  $("explore").href = ch.explore;
  drawToc();
  const task = $("ch-task");
  task.hidden = true;
  delete task.dataset.correct;
  delete task.dataset.solved;
  mode = null;
  if (ch.prediction) {
    const quiz = showPrediction(task, lesson.id, ch, p.answers[ch.id], {
      onAnswered: (r) => { const q = progress(); q.answers[ch.id] = r; save(q); drawToc(); },
      reveal: (r) => figure.load(r.scenario, r.variant, r.schedule, ch.highlight),
    });
    mode = { kind: "prediction", quiz };
  } else if (ch.try_it) {
    const check = showTry(task, lesson.id, ch, p.solved[ch.id], {
      onSolved: () => { const q = progress(); q.solved[ch.id] = true; save(q); drawToc(); },
    });
    mode = { kind: "try", check };
  }
  figure.load(ch.scenario, ch.variant, ch.schedule, ch.highlight).catch((e) => hint(e.message));
}

function drawToc() {
  const p = progress();
  const toc = $("lesson-toc");
  toc.replaceChildren();
  lesson.chapters.forEach((c, i) => {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = `#${c.id}`;
    a.textContent = c.title;
    if (i === index) li.className = "current";
    const mark = p.answers[c.id] ? (p.answers[c.id].correct ? " ✓" : " ✗") : p.solved[c.id] ? " ✓" : p.seen[c.id] ? " ·" : "";
    li.append(a, document.createTextNode(mark));
    toc.appendChild(li);
  });
}

$("btn-prev").addEventListener("click", () => showChapter(index - 1));
$("btn-next").addEventListener("click", () => {
  if (index === lesson.chapters.length - 1) {
    const p = progress(); p.finished = true; save(p);
    location.href = "/lessons";
    return;
  }
  showChapter(index + 1);
});
$("btn-undo").addEventListener("click", () => figure.load(ch.scenario, ch.variant, ch.schedule, ch.highlight).then(() => mode && mode.kind === "try" && mode.check([])));
document.addEventListener("keydown", (e) => {
  if (e.target.closest("input, select, textarea")) return;
  if (e.key === "ArrowRight") $("btn-next").click();
  if (e.key === "ArrowLeft" && index > 0) showChapter(index - 1);
});
window.addEventListener("hashchange", () => {
  const i = lesson.chapters.findIndex((c) => `#${c.id}` === location.hash);
  if (i >= 0 && i !== index) showChapter(i, false);
});

const start = lesson.chapters.findIndex((c) => `#${c.id}` === location.hash);
showChapter(start >= 0 ? start : 0);
window.allocscopeLesson = { figure, lesson, chapter: () => ch };
