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
  $("speed-out").textContent = fmtSpeed(sliderToSpeed(+speed.value));
  /** Reflect a speed chosen elsewhere (keyboard, tests, benchmarks) in the slider. */
  act.showSpeed = (s) => { speed.value = String(speedToSlider(s)); $("speed-out").textContent = fmtSpeed(s); };
  const sched = $("scheduler"), seed = $("seed");
  const pushSched = () => act.scheduler(sched.value, Math.max(0, parseInt(seed.value || "0", 10) || 0));
  sched.addEventListener("change", pushSched);
  seed.addEventListener("change", pushSched);
  $("variant").addEventListener("change", (e) => act.variant(e.target.value));

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
    const keys = { " ": () => act.togglePlay(), ArrowRight: () => act.step(), ArrowLeft: () => act.back(),
      Home: () => act.goto(0), End: () => act.goto(act.model().total), Escape: () => act.arm(null) };
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  });
  // A focused button would also act on the space bar's keyup: the shortcut has handled it.
  document.addEventListener("keyup", (e) => {
    if (e.key === " " && e.target && e.target.tagName === "BUTTON") e.preventDefault();
  });

  let lastMarkers = "";
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
    const sig = m.total + JSON.stringify(m.findings.map((f) => [f.step, f.kind]));
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
        b.addEventListener("click", () => act.goto(f.step));
        box.appendChild(b);
      }
    }
  };
}
