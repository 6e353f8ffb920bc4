// A classroom room on the viewer page (/r/{code} for students, /r/{code}/teach for the teacher).
// main.js calls startRoom(ctx) instead of loading a scenario: the page's socket already points at
// /ws/room/{code}. The teacher's controls drive the room as on the viewer; a student follows
// (the controls are locked, clicks on the figure answer the open question), can fork to explore
// alone and rejoin in one click. Room text is set with textContent only.

import { chartBars } from "./room_chart.js";

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function button(label, title, onClick, cls = "") {
  const b = el("button", cls, label);
  b.type = "button";
  b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

const KEY_STORE = (code) => `allocscope-room-key-${code}`;

/** The teacher's key: from the #key= fragment (then kept for this tab and removed from the URL). */
function teacherKey(code) {
  const m = /[#&]key=([^&]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(KEY_STORE(code), decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem(KEY_STORE(code));
}

export function startRoom(ctx) {
  const { room, socket, act, ui, model, toast, render, handlers } = ctx;
  const state = { info: null, role: room.role, mode: room.role === "teacher" ? "drive" : "follow" };
  const secret = room.role === "teacher" ? teacherKey(room.code) : null;
  document.body.classList.add("room-page", `room-${room.role}`);

  // ---------------------------------------------------------------- the bar
  const bar = el("section", "room-bar");
  bar.id = "room-bar";
  bar.setAttribute("aria-label", "classroom room");
  const codeBox = el("div", "room-code");
  codeBox.append(el("span", "room-label", "room"), el("strong", "room-code-text", room.code));
  const joinText = el("span", "room-join", room.join_url.replace(/^https?:\/\//, ""));
  joinText.title = "Students open this address (or scan the QR code) to follow";
  const qr = el("img", "room-qr");
  qr.src = room.qr;
  qr.alt = `QR code of the join link for room ${room.code}`;
  qr.title = "Click to enlarge the QR code";
  qr.addEventListener("click", () => document.body.classList.toggle("room-qr-big"));
  const count = el("span", "room-count", "0 students");
  count.id = "room-count";
  const modeText = el("span", "room-mode", "");
  modeText.id = "room-mode";
  const tools = el("div", "room-tools");
  tools.id = "room-tools";
  const notice = el("div", "room-notice");
  notice.id = "room-notice";
  notice.hidden = true;
  notice.setAttribute("role", "status");
  bar.append(codeBox, joinText, qr, count, modeText, tools);
  const anchor = $("controls");
  anchor.before(bar);
  bar.after(notice);
  const card = el("div", "room-card");
  card.id = "room-card";
  card.hidden = true;
  $("side").prepend(card);   // beside the figure, never over it

  const send = (cmd) => socket.send(cmd).catch((e) => { toast(e.message); throw e; });
  const quiet = (p) => p.catch(() => {});

  // ---------------------------------------------------------------- tools
  if (room.role === "teacher") {
    const ask = el("select", "room-ask");
    ask.id = "room-ask";
    ask.title = "Ask the class a question about what happens next";
    for (const [v, t] of [["", "ask the class…"], ["next-delivery", "which message is delivered next?"],
                          ["next-cs", "who enters a critical section next?"], ["deadlock", "will it deadlock from here?"]]) {
      const o = el("option", "", t);
      o.value = v;
      ask.append(o);
    }
    ask.addEventListener("change", () => {
      if (ask.value) quiet(send({ op: "ask", kind: ask.value }));
      ask.value = "";
    });
    // a room that follows a lesson: the chapters, and the chapter's own prediction as a round
    const prev = button("◀ chapter", "The lesson's previous chapter (the class follows)", () => goChapter(-1), "room-ch-prev");
    const next = button("chapter ▶", "The lesson's next chapter (the class follows)", () => goChapter(1), "room-ch-next");
    const lessonQ = button("ask the chapter's question", "Run this chapter's prediction as a round", () => quiet(send({ op: "ask", kind: "lesson" })), "room-ch-ask");
    for (const b of [prev, next, lessonQ]) b.classList.add("room-lesson-tool");
    tools.append(prev, next, lessonQ);
    tools.append(ask,
      button("reveal", "Show the class the tally (and the answer once the simulator has given it)", () => quiet(send({ op: "reveal" })), "room-reveal"),
      button("close", "Close the question", () => quiet(send({ op: "close_round" })), "room-close"),
      button("experiment", "Ask every student to run from here with their own random seed; the outcomes make a histogram", () => {
        const open = !(state.info && state.info.experiment && state.info.experiment.open);
        quiet(send({ op: "experiment", open }));
      }, "room-exp"));
  } else {
    tools.append(
      button("explore on my own", "Leave follow mode: your own copy of the current state, to step as you like", () => fork(), "room-fork"),
      button("back to the class", "Drop your copy and follow the teacher again", () => rejoin(), "room-rejoin"));
  }

  function goChapter(d) {
    const i = state.info || {};
    const n = Math.max(0, Math.min((i.chapters || 1) - 1, (i.chapter ?? 0) + d));
    if (n !== i.chapter) quiet(send({ op: "chapter", chapter: n }));
  }

  function fork() {
    const schedule = model.history.filter((r) => r.step <= model.total).map((r) => r.event);
    const cmd = { op: "fork" };
    // the browser's copy of the timeline, when it is complete, so the fork is exactly what is shown
    if (schedule.length === model.total) { cmd.schedule = schedule; cmd.step = model.step; }
    return quiet(send(cmd));
  }
  const rejoin = () => quiet(send({ op: "rejoin" }));

  // ---------------------------------------------------------------- following: lock the controls
  const following = () => state.role === "student" && state.mode === "follow";
  const refuse = () => toast("You are following the class. Press “explore on my own” to try things yourself.", "notice");
  for (const name of ["step", "back", "goto", "togglePlay", "pause", "speed", "scheduler", "variant", "arm", "branch"]) {
    const orig = act[name];
    act[name] = (...args) => {
      if (following()) { if (name !== "arm" || args[0]) refuse(); return null; }
      return orig(...args);
    };
  }
  const deliver = act.deliver;
  act.deliver = (id) => {
    if (!following()) return deliver(id);
    const r = state.info && state.info.round;
    if (r && !r.revealed && (r.kind === "next-delivery" || offered(r, id))) return answer(id);
    refuse();
    return null;
  };
  if (room.role === "teacher") {
    // the variant menu reloads the room's scenario with that variant instead of leaving the page
    act.variant = (v) => quiet(send({ op: "load", scenario: model.scenario, variant: v }));
  }
  const select = handlers.selectNode;
  handlers.selectNode = (id) => {
    const r = state.info && state.info.round;
    if (following() && r && !r.revealed && (r.kind === "next-cs" || offered(r, id))) { answer(id); return; }
    select(id);
    if (room.role === "teacher" && !ui.armed) quiet(send({ op: "select", proc: ui.selected }));
  };

  /** Whether a round offers this process or message as an answer (a lesson's prediction). */
  const offered = (r, id) => r.options.some((o) => o.id === id);

  function answer(choice) {
    return quiet(send({ op: "answer", choice }));
  }

  // ---------------------------------------------------------------- room messages
  const onFrame = socket.hooks.onFrame;
  socket.hooks.onFrame = (msg, paired) => {
    if (msg.type === "room") return onRoom(msg);
    return onFrame(msg, paired);
  };
  socket.hooks.onReconnect = () => hello();

  function onRoom(info) {
    state.info = info;
    state.role = info.role || state.role;
    if (info.mode) state.mode = info.mode;
    ui.follow = following();
    document.body.classList.toggle("room-follow", following());
    document.body.classList.toggle("room-forked", state.role === "student" && state.mode === "fork");
    document.body.dataset.roomMode = state.mode;
    document.body.dataset.roomStudents = String(info.students ?? 0);
    count.textContent = `${info.students ?? 0} student${info.students === 1 ? "" : "s"}`;
    modeText.textContent = state.role === "teacher" ? "you drive: the class follows"
      : state.mode === "fork" ? "exploring on your own" : (info.teacher ? "following the teacher" : "following (teacher away)");
    if (info.chapter !== null && info.chapter !== undefined) {
      modeText.textContent += ` · chapter ${info.chapter + 1}${info.chapter_title ? `: ${info.chapter_title}` : ""}`;
    }
    // the teacher's play speed on every follower's slider (and on the teacher's after a reload)
    if (info.speed && act.showSpeed && (following() || (state.role === "teacher" && !state.speedShown))) {
      act.showSpeed(info.speed);
      state.speedShown = true;
    }
    document.body.dataset.roomChapter = info.chapter ?? "";
    document.body.classList.toggle("room-lesson", (info.chapters || 0) > 0);
    if (following() && info.selected !== undefined && ui.selected !== info.selected) {
      ui.selected = info.selected;
      ui.forceAll = true;
      render();
    }
    const text = info.notice || "";
    notice.hidden = !text;
    notice.textContent = text;
    notice.dataset.kind = info.link === "down" ? "error" : "notice";
    document.body.dataset.roomLink = info.link || "up";
    if (info.link !== "down" && text) setTimeout(() => { if (notice.textContent === text) notice.hidden = true; }, 5000);
    drawCard(info);
  }

  function drawCard(info) {
    card.replaceChildren();
    const r = info.round, x = info.experiment;
    const words = (info.chapter_text || []).length > 0;
    card.hidden = !r && !x && !words;
    if (r) {
      const box = el("div", "room-round");
      box.dataset.round = String(r.id);
      box.append(el("h3", "", r.question));
      const tally = r.tally || null;
      const right = r.answer === null || r.answer === undefined ? [] : [].concat(r.answer);
      if (tally) {
        box.append(chartBars(r.options.map((o) => ({ id: o.id, label: o.label, n: tally[o.id] || 0,
          mark: right.includes(o.id), mine: o.id === info.my_answer }))));
      }
      const opts = el("div", "room-options");
      for (const o of r.options) {
        const b = button(o.label, `answer: ${o.label}`, () => answer(o.id), "room-option");
        b.dataset.choice = o.id;
        if (o.id === info.my_answer) b.classList.add("mine");
        if (state.role === "teacher" || r.revealed || state.mode !== "follow") b.disabled = true;
        opts.append(b);
      }
      if (state.role !== "teacher" && !r.revealed) box.append(opts);
      const foot = el("p", "room-foot",
        `${r.answers ?? 0} answer${r.answers === 1 ? "" : "s"}` +
        (r.revealed ? " · revealed" : state.role === "teacher" ? " · students do not see the tally yet" : " · click an answer, or on the figure") +
        (right.length ? ` · the simulator says: ${right.map((a) => (r.options.find((o) => o.id === a) || {}).label || a).join(" or ")}` : ""));
      box.append(foot);
      if (r.explain && (r.revealed || state.role === "teacher")) box.append(el("p", "room-explain", r.explain));
      card.append(box);
    }
    if (x) {
      const box = el("div", "room-exp-box");
      box.append(el("h3", "", x.open ? `Class experiment from step ${x.from_step}: run it with your own seed` : "Class experiment (closed)"));
      const h = x.histogram;
      if (h) {
        box.append(chartBars(Object.entries(h.counts).map(([k, n]) => ({ id: k, label: k, n })), { compact: true }));
        box.append(el("p", "room-foot", `${h.runs} run${h.runs === 1 ? "" : "s"}` +
          (h.steps ? ` · steps: min ${h.steps.min}, median ${h.steps.median}, max ${h.steps.max}` : "")));
      }
      if (state.role === "student" && x.open) {
        const mine = info.my_run;
        if (mine && !mine.running) box.append(el("p", "room-mine", `your run: ${mine.outcome} after ${mine.steps} steps${mine.seed !== null ? ` (seed ${mine.seed})` : ""}`));
        else if (mine) box.append(el("p", "room-mine", `running with seed ${mine.seed}…`));
        else {
          const row = el("div", "room-options");
          row.append(button("run with my seed", "The room's state, then the random scheduler with a seed of your own", () => quiet(send({ op: "run" })), "room-run"));
          if (state.mode === "fork") row.append(button("submit my own run", "Send the outcome of your own exploration", () => quiet(send({ op: "submit" })), "room-submit"));
          box.append(row);
        }
      }
      card.append(box);
    }
    if (words) {   // the chapter's words under the question, which matters more right now
      const box = el("div", "room-chapter");
      box.append(el("h3", "", `Chapter ${info.chapter + 1}${info.chapters ? ` of ${info.chapters}` : ""}: ${info.chapter_title}`));
      for (const p of info.chapter_text) box.append(el("p", "", p));
      if (info.chapter_cite) box.append(el("p", "room-foot", info.chapter_cite));
      card.append(box);
    }
  }

  // ---------------------------------------------------------------- hello
  function hello() {
    const cmd = { op: "hello", role: room.role };
    if (room.role === "teacher") {
      if (!secret) { toast("This page needs the teacher key: open the teacher link you were given."); return null; }
      cmd.secret = secret;
    }
    return quiet(send(cmd));
  }
  hello();

  // A documented hook for the lesson player and others (docs/websocket.md, "Rooms").
  const api = {
    code: room.code,
    role: () => state.role,
    mode: () => state.mode,
    info: () => state.info,
    send,
    chapter: (chapter, title = "", lesson = null) => send({ op: "chapter", chapter, title, lesson }),
    ask: (kind, extra = {}) => send({ op: "ask", kind, ...extra }),
    fork, rejoin,
  };
  window.allocscope.room = api;
  return api;
}
