"""The explorer: exhaustive search over every schedule of a scenario.

- ``check(scenario, variant=None, max_states=200_000, ...)``: the verdict the CLI, the web
  worker and the verification sweeps use (``check.py``; docs/explorer.md); ``link()`` builds
  the viewer URL of a schedule.
- ``search(sim, SearchOptions(...)) -> SearchResult``: the search engine itself, for any
  search a test, benchmark or tool needs (``engine.py``; docs/explorer.md, "The search API").
"""

from .check import check, link
from .engine import SearchOptions, SearchResult, search

__all__ = ["check", "link", "search", "SearchOptions", "SearchResult"]
