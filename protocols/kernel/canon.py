"""Canonical serialisation of simulation states, and the sha256 ``state_hash`` built on it.

The serialisation depends only on values: dataclasses by field order, mappings by sorted key,
sets sorted by their own canonical form. So the same state gives the same bytes in any process.
A dataclass field marked ``metadata={"ghost": True}`` is left out: a judgement a protocol's
monitor keeps in the state about its history (kout_tree's legitimacy), not a variable of the
algorithm, so it neither shows in the inspector nor changes ``state_hash``.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from typing import Any


def canon(value: Any) -> Any:
    """Turn a state value into JSON-ready data with no order that depends on history."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, enum.Enum):
        return canon(value.value)
    if isinstance(value, (tuple, list)):
        return [canon(v) for v in value]
    if isinstance(value, (frozenset, set)):
        items = [canon(v) for v in value]
        return {"set": sorted(items, key=_key)}
    if isinstance(value, dict):
        items = [(canon(k), canon(v)) for k, v in value.items()]
        return {"map": sorted(items, key=lambda kv: _key(kv[0]))}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {"@": type(value).__name__}
        for f in dataclasses.fields(value):
            if not f.metadata.get("ghost"):
                out[f.name] = canon(getattr(value, f.name))
        return out
    raise TypeError(f"cannot serialise {type(value).__name__} in a simulation state")


def _key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def dumps(value: Any) -> str:
    """The canonical JSON text of a state value."""
    return _key(canon(value))


def sha256_of(value: Any) -> str:
    return hashlib.sha256(dumps(value).encode("utf-8")).hexdigest()
