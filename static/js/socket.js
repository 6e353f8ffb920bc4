// Websocket client: pairs each answer with its command through "id"/"reply_to", reconnects
// with back-off, and hands every frame (answers and streamed play frames) to one listener.

export class Socket {
  /**
   * @param {string} url  ws:// or wss:// address of /ws
   * @param {{onFrame: Function, onStatus: Function, onReconnect: Function}} hooks
   */
  constructor(url, hooks) {
    this.url = url;
    this.hooks = hooks;
    this.nextId = 1;
    this.pending = new Map();   // id -> {resolve, reject}
    this.queue = [];            // commands sent while connecting
    this.retry = 0;
    this.everOpen = false;
    this.open();
  }

  open() {
    this.hooks.onStatus("connecting");
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.addEventListener("open", () => {
      this.retry = 0;
      this.hooks.onStatus("open");
      const again = this.everOpen;
      this.everOpen = true;
      if (again) this.hooks.onReconnect();
      for (const text of this.queue.splice(0)) ws.send(text);
    });
    ws.addEventListener("message", (ev) => this.receive(ev.data));
    ws.addEventListener("close", () => {
      this.hooks.onStatus("closed");
      for (const p of this.pending.values()) p.reject(new Error("connection lost"));
      this.pending.clear();
      const delay = Math.min(8000, 250 * 2 ** this.retry++);
      setTimeout(() => this.open(), delay);
    });
  }

  receive(data) {
    let msg;
    try { msg = JSON.parse(data); } catch { return; }
    const p = msg.reply_to != null ? this.pending.get(msg.reply_to) : undefined;
    if (p) this.pending.delete(msg.reply_to);
    this.hooks.onFrame(msg, p !== undefined);
    if (p) (msg.type === "error" ? p.reject(new Error(msg.message)) : p.resolve(msg));
  }

  /** Send a command; resolves with its answer frame, rejects with the error frame's message. */
  send(cmd) {
    const id = this.nextId++;
    const text = JSON.stringify({ ...cmd, id });
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.ws.readyState === WebSocket.OPEN) this.ws.send(text);
      else this.queue.push(text);
    });
  }
}
