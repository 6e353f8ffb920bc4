"""Plain data the kernel moves around: messages in flight, enabled events, narration lines."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, NamedTuple

# Event kinds, as on the architecture page.
DELIVER = "deliver"   # a message delivery, id m<N>
LOCAL = "local"       # a process's enabled local action, id a:<pid>:<name>
ENV = "env"           # environment: a request, a critical section ends, a client departs; id e:<pid>:<name>
TIMEOUT = "timeout"   # a timer that fires, id t:<pid>:<name>
FAULT = "fault"       # opt-in faults, id f:<kind>:<target>

PREFIX = {LOCAL: "a", ENV: "e", TIMEOUT: "t"}


class Message(NamedTuple):
    """One message in flight on the directed channel src -> dst; seq gives its id m<seq>.

    Plain tuples (not dataclasses) for the hot path: one is made on every send."""

    seq: int
    src: str
    dst: str
    kind: str
    body: Hashable = None

    @property
    def id(self) -> str:
        return f"m{self.seq}"

    def content(self) -> tuple:
        """The message without its identity: what a repeated global state compares."""
        return (self.src, self.dst, self.kind, self.body)


class Action(NamedTuple):
    """A guarded action a protocol reports as enabled for one process.

    ``name`` is unique per process (it becomes the event id); ``progress`` says whether taking it
    can help a waiting process (a new request or a departure cannot, so deadlock ignores those).
    """

    kind: str
    name: str
    label: str = ""
    progress: bool = True
    algorithm: str | None = None
    lines: tuple[int, ...] = ()


class Event(NamedTuple):
    """An enabled event: what a scheduler chooses among, and what the browser lists."""

    id: str
    kind: str
    pid: str
    label: str
    progress: bool = True
    msg: Message | None = None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "kind": self.kind, "proc": self.pid, "label": self.label}
        if self.msg is not None:
            d.update(src=self.msg.src, dst=self.msg.dst, type=self.msg.kind)
        return d


@dataclass(frozen=True, slots=True)
class Guard:
    """One guarded action of a process with its guard's current truth value ("why can't it move?")."""

    name: str
    holds: bool
    algorithm: str | None = None
    lines: tuple[int, ...] = ()
    waiting_for: str = ""   # e.g. "a Token from p3", shown when the guard is false
    events: tuple[str, ...] = ()   # the enabled event ids this guard enables (inspector only)
    receives: str = ""      # the message kind a receive guard waits for ("" = not a receive)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "holds": self.holds, "algorithm": self.algorithm,
                "lines": list(self.lines), "waiting_for": self.waiting_for,
                "events": list(self.events), "receives": self.receives}


class Narration(NamedTuple):
    """One human sentence about an applied event, with the paper's pseudocode reference."""

    text: str
    pid: str = ""
    algorithm: str | None = None
    lines: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        ref = {"algorithm": self.algorithm, "lines": list(self.lines)} if self.algorithm else None
        return {"text": self.text, "proc": self.pid, "ref": ref}


class SimError(ValueError):
    """A bad request to the simulator (unknown event id, bad step number): nothing was changed."""
