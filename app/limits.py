"""The one settings object: every ``ALLOCSCOPE_*`` environment variable, declared once.

Each variable is one field of :class:`Settings`, declared with :func:`setting` (default, bounds
and a sentence saying what happens over it). The field ``max_processes`` is read from
``ALLOCSCOPE_MAX_PROCESSES``, and so on. ``Settings.from_env()`` parses them all with one policy:
a malformed or out-of-bounds value raises :class:`SettingsError`, a sentence naming the variable,
and the server does not start (``app/main.py``). The README's limits table is generated from
these declarations (``allocscope settings --markdown``; tests/test_api.py keeps them equal).

To add a variable: add one field below, e.g. ::

    room_max_students: int = setting(60, 1, 10_000, "students in one classroom room: "
                                     "the next one is refused, naming the variable")

then read it from the app's settings (``request.app.state.limits.room_max_students``, or
``current()`` where no app is at hand) and run ``allocscope settings --markdown`` to refresh the
README table. Types: ``int``, ``float`` (bounds inclusive), ``str``, ``Path`` (a folder) and
``tuple[str, ...]`` (comma-separated; give ``check=`` to validate each item).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, get_type_hints

ENV_PREFIX = "ALLOCSCOPE_"


class SettingsError(ValueError):
    """A malformed ``ALLOCSCOPE_*`` value; the message names the variable and says what to do."""


def setting(default: Any, low: float | None = None, high: float | None = None, doc: str = "",
            *, shown: str | None = None, check: Callable[[str], str | None] | None = None) -> Any:
    """Declare one variable: its default, inclusive bounds (numbers), the README sentence, how
    the default is shown in the table, and for lists a per-item check (returns a complaint)."""
    return field(default=default, metadata={"low": low, "high": high, "doc": doc,
                                            "shown": shown, "check": check})


def _origin(item: str) -> str | None:
    if item == "*" or re.fullmatch(r"https?://[A-Za-z0-9.\-\[\]:]+", item):
        return None
    return f"{item!r} is not an origin like https://lab.example.org (or *)"


def _host(item: str) -> str | None:
    if re.fullmatch(r"(\*|(\*\.)?[A-Za-z0-9\-]+(\.[A-Za-z0-9\-]+)*|\[[0-9a-fA-F:]+\])", item):
        return None
    return f"{item!r} is not a host name like lab.example.org, *.example.org or *"


def _redis_url(item: str) -> str | None:
    if re.fullmatch(r"(rediss?|unix)://\S+", item):
        return None
    return f"{item[:40]!r} is not a redis://host:port/db (or rediss://, unix://) URL"


LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]", "testserver")


@dataclass(frozen=True)
class Settings:
    """The numbers a session, a connection and the server are held to."""

    # -- websocket sessions (app/session.py, app/ws.py)
    max_processes: int = setting(1000, 1, 100_000, "processes in a scenario: `load` is refused, "
                                 "naming the variable")
    max_messages: int = setting(20_000, 1, 10_000_000, "messages in flight: stepping answers an "
                                "error, play stops")
    max_schedule: int = setting(50_000, 1, 10_000_000, "event ids in a loaded schedule (or "
                                "`?schedule=`): refused")
    max_steps: int = setting(50_000, 1, 10_000_000, "length of a session's timeline (≈ 0.7 KB "
                             "of memory a step)")
    ws_max_size: int = setting(1 << 20, 1024, 1 << 30, "bytes in one websocket message: close "
                               "1009 (uvicorn's `--ws-max-size` too)")
    max_frame_bytes: int = setting(4 << 20, 1024, 1 << 30, "bytes in one frame the server would "
                                   "send: the command is answered by an error naming the limit")
    commands_per_second: float = setting(50.0, 0.001, 1e6, "token bucket refill per connection: "
                                         "an error frame per extra command")
    command_burst: int = setting(100, 1, 1_000_000, "token bucket size (commands at once)")
    play_burst: int = setting(20_000, 1, 10_000_000, "steps one `play` takes before it pauses "
                              "with a notice")
    max_sessions: int = setting(200, 1, 100_000, "websocket sessions per worker: \"server "
                                "busy\" error frame, close 1008")
    idle_seconds: float = setting(3600.0, 0.01, 1e7, "a connection idle this long (not playing) "
                                  "is closed (1001)")
    allowed_origins: tuple[str, ...] = setting((), doc="other origins allowed to open the "
                                               "websocket (`*` = any); others: close 1008",
                                               shown="same origin only", check=_origin)
    allowed_hosts: tuple[str, ...] = setting(LOOPBACK_HOSTS, doc="`Host` names the server "
                                             "answers (`*.example.org`, `*` = any); others: 400. "
                                             "Set it to the public name when deploying",
                                             shown="loopback names only", check=_host)
    # -- raw input, before anything is built (app/rawcheck.py)
    max_depth: int = setting(32, 2, 1000, "nesting depth of any JSON the server reads (bodies, "
                             "scenarios, commands, links): 400 / error frame, CLI exit 2")
    max_items: int = setting(1000, 1, 1_000_000, "entries in any one list or object of a "
                             "scenario (tasks, pools, resources, requests, clients): refused "
                             "before anything is built")
    max_body_bytes: int = setting(1 << 20, 1024, 1 << 30, "bytes in one HTTP request body, read "
                                  "in chunks: 413 as soon as it is passed")
    # -- work done off the event loop (app/offload.py)
    work_seconds: float = setting(20.0, 0.1, 3600.0, "seconds one load, link open, validation "
                                  "or export may take: stopped with an error naming the limit")
    work_memory_mb: int = setting(1024, 16, 1 << 20, "MiB a worker's memory may grow during one "
                                  "such piece of work: stopped with an error naming the limit")
    max_work: int = setting(2, 1, 64, "such pieces of work running at once per worker; more "
                            "wait their turn")
    # -- fair CPU (app/governor.py)
    play_cpu_share: float = setting(0.6, 0.05, 0.95, "share of a worker's time all playing "
                                    "sessions together may use; each gets a fair slice of it")
    refuse_lag_ms: int = setting(500, 50, 3_600_000, "milliseconds a worker's event loop may run "
                                 "late (smoothed) before it refuses new sessions as \"server "
                                 "busy\"; open sessions are kept")
    # -- links (app/store.py, app/linkstate.py)
    data: Path = setting(Path("data"), doc="folder of the short-link database `links.sqlite3` "
                         "(SQLite, WAL); created on first use", shown="`./data`")
    link_max_bytes: int = setting(256 * 1024, 1024, 1 << 30, "bytes of a stored link: 413")
    link_max_schedule: int = setting(20_000, 1, 10_000_000, "events in a link's schedule: 413")
    link_misses_per_minute: int = setting(30, 1, 1_000_000, "unknown short-link ids one client "
                                          "may ask for a minute: 429 beyond (ids are guessable "
                                          "from a known state)")
    # -- the explorer (app/checks.py)
    max_checks: int = setting(2, 1, 64, "explorer runs at once across all workers: 429 beyond")
    check_max_states: int = setting(2_000_000, 1, 1_000_000_000, "states one explorer run may "
                                    "ask for: 413")
    check_max_seconds: float = setting(300.0, 1.0, 86_400.0, "seconds one explorer run may take")
    # -- classroom rooms (app/rooms/)
    room_max_students: int = setting(300, 1, 100_000, "students in one room (counted across "
                                     "workers): the next one is refused, naming the variable")
    max_rooms: int = setting(50, 1, 100_000, "rooms started on one worker and not yet expired: "
                             "`POST /api/rooms` answers 429")
    room_connections: int = setting(1000, 1, 1_000_000, "room websockets per worker (a student "
                                    "who follows holds no session): error frame, close 1008")
    room_idle_seconds: float = setting(7200.0, 1.0, 1e7, "a room with no activity for this "
                                       "long ends, and its anonymous answers and outcomes with it")
    redis_url: str = setting("", doc="Redis for rooms across workers and hosts "
                             "(`redis://host:6379/0`); unset: rooms live in the worker's memory",
                             shown="unset (in-process rooms)", check=_redis_url)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Settings":
        """Read ``ALLOCSCOPE_<NAME>`` for each field; unset or empty keeps the default."""
        env = dict(os.environ) if env is None else env
        hints = get_type_hints(cls)
        values: dict[str, Any] = {}
        for f in fields(cls):
            key = env_name(f.name)
            raw = env.get(key)
            if raw is None or raw.strip() == "":
                continue
            values[f.name] = _parse(key, raw.strip(), hints[f.name], f)
        return cls(**values)

    def table(self) -> list[tuple[str, str]]:
        """(variable, current value) rows."""
        return [(env_name(f.name), _show(getattr(self, f.name))) for f in fields(self)]


Limits = Settings   # the name the sessions and tests have always used


def env_name(field_name: str) -> str:
    return ENV_PREFIX + field_name.upper()


def _show(v: Any) -> str:
    if isinstance(v, tuple):
        return ",".join(v)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def read_one(name: str, env: dict[str, str] | None = None) -> Any:
    """One setting from the environment, parsed as ``from_env`` does (for values that may change
    while a process runs, as tests change ``ALLOCSCOPE_DATA``)."""
    env = os.environ if env is None else env
    f = Settings.__dataclass_fields__[name]
    raw = env.get(env_name(name))
    if raw is None or raw.strip() == "":
        return f.default
    return _parse(env_name(name), raw.strip(), get_type_hints(Settings)[name], f)


def _parse(key: str, raw: str, typ: Any, f: Any) -> Any:
    meta = f.metadata
    bad = f"{key}={raw[:60]!r}"
    if typ in (int, float):
        try:
            num: float = int(raw) if typ is int else float(raw)
        except ValueError:
            kind = "a whole number" if typ is int else "a number"
            raise SettingsError(f"{bad}: must be {kind} (unset it to use the default, "
                                f"{_show(f.default)})") from None
        low, high = meta["low"], meta["high"]
        if not math.isfinite(num) or (low is not None and num < low) or \
                (high is not None and num > high):
            raise SettingsError(f"{bad}: must be between {_show(float(low))} and "
                                f"{_show(float(high))}")
        return num
    if typ is Path:
        if "\x00" in raw:
            raise SettingsError(f"{bad}: a folder name cannot contain a NUL character")
        p = Path(raw)
        if p.exists() and not p.is_dir():
            raise SettingsError(f"{bad}: {p} exists and is not a folder; point it at a folder "
                                "for the link database")
        return p
    if typ == tuple[str, ...]:
        items = tuple(x.strip().rstrip("/") for x in raw.split(",") if x.strip())
        check = meta["check"]
        for item in items:
            why = check(item) if check else None
            if why:
                raise SettingsError(f"{bad}: {why}")
        if not items:
            raise SettingsError(f"{bad}: give a comma-separated list")
        return items
    check = meta["check"]
    why = check(raw) if check else None
    if why:
        raise SettingsError(f"{bad}: {why}")
    return raw


def markdown_table() -> str:
    """The README's limits table, generated from the declarations above."""
    rows = ["| variable | default | what it bounds, and what happens over it |", "|---|---|---|"]
    for f in fields(Settings):
        shown = f.metadata["shown"] or _show(f.default)
        rows.append(f"| `{env_name(f.name)}` | {shown} | {f.metadata['doc']} |")
    return "\n".join(rows) + "\n"


_current: Settings | None = None


def current() -> Settings:
    """This process's settings from the environment, read once (for code with no app at hand)."""
    global _current
    if _current is None:
        _current = Settings.from_env()
    return _current


class TokenBucket:
    """Commands per second for one connection: ``rate`` tokens a second, at most ``burst``.

    Time comes from the caller (the event loop's monotonic clock), which keeps this testable.
    """

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.stamp = now

    def take(self, now: float) -> bool:
        """Spend one token if there is one."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False
