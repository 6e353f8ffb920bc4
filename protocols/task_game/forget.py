"""The clocks of the game of tasks made relative, for the explorer's state keys (``forget``).

An agent's clock only grows (``tick``), and each time a blocked task's alarm rings and its
blocking requests have changed it sets a new alarm ``clock + Γ`` (Sec. 3, p. 19): two tasks
that keep overtaking each other make the clocks, and so the states the explorer keys on,
grow without end. Yet no step reads a clock's *value*, only differences (tasks.py, agents.py):

- ``tick`` (agent A) is enabled exactly when some alarm of ``alarms_A`` is later than
  ``clock_A`` (``m − clock_A > 0``), and adds 1 to ``clock_A`` and to the clock of every
  non-crashed task of Controlled_A;
- ``set-alarm`` and the reset in ``alarm`` set ``alarm-clock_T = clock_T + Γ`` (and the agent's
  copy to the same moment): the difference becomes Γ;
- ``alarm`` is enabled when ``clock_T ≥ alarm-clock_T`` (difference ≤ 0);
- ``create`` copies ``clock_A`` into the new task; nothing else reads a clock (no message,
  ticket or guard carries one; only the narration and the viewer show them).

So ``forget`` maps each agent to clock 0 with its alarms as ``m − clock_A``, and each task to
clock 0 with ``alarm-clock_T − clock_T``, every difference ≤ 0 set to 0 (they all enable the
same steps, and a clock never goes back). A task's clock equals its agent's while the task is
alive and not crashed (``create`` copies it, ``tick`` updates both), so taking each one relative
to its own clock shifts both by the same amount; a crashed task never moves again and a LEFT one
reads nothing, so their stale clocks matter to no step. Two states with the same image enable
the same events, and each event's successors have the same image: the map is a bisimulation, so
the explorer's verdicts (violations, deadlocks, and livelocks, whose loops it can now close) are
those of the unreduced game. The positive differences are at most Γ, so the clocks add at most
(Γ + 1)^(alarms) variants of a state: the searched space of a finite workload is finite.
Checked on the gallery and the golden answers (tests/test_task_game.py) and, during every
``check``, by the explorer's audit of ``forget`` (``explorer/audit.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from .data import INF, AgentState, TaskState


def forget(cfg: Any, pids: Sequence[str], procs: tuple, messages: tuple) -> tuple[tuple, tuple]:
    """``(procs, messages)`` with every clock made relative (module doc); messages unchanged."""
    return tuple(_relative(p) for p in procs), messages


def _since(moment: int | None, clock: int) -> int | None:
    """How far ahead of ``clock`` an alarm is (0 once it has rung; None for ∞)."""
    return INF if moment is INF else max(0, moment - clock)


# The explorer keys many global states made of far fewer process states: a pure function of a
# hashable state, cached (bounded).
@lru_cache(maxsize=1 << 16)
def _relative(p: Any) -> Any:
    if isinstance(p, AgentState):
        if p.clock == 0 and all(m >= 0 for _, m in p.alarms):
            return p
        return replace(p, clock=0, alarms=tuple((t, _since(m, p.clock)) for t, m in p.alarms))
    if isinstance(p, TaskState):
        if p.clock == 0 and (p.alarm_clock is INF or p.alarm_clock >= 0):
            return p
        return replace(p, clock=0, alarm_clock=_since(p.alarm_clock, p.clock))
    return p
