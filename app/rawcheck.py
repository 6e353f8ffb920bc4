"""Size checks on raw input, before anything is parsed into models or built.

A scenario's cost is decided by its sizes (tasks, processes, pools, resources, requests,
schedule), and a JSON document's parse cost by its nesting. Both are checked here, on the raw
text or the raw decoded JSON, before pydantic and before any protocol's setup runs, with
iterative walks (no recursion, so no RecursionError however deep the input). Every refusal is a
``RawError`` naming where and which ``ALLOCSCOPE_*`` limit, never a 500 or a traceback.
"""

from __future__ import annotations

import re
from typing import Any

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


class RawError(ValueError):
    """Input over a size limit; the message is a sentence for the user."""


def text_depth(text: str, limit: int) -> int:
    """The nesting depth of JSON ``text`` (strings ignored), counted without parsing; stops
    counting past ``limit``."""
    depth = deepest = 0
    for m in _BRACKET.finditer(_STRING.sub('""', text)):
        if m.group() in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        else:
            depth -= 1
    return deepest


def check_text(text: str | bytes, max_depth: int, what: str = "request body") -> None:
    """Refuse JSON text nested deeper than ``max_depth`` before it is parsed."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if text_depth(text, max_depth) > max_depth:
        raise RawError(f"{what}: nested more than {max_depth} levels deep "
                       f"(ALLOCSCOPE_MAX_DEPTH)")


def check_value(data: Any, max_depth: int, max_items: int | None = None,
                where: str = "scenario") -> None:
    """Walk decoded JSON without recursion: depth, and entries in any one list or object."""
    stack: list[tuple[Any, str, int]] = [(data, where, 1)]
    while stack:
        value, path, depth = stack.pop()
        if not isinstance(value, (dict, list)):
            continue
        if depth > max_depth:
            raise RawError(f"{path}: nested more than {max_depth} levels deep "
                           f"(ALLOCSCOPE_MAX_DEPTH)")
        if max_items is not None and len(value) > max_items:
            raise RawError(f"{path}: {len(value)} entries; this server allows {max_items} "
                           f"in one list or object (ALLOCSCOPE_MAX_ITEMS)")
        if isinstance(value, dict):
            stack.extend((v, f"{path}.{str(k)[:40]}", depth + 1) for k, v in value.items())
        else:
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value))


def check_scenario(data: Any, limits: Any, schedule: list[str] | None = None,
                   where: str = "scenario") -> None:
    """All raw checks for a scenario given as a JSON object (and an optional schedule sent
    with it): nesting, entries per list or object, schedule lengths."""
    if not isinstance(data, dict):
        return                       # a gallery id, or a type error the parser will name
    check_value(data, limits.max_depth, None, where)
    for part in ("params", "topology", "workload"):
        check_value(data.get(part), limits.max_depth, limits.max_items, f"{where}.{part}")
    cap = min(limits.max_schedule, limits.max_steps)
    sched = data.get("schedule")
    lists = list(sched.values()) if isinstance(sched, dict) else [sched]
    if schedule is not None:
        lists.append(schedule)
    for s in lists:
        if isinstance(s, list) and len(s) > cap:
            raise RawError(f"schedule has {len(s)} events; this server allows {cap} "
                           f"(ALLOCSCOPE_MAX_SCHEDULE)")
