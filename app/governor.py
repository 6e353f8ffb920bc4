"""Graceful degradation under load: one event loop per worker serves every session, so when the
simulations being played need more CPU than the worker has, something must give.

The governor measures the event loop's lag (how late a short timer fires). When the loop falls
behind, it lowers one common factor applied to every session's play speed, so that commands
(step, back, inspect: a student waiting for an answer) stay quick; when the loop has room again,
the factor climbs back. If play already runs well below the speeds asked for, new sessions are
refused with a clear message instead of slowing everyone further (``accepting``).
"""

from __future__ import annotations

import asyncio

TICK = 0.05          # seconds between lag samples
HIGH_LAG = 0.025     # above this (smoothed) the play factor goes down
LOW_LAG = 0.008      # below this it climbs back
MIN_FACTOR = 0.05
REFUSE_BELOW = 0.5   # refuse new sessions while play runs at less than half the asked speed


class Governor:
    def __init__(self) -> None:
        self.lag = 0.0            # smoothed event-loop lag, seconds
        self.factor = 1.0         # multiplies every session's play speed
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        """Start sampling on the running loop (idempotent; called by the first connection)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    def observe(self, lag: float) -> None:
        """Fold one lag sample in and adjust the play factor."""
        self.lag = 0.7 * self.lag + 0.3 * max(0.0, lag)
        if self.lag > HIGH_LAG:
            self.factor = max(MIN_FACTOR, self.factor * 0.85)
        elif self.lag < LOW_LAG:
            self.factor = min(1.0, self.factor * 1.08 + 0.01)

    @property
    def accepting(self) -> bool:
        return self.factor >= REFUSE_BELOW

    def busy_message(self) -> str:
        return (f"server busy: the simulations already playing on this server use all its CPU "
                f"(play runs at {round(100 * self.factor)}% of the speeds asked for); "
                f"try again in a minute")

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(TICK)
            self.observe(loop.time() - t - TICK)
