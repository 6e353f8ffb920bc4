// The ⚡corrupt picker: after arming "corrupt" and clicking a process, a small panel next to that
// process lists the corruptions the server offers for it, one button each. The choices are
// never typed: they are exactly the enabled fault events `f:corrupt:<pid>:<var>=<value>` of the
// current frame (protocols/kernel/sim.py `_fault_events`), so whatever is shown is accepted.

const PREFIX = "f:corrupt:";

/** The node's corruptions in the current frame: [{id, variable, value}], in the server's order. */
export function corruptionsOf(model, pid) {
  const head = `${PREFIX}${pid}:`;
  const out = [];
  for (const e of model.enabled) {
    if (typeof e.id !== "string" || !e.id.startsWith(head)) continue;
    const assign = e.id.slice(head.length);
    const eq = assign.indexOf("=");
    out.push({ id: e.id, variable: assign.slice(0, eq), value: assign.slice(eq + 1) });
  }
  return out;
}

/** Does this frame offer any corruption at all (the scenario's faults include "corrupt")? */
const anyCorruption = (model) => model.enabled.some((e) => String(e.id).startsWith(PREFIX));

// Values arrive as Python writes them; a class reads ⊥, true and {0} more easily than None,
// True and (0,). The sent id keeps the server's spelling.
const WORDS = { None: "⊥", True: "true", False: "false", "()": "∅" };
export function friendlyValue(v) {
  if (v in WORDS) return WORDS[v];
  const tuple = /^\((.*?),?\)$/.exec(v);
  return tuple ? `{${tuple[1]}}` : v;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Place the panel beside the node (right of it when there is room, else left), inside `wrap`. */
function place(box, wrap, nodeEl) {
  const w = wrap.getBoundingClientRect();
  const n = nodeEl ? nodeEl.getBoundingClientRect() : { left: w.left + w.width / 2, right: w.left + w.width / 2, top: w.top + 20, bottom: w.top + 20 };
  const bw = box.offsetWidth, bh = box.offsetHeight, gap = 14;
  let x = n.right - w.left + gap, side = "right";
  if (x + bw > w.width - 6) { x = n.left - w.left - gap - bw; side = "left"; }
  x = Math.max(6, Math.min(x, w.width - bw - 6));
  const midY = (n.top + n.bottom) / 2 - w.top;
  const y = Math.max(6, Math.min(midY - bh / 2, w.height - bh - 6));
  box.style.left = `${Math.round(x)}px`;
  box.style.top = `${Math.round(y)}px`;
  // A pointer on the panel's edge, level with the node, ties the panel to its process.
  box.dataset.side = side;
  box.style.setProperty("--arrow-y", `${Math.round(Math.max(14, Math.min(midY - y, bh - 14)))}px`);
}

/**
 * Wire the picker in `box` (a hidden element inside the view's wrapper). `pick(id)` sends the
 * fault, `cancel()` disarms. Returns `update(model, pid)`: pid null closes the panel; the list
 * follows every frame, because each corruption's value depends on the current state.
 */
export function setupCorruptPicker(box, { pick, cancel }) {
  let lastSig = null;
  return function update(model, pid) {
    if (!pid) {
      if (!box.hidden) { box.hidden = true; lastSig = null; }
      return;
    }
    const items = corruptionsOf(model, pid);
    const sig = pid + JSON.stringify(items.map((c) => c.id));
    const opening = box.hidden;
    if (sig !== lastSig) {
      lastSig = sig;
      render(box, model, pid, items, pick, cancel);
    }
    box.hidden = false;
    place(box, box.parentElement, document.querySelector(`#view .layer.nodes > g[data-id="${CSS.escape(pid)}"]`));
    // Focus the first choice so Enter/Tab work at once; Escape is the page's "disarm" key.
    if (opening) (box.querySelector("button.corrupt-choice") || box.querySelector("button")).focus({ preventScroll: true });
  };
}

function render(box, model, pid, items, pick, cancel) {
  box.replaceChildren();
  box.appendChild(el("h2", "corrupt-title", `Corrupt a variable of ${pid}`));
  if (items.length) {
    box.appendChild(el("p", "corrupt-sub", "A transient fault: the variable jumps to this value, and the protocol has to recover."));
    // Two columns when long: the whole list and cancel fit at 1280×720 without scrolling.
    const list = el("ul", items.length > 5 ? "corrupt-list two" : "corrupt-list");
    for (const c of items) {
      const li = el("li");
      const b = el("button", "corrupt-choice");
      b.type = "button";
      b.dataset.event = c.id;
      b.title = `Set ${pid}.${c.variable} to ${friendlyValue(c.value)} now (event ${c.id})`;
      b.appendChild(el("span", "corrupt-var", `${pid}.${c.variable}`));
      b.appendChild(el("span", "corrupt-op", " := "));
      b.appendChild(el("span", "corrupt-val", friendlyValue(c.value)));
      b.addEventListener("click", () => pick(c.id));
      li.appendChild(b);
      list.appendChild(li);
    }
    box.appendChild(list);
  } else {
    box.appendChild(el("p", "corrupt-none", anyCorruption(model)
      ? `${pid} has no variable that can be corrupted now.`
      : "This scenario does not allow corrupting variables (its faults do not include corrupt)."));
  }
  const cancelBtn = el("button", "corrupt-cancel", items.length ? "cancel (Esc)" : "close (Esc)");
  cancelBtn.type = "button";
  cancelBtn.title = "Close without corrupting anything (Esc)";
  cancelBtn.addEventListener("click", cancel);
  box.appendChild(cancelBtn);
}
