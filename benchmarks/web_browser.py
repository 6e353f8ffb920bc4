"""Browser frame rate while playing a 200-node token ring at full speed.

Starts a real uvicorn on a free loopback port, stores the 200-process ring as a share link,
opens it in Debian's chromium (Playwright, 1280×720), sets the speed to the maximum (1000
steps/s), presses play and records requestAnimationFrame timestamps for a few seconds. Reports
the frames per second the page achieved (goal ≥ 30), the slowest frames, how many simulation
steps the page drew per second, and the time spent in our own drawing code per frame.

    python benchmarks/web_browser.py [--n 200] [--seconds 6]

With ``--memory STEPS`` it instead plays until the page has shown STEPS steps and samples, every
STEPS/8 steps, the JavaScript heap after a forced garbage collection, the number of DOM
elements and the records the page keeps: memory must stay flat over a long run (issue 17).

    python benchmarks/web_browser.py --memory 40000
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from web_latency import link_for  # the same 1,000-request token ring link, one definition

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

MEASURE_JS = """async (seconds) => {
  const a = window.allocscope;
  const stamps = [];
  let drawMs = 0, draws = 0;
  const onDrawn = () => { draws++; };
  window.addEventListener('allocscope:drawn', onDrawn);
  const t0 = performance.now();
  const step0 = a.model.step;
  const tm0 = { ...a.timing };
  // time our own drawing: wrap the rAF callbacks' work via the long-task-free path
  const obs = new PerformanceObserver((l) => { for (const e of l.getEntries()) drawMs += e.duration; });
  try { obs.observe({ type: 'longtask', buffered: false }); } catch (e) {}
  await new Promise((resolve) => {
    const tick = (t) => {
      stamps.push(t);
      if (t - t0 < seconds * 1000) requestAnimationFrame(tick); else resolve();
    };
    requestAnimationFrame(tick);
  });
  obs.disconnect();
  window.removeEventListener('allocscope:drawn', onDrawn);
  const tm = {};
  for (const k of Object.keys(a.timing)) tm[k] = a.timing[k] - tm0[k];
  return { stamps, draws, steps: a.model.step - step0, longTaskMs: drawMs, timing: tm,
           playing: a.model.playing, nodes: a.model.view.nodes.size };
}"""


SAMPLE_JS = """() => { window.gc(); const a = window.allocscope;
  return {step: a.model.step, heap: performance.memory.usedJSHeapSize,
          elements: document.getElementsByTagName('*').length, history: a.model.history.length,
          ahead: a.model.ahead.size, playing: a.model.playing}; }"""


def memory_run(page, steps: int) -> list[dict]:
    """Play until `steps` steps have been shown, sampling memory every steps/8 (resuming play if
    a finding paused it); returns the samples."""
    samples = [page.evaluate(SAMPLE_JS)]
    every = max(1, steps // 8)
    deadline = time.monotonic() + 900
    while samples[-1]["step"] < steps and time.monotonic() < deadline:
        target = samples[-1]["step"] + every
        page.wait_for_function("k => window.allocscope.model.step >= k || !window.allocscope.model.playing",
                               arg=target, timeout=600_000)
        if not page.evaluate("() => window.allocscope.model.playing"):
            page.evaluate("() => window.allocscope.act.togglePlay()")
            page.wait_for_timeout(300)
            continue
        samples.append(page.evaluate(SAMPLE_JS))
    return samples


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--memory", type=int, default=0, metavar="STEPS",
                    help="measure memory over a run of STEPS steps instead of the frame rate")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as data:
        env = dict(os.environ, ALLOCSCOPE_DATA=data, PYTHONPATH=str(ROOT))
        server = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.main:app", "--host",
                                   "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                                  cwd=ROOT, env=env)
        try:
            for _ in range(100):
                try:
                    urllib.request.urlopen(base + "/healthz", timeout=1)
                    break
                except OSError:
                    time.sleep(0.1)
            url = link_for(base, args.n)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path="/usr/bin/chromium",
                                             args=ARGS + ["--js-flags=--expose-gc",
                                                          "--enable-precise-memory-info"])
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                page.goto(base + url)
                page.wait_for_function("() => document.body.dataset.ready === '1' && "
                                       "window.allocscope.model.view.nodes.size > 0")
                page.evaluate("() => window.allocscope.act.speed(1000)")
                page.wait_for_timeout(200)
                page.click("#btn-play")
                page.wait_for_timeout(500)          # let play get going
                if args.memory:
                    t0 = time.monotonic()
                    samples = memory_run(page, args.memory)
                    page.click("#btn-play")
                    browser.close()
                    report_memory(samples, time.monotonic() - t0)
                    return
                res = page.evaluate(MEASURE_JS, args.seconds)
                shots = ROOT / "test-output" / "screenshots"
                shots.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(shots / f"ring-{args.n}-playing.png"))
                page.click("#btn-play")
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=10)

    st = res["stamps"]
    gaps = [b - a for a, b in zip(st, st[1:], strict=False)]
    secs = (st[-1] - st[0]) / 1000
    fps = len(gaps) / secs
    gaps_sorted = sorted(gaps)
    p99 = gaps_sorted[int(0.99 * (len(gaps_sorted) - 1))]
    print(f"nodes drawn: {res['nodes']}   still playing at the end: {res['playing']}")
    print(f"frames per second (requestAnimationFrame): {fps:.1f}   goal >= 30")
    print(f"frame interval: median {statistics.median(gaps):.1f} ms, p99 {p99:.1f} ms, "
          f"max {max(gaps):.1f} ms")
    print(f"simulation steps shown per second: {res['steps'] / secs:.0f}   "
          f"redraws per second: {res['draws'] / secs:.1f}")
    print(f"long tasks (> 50 ms) in the window: {res['longTaskMs']:.0f} ms total")
    tm = res["timing"]
    per = max(1, tm["frames"])
    print("our drawing code per redraw: " + ", ".join(
        f"{k} {tm[k] / per:.2f} ms" for k in ("view", "side", "spacetime", "other")))
    print(f"websocket frames handled: {tm['messages'] / secs:.0f}/s, "
          f"{tm['onmessage'] / max(1, tm['messages']):.2f} ms each (parse excluded)")


def report_memory(samples: list[dict], secs: float) -> None:
    print(f"{samples[-1]['step']} steps shown in {secs:.0f} s")
    print("step      heap MB   DOM elements   records kept")
    for x in samples:
        print(f"{x['step']:>6}   {x['heap'] / 2**20:8.1f}   {x['elements']:>12}   "
              f"{x['history'] + x['ahead']:>12}")
    early = [x for x in samples if x["step"] >= samples[-1]["step"] / 4] or samples
    growth = samples[-1]["heap"] / early[0]["heap"]
    print(f"heap at the end / heap at a quarter of the run: {growth:.2f}   goal: flat (<= 1.2)")


if __name__ == "__main__":
    main()
