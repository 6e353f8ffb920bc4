"""Winkowski's game of tasks for access to resources (``task_game``).

Modules: ``data`` (Section 3's data and local states), ``conditions`` ((p1)/(p2)/(p3) and the
other guards read from a task's knowledge), ``agents``, ``managers`` and ``tasks`` (the action
lists of Section 3), ``protocol`` (the kernel plug-in), ``view`` and ``locality`` (phase
timelines, failure locality, the O(ρ) metrics).
"""

from .protocol import TaskGame

__all__ = ["TaskGame"]
