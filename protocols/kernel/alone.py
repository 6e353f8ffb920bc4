"""A first-time local step, run on its own process alone (``Transitions.step_fast``'s first try).

The explorer's memo (``transitions.py``, "Local transitions") records the effect of a step
whose handler reads and writes only its own process the first time it meets it, and replays it
after that. Recording it on the lean simulator means loading the whole global state, running the
kernel's after-step (the protocol's safety predicates, the unfinished processes, the new
``State``) and then checking that nothing but that process changed: on the naive two-client
ring, whose 1,438 transitions hold 251 first-time steps, that was 28 µs a step, 38 % of the
search. Nearly every first-time step is local, so the handler is first run on ``AloneCtx``: a
context that holds the process's own state, its own waiting and critical-section entries and
the message numbers its sends take, and nothing else. The first access to anything more
(another process's state, ``ctx.sim``, a reported violation, a critical-section entry, whose
capacity check reads the others) abandons the try and the step takes the lean simulator as
before. Handlers act only through their ``ctx`` (the protocol contract), so an abandoned try
has changed nothing. The resulting global state is judged later, like every replayed step's
(``Transitions.judge``).
"""

from __future__ import annotations

from typing import Any

from .events import DELIVER, ENV, LOCAL, TIMEOUT, Event, Message

_tuple_new = tuple.__new__
_ACTIONS = frozenset((LOCAL, ENV, TIMEOUT))


class NotAlone(BaseException):
    """The step reached beyond its own process. A BaseException, so that a handler's own
    ``except Exception`` does not swallow it (``AloneCtx.left`` says so as well)."""


class AloneCtx:
    """The ``Ctx`` of a step run on one process alone: the same effect methods and reads, on
    the process's own state, waiting entry (``waits``) and critical-section value (``csv``,
    None outside). Its sends are kept in order with the message numbers the lean simulator
    would give them; ``peek`` at another process answers from the stored global state and
    notes the probe and its answer, as ``_WatchCtx`` does."""

    __slots__ = ("config", "variant", "protocol", "index", "procs", "pid", "state", "touched",
                 "sends", "seq", "waits", "csv", "probes", "left")

    narrates = False
    step = 1          # a transition starts from step 0 (``Transitions.apply``)

    def __init__(self, config: Any, variant: str, protocol: Any, index: dict[str, int]) -> None:
        self.config = config
        self.variant = variant
        self.protocol = protocol
        self.index = index
        self.procs: tuple = ()
        self.pid = ""
        self.state: Any = None
        self.touched = False
        self.sends: list[Message] = []
        self.seq = 0
        self.waits = False
        self.csv: Any = None
        self.probes: list[tuple] = []
        self.left = False

    def _leave(self) -> NotAlone:
        self.left = True
        return NotAlone()

    @property
    def sim(self) -> Any:
        raise self._leave()

    def get(self, pid: str) -> Any:
        if pid != self.pid:
            raise self._leave()
        return self.state

    def put(self, pid: str, state: Any) -> None:
        if pid != self.pid:
            raise self._leave()
        self.state = state
        self.touched = True

    def send(self, src: str, dst: str, kind: str, body: Any = None) -> Message:
        if src != self.pid or dst not in self.index:    # an unknown dst: the kernel's error
            raise self._leave()
        m = _tuple_new(Message, (self.seq, src, dst, kind, body))
        self.seq += 1
        self.sends.append(m)
        return m

    def request(self, pid: str) -> None:
        if pid != self.pid:
            raise self._leave()
        self.waits = True

    def cancel(self, pid: str) -> None:
        if pid != self.pid:
            raise self._leave()
        self.waits = False

    def exit_cs(self, pid: str) -> None:
        if pid != self.pid:
            raise self._leave()
        self.csv = None

    def enter_cs(self, pid: str, resources: Any = ()) -> None:
        raise self._leave()

    def violation(self, text: str) -> None:
        raise self._leave()

    def has(self, feature: str) -> bool:
        return self.protocol.has(self.variant, feature)

    def peek(self, pid: str, probe: Any) -> Any:
        if pid == self.pid:
            return probe(self.state)
        j = self.index[pid]
        value = probe(self.procs[j])
        self.probes.append((j, probe, value))
        return value

    def say(self, text: str, pid: str = "", algorithm: str | None = None,
            lines: Any = ()) -> None:
        return None

    def run(self, ev: Event, procs: tuple, i: int, pid: str, next_seq: int, waits: bool,
            csv: Any, eager: Any) -> bool:
        """Run ``ev``'s handler on process ``i`` (``pid``) of a stored state alone; whether
        it stayed there (then ``state``, ``touched``, ``sends``, ``waits``, ``csv`` and
        ``probes`` are its effect). ``eager``: the protocol's eager hook, or None."""
        self.procs = procs
        self.pid = pid
        self.state = procs[i]
        self.touched = self.left = False
        self.sends = []
        self.seq = next_seq
        self.waits = waits
        self.csv = csv
        self.probes = []
        protocol = self.protocol
        try:
            if ev.kind == DELIVER:
                protocol.deliver(self, ev.msg)
            elif ev.kind in _ACTIONS:
                protocol.apply(self, pid, ev.id[len(pid) + 3:])
            else:
                return False
            if eager is not None and self.touched:      # ``Core._settle`` on this process
                for _ in range(64):
                    name = eager(self.config, pid, self.state)
                    if name is None:
                        break
                    protocol.apply(self, pid, name)
        except NotAlone:
            return False
        except Exception:       # the lean simulator runs it again and raises what it raises
            return False
        return not self.left
