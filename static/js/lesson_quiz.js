// Predictions and try-its: the student answers on the figure (or with a choice button), the
// server runs the simulator and says whether it was right; a try-it's goal is checked after
// every event the student makes happen. Text goes in with textContent only.

const post = (url, body) => fetch(url, {
  method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
}).then(async (r) => {
  const data = await r.json();
  if (!r.ok) throw new Error(data.detail || "request failed");
  return data;
});

function el(tag, cls, text, parent) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

/** Draws the prediction box; returns the handler of an answer given on the figure. */
export function showPrediction(box, lessonId, ch, saved, { onAnswered, reveal }) {
  box.replaceChildren();
  box.hidden = false;
  box.dataset.kind = "prediction";
  el("h2", "task-title", "Predict", box);
  el("p", "question", ch.prediction.question, box);
  const how = { node: "Answer by clicking a process on the figure.",
                message: "Answer by clicking a message in flight on the figure.",
                choice: "" }[ch.prediction.answer_on];
  if (how) el("p", "how", how, box);
  const result = el("div", "result", undefined, box);
  let done = false;
  const answer = (a) => {
    if (done) return Promise.resolve();
    return post(`/api/lessons/${lessonId}/${ch.id}/answer`, { answer: a }).then((r) => {
      done = true;
      show(r);
      onAnswered(r);
    }).catch((e) => { el("p", "error", e.message, result); });
  };
  const show = (r) => {
    result.replaceChildren();
    box.dataset.correct = String(r.correct);
    el("p", r.correct ? "verdict right" : "verdict wrong",
      r.correct ? `Right: ${r.answer}.` : `Not quite: you said ${r.answer}; the simulator says ${r.right.join(" or ")}.`, result);
    el("p", "explain", r.explain, result);
    const b = el("button", "reveal", "show it on the figure ▶", result);
    b.type = "button";
    b.addEventListener("click", () => reveal(r.reveal));
    // the buttons stay, disabled, with the pick and the simulator's answer marked on them (all
    // three greyed alike left the class guessing which one had been chosen)
    for (const c of box.querySelectorAll(".choice")) {
      c.disabled = true;
      const mine = c.dataset.choice === String(r.answer), right = (r.right || []).map(String).includes(c.dataset.choice);
      c.classList.toggle("chosen", mine);
      c.classList.toggle("right", right);
      if (right) c.textContent = `✓ ${c.dataset.choice}`;
      if (mine && !right) c.textContent = `✗ ${c.dataset.choice}`;
    }
  };
  if (ch.prediction.answer_on === "choice") {
    const row = el("div", "choices", undefined, box);
    box.insertBefore(row, result);
    for (const c of ch.prediction.choices) {
      const b = el("button", "choice", c, row);
      b.type = "button";
      b.dataset.choice = c;
      b.addEventListener("click", () => answer(c));
    }
  }
  if (saved) { done = true; show(saved); }
  return { answer, kind: ch.prediction.answer_on, done: () => done };
}

/** Draws the try-it box; returns the function to call after each event the student makes. */
export function showTry(box, lessonId, ch, saved, { onSolved }) {
  box.replaceChildren();
  box.hidden = false;
  box.dataset.kind = "try";
  el("h2", "task-title", "Try it", box);
  el("p", "question", ch.try_it.task, box);
  if (ch.try_it.hint) el("p", "how", `Hint: ${ch.try_it.hint}`, box);
  const status = el("p", "try-status", saved ? "Solved before — try it again if you like." : "Click messages on the figure, or the events below it.", box);
  // Each event asks the server anew, and a busy server can answer out of order: only the
  // answer to the latest question is shown (an older "not yet" once came after "done" and
  // left a solved task looking unsolved).
  let asked = 0;
  return (events) => {
    const mine = ++asked;
    return post(`/api/lessons/${lessonId}/${ch.id}/try`, { events }).then((r) => {
      if (mine !== asked) return;
      box.dataset.solved = String(r.holds);
      status.className = `try-status ${r.holds ? "right" : ""}`;
      status.textContent = r.holds
        ? `Done in ${events.length} event${events.length === 1 ? "" : "s"}: the simulator confirms the goal holds.`
        : `${events.length} event${events.length === 1 ? "" : "s"} so far: not yet.`;
      if (r.holds) onSolved();
    }).catch((e) => {
      if (mine !== asked) return;
      status.className = "try-status error";
      status.textContent = e.message;
    });
  };
}
