// Play / pause / step / back, speed, scheduler with seed, the timeline scrubber with markers
// where monitors fired, fault buttons, and the keyboard (space, →, ←, Home, End).

const $ = (id) => document.getElementById(id);

// The speed slider is logarithmic: 0..100 maps to 0.25..1000 steps per second.
export const sliderToSpeed = (v) => Math.round(0.25 * Math.pow(4000, v / 100) * 100) / 100;
export const speedToSlider = (s) => Math.round((100 * Math.log(s / 0.25)) / Math.log(4000));
const fmtSpeed = (s) => (s >= 10 ? `${Math.round(s)}/s` : `${s}/s`);

const FAULT_TIPS = {
  drop: "Drop: then click a message in flight to lose it",
  duplicate: "Duplicate: then click a message in flight to copy it",
  crash: "Crash: then click a process to stop it for good",
  corrupt: "Corrupt: then click a process and pick a variable to corrupt",
};

/**
 * Wire the controls. `act` holds the page's actions (step, back, play, ...); returns an
 * `update(model)` that reflects the model in the controls.
 */
export function setupControls(act) {
  const scrub = $("scrub");
  let scrubbing = false, scrubTimer = 0;

  $("btn-home").addEventListener("click", () => act.goto(0));
  $("btn-end").addEventListener("click", () => act.goto(act.model().total));
  $("btn-back").addEventListener("click", () => act.back());
  $("btn-step").addEventListener("click", () => act.step());
  $("btn-play").addEventListener("click", () => act.togglePlay());
  const speed = $("speed");
  speed.addEventListener("input", () => { $("speed-out").textContent = fmtSpeed(sliderToSpeed(+speed.value)); });
  speed.addEventListener("change", () => act.speed(sliderToSpeed(+speed.value)));
  // the server plays at 4 steps a second until told otherwise: the label says so from the start
  speed.value = String(speedToSlider(4));
  $("speed-out").textContent = fmtSpeed(4);
  /** Reflect a speed chosen elsewhere (keyboard, tests, benchmarks) in the slider. */
  act.showSpeed = (s) => { speed.value = String(speedToSlider(s)); $("speed-out").textContent = fmtSpeed(s); };
  const sched = $("scheduler"), seed = $("seed");
  const pushSched = () => act.scheduler(sched.value, Math.max(0, parseInt(seed.value || "0", 10) || 0));
  sched.addEventListener("change", pushSched);
  seed.addEventListener("change", pushSched);
  $("variant").addEventListener("change", (e) => {
    // a switch refused before it is asked (a room's follower): the menu goes back to the
    // figure's variant (it kept the one picked, over the class's figure)
    if (!act.variant(e.target.value)) e.target.value = (act.model().protocol || {}).variant || e.target.value;
  });

  scrub.addEventListener("input", () => {
    scrubbing = true;
    $("stepinfo").textContent = `step ${scrub.value} / ${scrub.max}`;
    clearTimeout(scrubTimer);
    scrubTimer = setTimeout(() => act.goto(+scrub.value), 60);
  });
  scrub.addEventListener("change", () => { clearTimeout(scrubTimer); scrubbing = false; act.goto(+scrub.value); });

  const faults = $("faults");
  const kinds = (act.model().protocol || act.page().protocol || {}).fault_kinds || [];
  for (const k of kinds) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "fault";
    b.dataset.fault = k;
    b.textContent = `⚡${k}`;
    b.title = FAULT_TIPS[k] || `Fault: ${k}`;
    b.addEventListener("click", () => act.arm(act.armed() === k ? null : k));
    faults.appendChild(b);
  }

  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) {
      if (!(t.id === "scrub" && (e.key === " "))) return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const help = $("help");
    if (help.open) {   // a modal: the page behind takes no key while the help is up
      if (e.key === "Escape" || e.key === "?") { e.preventDefault(); showHelp(false); }
      return;
    }
    const keys = { " ": () => act.togglePlay(), ArrowRight: () => act.step(), ArrowLeft: () => act.back(),
      Home: () => act.goto(0), End: () => act.goto(act.model().total), Escape: () => act.arm(null),
      "?": () => showHelp(true) };
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  });
  // A focused button would also act on the space bar's keyup: the shortcut has handled it.
  document.addEventListener("keyup", (e) => {
    if (e.key === " " && e.target && e.target.tagName === "BUTTON") e.preventDefault();
  });

  // The keyboard help is a modal <dialog>: a dimmed backdrop (readable on a projector), the page
  // behind inert; Esc, "close" or a click outside it closes it, and the focus goes back where it was.
  let helpOpener = null;
  function showHelp(on) {
    const help = $("help");
    if (on && !help.open) {
      helpOpener = document.activeElement;
      help.showModal();
      $("help-close").focus();
    } else if (!on && help.open) {
      help.close();
    }
  }
  $("help").addEventListener("close", () => {
    const back = helpOpener && helpOpener.isConnected && helpOpener !== document.body ? helpOpener : $("btn-help");
    helpOpener = null;
    back.focus();
  });
  $("help").addEventListener("click", (e) => {   // on the backdrop: the dialog is the target, outside its box
    if (e.target !== $("help")) return;
    const r = $("help").getBoundingClientRect();
    if (e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom) showHelp(false);
  });
  $("btn-help").addEventListener("click", () => showHelp(true));
  $("btn-compare").addEventListener("click", () => {
    const m = act.model(), p = m.protocol || {};
    const a = p.variant, b = (p.variants || []).find((v) => v !== a);
    if (!b) return;
    const sched = (act.trace ? act.trace() : []).map(encodeURIComponent).join(",");
    location.href = `/compare/${encodeURIComponent((m.scenario || {}).id || act.page().scenario)}?a=${a}&b=${b}&step=${m.step}` + (sched ? `&schedule=${sched}` : "");
  });
  $("help-close").addEventListener("click", () => showHelp(false));
  $("btn-present").addEventListener("click", () => {
    const q = new URLSearchParams(location.search);
    if (q.get("present") === "1") q.delete("present"); else q.set("present", "1");
    q.set("step", String(act.model().step));
    location.search = q.toString();
  });
  $("btn-present").setAttribute("aria-pressed", String(new URLSearchParams(location.search).get("present") === "1"));
  // present mode keeps the controls to one row; "more ▾" shows the rest (app.css) and hides them again
  $("btn-more").addEventListener("click", () => {
    const open = $("controls").classList.toggle("more");
    $("btn-more").setAttribute("aria-expanded", String(open));
    $("btn-more").textContent = open ? "less ▴" : "more ▾";
  });

  // present mode leaves the space-time strip out (app.css); this shows it and hides it again
  $("btn-spacetime").addEventListener("click", () => {
    const on = document.body.classList.toggle("spacetime-on");
    $("btn-spacetime").setAttribute("aria-pressed", String(on));
  });

  const pick = $("branch-pick");
  pick.addEventListener("change", () => act.branch(+pick.value));

  let lastMarkers = "", lastMarks = "", lastBranches = "";
  const drawMoments = setupMoments($("bookmarks"), act);
  return function update(m) {
    $("btn-play").textContent = m.playing ? "❚❚ pause" : "▶ play";
    $("btn-play").classList.toggle("on", m.playing);
    $("btn-back").disabled = m.step === 0;
    $("btn-home").disabled = m.step === 0;
    $("btn-end").disabled = m.step === m.total;
    if (!scrubbing) {
      scrub.max = String(m.total);
      scrub.value = String(m.step);
      $("stepinfo").textContent = `step ${m.step} / ${m.total}`;
    }
    if (document.activeElement !== sched) sched.value = m.scheduler.kind;
    if (document.activeElement !== seed && m.scheduler.seed != null) seed.value = String(m.scheduler.seed);
    seed.disabled = m.scheduler.kind !== "random";
    for (const b of faults.children) b.classList.toggle("armed", act.armed() === b.dataset.fault);
    // The server offers corruptions (f:corrupt:… events) only where the scenario allows them;
    // elsewhere ⚡corrupt could never do anything, so it is not shown (no dead buttons).
    const corrupt = faults.querySelector('[data-fault="corrupt"]');
    if (corrupt) {
      const offered = m.enabled.some((e) => String(e.id).startsWith("f:corrupt:"));
      if (corrupt.hidden === offered) corrupt.hidden = !offered;
      if (!offered && act.armed() === "corrupt") act.arm(null);
    }
    const sig = m.total + JSON.stringify(m.findings.map((f) => [f.step, f.kind])) + JSON.stringify([m.branch, m.branches]);
    if (sig !== lastMarkers) {
      lastMarkers = sig;
      const box = $("markers");
      box.replaceChildren();
      for (const f of m.findings) {
        const b = document.createElement("button");
        b.type = "button";
        b.className = `marker ${String(f.kind).replace(/[^a-z]/g, "")}`;
        b.style.left = `calc(${m.total ? (100 * f.step) / m.total : 0}% - 5px)`;
        b.title = `step ${f.step}: ${f.text}`;
        b.dataset.step = String(f.step);
        b.setAttribute("aria-label", b.title);
        b.addEventListener("click", () => act.goto(f.step));
        box.appendChild(b);
      }
      for (const br of forks(m)) {
        const b = document.createElement("button");
        b.type = "button";
        b.className = "marker fork";
        b.textContent = "⑂";
        b.style.left = `calc(${m.total ? (100 * Math.min(br.at, m.total)) / m.total : 0}% - 7px)`;
        b.title = `${br.label} parts from this run after step ${br.at}: click to switch to it`;
        b.setAttribute("aria-label", b.title);
        b.dataset.branch = String(br.id);
        b.addEventListener("click", () => act.branch(br.id));
        box.appendChild(b);
      }
    }
    const marks = moments(m);
    const msig = `${m.total}|${m.step}|${JSON.stringify(marks)}`;
    if (msig !== lastMarks) { lastMarks = msig; drawMoments(marks, m); }
    const bsig = JSON.stringify([m.branch, m.branches]);
    if (bsig !== lastBranches) {
      lastBranches = bsig;
      $("branchbar").hidden = (m.branches || []).length < 2;
      pick.replaceChildren();
      for (const br of m.branches || []) {
        const o = document.createElement("option");
        o.value = String(br.id);
        o.textContent = br.parent == null ? `${br.label} (${br.length} steps)`
          : `${br.label}: from step ${br.fork} (${br.length} steps)`;
        o.selected = br.id === m.branch;
        pick.appendChild(o);
      }
    }
  };
}

/** The branches that part from the current one, and at which step of it. */
function forks(m) {
  const cur = (m.branches || []).find((b) => b.id === m.branch);
  if (!cur) return [];
  const out = [];
  for (const b of m.branches) {
    if (b.id === cur.id) continue;
    if (b.parent === cur.id) out.push({ id: b.id, label: b.label, at: b.fork });
    else if (cur.parent === b.id) out.push({ id: b.id, label: b.label, at: cur.fork });
  }
  return out;
}

/**
 * How far this timeline is the variant's own run, the one the bookmarks describe: the server's
 * own_steps for the recorded run (another variant's schedule replayed here parts from it), and
 * no further than where the current branch, or a branch it came from, left the recorded run.
 */
export function ownSteps(m) {
  let limit = m.ownSteps == null ? Infinity : m.ownSteps;
  const byId = new Map((m.branches || []).map((b) => [b.id, b]));
  for (let b = byId.get(m.branch); b && b.parent != null; b = byId.get(b.parent)) limit = Math.min(limit, b.fork);
  return limit;
}

/** The scenario's figure moment and bookmarks for this variant, on this timeline. */
export function moments(m) {
  const sc = m.scenario || {};
  const variant = (m.protocol || {}).variant;
  const out = [];
  let open = sc.open_at;
  if (open && typeof open === "object") open = open[variant] ?? open.default;
  const fig = (sc.paper && sc.paper.figure) || "figure";
  const last = Math.min(m.total, ownSteps(m));   // a moment past it would describe another run
  for (const b of sc.bookmarks || []) {
    if (b.variants && !b.variants.includes(variant)) continue;
    if (b.step > last) continue;
    out.push({ step: b.step, label: b.label, figure: b.step === open });
  }
  if (open != null && open <= last && !out.some((x) => x.step === open)) {
    out.push({ step: open, label: fig.length < 30 ? fig : "the figure", figure: true });
  }
  return out.sort((a, b) => a.step - b.step);
}

/**
 * Labelled chips under the scrubber at their steps; close ones stack in rows. Returns
 * draw(marks, m). It reads no layout per step: the box's width comes from a ResizeObserver and
 * each chip's widths are measured once, when it is made (two forced layouts of the whole page per
 * step were about 2 ms of a 100-process step; issue 15).
 *
 * Present mode keeps them to one row (a second row took the figure's height at 1280x720): the
 * moment the timeline is at (or last passed) says its whole label; one that does not fit beside
 * it shows only its step ("17", "★ 15"), its label in its tooltip and for screen readers, and
 * says it whole again when the timeline gets there.
 */
function setupMoments(box, act) {
  let width = 0, last = null;
  const chips = new Map();   // "step|label|figure" -> its button, with its measured widths __w, __ws
  const oneRow = () => document.body.classList.contains("present") && width > 600;
  new ResizeObserver(() => {
    const w = box.clientWidth;
    if (!w || w === width) return;
    width = w;
    for (const b of chips.values()) b.__w = 0;    // a new font size (present, phone): measure again
    if (last) draw(...last);
  }).observe(box);

  const full = (k) => `${k.figure ? "★ " : ""}${k.step}: ${k.label}`;
  const short = (k) => `${k.figure ? "★ " : ""}${k.step}`;
  function measure(b, k) {
    const was = b.textContent;
    b.textContent = short(k);
    b.__ws = b.scrollWidth + 4;
    b.textContent = full(k);
    b.__w = b.scrollWidth + 4;
    if (was !== b.textContent) b.textContent = was;
  }

  /**
   * One row, in step order: the moment at (or last before) the current step whole, the others
   * by their step only, pushed right then left until none overlaps; then, nearest the current
   * one first, each says its whole label where that still fits before the next. False when even
   * the steps alone do not fit in one row (a phone-width timeline).
   */
  function fitsOneRow(marks, made, m, place) {
    let focus = marks.findLastIndex((k) => k.step <= m.step);
    if (focus < 0) focus = 0;
    const w = marks.map((_, i) => Math.min(i === focus ? made[i].__w : made[i].__ws, width));
    const left = marks.map((k, i) => Math.max(0, Math.min(width - w[i], (m.total ? (width * k.step) / m.total : 0) - 8)));
    for (let i = 1; i < left.length; i++) left[i] = Math.max(left[i], left[i - 1] + w[i - 1] + 4);
    for (let i = left.length - 1; i >= 0; i--) {
      left[i] = Math.min(left[i], (i + 1 < left.length ? left[i + 1] - 4 : width) - w[i]);
    }
    if (left[0] < 0) return false;
    const whole = marks.map((_, i) => i === focus);
    const order = marks.map((_, i) => i).sort((a, b) => Math.abs(a - focus) - Math.abs(b - focus));
    for (const i of order) {
      const end = i + 1 < left.length ? left[i + 1] - 4 : width;
      if (!whole[i] && left[i] + Math.min(made[i].__w, width) <= end) { whole[i] = true; w[i] = Math.min(made[i].__w, width); }
    }
    marks.forEach((k, i) => place(i, left[i], w[i], whole[i] ? full(k) : short(k), 0));
    return true;
  }

  function draw(marks, m) {
    last = [marks, m];
    box.hidden = !marks.length;
    const keys = marks.map((k) => `${k.step}|${k.label}|${k.figure}`);
    for (const [key, b] of chips) if (!keys.includes(key)) { b.remove(); chips.delete(key); }
    if (!marks.length) return;
    if (!width) width = box.clientWidth || 800;
    const made = marks.map((k, i) => {
      let b = chips.get(keys[i]);
      if (!b) {
        b = document.createElement("button");
        b.type = "button";
        b.dataset.step = String(k.step);
        b.textContent = full(k);
        b.title = `step ${k.step}: ${k.label}${k.figure ? " (the paper's figure)" : ""}`;
        b.setAttribute("aria-label", b.title);
        b.addEventListener("click", () => act.goto(k.step));
        chips.set(keys[i], b);
      }
      if (box.children[i] !== b) box.insertBefore(b, box.children[i] || null);
      const cls = `moment${k.figure ? " figure" : ""}${k.step === m.step ? " here" : ""}`;
      if (b.className !== cls) b.className = cls;
      if (!b.__w) measure(b, k);
      return b;
    });
    const at = (k, w) => Math.max(0, Math.min(width - w, (m.total ? (width * k.step) / m.total : 0) - 8));
    const free = (row, l, w) => row.every(([a, z]) => l >= z + 4 || l + w <= a - 4);
    const rows = [[]];
    const place = (i, l, w, text, row) => {
      rows[row].push([l, l + w]);
      const b = made[i];
      if (b.textContent !== text) b.textContent = text;
      const ls = `${l}px`, t = `${row * 1.75}em`;
      if (b.style.left !== ls) b.style.left = ls;
      if (b.style.top !== t) b.style.top = t;
    };
    if (!(oneRow() && fitsOneRow(marks, made, m, place))) {
      rows.push([], []);
      marks.forEach((k, i) => {
        const w = Math.min(made[i].__w, width);
        const left = at(k, w);
        let row = rows.findIndex((r) => free(r, left, w));
        // a narrow timeline (a phone) may need a fourth row: never one chip over another
        if (row < 0) { rows.push([]); row = rows.length - 1; }
        place(i, left, w, full(k), row);
      });
    }
    const h = `${rows.filter((r) => r.length).length * 1.75}em`;
    if (box.style.height !== h) box.style.height = h;
  }
  return draw;
}
