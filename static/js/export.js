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

const NS = "http://www.w3.org/2000/svg";

/**
 * The figure with what a slide needs under it: a caption (scenario, variant, step) and the
 * legend of the page (its swatches and words), as one standalone SVG.
 */
export function captionedSvg(svg, caption, legend) {
  const inner = new DOMParser().parseFromString(serializeSvg(svg), "image/svg+xml").documentElement;
  const W = +inner.getAttribute("width"), H = +inner.getAttribute("height");
  const root = document.createElementNS(NS, "svg");
  root.setAttribute("xmlns", NS);
  const items = legend ? Array.from(legend.querySelectorAll(".lg")) : [];
  // legend rows: as many entries as fit across, 22 px a row
  let x = 8, y = H + 48;
  const placed = [];
  for (const it of items) {
    const label = it.textContent.trim();
    const w = 26 + label.length * 7;
    if (x + w > W && x > 8) { x = 8; y += 22; }
    placed.push({ it, label, x, y });
    x += w + 12;
  }
  const height = (placed.length ? y + 16 : H + 34);
  root.setAttribute("width", String(W));
  root.setAttribute("height", String(height));
  root.setAttribute("viewBox", `0 0 ${W} ${height}`);
  const bg = document.createElementNS(NS, "rect");
  for (const [k, v] of Object.entries({ width: W, height, fill: "#fbfaf7" })) bg.setAttribute(k, String(v));
  root.appendChild(bg);
  root.appendChild(inner);
  const cap = document.createElementNS(NS, "text");
  for (const [k, v] of Object.entries({ x: 8, y: H + 22, "font-size": 15, "font-family": "DejaVu Sans, sans-serif", fill: "#1d2330" })) cap.setAttribute(k, String(v));
  cap.textContent = caption;
  root.appendChild(cap);
  for (const p of placed) {
    const sw = p.it.querySelector("svg");
    if (sw) {
      const c = sw.cloneNode(true);
      c.setAttribute("x", String(p.x)); c.setAttribute("y", String(p.y - 8));
      c.setAttribute("width", "16"); c.setAttribute("height", "16");
      root.appendChild(c);
    }
    const t = document.createElementNS(NS, "text");
    for (const [k, v] of Object.entries({ x: p.x + 20, y: p.y + 5, "font-size": 12, "font-family": "DejaVu Sans, sans-serif", fill: "#1d2330" })) t.setAttribute(k, String(v));
    t.textContent = p.label;
    root.appendChild(t);
  }
  return new XMLSerializer().serializeToString(root);
}

/** Download an SVG element as a file (with a caption and the legend when given). */
export function downloadSvg(svg, filename, caption = "", legend = null) {
  const text = caption ? captionedSvg(svg, caption, legend) : serializeSvg(svg);
  saveBlob(new Blob([text], { type: "image/svg+xml" }), filename);
}
