// The menu of a process or a message (issue 17, "beyond the anchors"): a process offers its
// faults (crash, corrupt…) and a message deliver / drop / duplicate, one click each, without
// arming a fault first. A click opens it where the scenario itself offers faults for that
// target (its enabled list has them); elsewhere a click does what it always did (a process is
// inspected, a message delivered) and the menu is one right-click (a long press on a touch
// screen, the context-menu key on a keyboard) away, with the faults the viewer can always inject
// (the protocol's fault_kinds, as the ⚡ buttons).

/**
 * The menu's entries for a process or a message: [{id, text, kind}]. The faults are those of
 * the enabled list, plus (with `every`) those of the protocol's fault kinds.
 */
export function faultChoices(model, target, every = false) {
  const ids = new Set(model.enabled.map((e) => String(e.id)));
  const kinds = new Set(every ? ((model.protocol || {}).fault_kinds || []) : []);
  const out = [];
  if (target.message) {
    const m = target.message;
    if (m.deliverable) out.push({ id: m.id, text: `deliver ${m.label || m.type}`, kind: "deliver" });
    if (ids.has(`f:drop:${m.id}`) || kinds.has("drop")) out.push({ id: `f:drop:${m.id}`, text: "⚡ drop it (lost)", kind: "fault" });
    if (ids.has(`f:dup:${m.id}`) || kinds.has("duplicate")) out.push({ id: `f:dup:${m.id}`, text: "⚡ duplicate it", kind: "fault" });
  } else {
    const p = target.node;
    const crashed = (model.view.nodes.get(String(p)) || {}).crashed;
    if (ids.has(`f:crash:${p}`) || (kinds.has("crash") && !crashed)) out.push({ id: `f:crash:${p}`, text: `⚡ crash ${p} (for good)`, kind: "fault" });
    if ([...ids].some((i) => i.startsWith(`f:corrupt:${p}:`))) {
      out.push({ id: null, text: `⚡ corrupt a variable of ${p}…`, kind: "corrupt" });
    }
  }
  return out;
}

/** Does a click on this target need the menu (some fault is offered for it)? */
export const hasFaults = (model, target) => faultChoices(model, target).some((c) => c.kind !== "deliver");

/**
 * Wire the menu box (#fault-menu inside the view's wrapper). `fire(id)` sends an event,
 * `corrupt(pid)` opens the corrupt picker. Returns {open(model, target, anchorEl, every), close(), update(model), isOpen()}.
 */
export function setupFaultMenu(box, { fire, corrupt }) {
  let target = null, sig = "", every = false;
  function close() { if (!box.hidden) { box.hidden = true; target = null; sig = ""; } }
  function draw(model) {
    const items = faultChoices(model, target, every);
    const key = JSON.stringify(items);
    if (key === sig) return items.length;
    sig = key;
    box.replaceChildren();
    const h = document.createElement("h2");
    h.className = "fm-title";
    h.textContent = target.message ? `${target.message.label || target.message.type} ${target.message.src}→${target.message.dst}`
      : `${target.node}`;
    box.appendChild(h);
    for (const c of items) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = `fm-item ${c.kind}`;
      if (c.id) b.dataset.event = c.id;
      b.textContent = c.text;
      b.addEventListener("click", (ev) => {
        ev.stopPropagation();
        const t = target;
        close();
        if (c.kind === "corrupt") corrupt(t.node); else fire(c.id, c.kind);
      });
      box.appendChild(b);
    }
    const x = document.createElement("button");
    x.type = "button";
    x.className = "fm-close";
    x.textContent = "close (Esc)";
    x.addEventListener("click", (ev) => { ev.stopPropagation(); close(); });
    box.appendChild(x);
    return items.length;
  }
  function open(model, t, anchor, all = false) {
    target = t; sig = ""; every = all;
    if (!draw(model)) { close(); return false; }
    box.hidden = false;
    const w = box.parentElement.getBoundingClientRect(), a = anchor.getBoundingClientRect();
    let x = a.right - w.left + 10;
    if (x + box.offsetWidth > w.width - 6) x = a.left - w.left - 10 - box.offsetWidth;
    const y = Math.max(6, Math.min(a.top - w.top - 6, w.height - box.offsetHeight - 6));
    box.style.left = `${Math.round(Math.max(6, x))}px`;
    box.style.top = `${Math.round(y)}px`;
    box.querySelector("button").focus({ preventScroll: true });
    return true;
  }
  /** After each frame: the menu follows the enabled list, and goes when its target has gone. */
  function update(model) {
    if (box.hidden || !target) return;
    if (target.message && !model.view.messages.has(String(target.message.id))) { close(); return; }
    if (target.message) target.message = model.view.messages.get(String(target.message.id));
    if (!draw(model)) close();
  }
  box.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.stopPropagation(); close(); } });
  box.addEventListener("click", (e) => e.stopPropagation());
  return { open, close, update, isOpen: () => !box.hidden };
}
