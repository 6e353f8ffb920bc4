// "start a room" on the viewer: makes a room from the state on screen (POST /api/rooms) and opens
// the teacher's page; the teacher key travels in the URL fragment only. Also used by other pages
// (a lesson player) through startRoomFrom(state).

/** Start a room from {scenario, variant, schedule, step, lesson?, chapter?}; opens the teacher page. */
export async function startRoomFrom(state) {
  const r = await fetch("/api/rooms", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(state),
  });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.detail || `could not start a room (${r.status})`);
  location.assign(body.teacher_url);
  return body;
}

export function addRoomButton({ model, page, toast }) {
  const bar = document.querySelector("#controls .btns");
  if (!bar || document.getElementById("btn-room") || page.embed) return;
  const b = document.createElement("button");
  b.type = "button";
  b.id = "btn-room";
  b.textContent = "start a room";
  b.title = "Teach with this state: students join with a code or QR code and follow what you do here";
  b.addEventListener("click", () => {
    const schedule = model.history.filter((x) => x.step <= model.total).map((x) => x.event);
    const full = schedule.length === model.total;
    const state = { scenario: model.scenario || page.scenario, variant: (model.protocol || {}).variant || page.variant };
    if (full) { state.schedule = schedule; state.step = model.step; }
    startRoomFrom(state).catch((e) => toast(e.message));
  });
  bar.after(b);
}
