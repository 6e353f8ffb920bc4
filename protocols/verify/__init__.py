"""Verify repaired variants over whole instance families, and sweep seeds for distributions.

``verify(protocol, variant, family)`` yields one row per instance (explorer + seeded random
runs, ``runner.verify_instance``) from a local process pool or a Dask cluster;
``report`` turns rows into the table, the JSON summary and replayable counterexample files;
``sweep`` runs one scenario under many seeds for metric distributions against the paper's bound.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import Any

from .families import Family, Instance, get, instances, iter_instances, sample
from .runner import group_tasks, run_tasks, verify_group, verify_instance


def tasks(fam: Family, variant: str, *, quick: bool = False, max_states: int | None = None,
          seeds: int | None = None, max_seconds: float | None = None,
          max_cpu_seconds: float | None = None, first: int | None = None, skip: int = 0,
          only: Collection[int] | None = None,
          picked: Sequence[tuple[int, Instance]] | None = None) -> Iterator[dict[str, Any]]:
    """The picklable task of each instance (``first``: only that many, for a taste; ``skip``:
    not the first ``skip``, so a long family can be run in slices with stable indices;
    ``only``: just these indices, e.g. the ``limit`` instances of an earlier run; ``picked``:
    these (index, instance) pairs instead of the enumeration, e.g. ``sample``'s)."""
    last = max(only) if only else None
    source = picked if picked is not None else enumerate(iter_instances(fam, quick=quick))
    for i, inst in source:
        if (first is not None and i >= first) or (last is not None and i > last):
            return
        if i < skip or (only is not None and i not in only):
            continue
        yield {"index": i, "name": inst.name, "scenario": inst.scenario, "variant": variant,
               "max_states": max_states or fam.max_states,
               "seeds": fam.seeds if seeds is None else seeds, "steps": fam.steps,
               "max_seconds": max_seconds, "max_cpu_seconds": max_cpu_seconds,
               "faults": fam.faults,
               "judge_faults": fam.judge_faults, "locality": fam.locality.get(variant),
               "worst": fam.worst}


def verify(fam: Family, variant: str, *, scheduler_address: str | None = None,
           workers: int | None = None, group_starts: bool = False,
           **kw: Any) -> Iterator[dict[str, Any]]:
    """Rows as instances finish (any order; ``index`` says which). ``group_starts``: instances
    that differ only by their start (consecutive in the family) are explored in one search
    from all their starts (``runner.verify_group``); their rows come together."""
    if not group_starts:
        yield from run_tasks(verify_instance, tasks(fam, variant, **kw), scheduler_address,
                             workers)
        return
    for rows in run_tasks(verify_group, group_tasks(tasks(fam, variant, **kw)),
                          scheduler_address, workers):
        yield from rows


__all__ = ["Family", "get", "group_tasks", "instances", "sample", "tasks", "verify",
           "verify_group", "verify_instance"]
