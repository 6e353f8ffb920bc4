"""The application interface (Section 2) and the end of each pass of the protocol's loop.

Event granularity (docs/protocols/kout_tree.md, "Event granularity"): every event of a process
is one pass of its ``repeat forever`` loop that receives at most one message, followed by the
loop's priority release (Algorithm 1 lines 89–95, Algorithm 2 lines 73–76) in the same atomic
step.  So a process cannot enter and leave its critical section and request again while still
holding the priority token: the token goes on in the very step in which ``|RSet| ≥ Need``
becomes true.  ``EnterCS`` (lines 75–78 / 62–65) and ``ReleaseCS`` (79–88 / 66–72) are
environment events: the first is the protocol handing the units to the application, the
second the application finishing; ``request`` is the application's Out → Req switch.
``Application`` declares them as rules (kernel.rules), once per algorithm where the paper has
them in both.
"""

from __future__ import annotations

from dataclasses import replace

from ..kernel import ENV, Ctx, Message
from ..kernel.rules import rule
from .config import Config
from .state import IN, OUT, PRIOT, REQ, REST, Proc


def alg(cfg: Config, pid: str) -> str:
    """Algorithm 1 is the root's code, Algorithm 2 the other processes' (as printed)."""
    return "1" if pid == cfg.root else "2"


def channel(cfg: Config, pid: str, msg: Message) -> int:
    """q: the label of the channel ``msg`` arrives on at ``pid``."""
    return cfg.tree.label[(pid, msg.src)]


def unsatisfied(s: Proc) -> bool:
    """(State = Req) ∧ (|RSet| < Need): the request still needs tokens."""
    return s.State == REQ and len(s.RSet) < s.Need


def keep_waits(cfg: Config, pid: str, s: Proc) -> str:
    return f"a ResT ({s.Need - len(s.RSet)} more needed)" if unsatisfied(s) \
        else "an unsatisfied request"


def take_waits(cfg: Config, pid: str, s: Proc) -> str:
    return "a PrioT" if s.Prio is None else "giving its PrioT away first"


def send_rest(ctx: Ctx, cfg: Config, pid: str, s: Proc, q: int) -> Proc:
    """send(ResT) to q+1; at the root a token leaving on channel 0 starts a new loop and is
    counted in SToken (Algorithm 1 lines 14–17, 24–27, 81–84).  The counters belong to the
    controller, so the variants without one leave them at 0 (no state grows without need)."""
    ctx.send(pid, cfg.tree.next_of(pid, q), REST)
    if cfg.feat.controller and pid == cfg.root and q == cfg.tree.degree(pid) - 1:
        s = replace(s, SToken=min(s.SToken + 1, cfg.ell + 1))
    return s


def release_all(ctx: Ctx, cfg: Config, pid: str, s: Proc) -> Proc:
    """for all i ∈ RSet: send(ResT) to i+1; RSet ← ∅."""
    for i in s.RSet:
        s = send_rest(ctx, cfg, pid, s, i)
    return replace(s, RSet=())


def tail(ctx: Ctx, cfg: Config, pid: str) -> None:
    """Algorithm 1 lines 89–95 / Algorithm 2 lines 73–76: a process holding the priority token
    passes it on once it no longer has an unsatisfied request."""
    s = ctx.get(pid)
    if s.Prio is None or (s.State == REQ and len(s.RSet) < s.Need):
        return
    if cfg.feat.controller and pid == cfg.root and s.Prio == cfg.tree.degree(pid) - 1:
        s = replace(s, SPrio=min(s.SPrio + 1, 2))
    dst = cfg.tree.next_of(pid, s.Prio)
    ctx.send(pid, dst, PRIOT)
    ctx.put(pid, replace(s, Prio=None))
    lines = (89, 95) if pid == cfg.root else (73, 76)
    ctx.say(f"{pid} has no unsatisfied request any more and passes PrioT on to {dst}", pid,
            algorithm=alg(cfg, pid), lines=lines)


def do_request(ctx: Ctx, cfg: Config, pid: str) -> None:
    s = ctx.get(pid)
    needs = cfg.needs[pid]
    need = needs[s.job % len(needs)]
    job = (s.job + 1) % len(needs) if cfg.repeat[pid] else s.job + 1
    ctx.put(pid, replace(s, State=REQ, Need=need, job=job))
    ctx.request(pid)
    ctx.say(f"the application at {pid} requests {need} unit{'s' if need != 1 else ''} "
            f"(State: Out → Req, Need = {need})", pid)
    tail(ctx, cfg, pid)


def do_enter(ctx: Ctx, cfg: Config, pid: str) -> None:
    s = ctx.get(pid)
    ctx.put(pid, replace(s, State=IN))
    ctx.enter_cs(pid)
    lines = (75, 78) if pid == cfg.root else (62, 65)
    ctx.say(f"{pid} has {len(s.RSet)} reserved token{'s' if len(s.RSet) != 1 else ''} "
            f"(Need = {s.Need}): State ← In, EnterCS()", pid, algorithm=alg(cfg, pid), lines=lines)
    tail(ctx, cfg, pid)


def do_release(ctx: Ctx, cfg: Config, pid: str) -> None:
    s = ctx.get(pid)
    held = len(s.RSet)
    s = release_all(ctx, cfg, pid, s)
    ctx.put(pid, replace(s, State=OUT))
    ctx.exit_cs(pid)
    lines = (79, 88) if pid == cfg.root else (66, 72)
    ctx.say(f"{pid} leaves its critical section (ReleaseCS) and sends its {held} token"
            f"{'s' if held != 1 else ''} on: RSet ← ∅, State ← Out", pid,
            algorithm=alg(cfg, pid), lines=lines)
    tail(ctx, cfg, pid)


# ---- the rules ------------------------------------------------------------------------------
def _may_request(cfg: Config, pid: str, s: Proc) -> bool:
    needs = cfg.needs[pid]
    return s.State == OUT and bool(needs) and (cfg.repeat[pid] or s.job < len(needs))


def _request_waits(cfg: Config, pid: str, s: Proc) -> str:
    return f"State = Out (it is {s.State})" if s.State != OUT else "a request left in its workload"


def _enter_waits(cfg: Config, pid: str, s: Proc) -> str:
    return (f"{s.Need - len(s.RSet)} more ResT" if s.State == REQ
            else "a request (State = Req)")


def _ready(cfg: Config, pid: str, s: Proc) -> bool:
    return s.State == REQ and len(s.RSet) >= s.Need


def _in(cfg: Config, pid: str, s: Proc) -> bool:
    return s.State == IN


class Application:
    """Mixin: the application's events (Section 2) and lines 75–88 / 62–72 as rules."""

    @rule(ENV, name="request", title="request (application: Out → Req)", progress=False,
          when=_may_request, waits=_request_waits,
          label=lambda cfg, pid, s: f"{pid} requests {cfg.needs[pid][s.job % len(cfg.needs[pid])]}")
    def app_request(self, ctx: Ctx, pid: str, _arg: str) -> None:
        do_request(ctx, ctx.config, pid)

    @rule(ENV, name="EnterCS", title="EnterCS", algorithm="1", lines=(75, 78), role="root",
          when=_ready, waits=_enter_waits,
          label=lambda cfg, pid, s: f"{pid} enters its critical section")
    def root_enter(self, ctx: Ctx, pid: str, _arg: str) -> None:
        do_enter(ctx, ctx.config, pid)

    @rule(ENV, name="EnterCS", title="EnterCS", algorithm="2", lines=(62, 65), role="process",
          when=_ready, waits=_enter_waits,
          label=lambda cfg, pid, s: f"{pid} enters its critical section")
    def p_enter(self, ctx: Ctx, pid: str, _arg: str) -> None:
        do_enter(ctx, ctx.config, pid)

    @rule(ENV, name="ReleaseCS", title="ReleaseCS", algorithm="1", lines=(79, 88), role="root",
          when=_in, waits="being in the critical section",
          label=lambda cfg, pid, s: f"{pid} leaves its critical section")
    def root_release(self, ctx: Ctx, pid: str, _arg: str) -> None:
        do_release(ctx, ctx.config, pid)

    @rule(ENV, name="ReleaseCS", title="ReleaseCS", algorithm="2", lines=(66, 72),
          role="process", when=_in, waits="being in the critical section",
          label=lambda cfg, pid, s: f"{pid} leaves its critical section")
    def p_release(self, ctx: Ctx, pid: str, _arg: str) -> None:
        do_release(ctx, ctx.config, pid)
