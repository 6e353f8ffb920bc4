"""Where a browser test file's time goes: a pytest plugin for the test-suite cost measurements
in benchmarks/README.md ("Test suite cost, round 1").

``PYTHONPATH=benchmarks nice -n 10 .venv/bin/pytest -q -p no:cacheprovider -p pytest_suite_cost
tests/test_browser_lesson.py`` writes, at the end of the run, to ``SUITE_COST_OUT`` (default
``test-output/suite-cost.txt``):

- CPU seconds of pytest and of every process it started (Playwright's node driver, chromium's
  processes, the uvicorn server), sampled every 0.25 s from /proc: each process's own
  user+system time, the last value seen. On a machine shared with other work this is steadier
  than the wall time, and on CI's two busy cores a worker's wall time follows it.
- wall seconds spent in each kind of Playwright call (goto, wait_for_function, evaluate, ...)
  and in fixture setup (``fixture:page`` is the page's creation), with their counts.

Linux only (/proc); measures, changes nothing.
"""

from __future__ import annotations

import collections
import functools
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

_TCK = os.sysconf("SC_CLK_TCK")
_cpu: dict[int, tuple[str, int]] = {}
_wall: collections.Counter[str] = collections.Counter()
_calls: collections.Counter[str] = collections.Counter()
_stop = threading.Event()


def _scan(root: int) -> None:
    """Note the CPU ticks of every descendant of ``root`` (name kept from its first sighting)."""
    kids: dict[int, list[tuple[int, str, int]]] = collections.defaultdict(list)
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            stat = Path(f"/proc/{p}/stat").read_text()
        except OSError:
            continue
        rest = stat.rsplit(")", 1)[1].split()
        kids[int(rest[1])].append((int(p), stat[stat.index("(") + 1:stat.rindex(")")],
                                   int(rest[11]) + int(rest[12])))
    todo = [root]
    while todo:
        for pid, name, ticks in kids.get(todo.pop(), []):
            _cpu[pid] = (_cpu.get(pid, (name, 0))[0], ticks)
            todo.append(pid)


def _sample() -> None:
    me = os.getpid()
    while not _stop.is_set():
        _scan(me)
        _stop.wait(0.25)


def _timed(cls: Any, name: str) -> None:
    f = getattr(cls, name)
    label = f"{cls.__name__}.{name}"

    @functools.wraps(f)
    def wrapper(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            _wall[label] += time.perf_counter() - t
            _calls[label] += 1
    setattr(cls, name, wrapper)


def pytest_configure(config: pytest.Config) -> None:
    threading.Thread(target=_sample, daemon=True).start()
    try:
        from playwright.sync_api import _generated as g
    except ImportError:
        return
    for name in ("goto", "reload", "wait_for_function", "wait_for_selector", "wait_for_url",
                 "evaluate", "eval_on_selector_all", "click", "set_viewport_size", "text_content",
                 "get_attribute", "screenshot", "wait_for_timeout", "go_back", "is_visible"):
        _timed(g.Page, name)
    for name in ("click", "text_content", "count", "is_visible", "bounding_box"):
        _timed(g.Locator, name)
    _timed(g.Keyboard, "press")
    _timed(g.Browser, "new_context")
    _timed(g.BrowserContext, "new_page")
    _timed(g.BrowserContext, "close")


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Any:
    t = time.perf_counter()
    yield
    _wall["fixture:" + fixturedef.argname] += time.perf_counter() - t
    _calls["fixture:" + fixturedef.argname] += 1


def pytest_unconfigure(config: pytest.Config) -> None:
    _stop.set()
    cpu: collections.Counter[str] = collections.Counter()
    for name, ticks in _cpu.values():
        cpu[name] += ticks / _TCK
    own = os.times()
    cpu["pytest"] = own.user + own.system
    out = Path(os.environ.get("SUITE_COST_OUT", "test-output/suite-cost.txt"))
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{sum(cpu.values()):8.1f} CPU s  all processes"]
    lines += [f"{v:8.1f} CPU s  {k}" for k, v in cpu.most_common()]
    lines += [f"{v:8.2f} wall s  {_calls[k]:6d}  {k}" for k, v in _wall.most_common()]
    out.write_text("\n".join(lines) + "\n")
