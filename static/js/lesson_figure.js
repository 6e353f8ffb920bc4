// The live figure of a lesson: one websocket session, the viewer's own model and SVG views
// (imported, not copied), the chapter's highlights, and click handlers the lesson decides on.

import { Socket } from "./socket.js";
import { applyFrame, clearDirty, emptyModel, trace } from "./model.js";
import { makeStage, placeNodes, renderView } from "./views/common.js";
import { hooksFor } from "./views/index.js";
import { setStyles } from "./messages.js";

export function setupFigure(svg, { onFrame, onStatus, onNode, onMessage }) {
  const model = emptyModel();
  const stage = makeStage(svg);
  const ui = { selected: null, armed: null, lastN: -1, forceAll: false, highlight: new Set() };
  let hooks = {};
  let current = null;     // the last load command, to rebuild the session after a reconnect
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
  const socket = new Socket(url, {
    onStatus,
    onReconnect: () => (current ? socket.send(current).catch(() => {}) : null),
    onFrame: (msg) => {
      if (msg.type !== "frame") return;
      if (msg.protocol && msg.protocol.view_kind) hooks = hooksFor(msg.protocol.view_kind);
      // the protocol's own shape and colour per message type, as in the viewer (without them
      // the lesson drew game-conflict's Info as black hexagons, the viewer as light blue ones)
      if (msg.protocol) setStyles(msg.protocol.message_styles);
      applyFrame(model, msg);
      placeNodes(hooks, model, msg);   // the layout's own placing, as in the viewer
      render();
      onFrame(model, msg);
    },
  });
  const handlers = {
    selectNode: (id) => onNode(String(id)),
    clickMessage: (m) => onMessage(m),
  };

  let pending = false;
  function render() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(draw);
  }
  function draw() {
    pending = false;
    renderView(stage, model, hooks, handlers, ui);
    for (const g of stage.nodes.children) g.classList.toggle("lesson-hl", ui.highlight.has(g.__key));
    for (const g of stage.messages.children) g.classList.toggle("lesson-hl", ui.highlight.has(`type:${g.dataset.type}`));
    clearDirty(model);
    document.body.dataset.step = String(model.step);
    document.body.dataset.ready = "1";
    window.dispatchEvent(new CustomEvent("allocscope:drawn", { detail: { step: model.step } }));
  }
  window.addEventListener("resize", () => { ui.forceAll = true; render(); });

  return {
    model,
    /** Show a state: scenario + variant + schedule, at the end of the schedule. */
    load(scenario, variant, schedule, highlight = []) {
      ui.highlight = new Set(highlight.map(String));
      ui.forceAll = true;
      current = { op: "load", scenario, variant, schedule, step: schedule.length };
      return socket.send(current).then((f) => { document.body.dataset.loaded = `${scenario}:${variant}:${schedule.length}`; return f; });
    },
    deliver: (id) => socket.send({ op: "deliver", event: id }),
    events: (since) => trace(model).slice(since),
  };
}
