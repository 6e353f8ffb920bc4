"""Fair CPU: one event loop per worker serves every session, so the sessions that play share the
loop's time fairly and nobody else is locked out.

Every playing session tells the governor what it asks for: its speed (steps a second) times what
one of its steps costs (measured: stepping plus building its frames). The governor shares
``ALLOCSCOPE_PLAY_CPU_SHARE`` of each second among them by max–min fairness (water filling):
a session asking for less than an equal slice gets all it asks for, and what it leaves is shared
among the others. So a class of 200 students at 10 steps/s plays at full speed, and four
sessions at 1,000 steps/s of a 200-process ring slow down first, to their slices; the rest of
the loop's time stays free for commands and new connections.

New sessions are refused only when even an idle one could not be served: when the event loop is
so late (smoothed lag over ``refuse_lag``, ``ALLOCSCOPE_REFUSE_LAG_MS``) that a command would wait
that long for its answer. Where the lag samples come from is the ``lateness`` argument: the
loop's own lateness in production; tests give one they hold, so that their machine's load never
decides whether they are refused, and the tests of refusal set it on purpose.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

TICK = 0.05          # seconds between lag samples
REFUSE_LAG = 0.5     # a loop this late (smoothed) cannot answer a new session's commands
FIRST_COST = 2e-4    # seconds a step is assumed to cost before it has been measured

Lateness = Callable[[], Awaitable[float]]    # one lag sample, in seconds, taken about every TICK


async def loop_lateness() -> float:
    """Sleep ``TICK`` on the running loop and return how much later than asked it woke."""
    loop = asyncio.get_running_loop()
    t = loop.time()
    await asyncio.sleep(TICK)
    return loop.time() - t - TICK


class Governor:
    def __init__(self, share: float = 0.6, refuse_lag: float = REFUSE_LAG,
                 lateness: Lateness | None = None) -> None:
        self.share = share               # of each second, for all play together
        self.refuse_lag = refuse_lag     # seconds of smoothed lag from which new sessions wait
        self.lateness = lateness or loop_lateness
        self.lag = 0.0                   # smoothed event-loop lag, seconds
        self.demand: dict[int, float] = {}   # player key -> CPU seconds a second it asks for
        self.level = share               # the water level: CPU s/s a player may use at most
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        """Start sampling on the running loop (idempotent; called by the first connection)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    def observe(self, lag: float) -> None:
        """Fold one lag sample in."""
        self.lag = 0.7 * self.lag + 0.3 * max(0.0, lag)

    # ------------------------------------------------------------------ fair shares
    def ask(self, key: int, speed: float, cost: float) -> float:
        """A player asks for ``speed`` steps a second at ``cost`` seconds a step; returns the
        speed it may play at now (its fair share, never more than it asked)."""
        want = speed * cost
        if self.demand.get(key) != want:
            self.demand[key] = want
            self._refill()
        return min(speed, self.level / cost) if cost > 0 else speed

    def leave(self, key: int) -> None:
        """A player paused or went away: its share goes back to the others."""
        if self.demand.pop(key, None) is not None:
            self._refill()

    def _refill(self) -> None:
        """Max–min fair level: the largest L with sum(min(d, L)) <= share."""
        left, wants = self.share, sorted(self.demand.values())
        n = len(wants)
        level = self.share
        for i, d in enumerate(wants):
            even = left / (n - i)
            if d >= even:
                level = even
                break
            left -= d
        else:
            level = self.share        # everyone got all it asked for
        self.level = level

    @property
    def players(self) -> int:
        return len(self.demand)

    @property
    def accepting(self) -> bool:
        return self.lag < self.refuse_lag

    def busy_message(self) -> str:
        return (f"server busy: this worker answers commands {round(1000 * self.lag)} ms late "
                f"(more than {round(1000 * self.refuse_lag)} ms), so a new session could not be "
                f"served; try again in a minute")

    async def _run(self) -> None:
        while True:
            self.observe(await self.lateness())
