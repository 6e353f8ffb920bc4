// The viewer's share / fork / export tools, and opening a self-contained #s= link.
// main.js calls `startShare({model, page, trace, toast})` before its first load: when the URL
// carries #s=<payload>, the server verifies the fragment (POST /api/links/decode) and `page` is
// pointed at the shared state (scenario, variant, schedule, step); a bad fragment is explained in
// the banner. It resolves to whether main.js should go on and load. Text is set via textContent.

import { checkHash, forkUrl, fragmentPayload, openFragment, shareLinks } from "./links.js";
import { downloadSvg, downloadTrace } from "./export.js";

const $ = (id) => document.getElementById(id);

/** Link notices get their own strip: the monitors own #banner and hide it on every frame. */
function banner(text, kind = "notice") {
  let b = $("link-notice");
  if (!b) {
    b = document.createElement("div");
    b.id = "link-notice";
    b.className = "banner link-notice";
    b.setAttribute("role", "status");
    const anchor = $("banner") || $("controls");
    if (!anchor) return;
    anchor.after(b);
  }
  b.hidden = !text;
  b.dataset.kind = kind;
  b.textContent = text;
}

/** The viewer's current state as a link request. */
function currentState(ctx) {
  const { model, page } = ctx;
  // frames carry the history up to the current step: share the state, not the future after it
  const schedule = model.history.filter((r) => r.step <= model.step).map((r) => r.event);
  if (schedule.length !== model.step) {
    throw new Error(`this run is at step ${model.step}; the browser keeps only the last ` +
                    `${schedule.length} steps, so it cannot be shared from here`);
  }
  return { scenario: ctx.ref ?? page.scenario, variant: (model.protocol || {}).variant || page.variant,
           schedule, step: model.step, state_hash: model.stateHash };
}

function button(label, title, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

function buildTools(ctx) {
  const bar = $("controls");
  if (!bar || $("share-tools")) return;
  const box = document.createElement("div");
  box.className = "btns share-tools";
  box.id = "share-tools";
  const out = document.createElement("div");
  out.className = "share-out";
  out.id = "share-out";
  out.hidden = true;
  out.style.cssText = "flex-wrap:wrap;gap:0.3rem 1.2rem;flex-basis:100%";   // flex once shown
  const field = (id, label) => {
    const l = document.createElement("label");
    const i = document.createElement("input");
    i.id = id; i.readOnly = true; i.size = 48;
    i.addEventListener("focus", () => i.select());
    l.append(label, i);
    return l;
  };
  out.append(field("share-short", "short link "), field("share-fragment", "self-contained link "));
  const fail = (e) => ctx.toast(e.message);
  box.append(
    button("share", "Links that reopen exactly this state (same step, same state_hash)", async () => {
      try {
        const made = await shareLinks(currentState(ctx));
        $("share-short").value = made.short;
        $("share-fragment").value = made.fragment;
        out.hidden = false;
        out.style.display = "flex";
        if (navigator.clipboard) navigator.clipboard.writeText(made.short).catch(() => {});
      } catch (e) { fail(e); }
    }),
    button("fork", "Open the scenario editor starting from this state", async () => {
      try { location.href = await forkUrl(currentState(ctx)); } catch (e) { fail(e); }
    }),
    button("trace", "Download scenario + schedule: `allocscope run FILE --scheduler scripted` replays it", async () => {
      try {
        const warning = await downloadTrace(currentState(ctx));
        if (warning) banner(warning);
      } catch (e) { fail(e); }
    }),
    button("view.svg", "Download the current view as SVG, with a caption (scenario, variant, step) and the legend",
           () => downloadSvg($("view"), "view.svg", caption(ctx), $("legend"))),
    button("space-time.svg", "Download the space-time diagram as SVG, with a caption and the legend",
           () => downloadSvg($("spacetime"), "space-time.svg", caption(ctx, "space-time diagram"), $("legend"))),
  );
  bar.append(box, out);
}

/** What an exported figure says under it: scenario, variant, step, and the state's hash. */
function caption(ctx, what = "") {
  const m = ctx.model;
  const sc = m.scenario || {};
  const v = (m.protocol || {}).variant || "";
  return `${what ? what + " — " : ""}${sc.title || sc.id || "scenario"} · ${sc.id || ""} · variant ${v} · step ${m.step} of ${m.total} · state ${String(m.stateHash).slice(0, 12)}`;
}

/** /sim/-#s=... stands on a placeholder page: show the shared scenario's title and variants. */
function showSharedScenario(rec) {
  if ($("scn-title")) $("scn-title").textContent = rec.scenario.title;
  document.title = `${rec.scenario.title} — allocscope`;
  fetch("/api/scenarios").then((r) => r.json()).then((list) => {
    const same = list.find((s) => s.protocol === rec.protocol);
    const sel = $("variant");
    if (!same || !sel) return;
    sel.replaceChildren();
    for (const v of same.variants) {
      const o = document.createElement("option");
      o.value = v; o.textContent = v; o.selected = v === rec.variant;
      sel.appendChild(o);
    }
  }).catch(() => {});
}

/** Set up the tools; resolve the fragment if any. Resolves to whether to load `page`. */
export async function startShare(ctx) {
  buildTools(ctx);
  if (ctx.page.link) {
    fetch(`/api/links/${encodeURIComponent(ctx.page.link)}`).then((r) => r.json())
      .then((rec) => {
        if (rec && rec.scenario) ctx.ref = rec.scenario;
        if (rec && rec.notice) banner(rec.notice);
      }).catch(() => {});
    return true;
  }
  const payload = fragmentPayload(location.hash);
  if (payload === null) return true;
  let rec;
  try {
    rec = await openFragment(payload);
  } catch (e) {
    banner(`This link cannot be opened: ${e.message}`, "error");
    return ctx.page.scenario !== "-";   // a gallery page still shows its scenario
  }
  Object.assign(ctx.page, { scenario: rec.scenario, variant: rec.variant, schedule: rec.schedule,
                            step: rec.step, link: null });
  ctx.ref = rec.scenario;
  if (typeof rec.scenario === "object") showSharedScenario(rec);
  if (rec.notice) banner(rec.notice);
  const onDrawn = () => {
    // a draw before the link's frame arrived (no hash yet: a refit while loading) proves nothing
    if (ctx.model.step !== rec.step || !ctx.model.stateHash) return;
    window.removeEventListener("allocscope:drawn", onDrawn);
    const bad = checkHash(rec, ctx.model.stateHash);
    if (bad) banner(bad, "error");
  };
  window.addEventListener("allocscope:drawn", onDrawn);
  return true;
}
