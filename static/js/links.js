// Share links and exports for the viewer and the editor (server side: app/links.py).
//
// Two link forms restore the exact state (scenario + variant + schedule + step, checked by its
// state_hash): a short link /s/<id> stored by the server, and a self-contained link whose state
// travels in the fragment, /sim/<gallery id>#s=<payload> (or /sim/-#s=... for a scenario given as
// a full object). The payload is the link record's JSON, zlib-compressed (CompressionStream
// 'deflate' is zlib) and URL-safe base64 — the same bytes app/linkcodec.py reads and writes.
//
// Note for the viewer (static/js/main.js):
//   - on load: `const p = fragmentPayload(location.hash)`; if p, `const rec = await openFragment(p)`
//     and send {"op":"load", scenario: rec.scenario, variant: rec.variant, schedule: rec.schedule,
//     step: rec.step}; then `checkHash(rec, frame.state_hash)` gives "" or a sentence to show.
//     openFragment throws an Error whose message says what is wrong (show it in the banner).
//     rec.notice is "" or a sentence to show (protocol version changed, same replay).
//   - "Share": `await shareLinks(state)` with state = {scenario, variant, schedule, step,
//     state_hash} (schedule = the timeline's event ids, step = the current step) gives
//     {short, fragment} absolute URLs.
//   - "Fork": `location.href = forkUrl(state)` opens the editor at this state.
//   - exports: downloadTrace(state), downloadSvg(svgElement, "view.svg") in static/js/export.js.
// Everything shown to the user goes through textContent by the caller; nothing here touches the DOM
// beyond creating a temporary download anchor.

/** Keys sorted recursively, no spaces: the canonical JSON the server hashes and encodes. */
export function canonicalJson(value) {
  const norm = (v) => {
    if (Array.isArray(v)) return v.map(norm);
    if (v && typeof v === "object") {
      const out = {};
      for (const k of Object.keys(v).sort()) out[k] = norm(v[k]);
      return out;
    }
    return v;
  };
  return JSON.stringify(norm(value));
}

function toBase64Url(bytes) {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error("link fragment: not URL-safe base64");
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  let bin;
  try { bin = atob(b64); } catch { throw new Error("link fragment: not valid base64 (truncated?)"); }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

async function pipe(bytes, stream) {
  const body = new Blob([bytes]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(body).arrayBuffer());
}

/** A link record (as the server returns it) -> the fragment payload (without "#s="). */
export async function encodeFragment(record) {
  const raw = new TextEncoder().encode(canonicalJson({ format: 1, ...record }));
  return toBase64Url(await pipe(raw, new CompressionStream("deflate")));
}

/** A fragment payload -> the record, decoded locally (not verified: use openFragment for that). */
export async function decodeFragment(payload) {
  const bytes = fromBase64Url(payload);
  let raw;
  try { raw = await pipe(bytes, new DecompressionStream("deflate")); } catch {
    throw new Error("link fragment: the compressed data is damaged or truncated");
  }
  try { return JSON.parse(new TextDecoder().decode(raw)); } catch {
    throw new Error("link fragment: the payload is not JSON");
  }
}

/** The payload of a location.hash like "#s=...", or null when there is none. */
export function fragmentPayload(hash) {
  const m = /^#?s=([A-Za-z0-9_-]*)$/.exec(hash || "");
  return m ? m[1] : null;
}

async function postJson(url, body) {
  const res = await fetch(url, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  let data = null;
  try { data = await res.json(); } catch { /* not JSON: fall through to the status */ }
  if (!res.ok) throw new Error((data && data.detail) || `${url}: HTTP ${res.status}`);
  return data;
}

/** The server replays and verifies a fragment: the record plus notice, viewer_url, fragment_url. */
export function openFragment(payload) {
  return postJson("/api/links/decode", { fragment: payload });
}

/** The server's stored link, replayed and verified. */
export async function openShort(id) {
  const res = await fetch(`/api/links/${encodeURIComponent(id)}`);
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new Error((data && data.detail) || `link ${id}: HTTP ${res.status}`);
  return data;
}

function body(state) {
  const b = { scenario: state.scenario, variant: state.variant || null,
              schedule: state.schedule || [], step: state.step };
  if (state.state_hash) b.state_hash = state.state_hash;
  return b;
}

/** Store a short link for a viewer state -> {id, url, fragment_url, step, state_hash}. */
export function createShortLink(state) {
  return postJson("/api/links", body(state));
}

/** Both forms as absolute URLs: {short, fragment, id, state_hash}. */
export async function shareLinks(state) {
  const made = await createShortLink(state);
  const abs = (u) => new URL(u, location.origin).href;
  return { short: abs(made.url), fragment: abs(made.fragment_url), id: made.id,
           state_hash: made.state_hash };
}

/** "" when a loaded frame's hash is the link's, else the sentence to show. */
export function checkHash(record, stateHash) {
  if (!record || !record.state_hash || record.state_hash === stateHash) return "";
  return `This link recorded state ${record.state_hash.slice(0, 12)}… at step ${record.step}, ` +
    `but the replay reached ${String(stateHash).slice(0, 12)}…: the protocol or scenario changed ` +
    "since the link was made, so this is not the state that was shared.";
}

/** The editor, forked from a viewer state (gallery scenarios by query; objects by fragment). */
export async function forkUrl(state) {
  if (typeof state.scenario === "string") {
    const q = new URLSearchParams({ scenario: state.scenario, variant: state.variant || "",
                                    schedule: (state.schedule || []).join(","),
                                    step: String(state.step ?? 0) });
    return `/editor?${q}`;
  }
  const made = await postJson("/api/links/fragment", body(state));
  return `/editor#s=${made.fragment_url.split("#s=")[1]}`;
}

/** Save a blob under a file name through a temporary anchor. */
export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
