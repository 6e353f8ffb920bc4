// In-flight messages drawn on their links, labelled by type; each type has its own shape AND
// colour (never colour alone). Clicking a deliverable message delivers it.

import { attr, el, keyed, text, tip } from "./svg.js";

// Okabe–Ito colours (yellow is too faint for small shapes: it marks the token holder instead);
// vermillion and bluish green are kept for cycles and critical sections.
const COLOURS = ["#0072B2", "#CC79A7", "#56B4E9", "#E69F00", "#000000", "#7a5a00", "#5b6472"];
const SHAPES = ["circle", "square", "diamond", "triangle", "hexagon", "vee", "star"];
const assigned = new Map();   // type -> index, stable for a page (types with no declared style)
let declared = {};            // the protocol's message_styles: type -> {glyph, colour, short}
const seen = new Set();       // the types that have appeared (the legend lists only those)

/** The protocol's fixed styles (frames' protocol.message_styles). */
export function setStyles(styles) { declared = styles || {}; }

function hash(s) {
  let h = 7;
  for (const ch of s) h = (h * 31 + ch.codePointAt(0)) >>> 0;
  return h;
}

/** The (shape, colour) of a message type: by hash, moving on when another type took it. */
export function typeStyle(type) {
  seen.add(type);
  const d = declared[type];
  if (d) return { shape: d.glyph, colour: d.colour, short: d.short || type };
  let i = assigned.get(type);
  if (i === undefined) {
    const used = new Set(assigned.values());
    i = hash(type) % SHAPES.length;
    for (let k = 0; k < SHAPES.length && used.has(i); k++) i = (i + 1) % SHAPES.length;
    assigned.set(type, i);
  }
  return { shape: SHAPES[i], colour: COLOURS[i % COLOURS.length], short: type };
}

export function knownTypes() { return Array.from(seen); }

/** Path data of a shape of radius r centred on 0,0. */
export function shapePath(shape, r) {
  const p = (pts) => "M" + pts.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join("L") + "Z";
  const poly = (n, rot) => p(Array.from({ length: n }, (_, k) => {
    const a = rot + (2 * Math.PI * k) / n;
    return [r * Math.cos(a), r * Math.sin(a)];
  }));
  switch (shape) {
    case "square": return p([[-r * .85, -r * .85], [r * .85, -r * .85], [r * .85, r * .85], [-r * .85, r * .85]]);
    case "diamond": return poly(4, -Math.PI / 2);
    case "triangle": return poly(3, -Math.PI / 2);
    case "hexagon": return poly(6, 0);
    case "vee": return poly(3, Math.PI / 2);
    case "star": return p(Array.from({ length: 10 }, (_, k) => {   // tokens: a size larger
      const a = -Math.PI / 2 + (Math.PI * k) / 5, rr = k % 2 ? r * 0.62 : r * 1.45;
      return [rr * Math.cos(a), rr * Math.sin(a)];
    }));
    default: return `M${-r},0a${r},${r} 0 1,0 ${2 * r},0a${r},${r} 0 1,0 ${-2 * r},0Z`;
  }
}

/**
 * Positions of the messages: along the straight line src -> dst, shifted to the left of the
 * direction of travel (so both directions of a channel show), the oldest nearest dst.
 * With `spread` (a layout whose links converge and cross, like the game's) each message takes
 * the place nearest its destination where its shape touches no other message and no node.
 * `avoid`: boxes [x0, y0, x1, y1] (the queue rows drawn beside the nodes) no shape may lie on:
 * a channel's messages slide together along their link, nearer either end, to the first place
 * clear of them (kout-random at step 48: the PushT star on the "R" of p8's RSet row).
 * `soft`: boxes kept clear where a place clear of them and of `avoid` is found (the nodes'
 * detail lines: kout-fig3 at 800x600 had the PushT star on r's "State=In Need=1").
 */
export function layoutMessages(messages, nodes, size, r = size * 2, spread = false, k = 1, avoid = [], soft = []) {
  const chans = new Map();
  for (const m of messages) {
    const k = `${m.src}\u0000${m.dst}`;
    if (!chans.has(k)) chans.set(k, []);
    chans.get(k).push(m);
  }
  const out = [];
  const lines = [];
  for (const list of chans.values()) {
    const a = nodes.get(String(list[0].src)), b = nodes.get(String(list[0].dst));
    if (!b) continue;
    if (a === b) {   // a message to oneself waits beside the node, up and to the left
      // (or up-right, down-left, down-right when a queue row is there: coterie's X_u1 row
      // over u1 had u1's QUERY to itself on it)
      const e = size * 1.6;
      const at = ([ux, uy]) => list.map((m, i) => ({ m, x: b.x + ux * size * (3.4 + 2.4 * i), y: b.y + uy * size * 3.4, i,
                                                    nx: 0.8 * ux, ny: 0.6 * uy }));
      const clear = (boxes) => (qs) => qs.every((q) => boxes.every(([x0, y0, x1, y1]) =>
        q.x + e <= x0 || q.x - e >= x1 || q.y + e <= y0 || q.y - e >= y1));
      const sides = [[-1, -1], [1, -1], [-1, 1], [1, 1]].map(at);
      out.push(...(sides.find(clear([...avoid, ...soft])) || sides.find(clear(avoid)) || sides[0]));
      continue;
    }
    const ax = a ? a.x : b.x - 40, ay = a ? a.y : b.y - 40;
    const dx = b.x - ax, dy = b.y - ay, len = Math.hypot(dx, dy) || 1;
    // The left of the direction of travel: outside a clockwise ring, where there is room.
    const nx = dy / len, ny = -dx / len;
    // Between the two nodes' borders, the oldest nearest dst, squeezed to fit a long queue.
    const lo = Math.min(0.45, (r + size * 1.3) / len), hi = Math.max(0.55, 1 - (r + size * 1.6) / len);
    if (spread) { lines.push({ list, ax, ay, dx, dy, len, nx, ny, lo, hi }); continue; }
    const start = Math.min(hi, Math.max(lo, 0.62));
    const gap = Math.min(0.14, (size * 2.6) / len, list.length > 1 ? (start - lo) / (list.length - 1) : 1);
    const at = (s0, side = 1) => list.map((m, i) => {
      const t = Math.max(lo, s0 - i * gap);
      return { m, x: ax + dx * t + nx * side * size * 0.9, y: ay + dy * t + ny * side * size * 0.9, i,
               nx: nx * Math.sign(side), ny: ny * Math.sign(side) };
    });
    const ps0 = at(start);
    const placeClear = (boxes) => {
      let ps = ps0;
      // (a star reaches 1.45 sizes from its centre, the other shapes one: and a pixel or two)
      const e = size * 1.6;
      const clear = (qs) => qs.every((q) => boxes.every(([x0, y0, x1, y1]) =>
        q.x + e <= x0 || q.x - e >= x1 || q.y + e <= y0 || q.y - e >= y1));
      const d = (size * 0.8) / len;
      // nearer the destination first (where the oldest is going), then nearer the source
      for (let j = 1; j <= 40 && !clear(ps); j++) {
        const s0 = start + (j % 2 ? 1 : -1) * Math.ceil(j / 2) * d;
        if (s0 > hi + 1e-9 || s0 < lo - 1e-9) continue;
        const qs = at(s0);
        if (clear(qs)) ps = qs;
      }
      // a link too short to slide on (kout-random at 1024x768: p2 to p8): the other side of
      // it, when nothing travels the other way to be told apart from
      const back = chans.get(`${list[0].dst}\u0000${list[0].src}`);
      if (!clear(ps) && !(back && back.length) && clear(at(start, -1))) ps = at(start, -1);
      // nor there: further out from the link, sliding along it as before, and clear of the
      // messages placed so far and of the nodes; when something travels back, on the other
      // side only beyond where that goes (0.9 sizes out: 3.4 is 2.5 sizes from it). kout-random
      // at 1024x768, step 113: ResT both ways between p2 and p12, the link 30 px long, p12's
      // RSet row beside it
      if (!clear(ps)) {
        const apart = (qs) => qs.every((q) => out.every((o) => Math.hypot(o.x - q.x, o.y - q.y) >= size * 2.2)
          && Array.from(nodes.values()).every((n) => Math.hypot(n.x - q.x, n.y - q.y) >= r + size * 1.2));
        const found = (back && back.length ? [2.2, 3.4, -3.4, 4.6, -4.6] : [2.2, -2.2, 3.4, -3.4, 4.6, -4.6]).map((side) => {
          for (let j = 0; j <= 40; j++) {
            const s0 = start + (j % 2 ? 1 : -1) * Math.ceil(j / 2) * d;
            if (s0 > hi + 1e-9 || s0 < lo - 1e-9) continue;
            const qs = at(s0, side);
            if (clear(qs) && apart(qs)) return qs;
          }
          return null;
        }).find(Boolean);
        if (found) ps = found;
      }
      return clear(ps) ? ps : null;
    };
    // the first place clear of every box, else of the rows alone (a node's detail lines are
    // the lesser harm: coterie's rows sit among its nodes' lines, and a message kept off both
    // had nowhere to go and stayed on a row), else where it was
    let ps = soft.length && placeClear([...avoid, ...soft]) || avoid.length && placeClear(avoid) || ps0;
    // and, where that lies on another channel's shapes placed before, the first place clear of
    // them as well (kout-chaos at 800x600, step 28: the ctrl square under a ResT hexagon; the
    // PushT star on the ResT coming back on its link). Only then, and only in a figure of a few
    // dozen messages: the search looks at every shape placed so far.
    if (out.length && messages.length <= SHAPES_MOST && ps.some((q) => out.some((o) => hits(o, q, size)))) {
      const taken = out.map((o) => { const e = extent(o, size); return [o.x - e, o.y - e, o.x + e, o.y + e]; });
      ps = soft.length && placeClear([...avoid, ...soft, ...taken]) || placeClear([...avoid, ...taken]) || ps;
    }
    out.push(...ps);
  }
  if (spread) spreadOut(lines, nodes, size, r, out, k);
  // (the game's spread-out trails too: where no clear place was found, one was put behind the
  // one before it all the same, and game-restricted-locality-3 at 800x600 had Infos on Requests)
  // (a moved shape keeps off the queue rows and the nodes' detail lines alike)
  if (messages.length <= SHAPES_MOST) stackTails(out, size, nodes, r, [...avoid, ...soft]);
  return out;
}

// The figures whose messages are kept off one another's shapes (stackTails, and the search of
// layoutMessages above): a crowded ring's hundreds play at full speed without the pairwise look.
const SHAPES_MOST = 60;

/** How far a placed message's shape reaches from its centre, each way (a star 1.45 sizes). */
function extent(p, size) {
  if (p.hidden) return 0;
  return (p.tail ? 0.55 : 1) * (typeStyle(String(p.m.type)).shape === "star" ? 1.45 : 1) * size;
}

/** Two placed messages' shapes (their boxes) on each other. */
function hits(a, b, size) {
  const e = extent(a, size) + extent(b, size);
  return e > 0 && Math.abs(a.x - b.x) < e && Math.abs(a.y - b.y) < e;
}

/**
 * No message's shape on another's (a queue squeezed onto a short link: kout-chaos's eight
 * ResT between p1 and p2, 60 px apart at 800x600; the ctrl square under a ResT hexagon on
 * the link beside it). In the order placed, a message whose shape would lie on one drawn
 * before it is, when it waits behind one of its own type on its own channel, stacked behind
 * that one: a small pip where that is clear, else not drawn (it stays in the page, not
 * displayed, with its tooltip), and that one's label counts it ("ResT ×8"), as a game's
 * trails do. Any other (one that can be delivered, or of another type: the ctrl token and the
 * PushT star are what a class follows) moves to the nearest place by its link clear of every
 * shape drawn, the nodes and the queue rows; where there is none, it stays where it was.
 */
function stackTails(out, size, nodes, r, avoid) {
  const drawn = [];
  for (const p of out) {
    if (drawn.some((o) => hits(o, p, size))) {
      // the first message of its type on its channel drawn full size: the stack's head
      const under = p.m.deliverable ? null : drawn.find((o) => !o.tail && o.m.src === p.m.src
        && o.m.dst === p.m.dst && o.m.type === p.m.type);
      if (under) {
        const counted = p.tail;   // (a game's trail pip is counted by its head already)
        p.tail = true;
        if (drawn.some((o) => hits(o, p, size))) p.hidden = true;
        if (!counted) under.behind = (under.behind || 0) + 1;
      } else if (!moveClear(p, drawn, size, nodes, r, avoid) && !p.m.deliverable) {
        // nowhere clear (kout-random at 800x600, step 16: the ctrl token queued behind a ResT
        // on p1's short link): a pip of its own shape and colour, where it is or near it
        p.tail = true;
        if (drawn.some((o) => hits(o, p, size))) moveClear(p, drawn, size, nodes, r, avoid);
      }
    }
    drawn.push(p);
  }
}

/**
 * Move placed message p along its link, on either side and further out (0.9 to 4.6 sizes),
 * to the nearest place where its shape lies on none of drawn, on no node and on no box of
 * avoid; true if it found one.
 */
function moveClear(p, drawn, size, nodes, r, avoid) {
  const a = nodes.get(String(p.m.src)), b = nodes.get(String(p.m.dst));
  if (!b) return false;
  const e = extent(p, size);
  const clear = (q) => !drawn.some((o) => hits(o, q, size))
    && Array.from(nodes.values()).every((n) => Math.hypot(n.x - q.x, n.y - q.y) >= r + e + size * 0.3)
    && avoid.every(([x0, y0, x1, y1]) => q.x + e <= x0 || q.x - e >= x1 || q.y + e <= y0 || q.y - e >= y1);
  if (!a || a === b) {
    // a message to oneself waits beside its node: round it, nearer first (coterie-random at
    // step 11: u4's QUERY to itself among the QUERYs on u4's links)
    for (const rad of [3.4, 4.6, 5.8]) {
      for (let i = 0; i < 16; i++) {
        const ang = Math.atan2(p.y - b.y, p.x - b.x) + (i % 2 ? 1 : -1) * Math.ceil(i / 2) * Math.PI / 8;
        const q = { ...p, x: b.x + Math.cos(ang) * rad * size, y: b.y + Math.sin(ang) * rad * size };
        if (clear(q)) {
          Object.assign(p, { x: q.x, y: q.y, nx: Math.cos(ang), ny: Math.sin(ang) });
          return true;
        }
      }
    }
    return false;
  }
  const dx = b.x - a.x, dy = b.y - a.y, len = Math.hypot(dx, dy) || 1;
  const nx = dy / len, ny = -dx / len;
  const t0 = ((p.x - a.x) * dx + (p.y - a.y) * dy) / (len * len);
  for (const side of [0.9, -0.9, 2.2, -2.2, 3.4, -3.4, 4.6, -4.6]) {
    for (let j = 0; j <= 40; j++) {
      const t = t0 + (j % 2 ? 1 : -1) * Math.ceil(j / 2) * (size * 0.6) / len;
      if (t < 0 || t > 1) continue;
      const q = { ...p, x: a.x + dx * t + nx * side * size, y: a.y + dy * t + ny * side * size };
      if (clear(q)) {
        Object.assign(p, { x: q.x, y: q.y, nx: nx * Math.sign(side), ny: ny * Math.sign(side) });
        return true;
      }
    }
  }
  return false;
}

/**
 * Greedy placement for `spread`: the channels' heads first, then the messages behind them;
 * each walks back from its destination (never past the one before it on its channel) to the
 * first place clear of every shape placed so far and of every node.
 */
function spreadOut(lines, nodes, size, r, out, k) {
  const taken = out.map((p) => [p.x, p.y, size * 2.3]);
  for (const n of nodes.values()) {
    taken.push([n.x, n.y, r + size * 1.2]);
    // a pool's unit squares on its right (views/game.js drawFront: 11 px squares, 3 a column)
    (Array.isArray(n.units) ? n.units : []).forEach((_, i) => {
      const rows = Math.min(3, n.units.length), col = Math.floor(i / 3), row = i % 3;
      taken.push([n.x + r + (10.5 + col * 14) * k, n.y + (row - (rows - 1) / 2) * 14 * k, 8 * k + size * 1.1]);
    });
  }
  const free = (x, y) => taken.every(([u, v, d]) => Math.hypot(x - u, y - v) >= d);
  const last = lines.map((L) => L.hi + 1e-9);
  const most = Math.max(0, ...lines.map((L) => L.list.length));
  // The messages queued behind a channel's head (game-three-nodes has some twenty Infos in
  // flight at once) are small pips in a trail right behind it, unlabelled; the head says how
  // many wait on its link ("Info ×3"), so the picture is a few labelled messages, not a cloud.
  const heads = new Map();
  for (let i = 0; i < most; i++) {
    lines.forEach((L, c) => {
      const m = L.list[i];
      if (!m) return;
      if (i > 0 && !m.deliverable) {
        const head = heads.get(c);
        const gap = (size * 1.35) / L.len, clear = (x, y) => taken.every(([u, v, d]) => Math.hypot(x - u, y - v) >= d * 0.62);
        let best = null;
        for (let t = last[c] - gap; t >= L.lo && !best; t -= gap / 2) {
          for (const side of [head.side, -head.side, head.side * 2.2]) {
            const x = L.ax + L.dx * t + L.nx * size * side, y = L.ay + L.dy * t + L.ny * size * side;
            if (clear(x, y)) { best = { t, x, y }; break; }
          }
        }
        if (best) {
          last[c] = best.t;
          taken.push([best.x, best.y, size * 1.5]);
          head.p.behind = (head.p.behind || 0) + 1;
          out.push({ m, x: best.x, y: best.y, i, nx: L.nx, ny: L.ny, tail: true });
          return;
        }
      }
      const step = (size * 0.6) / L.len;
      let best = null;
      for (let t = Math.min(L.hi, last[c] - (i ? (size * 2.3) / L.len : 0)); t >= L.lo && !best; t -= step) {
        for (const side of [0.9, -0.9, 2.4, -2.4]) {
          const x = L.ax + L.dx * t + L.nx * size * side, y = L.ay + L.dy * t + L.ny * size * side;
          if (free(x, y)) { best = { t, x, y, side }; break; }
        }
      }
      if (!best) {   // no clear place: behind the one before it, as without spread
        const t = Math.max(L.lo, Math.min(L.hi, last[c] - (i ? (size * 2.3) / L.len : 0)));
        best = { t, x: L.ax + L.dx * t + L.nx * size * 0.9, y: L.ay + L.dy * t + L.ny * size * 0.9, side: 0.9 };
      }
      last[c] = best.t;
      taken.push([best.x, best.y, size * 2.3]);
      const s = Math.sign(best.side);
      const p = { m, x: best.x, y: best.y, i, nx: L.nx * s, ny: L.ny * s };
      if (i === 0) heads.set(c, { p, side: best.side });
      out.push(p);
    });
  }
}

/**
 * Draw the messages into layer. hooks.click(message) is called on a click.
 */
export function drawMessages(layer, model, hooks, opts) {
  const nodes = model.view.nodes;
  const size = opts.msgSize;
  // Deliverable messages last, so that they are drawn on top of the ones queued behind them.
  const boxes = opts.spread || !model.view.messages.size ? { rows: [], lines: [] } : rowBoxes(layer);
  const placed = layoutMessages(Array.from(model.view.messages.values()), nodes, size, opts.r, !!opts.spread,
    opts.k || 1, boxes.rows, boxes.lines)
    .sort((a, b) => (a.m.deliverable === b.m.deliverable ? 0 : a.m.deliverable ? 1 : -1));
  const showLabels = placed.length <= 40 && opts.labels;
  keyed(layer, placed, (p) => p.m.id,
    (p) => {
      const g = el("g", { class: "msg", "data-id": p.m.id, tabindex: "0", role: "button" });
      el("circle", { class: "msg-hit" }, g);   // a larger target than the shape, for clicks
      el("path", { class: "msg-shape" }, g);
      el("text", { class: "msg-label", dy: "0.35em" }, g);
      g.addEventListener("click", (ev) => { ev.stopPropagation(); hooks.click(g.__m); });
      g.addEventListener("keydown", (ev) => {   // Enter delivers (or drops / duplicates, armed)
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); ev.stopPropagation(); hooks.click(g.__m); }
      });
      return g;
    },
    (g, p) => {
      const m = p.m;
      g.__m = m;
      const st = typeStyle(String(m.type));
      attr(g, "transform", `translate(${p.x.toFixed(1)},${p.y.toFixed(1)})`);
      attr(g, "class", "msg" + (m.deliverable ? " deliverable" : " queued") + (p.tail ? " tail" : ""));
      // (a message hidden under its channel's head, whose label counts it: stackTails)
      if (p.hidden) attr(g, "display", "none");
      else g.removeAttribute("display");
      attr(g, "data-type", m.type);
      attr(g.firstChild, "r", (size * (p.tail ? 0.7 : 1.3)).toFixed(1));
      const path = g.children[1];
      attr(path, "d", shapePath(st.shape, p.tail ? size * 0.55 : size));
      attr(path, "fill", st.colour);
      // The label sits beside the shape, away from the link, so a queue's labels never overlap.
      const lab = g.children[2];   // hit circle, shape, label (then the tooltip's <title>)
      attr(lab, "x", (p.nx * size * 1.5).toFixed(1));
      attr(lab, "y", (p.ny * size * 1.5).toFixed(1));
      attr(lab, "text-anchor", p.nx > 0.3 ? "start" : p.nx < -0.3 ? "end" : "middle");
      if (Math.abs(p.nx) <= 0.3) attr(lab, "y", (p.ny * size * 2.2).toFixed(1));
      // Messages that can be delivered now carry their full label; the ones queued behind them
      // keep their type's short label (never a bare shape), and their tooltip.
      // In a crowd (more than a dozen in flight), and on a figure whose nodes are too close for
      // their detail lines (opts.dense), every label starts short: the full one is in the
      // tooltip and the events list. (datta-stress's ring at 1280x720: "newStrongACK(C10)" and
      // "NewRequest(C11, 1, R5)" were wider than the resources' ring, four labels stacked.)
      const many = p.behind ? ` ×${p.behind + 1}` : "";
      const full = m.deliverable && placed.length <= 12 && !opts.dense;
      text(lab, showLabels && !p.tail ? (full ? (m.label || m.type) : st.short) + many : "");
      g.__lab = { x: lab.getAttribute("x"), y: lab.getAttribute("y"), anchor: lab.getAttribute("text-anchor"),
                  text: lab.textContent, short: st.short + many };
      const says = `${m.label || m.type} ${m.src}→${m.dst} (${m.id}, sent at step ${m.sent_step ?? "?"})` +
        (p.behind ? `, ${p.behind} more behind it on this link` : "") +
        (m.deliverable ? " — click or Enter to deliver" : " — queued behind an older message on this channel") +
        "; right-click for drop / duplicate";
      tip(g, says);
      attr(g, "aria-label", says);
    },
    (p) => `${p.m.id}|${p.m.deliverable}|${p.x.toFixed(1)}|${p.y.toFixed(1)}|${showLabels}|${p.m.label}|${placed.length <= 12}|${p.tail}|${p.hidden}|${p.behind}|${size}|${!!opts.dense}`);
  if (showLabels) declutter(layer);
}

/**
 * The boxes, in the drawing's units, of the queue rows drawn beside the nodes (common.js's
 * drawQueues, drawn before the messages): where no message shape may lie; and of the nodes'
 * detail lines, kept clear where that can be (kout-fig3 at 800x600: the PushT star on r's
 * "State=In Need=1"). None of either when there are many (a crowded ring's rows are a table,
 * or left to the inspector; a big figure's lines are few or none).
 */
function rowBoxes(layer) {
  const svg = layer.ownerSVGElement;
  const m = svg && svg.getScreenCTM();
  if (!m) return { rows: [], lines: [] };
  const inv = m.inverse();
  const boxes = (els, most) => {
    const out = [];
    if (els.length > most) return out;
    for (const g of els) {
      const b = g.getBoundingClientRect();
      if (!b.width) continue;
      const p = new DOMPoint(b.left, b.top).matrixTransform(inv), q = new DOMPoint(b.right, b.bottom).matrixTransform(inv);
      out.push([Math.min(p.x, q.x), Math.min(p.y, q.y), Math.max(p.x, q.x), Math.max(p.y, q.y)]);
    }
    return out;
  };
  return { rows: boxes(svg.querySelectorAll(".layer.queues > .queue"), 40),
           lines: boxes(svg.querySelectorAll(".layer.nodes > g > text.detail"), 80) };
}

/** "NewReq" → "NR", "nsACK" → "nACK", "KL-ACK2" → "KA2": first letter, capitals and digits.
 * A count of messages behind it stays a count: "Info ×2" → "I ×2" (it read "I2", a name).
 * A short lower-case word is kept: "ctrl" (its initial "c" read as nothing). */
export function initials(label) {
  const m = /^(.*?)( ×\d+)$/.exec(String(label));
  const s = m ? m[1] : String(label), many = m ? m[2] : "";
  const out = s[0] + Array.from(s.slice(1)).filter((c) => /[A-Z0-9]/.test(c)).join("");
  // (a short lower-case word stays whole: "ctrl" gave "c", a letter that reads as nothing)
  if (out.length === 1 && /^[a-z]/.test(s) && s.length <= 5) return s + many;
  return (out.length < s.length ? out.slice(0, 5) : s) + many;
}

const overlaps = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
  && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;

/**
 * Message labels never sit on another label (issue 17 item 3): deliverable ones first, each
 * tries its place, then the other side of its link, then its type's short label there, and is
 * left unlabelled (its tooltip and aria-label keep the name) only when all of them collide.
 */
function declutter(layer) {
  const svg = layer.ownerSVGElement;
  if (!svg) return;
  const fixed = Array.from(svg.querySelectorAll("text"))
    .filter((t) => !layer.contains(t) && t.textContent.trim())
    .map((t) => t.getBoundingClientRect()).filter((r) => r.width > 0);
  // nor on a queue row's chips, whose text is in them (kout-chaos: "PT" on p2's RSet chip)
  for (const c of svg.querySelectorAll(".layer.queues .qchip")) {
    const r = c.getBoundingClientRect();
    if (r.width > 0) fixed.push(r);
  }
  const kept = [];
  // nor past the figure's edge: a ring fitted to a narrow figure's height (present mode at
  // 1024x768) left no room beside it for "NewRequest(C1, 2, R1)", and the other side of its
  // link or the short label had it
  const view = svg.getBoundingClientRect();
  const inside = (r) => !view.width || (r.left >= view.left - 1 && r.right <= view.right + 1
    && r.top >= view.top - 1 && r.bottom <= view.bottom + 1);
  const vb = svg.viewBox && svg.viewBox.baseVal;
  const px = vb && vb.width && svg.clientWidth ? Math.max(vb.width / svg.clientWidth, vb.height / svg.clientHeight) : 1;   // user units per pixel
  // a label must not hide another message's shape either, nor lie on a node's body
  const shapes = Array.from(layer.children).filter((g) => g.children[1])
    .map((g) => [g, g.children[1].getBoundingClientRect()]);
  for (const c of svg.querySelectorAll(".layer.nodes > g > .body")) {
    shapes.push([null, c.getBoundingClientRect()]);
  }
  const gs = Array.from(layer.children).filter((g) => g.__lab)
    .sort((a, b) => (b.__m && b.__m.deliverable ? 1 : 0) - (a.__m && a.__m.deliverable ? 1 : 0));
  for (const g of gs) {
    const lab = g.children[2], d = g.__lab;
    if (!d.text) continue;
    const flip = { start: "end", end: "start", middle: "middle" };
    const far = (f) => [String(d.x * f), String(d.y * f)];
    const tries = [[d.x, d.y, d.anchor, d.text], [String(-d.x), String(-d.y), flip[d.anchor], d.text],
      [d.x, d.y, d.anchor, d.short], [String(-d.x), String(-d.y), flip[d.anchor], d.short],
      [...far(2), d.anchor, d.short], [...far(-2), flip[d.anchor], d.short],
      [...far(3), d.anchor, d.short], [...far(-3), flip[d.anchor], d.short]];
    // then along the link, both ways, on both sides
    const nx = +d.x, ny = +d.y;
    for (const f of [2.5, -2.5, 4, -4, 5.5, -5.5]) {
      tries.push([String(nx - ny * f), String(ny + nx * f), "middle", d.short]);
      tries.push([String(-nx - ny * f), String(-ny + nx * f), "middle", d.short]);
    }
    // a crowd (thirty NewReq on their way at once): the label's initials, close by
    const tiny = initials(d.short);
    if (tiny !== d.short) {
      for (const f of [1, -1, 2, -2, 3, -3]) tries.push([String(nx * f), String(ny * f), f > 0 ? d.anchor : flip[d.anchor], tiny]);
      for (const f of [2.5, -2.5, 4, -4]) {
        tries.push([String(nx - ny * f), String(ny + nx * f), "middle", tiny]);
        tries.push([String(-nx - ny * f), String(-ny + nx * f), "middle", tiny]);
      }
      // and, last, anywhere on a widening circle around the shape (radii in screen pixels)
      for (const rad of [14, 22, 30, 38, 46, 56, 68, 80]) {
        for (let a = 0; a < 16; a++) {
          const t = (Math.PI * a) / 8;
          tries.push([String(px * rad * Math.cos(t)), String(px * (rad * Math.sin(t) + 4)), "middle", tiny]);
        }
      }
    }
    let ok = false;
    for (const [x, y, anchor, txt] of tries) {
      lab.setAttribute("x", x); lab.setAttribute("y", y); lab.setAttribute("text-anchor", anchor);
      lab.textContent = txt;
      const r = lab.getBoundingClientRect();
      if (inside(r) && !fixed.some((f) => overlaps(f, r)) && !kept.some((k) => overlaps(k, r))
          && !shapes.some(([h, b]) => h !== g && overlaps(b, r))) { kept.push(r); ok = true; break; }
    }
    if (!ok) {
      // a message that can be delivered always shows its name (short, in its own place);
      // one queued behind it gives way
      const deliverable = g.__m && g.__m.deliverable;
      lab.setAttribute("x", d.x); lab.setAttribute("y", d.y); lab.setAttribute("text-anchor", d.anchor);
      lab.textContent = deliverable ? tiny : "";
      if (deliverable) {
        // the first place where it covers no other text and no node at least (it may cover
        // another message's shape)
        let found = false;
        for (const [x, y, anchor] of tries) {
          lab.setAttribute("x", x); lab.setAttribute("y", y); lab.setAttribute("text-anchor", anchor);
          const r = lab.getBoundingClientRect();
          if (!fixed.some((f) => overlaps(f, r)) && !kept.some((q) => overlaps(q, r))
              && !shapes.some(([h, b]) => h === null && overlaps(b, r))) { kept.push(r); found = true; break; }
        }
        // nowhere at all (coterie-random at 1024x768: a dozen QRY round u4): no label rather
        // than one on another's or on a node, left where the last try put it; the tooltip, the
        // aria-label and the events list name it
        if (!found) lab.textContent = "";
      }
    }
  }
}
