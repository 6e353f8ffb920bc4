// Tiny SVG helpers: create elements and reconcile keyed children, so a redraw touches only
// the elements whose data changed (important when playing a 200-node ring at full speed).

export const SVGNS = "http://www.w3.org/2000/svg";

/** Create an SVG element with attributes, optionally appended to parent. */
export function el(tag, attrs = {}, parent = null) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

/** Set text safely (never parsed as markup). */
export function text(e, s) {
  const t = String(s ?? "");
  if (e.textContent !== t) e.textContent = t;
  return e;
}

/** Set an attribute only when it changes (cheap no-op redraws). */
export function attr(e, k, v) {
  const s = String(v);
  if (e.getAttribute(k) !== s) e.setAttribute(k, s);
}

/**
 * Reconcile parent's children with items by key: create missing ones, update those whose
 * signature changed, remove the rest. Children carry their key and signature in properties.
 */
export function keyed(parent, items, key, create, update, sig = (x) => JSON.stringify(x)) {
  const old = new Map();
  for (const c of Array.from(parent.children)) old.set(c.__key, c);
  let prev = null;
  const seen = new Map();
  for (const item of items) {
    let k = key(item);
    const dup = seen.get(k) || 0;       // equal keys get #1, #2, ... so each has its element
    seen.set(k, dup + 1);
    if (dup) k = `${k}#${dup}`;
    let node = old.get(k);
    const s = sig(item);
    if (node) {
      old.delete(k);
      if (node.__sig !== s) { update(node, item); node.__sig = s; }
    } else {
      node = create(item);
      node.__key = k;
      update(node, item);
      node.__sig = s;
    }
    const want = prev ? prev.nextSibling : parent.firstChild;
    if (want !== node) parent.insertBefore(node, want);
    prev = node;
  }
  for (const c of old.values()) c.remove();
}

/** A tooltip child (<title>) for an SVG element. */
export function tip(e, s) {
  let t = e.querySelector(":scope > title");
  if (!t) t = el("title", {}, e);
  text(t, s);
}
