"""Browser latency of one `step` (and `back` / `goto`): from the page's command to the frame drawn.

Starts a real uvicorn on a free loopback port, stores a token ring of n processes (random
scheduler) as a share link, opens it in Debian's chromium at 1280×720 (Playwright) and, in the
page, sends `step` commands one after the other, as a user pressing the step button would. For
each it records, with `performance.now()`:

- frame: the command sent → its answer frame parsed and applied to the model (the websocket round
  trip plus the server's work plus our `onmessage`),
- drawn: → the end of the animation-frame callback that redrew the page for that step,
- painted: → a task posted from that callback has run, i.e. after the browser's own style,
  layout and paint of that frame,

and, per step, the CPU time of each part of our code (JSON parse, applyFrame, the view, the side
lists, the space-time diagram, the legend, ...), which the machine's load affects less than the
wall-clock rows. It also records the bytes of every answer frame for `step`, `back` and `goto`
(far jumps and ±20 scrubbing, the web server benchmark's sequences).

    python benchmarks/web_latency.py [--sizes 100,500] [--steps 300] [--app-root DIR] [--json]

``--app-root`` serves another checkout (e.g. a ``git archive`` of main) with the same driver, so
that before and after are measured in one session. ``--profile`` adds the top functions by self
time from chromium's sampling profiler over the step loop. ``--cpu`` adds, from a chromium trace
of 60 more steps, the thread CPU time per step of the browser's own work (script, style, layout,
paint, raster, ...): CPU time, not wall time, so the machine's load changes it least.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

# Installed once per page: wraps the socket's receive to time the JSON parse and keep the bytes
# of each answer, and offers run(ops) which sends the commands one at a time and waits for each
# to be drawn (and painted) before the next.
SETUP_JS = """() => {
  const a = window.allocscope;
  const rec = { last: null };
  const orig = a.socket.receive.bind(a.socket);
  a.socket.receive = (data) => {
    const t0 = performance.now();
    let id = null;
    try { id = JSON.parse(data).reply_to; } catch (e) {}
    const t1 = performance.now();
    orig(data);
    rec.last = { bytes: data.length, parse: t1 - t0, id, handled: performance.now() };
  };
  const drawnFor = (step) => new Promise((resolve) => {
    const on = (ev) => {
      if (ev.detail.step !== step) return;
      window.removeEventListener('allocscope:drawn', on);
      const drawn = performance.now();
      const ch = new MessageChannel();
      ch.port1.onmessage = () => resolve({ drawn, painted: performance.now() });
      ch.port2.postMessage(0);
    };
    window.addEventListener('allocscope:drawn', on);
  });
  window.__bench = async (ops) => {
    const out = [];
    for (const op of ops) {
      const tm0 = { ...a.timing };
      const t0 = performance.now();
      let answer;
      if (op.op === 'step') answer = await a.act.step();
      else if (op.op === 'back') answer = await a.act.back();
      else answer = await a.act.goto(op.step);
      const frame = performance.now();
      const d = await drawnFor(answer.step);
      const parts = {};
      for (const k of Object.keys(a.timing)) parts[k] = a.timing[k] - (tm0[k] || 0);
      out.push({ op: op.op, step: answer.step, bytes: rec.last.bytes, parse: rec.last.parse,
                 frame: frame - t0, drawn: d.drawn - t0, painted: d.painted - t0, parts });
    }
    return out;
  };
  return true;
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def start_server(app_root: Path, data: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = dict(os.environ, ALLOCSCOPE_DATA=data, PYTHONPATH=str(app_root),
               ALLOCSCOPE_COMMANDS_PER_SECOND="100000", ALLOCSCOPE_COMMAND_BURST="100000")
    server = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.main:app", "--host",
                               "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                              cwd=app_root, env=env)
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(base + "/healthz", timeout=1)
            return server, base
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("uvicorn did not start")


def link_for(base: str, n: int) -> str:
    scenario = json.loads((ROOT / "protocols/scenarios/token-ring.json").read_text())
    scenario.update(id=f"ring-{n}", title=f"Token ring, {n} processes",
                    params={"n": n, "requests": 1000},
                    scheduler={"kind": "random", "seed": 7}, steps=1_000_000)
    scenario.pop("expect", None)
    req = urllib.request.Request(base + "/api/links", method="POST",
                                 data=json.dumps({"scenario": scenario, "step": 0}).encode(),
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())["url"]


def ops_for(steps: int) -> dict[str, list[dict[str, Any]]]:
    """The command sequences: steps, then 50 backs, 50 far gotos, 100 scrubs of ±20 steps."""
    total = steps - 50
    far = [{"op": "goto", "step": (i * 7919) % (total + 1)} for i in range(50)]
    scrub, k = [], total // 2
    for i in range(100):
        k = max(0, min(total, k + ((i * 37) % 41) - 20))
        scrub.append({"op": "goto", "step": k})
    return {"step": [{"op": "step"}] * steps, "back": [{"op": "back"}] * 50,
            "goto_far": far, "goto_scrub": scrub}


def measure(page: Any, base: str, n: int, steps: int, profile: bool,
            cpu: bool = False) -> dict[str, Any]:
    page.goto(base + link_for(base, n))
    page.wait_for_function("() => document.body.dataset.ready === '1' && "
                           "window.allocscope.model.view.nodes.size > 0")
    page.evaluate(SETUP_JS)
    page.evaluate("ops => window.__bench(ops)", [{"op": "step"}] * 20)        # warm up
    seqs = ops_for(steps)
    out: dict[str, Any] = {"n": n}
    cdp = None
    if profile:
        cdp = page.context.new_cdp_session(page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        cdp.send("Profiler.start")
    for name, ops in seqs.items():
        out[name] = page.evaluate("ops => window.__bench(ops)", ops)
        if cdp and name == "step":
            prof = cdp.send("Profiler.stop")["profile"]
            out["profile"] = top_functions(prof)
            cdp = None
    if cpu:
        out["cpu_trace"] = cpu_trace(page, 60)
    page.screenshot(path=str(shot_dir() / f"latency-ring-{n}.png"))
    return out


# trace events whose thread CPU time (tdur) is summed: the renderer's work for a frame
TRACED = ("FunctionCall", "FireAnimationFrame", "UpdateLayoutTree", "Layout", "PrePaint", "Paint",
          "Layerize", "RasterTask", "Commit", "MinorGC", "MajorGC")


def cpu_trace(page: Any, k: int) -> dict[str, float]:
    """Thread CPU ms per step, by trace event, over k more steps (and `all`: every top-level
    task of the browser's processes, what the steps cost the machine in all)."""
    browser = page.context.browser
    browser.start_tracing(page=page, categories=["devtools.timeline",
                                                 "disabled-by-default-devtools.timeline"])
    page.evaluate("ops => window.__bench(ops)", [{"op": "step"}] * k)
    events = json.loads(browser.stop_tracing())["traceEvents"]
    acc = dict.fromkeys((*TRACED, "all"), 0.0)
    for e in events:
        if e.get("ph") != "X" or not e.get("tdur"):
            continue
        name = "all" if e["name"] == "RunTask" else e["name"]
        if name in acc:
            acc[name] += e["tdur"] / 1000
    return {key: round(v / k, 3) for key, v in acc.items()}


def shot_dir() -> Path:
    d = ROOT / "test-output" / "screenshots"
    d.mkdir(parents=True, exist_ok=True)
    return d


def top_functions(prof: dict[str, Any], k: int = 25) -> list[tuple[str, float]]:
    """Self time per function (ms) from a CDP sampling profile, largest first."""
    dt = dict.fromkeys((n["id"] for n in prof["nodes"]), 0.0)
    for nid, d in zip(prof["samples"], prof["timeDeltas"], strict=False):
        dt[nid] += d / 1000
    acc: dict[str, float] = {}
    for node in prof["nodes"]:
        cf = node["callFrame"]
        name = f"{cf['functionName'] or '(anon)'} {Path(cf['url']).name}:{cf['lineNumber'] + 1}"
        acc[name] = acc.get(name, 0.0) + dt[node["id"]]
    return sorted(acc.items(), key=lambda x: -x[1])[:k]


def summarise(res: dict[str, Any]) -> dict[str, Any]:
    """p50 / p99 of the wall-clock rows, medians of the bytes, mean CPU per part."""
    s: dict[str, Any] = {"n": res["n"]}
    for name in ("step", "back", "goto_far", "goto_scrub"):
        rows = res[name]
        s[name] = {k: {"p50": round(pct([r[k] for r in rows], 50), 2),
                       "p99": round(pct([r[k] for r in rows], 99), 2)}
                   for k in ("frame", "drawn", "painted")}
        s[name]["bytes_median"] = int(statistics.median(r["bytes"] for r in rows))
        parts: dict[str, float] = {"parse": statistics.mean(r["parse"] for r in rows)}
        for key in rows[0]["parts"]:
            if key in ("frames", "messages"):
                continue
            parts[key] = statistics.mean(r["parts"].get(key, 0.0) for r in rows)
        s[name]["cpu_ms_mean"] = {k: round(v, 3) for k, v in parts.items()}
    if "cpu_trace" in res:
        s["cpu_trace_ms_per_step"] = res["cpu_trace"]
    if "profile" in res:
        s["profile"] = [(f, round(ms, 1)) for f, ms in res["profile"]]
    return s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,500")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--app-root", type=Path, default=ROOT)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    steps = max(60, min(args.steps, 3000))

    from playwright.sync_api import sync_playwright

    load0 = os.getloadavg()
    results = []
    with tempfile.TemporaryDirectory() as data:
        server, base = start_server(args.app_root.resolve(), data)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
                for n in sizes:
                    page = browser.new_page(viewport={"width": 1280, "height": 720})
                    results.append(summarise(measure(page, base, n, steps, args.profile, args.cpu)))
                    page.close()
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=10)
    load1 = os.getloadavg()
    report = {"app_root": str(args.app_root), "steps": steps, "loadavg_before": load0,
              "loadavg_after": load1, "results": results}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"app {args.app_root}; load average before {load0[0]:.2f}, after {load1[0]:.2f}")
    for s in results:
        print(f"\nn = {s['n']}")
        for name in ("step", "back", "goto_far", "goto_scrub"):
            r = s[name]
            print(f"  {name:10s} frame {r['frame']['p50']:6.2f} / {r['frame']['p99']:6.2f}   "
                  f"drawn {r['drawn']['p50']:6.2f} / {r['drawn']['p99']:6.2f}   "
                  f"painted {r['painted']['p50']:6.2f} / {r['painted']['p99']:6.2f} ms (p50 / p99)"
                  f"   bytes median {r['bytes_median']}")
            print("             cpu ms mean: " + ", ".join(f"{k} {v:.3f}"
                                                         for k, v in r["cpu_ms_mean"].items()))
        if "cpu_trace_ms_per_step" in s:
            print("  browser thread CPU per step (trace), ms: " + ", ".join(
                f"{k} {v:.2f}" for k, v in s["cpu_trace_ms_per_step"].items()))
        for f, ms in s.get("profile", []):
            print(f"    {ms:8.1f} ms  {f}")


if __name__ == "__main__":
    main()
