// Monitor lights (safety, deadlock, livelock) and the banner that explains a finding. A firing
// monitor pauses play (the server stops streaming; we also ask, in case) and the view highlights
// the cycle in red (views/common.js) or the culprits (here).

const $ = (id) => document.getElementById(id);

function setLight(name, state, title) {
  const l = document.querySelector(`.light[data-monitor="${name}"]`);
  if (!l) return;
  l.dataset.state = state;
  if (title) l.title = title;
}

/** The finding to explain at the current step: the latest one at or before it. */
function current(m) {
  const mon = m.monitors || {};
  const list = [];
  if (mon.deadlock && mon.deadlock.step <= m.step) list.push({ kind: "deadlock", ...mon.deadlock });
  if (mon.livelock && mon.livelock.step <= m.step) list.push({ kind: "livelock", ...mon.livelock });
  for (const v of mon.violations || []) if (v.step <= m.step) list.push({ kind: "violation", ...v });
  list.sort((a, b) => b.step - a.step);
  return list[0] || null;
}

/** A finding's words without the kind the kernel puts first ("deadlock: p0 waits ..."): the
 * banner and the lights say the kind themselves ("deadlock at step 7: deadlock: ..." stuttered). */
function words(kind, text) {
  const t = text || "";
  return t.toLowerCase().startsWith(`${kind}: `) ? t.slice(kind.length + 2) : t;
}

/**
 * The banner's words in two parts, for its one line (app.css, .banner.finding): what happened,
 * then the parenthesis that follows it ("(still enabled, serving no one: …)"), which gives way
 * first. The text is unchanged (a space between the parts); the whole of it is the tooltip, and
 * a click shows it on as many lines as it needs.
 */
function sayFinding(banner, said) {
  const cut = said.indexOf(" (");
  const part = (cls, t) => { const s = document.createElement("span"); s.className = cls; s.textContent = t; return s; };
  banner.replaceChildren(part("banner-what", cut < 0 ? said : said.slice(0, cut)));
  if (cut >= 0) banner.append(" ", part("banner-more", said.slice(cut + 1)));
  banner.classList.add("finding");
  banner.classList.remove("open");
  banner.title = `${said} (click for all of it)`;
}

export function setupMonitors(act) {
  let lastFired = "", lastCulprits = "";
  $("banner").addEventListener("click", () => $("banner").classList.toggle("open"));
  return function update(m, stage) {
    const mon = m.monitors || {};
    const bad = (mon.violations || []).some((v) => v.step <= m.step) || mon.safety === "violation";
    setLight("safety", bad ? "bad" : "ok",
      bad ? `Safety violated: ${(mon.violations || []).map((v) => `step ${v.step}: ${v.text}`).join("; ")}` : undefined);
    const dl = mon.deadlock && mon.deadlock.step <= m.step ? mon.deadlock : null;
    const ll = mon.livelock && mon.livelock.step <= m.step ? mon.livelock : null;
    setLight("deadlock", dl ? "bad" : "ok", dl ? `Deadlock at step ${dl.step}: ${words("deadlock", dl.text)}` : undefined);
    setLight("livelock", ll ? "bad" : "ok", ll ? `Livelock at step ${ll.step}: ${words("livelock", ll.text)}` : undefined);

    const f = current(m);
    const banner = $("banner");
    if (f) {
      banner.hidden = false;
      banner.dataset.kind = f.kind;
      const said = `${f.kind} at step ${f.step}: ${words(f.kind, f.text)}`;
      if (banner.textContent !== said) sayFinding(banner, said);
    } else {
      banner.hidden = true;
    }
    // Culprits: the waiting processes of a livelock, the processes in their CS at a violation.
    const culprits = new Set();
    if (ll) for (const n of m.view.nodes.values()) if (n.waiting) culprits.add(String(n.id));
    if (bad) for (const n of m.view.nodes.values()) if (n.cs) culprits.add(String(n.id));
    const mark = `${stage.nodesGen}|${Array.from(culprits).join(",")}`;
    if (mark !== lastCulprits) {    // (node redraws keep the class: views/common.js MARKS)
      lastCulprits = mark;
      for (const g of stage.nodes.children) g.classList.toggle("culprit", culprits.has(g.__key));
    }

    const fired = (mon.fired || []).map((x) => `${x.step}:${x.kind}`).join(",");
    if (fired && fired !== lastFired) {
      if (m.playing) act.pause();
      banner.classList.remove("flash");
      void banner.offsetWidth;   // restart the flash animation
      banner.classList.add("flash");
    }
    lastFired = fired;
  };
}
