"""A room: a short join code, the teacher's secret (kept only as a hash), and the small state
everything else can be rebuilt from — scenario, variant, schedule, step, scheduler, the selected
process, the lesson chapter, the open predict round and class experiment.

The record lives in the bus's key-value store under ``room:<CODE>`` and expires after
``ALLOCSCOPE_ROOM_IDLE_SECONDS`` without activity; answers and experiment outcomes live in hashes
beside it with the same lifetime, so they are gone when the room is.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import asdict, dataclass, field, fields
from typing import Any

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"   # no 0/O, 1/I/L: read aloud from a projector
CODE_LEN = 6


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LEN))


def norm_code(code: str) -> str | None:
    """A join code as typed (any case, spaces or dashes) in canonical form, or None."""
    c = code.strip().upper().replace("-", "").replace(" ", "")
    if len(c) != CODE_LEN or any(ch not in ALPHABET for ch in c):
        return None
    return c


def new_secret() -> str:
    return secrets.token_urlsafe(24)


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_ok(stored_hash: str, secret: str) -> bool:
    return hmac.compare_digest(stored_hash, secret_hash(secret))


def key(code: str) -> str:
    return f"room:{code}"


def answers_key(code: str, round_id: int) -> str:
    return f"room:{code}:answers:{round_id}"


def runs_key(code: str, exp_id: int) -> str:
    return f"room:{code}:runs:{exp_id}"


def channel(code: str) -> str:
    return f"allocscope:room:{code}"


@dataclass
class RoomState:
    """The record of one room (JSON in the store)."""

    code: str
    secret_hash: str
    scenario: str | dict[str, Any]
    variant: str | None = None
    schedule: list[str] = field(default_factory=list)
    step: int = 0
    sched_kind: str | None = None
    sched_seed: int | None = None
    title: str = ""
    selected: str | None = None
    lesson: str | None = None
    chapter: int | None = None         # the lesson chapter the teacher shows (0-based)
    chapter_title: str = ""
    chapter_text: list[str] = field(default_factory=list)   # a lesson chapter's paragraphs
    chapter_cite: str = ""
    chapters: int = 0                  # how many chapters the room's lesson has
    branch: Any = None                 # the teacher session's branch, when sessions have them
    speed: float | None = None         # the teacher's play speed (steps a second)
    round: dict[str, Any] | None = None      # the open predict round (see rounds.py)
    experiment: dict[str, Any] | None = None  # the open class experiment
    rounds_made: int = 0
    experiments_made: int = 0
    students: int = 0                  # as last counted by the teacher's worker

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "RoomState":
        data = json.loads(text)
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
