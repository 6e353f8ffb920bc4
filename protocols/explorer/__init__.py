"""The explorer: exhaustive breadth-first search over every schedule of a scenario.

``check(scenario, variant=None, max_states=200_000, ...)`` is the whole public API (see
``check.py`` and docs/explorer.md); ``link()`` builds the viewer URL of a schedule.
"""

from .check import check, link

__all__ = ["check", "link"]
