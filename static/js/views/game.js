// Game layout (task_game): nodes with their pools and units, per-pool request queues with
// tickets (the shared queue chips), order forms and task phases as node details.

function details(n) {
  const out = [];
  if (n.phase) out.push(`phase ${n.phase}`);
  if (n.pools && typeof n.pools === "object") {
    for (const [k, v] of Object.entries(n.pools)) out.push(`${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`);
  }
  if (n.order) out.push(`order ${typeof n.order === "object" ? JSON.stringify(n.order) : n.order}`);
  return out.slice(0, 4);
}

export default {
  details,
  edgeDirected: (e) => e.directed === true,
  nodeShape: (n) => (n.kind === "pool" || n.kind === "resource" ? "rect" : "circle"),
};
