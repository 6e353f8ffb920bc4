// A protocol's scenario schema (GET /api/schema/{protocol}, the JSON Schema of its typed
// params / topology / workload): fetched once per protocol, and read as plain field lists for
// the editor's completion, input hints and inline checks.

const cache = new Map();   // protocol -> Promise of the schema (null when there is none)

export function schemaOf(protocol) {
  if (!protocol) return Promise.resolve(null);
  if (!cache.has(protocol)) {
    cache.set(protocol, fetch(`/api/schema/${encodeURIComponent(protocol)}`)
      .then((res) => (res.ok ? res.json() : null)).catch(() => null));
  }
  return cache.get(protocol);
}

function resolve(schema, node) {
  let n = node || {};
  for (let i = 0; i < 8 && n.$ref; i++) {
    const name = n.$ref.replace(/^#\/\$defs\//, "");
    n = (schema.$defs || {})[name] || {};
  }
  return n;
}

/** What one field accepts: its JSON types, choices, bounds, default and description. */
function describe(schema, node) {
  const n = resolve(schema, node);
  const alts = (n.anyOf || [n]).map((a) => resolve(schema, a));
  const types = new Set();
  const choices = [];
  let min, max;
  for (const a of alts) {
    if (a.enum) choices.push(...a.enum);
    if (a.const !== undefined) choices.push(a.const);
    if (a.type) types.add(a.type);
    if (a.minimum !== undefined) min = a.minimum;
    if (a.maximum !== undefined) max = a.maximum;
  }
  return { types: [...types], choices, min, max, default: n.default,
           description: n.description || "" };
}

/** The fields of one section ("params", "topology", "workload"): [{key, ...describe}], and
 *  whether the section is typed at all (an untyped section takes any key). */
export function sectionFields(schema, section) {
  if (!schema) return { typed: false, fields: [] };
  const sec = resolve(schema, (schema.properties || {})[section]);
  if (!sec.properties) return { typed: false, fields: [] };
  const fields = Object.entries(sec.properties).map(([key, node]) => ({ key, ...describe(schema, node) }));
  return { typed: sec.additionalProperties === false, fields };
}

/** Problems the schema alone can tell about a section's values, as the server words them
 *  (the server's answer still decides; this shows them while typing). */
export function quickCheck(schema, section, obj) {
  const { typed, fields } = sectionFields(schema, section);
  const out = [];
  const known = new Map(fields.map((f) => [f.key, f]));
  for (const [key, v] of Object.entries(obj || {})) {
    const f = known.get(key);
    const field = `scenario.${section}.${key}`;
    if (!f) {
      if (typed) out.push({ field, message: "Extra inputs are not permitted" });
      continue;
    }
    if (f.choices.length && typeof v === "string" && !f.choices.includes(v) && !f.types.includes("integer")) {
      out.push({ field, message: `Input should be ${f.choices.map((c) => `'${c}'`).join(", ")}` });
    }
    if (typeof v === "number" && ((f.min !== undefined && v < f.min) || (f.max !== undefined && v > f.max))) {
      out.push({ field, message: `must be a whole number from ${f.min} to ${f.max}` });
    }
  }
  return out;
}
