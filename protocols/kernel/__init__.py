"""The simulation kernel: a small event loop over plain-data global states.

- ``Simulator``: ``enabled()`` / ``step(id)``, time travel, ``state_hash()``.
- ``Protocol`` / ``Ctx`` / ``Setup``: what a protocol module implements.
- ``Transitions``: the search API (load a stored ``State``, apply one event, an ``Outcome``).
- schedulers and monitors.
"""

from .events import (
                     DELIVER,
                     ENV,
                     FAULT,
                     LOCAL,
                     TIMEOUT,
                     Action,
                     Event,
                     Guard,
                     Message,
                     Narration,
                     SimError,
)
from .protocol import Ctx, Protocol, Setup
from .schedulers import KINDS as SCHEDULERS
from .schedulers import make as make_scheduler
from .sim import Simulator, State
from .transitions import Outcome, Transitions

__all__ = ["DELIVER", "ENV", "FAULT", "LOCAL", "TIMEOUT", "Action", "Event", "Guard", "Message",
           "Narration", "SimError", "Ctx", "Protocol", "Setup", "SCHEDULERS", "make_scheduler",
           "Simulator", "State", "Outcome", "Transitions"]
