// Exports from the viewer: the trace as a scenario file the CLI replays
// (`allocscope run FILE --scheduler scripted --json` reaches the same state_hash; the server
// builds the file, app/exports.py, and says in the X-Allocscope-Warning header when `run` cannot
// stop exactly there), and any SVG element (the view, the space-time diagram) as a standalone
// .svg file with the page's own CSS rules inlined so it looks the same outside the page.

import { saveBlob } from "./links.js";

/** Download the trace of a viewer state {scenario, variant, schedule, step}; returns the
 * server's warning ("" when the CLI reproduces the state exactly). Throws Error(detail). */
export async function downloadTrace(state) {
  let res;
  if (typeof state.scenario === "string") {
    const q = new URLSearchParams({ scenario: state.scenario, variant: state.variant || "",
                                    schedule: (state.schedule || []).join(","),
                                    step: String(state.step ?? 0) });
    res = await fetch(`/api/export?${q}`);
  } else {
    res = await fetch("/api/export", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ scenario: state.scenario, variant: state.variant || null,
                             schedule: state.schedule || [], step: state.step }),
    });
  }
  if (!res.ok) {
    const data = await res.json().catch(() => null);
    throw new Error((data && data.detail) || `export: HTTP ${res.status}`);
  }
  const blob = await res.blob();
  const cd = res.headers.get("Content-Disposition") || "";
  const m = /filename="([^"]+)"/.exec(cd);
  saveBlob(blob, m ? m[1] : "trace.json");
  return decodeURIComponent(res.headers.get("X-Allocscope-Warning") || "");
}

/** The CSS rules of same-origin style sheets (cross-origin ones cannot be read, and are none). */
function pageCss() {
  const out = [];
  for (const sheet of Array.from(document.styleSheets)) {
    let rules;
    try { rules = sheet.cssRules; } catch { continue; }
    for (const r of Array.from(rules)) out.push(r.cssText);
  }
  return out.join("\n");
}

/** A standalone SVG document (string) of an SVG element, styled like on the page. */
export function serializeSvg(svg) {
  const copy = svg.cloneNode(true);
  copy.setAttribute("xmlns", "http://www.w3.org/2000/svg");
  const box = svg.getBoundingClientRect();
  if (!copy.getAttribute("width")) copy.setAttribute("width", String(Math.round(box.width)));
  if (!copy.getAttribute("height")) copy.setAttribute("height", String(Math.round(box.height)));
  const style = document.createElementNS("http://www.w3.org/2000/svg", "style");
  style.textContent = pageCss();
  copy.insertBefore(style, copy.firstChild);
  const cls = document.body.className;
  if (cls) copy.setAttribute("class", `${copy.getAttribute("class") || ""} ${cls}`.trim());
  return new XMLSerializer().serializeToString(copy);
}

/** Download an SVG element as a file. */
export function downloadSvg(svg, filename) {
  saveBlob(new Blob([serializeSvg(svg)], { type: "image/svg+xml" }), filename);
}
