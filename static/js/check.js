// "Check this scenario": the explorer runs on the server in a worker process (POST /api/check),
// this module shows its progress, lets the user cancel it, and on a finding offers to replay the
// counterexample: the schedule is loaded into the timeline at step 0, ready to play.
// main.js calls `startCheck({model, page, socket, toast})` once. Text only via textContent.

const $ = (id) => document.getElementById(id);
const MAX_STATES = 200000;
const POLL_MS = 400;

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props);
  e.append(...children);
  return e;
}

const VERDICT = {
  ok: "no violation, no deadlock, no livelock in any schedule",
  violation: "a safety violation is reachable",
  deadlock: "a deadlock is reachable",
  livelock: "a livelock is reachable (a fair cycle in which someone waits forever)",
  limit: "state limit reached before the search ended: nothing found so far, which proves nothing",
};

export function startCheck({ model, page, socket, toast }) {
  const bar = $("controls");
  if (!bar || $("check-tools") || document.body.classList.contains("embed")) return;
  const panel = el("div", { id: "check-panel", className: "check-panel", hidden: true });
  panel.setAttribute("role", "status");
  const button = el("button", {
    type: "button", id: "btn-check", textContent: "check",
    title: `Explore every schedule of this scenario (up to ${MAX_STATES.toLocaleString()} states) ` +
           "for a violation, a deadlock or a livelock, in a separate worker on the server",
  });
  bar.append(el("div", { id: "check-tools", className: "btns check-tools" }, button));
  bar.after(panel);

  let job = null;
  let timer = null;
  // what was checked: the counterexample is a run of that scenario under that variant, whatever
  // the menu shows by the time it is replayed (it was loaded under the menu's variant then)
  let checked = {};

  const scenarioRef = () => (typeof page.scenario === "string" && page.scenario !== "-"
    ? page.scenario : model.scenario);
  const variant = () => (model.protocol || {}).variant || page.variant || undefined;

  function show(...children) {
    panel.replaceChildren(...children);
    panel.hidden = false;
  }

  function stop() {
    clearTimeout(timer);
    timer = null;
    job = null;
    button.disabled = false;
  }

  async function cancel() {
    if (!job) return;
    await fetch(`/api/check/${job}`, { method: "DELETE" }).catch(() => {});
  }

  let started = 0;   // when the button was pressed (the client's clock: only for "starting… N s")

  function progressView(p) {
    const states = p.states || 0;
    // The worker process takes seconds to start and reports first after 2,000 states: until
    // then say so ("0 states, depth 0, 0 s" read as a search that found nothing).
    if (!states) {
      const waited = Math.round((performance.now() - started) / 1000);
      return [
        el("span", { className: "check-label check-starting",
                     textContent: `starting the explorer (a worker process on the server)… ${waited} s ` }),
        el("button", { type: "button", textContent: "cancel", title: "Stop the search",
                       onclick: cancel }),
      ];
    }
    const bar = el("progress", { max: MAX_STATES, value: states, id: "check-progress" });
    bar.title = `${states.toLocaleString()} of at most ${MAX_STATES.toLocaleString()} states`;
    return [
      el("span", { className: "check-label", textContent: "exploring every schedule… " }),
      bar,
      el("span", { className: "check-count", textContent:
        ` ${states.toLocaleString()} states, depth ${p.depth ?? 0}, ${Math.round(p.seconds ?? 0)} s ` }),
      el("button", { type: "button", textContent: "cancel", title: "Stop the search",
                     onclick: cancel }),
    ];
  }

  function resultView(body) {
    const r = body.result;
    const close = el("button", { type: "button", textContent: "close", title: "Hide this panel",
                                 onclick: () => { panel.hidden = true; } });
    if (body.state === "failed") {
      return [el("strong", { textContent: "check failed: " }), body.error || "unknown error", " ", close];
    }
    if (body.state === "cancelled" || (r && r.stopped === "cancelled")) {
      return [el("span", { textContent: `check cancelled after ${(r?.states ?? 0).toLocaleString()} states.` }), " ", close];
    }
    const head = el("strong", { className: `check-${r.result}`, textContent: `${r.result}: ` });
    // Partial-order reduction (coterie's default) and symmetry skip the livelock search, and
    // with partial-order reduction a counterexample is shortest only among the interleavings
    // explored: say so rather than over-claim.
    const red = r.reductions || {};
    const verdict = r.result === "ok" && red.livelock_checked === false
      ? "no violation and no deadlock in any schedule (livelocks were not searched: see docs/explorer.md)"
      : VERDICT[r.result] || r.result;
    const parts = [head, `${verdict} — ${r.states.toLocaleString()} states in ${r.seconds} s.`];
    const schedule = r.counterexample && r.counterexample.schedule;
    if (schedule) {
      parts.push(red.partial_order ? ` Schedule: ${schedule.length} steps. `
                                   : ` Shortest schedule: ${schedule.length} steps. `);
      parts.push(el("button", {
        type: "button", id: "btn-replay-cex", textContent: "replay the counterexample",
        title: "Load this schedule into the timeline at step 0; press play or → to watch it",
        onclick: () => {
          const cmd = { op: "load", scenario: checked.scenario, schedule, step: 0 };
          if (checked.variant) cmd.variant = checked.variant;
          socket.send(cmd).then(() => {
            // say what is on the screen now, where the button was (a toast over the figure hid
            // its bottom node), for 3.5 s; then the chip by the step counter keeps saying it
            const what = `${VERDICT[r.result] || r.result}`.split(":")[0];
            const said = el("span", { id: "cex-notice", textContent:
              `watching the counterexample found by check (${schedule.length} steps): ${what}; press play or →` });
            show(said);
            setTimeout(() => { if (said.isConnected) panel.hidden = true; }, 3500);
            let chip = document.getElementById("cex-chip");
            if (!chip) {
              chip = document.createElement("span");
              chip.id = "cex-chip";
              chip.className = "chip cex";
              const info = document.getElementById("stepinfo");
              if (info) info.after(chip);
            }
            chip.textContent = `counterexample (${r.result}, ${schedule.length} steps)`;
            chip.title = "The timeline holds the schedule check found; reload the page for the scenario's own";
          }).catch((e) => toast(e.message));
        },
      }));
    }
    parts.push(" ", close);
    return parts;
  }

  async function poll() {
    if (!job) return;
    let body;
    try {
      const r = await fetch(`/api/check/${job}`);
      body = await r.json();
      if (!r.ok) throw new Error(body.detail || `check: HTTP ${r.status}`);
    } catch (e) {
      show(el("span", { textContent: e.message }));
      stop();
      return;
    }
    if (body.state === "running") {
      show(...progressView(body.progress || {}));
      timer = setTimeout(poll, POLL_MS);
    } else {
      show(...resultView(body));
      stop();
    }
  }

  button.addEventListener("click", async () => {
    if (job) return;
    button.disabled = true;
    started = performance.now();
    show(el("span", { className: "check-starting", textContent: "starting the explorer…" }));
    const body = { scenario: scenarioRef(), max_states: MAX_STATES };
    if (variant()) body.variant = variant();
    checked = { scenario: body.scenario, variant: body.variant };
    try {
      const r = await fetch("/api/check", { method: "POST", body: JSON.stringify(body),
                                            headers: { "Content-Type": "application/json" } });
      const out = await r.json();
      if (!r.ok) throw new Error(out.detail || `check: HTTP ${r.status}`);
      job = out.job;
      poll();
    } catch (e) {
      show(el("span", { textContent: e.message }));
      stop();
    }
  });
}
