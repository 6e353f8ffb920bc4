"""Server limits, read from environment variables once at start-up.

Every limit has a sane default for a class on one small machine; docs/websocket.md lists them in
one table. Going over a limit gets a clear error frame (or close code 1008 / 1009), never a hang
or a 500: the session is protected, and so is everyone else's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

ENV_PREFIX = "ALLOCSCOPE_"


@dataclass(frozen=True)
class Limits:
    """The numbers a session and a connection are held to (names match the env variables)."""

    max_processes: int = 1000          # processes per scenario
    max_messages: int = 20_000         # messages in flight; stepping stops when reached
    max_schedule: int = 50_000         # ids in a schedule sent with `load`
    max_steps: int = 50_000            # length of a session's timeline (≈ 0.7 KB a step)
    ws_max_size: int = 1 << 20         # bytes in one websocket message (close 1009 above)
    commands_per_second: float = 50.0  # token bucket refill rate, per connection
    command_burst: int = 100           # token bucket size
    play_burst: int = 20_000           # steps one `play` may take before it pauses by itself
    max_sessions: int = 200            # concurrent websocket sessions per worker (close 1008)
    idle_seconds: float = 3600.0       # no command for this long (and not playing): close 1001
    allowed_origins: tuple[str, ...] = ()   # besides the same origin; "*" allows any

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "Limits":
        """Read ``ALLOCSCOPE_<NAME>`` for each field; a malformed value is a start-up error
        naming the variable, not a silent default."""
        env = dict(os.environ) if env is None else env
        values: dict[str, object] = {}
        for f in fields(cls):
            key = ENV_PREFIX + f.name.upper()
            raw = env.get(key)
            if raw is None or raw.strip() == "":
                continue
            if f.name == "allowed_origins":
                values[f.name] = tuple(o.strip().rstrip("/") for o in raw.split(",") if o.strip())
                continue
            try:
                num = float(raw) if f.type in ("float", float) else int(raw)
            except ValueError:
                raise ValueError(f"{key}: must be a number, not {raw!r}") from None
            if num <= 0:
                raise ValueError(f"{key}: must be positive, not {raw!r}")
            values[f.name] = num
        return cls(**values)  # type: ignore[arg-type]

    def table(self) -> list[tuple[str, str]]:
        """(variable, current value) rows, for the docs and /healthz-style introspection."""
        return [(ENV_PREFIX + f.name.upper(), str(getattr(self, f.name))) for f in fields(self)]


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
