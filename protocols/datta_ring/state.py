"""Process states of datta_ring, named after the paper's Variables 1 and 2.

Everything is a frozen dataclass with tuples and frozensets inside, so a global state hashes and
compares by value (the explorer deduplicates millions of them). Fields marked *ours* do not exist
in the paper: each is one mechanism of the ``full`` repair or of the Section IV extension, and
``docs/protocols/datta_ring.md`` says why it is there.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from operator import attrgetter

from ..kernel.variants import Feature, table

INF = "∞"          # the priority level of the token holder (Section III-C.3)
CLIENT, RESOURCE = "client", "resource"     # the two kinds of process (rules tables' roles)
NONE = None        # the paper's ⊥


@dataclass(frozen=True, slots=True)
class Request:
    """A REQUESTQUEUEELEMENT: ⟨ClId, RqNo, NextResId, Score⟩ (Algorithm 2, lines 27 and 30).

    ``RqNo`` is 1 for a strong request, 2 for a weak one; ``NextResId`` is the other resource of a
    two-resource request (⊥ for a single one). The fourth element is printed as 1 for a strong and
    0 for a weak entry and incremented as ``Score`` by each unloop (line 129); ``full`` also uses
    it as the epoch of a request, so that stale detection answers can be recognised, and there
    it is the pair (request number, unloops) so that the epochs of a client's successive
    requests differ too (M7).
    """

    ClId: str
    RqNo: int
    NextResId: str | None
    Score: int | tuple[int, int] = 0


@dataclass(frozen=True, slots=True)
class Resource:
    """Variable 2 for one resource (initial values as printed), plus the fields marked *ours*."""

    Q_strong: tuple[Request, ...] = ()
    Q_weak: tuple[Request, ...] = ()
    Q_token: tuple[Request, ...] = ()
    Lock: bool = False
    NewHead: bool = False
    # as-printed: plain Booleans. Other variants tie readiness to a client (prose fix):
    # StrongReady is the set of (client, Score) pairs whose strong resource said Res1Ready,
    # WeakReady is the client whose weak request is at the head, or None.
    StrongReady: bool | frozenset = frozenset()
    WeakReady: bool | str | None = None
    HoldingToken: bool = False
    SendingToken: bool = False
    r_min: str = ""
    # The receive buffer of NewRequest while Lock holds (line 18): bodies in arrival order.
    Deferred: tuple = ()
    # *ours*, Section IV: clients the departure message or the participant detector reported gone.
    Gone: frozenset = frozenset()
    # *ours*, full only: the head (client, Score) whose detection verdict is awaited,
    # the head for which Res1Ready was sent, and the unloop this resource runs as the cycle's
    # ≺-minimum: (client, Score, initiator).
    Seeking: tuple | None = None
    Ready: tuple | None = None
    Unlooping: tuple | None = None

    @property
    def head(self) -> Request | None:
        """Head(Q_strong), or ⊥."""
        return self.Q_strong[0] if self.Q_strong else None


@dataclass(frozen=True, slots=True)
class Client:
    """Variable 1 for one client: its request D = (strong, weak), plus where it is in Algorithm 1.

    ``phase``: idle (D = ⊥) | waiting (request sent) | cs | finishing (Done sent, awaiting EndACK)
    | gone (departed, Section IV). ``next`` indexes the workload's list of requests (the
    resource discover oracle's answers, in order).
    """

    D: tuple = (None, None)
    phase: str = "idle"
    next: int = 0


# The variants as named features (kernel.variants). ``as-printed`` transcribes Algorithms 1-3;
# ``prose`` reads them as the prose means them; ``full`` adds our repairs; ``naive`` takes loop
# detection away (the prose's readiness kept), to show the deadlock it is there for.
VARIANT_TABLE = table(
    features=(
        Feature("prose", "readiness belongs to the client whose requests reached both heads, "
                "and r_min to one detection (the prose's reading of D8 and D9)",
                "datta_ring:D9", "reading"),
        Feature("no-detection", "no loop detection (Algorithm 3): a dependency cycle of "
                "requests deadlocks", "", "ablation"),
        Feature("repairs", "our mechanisms M1-M7 (verdicts, epochs, checked dependencies, "
                "refusals, numbered requests), which make full live and safe",
                "datta_ring:M1"),
    ),
    variants={"naive": ("prose", "no-detection"), "as-printed": (), "prose": ("prose",),
              "full": ("prose", "repairs")},
    default="full")


@dataclass(frozen=True)
class Config:
    """What never changes during a run: the rooted ring, the workload, the variant's switches."""

    ring: tuple[str, ...]
    root: str
    clients: tuple[str, ...]
    requests: dict[str, tuple[tuple[str, ...], ...]]     # client -> its requests, in order
    leaves: dict[str, str]                               # client -> "message" | "silent"
    variant: str
    rank: dict[str, int] = field(default_factory=dict)   # identifier order of resources

    @property
    def printed(self) -> bool:
        """Whether readiness is the printed pair of Booleans (the initial state depends on it;
        the rules in force are chosen by ``DattaRing.features``)."""
        return "prose" not in VARIANT_TABLE.on(self.variant)

    def next_of(self, r: str) -> str:
        """Next(r) on the rooted ring."""
        i = self.ring.index(r)
        return self.ring[(i + 1) % len(self.ring)]

    def is_resource(self, pid: str) -> bool:
        return pid in self.rank


def epoch(tag: tuple, score: int) -> int | tuple[int, int]:
    """The initial Score of a queue entry: the printed 1 (strong) or 0 (weak); in ``full``
    (M7, ours) the pair (request number, that value), ``tag`` being the request number the
    client put in its NewRequest (empty in the other variants)."""
    return (tag[0], score) if tag else score


def bump(score: int | tuple[int, int]) -> int | tuple[int, int]:
    """Line 129's Score + 1; in ``full`` the unloop count, second in the pair, goes up."""
    return (score[0], score[1] + 1) if isinstance(score, tuple) else score + 1


def search(q: tuple[Request, ...], c: str) -> Request | None:
    """search(Q, c): the first entry of client c in Q, or ⊥."""
    for x in q:
        if x.ClId == c:
            return x
    return None


def without(q: tuple[Request, ...], x: Request | None) -> tuple[Request, ...]:
    """Q ⊖ x: Q without its first occurrence of x (unchanged when x is ⊥)."""
    if x is None:
        return q
    i = q.index(x)
    return q[:i] + q[i + 1:]


def drop_client(q: tuple[Request, ...], c: str) -> tuple[Request, ...]:
    return tuple(x for x in q if x.ClId != c)


def tied(s: Resource) -> frozenset:
    """StrongReady as a set (as-printed keeps a Boolean)."""
    return s.StrongReady if isinstance(s.StrongReady, frozenset) else frozenset()


_FIELDS = tuple(f.name for f in fields(Resource))
_ALL = attrgetter(*_FIELDS)
_AT = {name: i for i, name in enumerate(_FIELDS)}
_new = object.__new__
# each field's slot setter, in field order (``_resource``)
_SET = tuple(Resource.__dict__[name].__set__ for name in _FIELDS)
assert len(_SET) == 15, "``_resource`` fills exactly Resource's fields"


def _values(s: Resource) -> list:
    """A Resource's field values in field order (``list(_ALL(s))``), read as attributes in
    code, where each read is the interpreter's specialised slot read: about a third of
    ``attrgetter``'s cost, which looks every name up on the type (``set_`` copies a Resource
    on nearly every step of a resource)."""
    return [s.Q_strong, s.Q_weak, s.Q_token, s.Lock, s.NewHead, s.StrongReady, s.WeakReady,
            s.HoldingToken, s.SendingToken, s.r_min, s.Deferred, s.Gone, s.Seeking, s.Ready,
            s.Unlooping]


_PROBE = Resource(*(f"f{k}" for k in range(len(_FIELDS))))
assert _values(_PROBE) == list(_ALL(_PROBE)), "``_values`` reads Resource's fields in order"
_C_SET = tuple(Client.__dict__[name].__set__ for name in ("D", "phase", "next"))
assert tuple(f.name for f in fields(Client)) == ("D", "phase", "next")


def _resource(v: list) -> Resource:
    """``Resource(*v)`` without the frozen dataclass's ``__init__`` (one ``object.__setattr__``
    per field, about three times slower): the slots are filled directly. The result is an
    ordinary Resource, equal to and hashing like one built the usual way (no field has a
    ``__post_init__`` or converter to skip)."""
    r = _new(Resource)
    s = _SET
    s[0](r, v[0]); s[1](r, v[1]); s[2](r, v[2]); s[3](r, v[3]); s[4](r, v[4])  # noqa: E702
    s[5](r, v[5]); s[6](r, v[6]); s[7](r, v[7]); s[8](r, v[8]); s[9](r, v[9])  # noqa: E702
    s[10](r, v[10]); s[11](r, v[11]); s[12](r, v[12]); s[13](r, v[13])  # noqa: E702
    s[14](r, v[14])
    return r


def set_(s: Resource | Client, **kw) -> Resource | Client:
    """``replace(s, **kw)`` for a Resource or a Client. Every handler calls it, and the
    explorer runs the handlers millions of times: reading all fields at once and filling the
    new object's slots directly costs a fraction of ``dataclasses.replace``'s generic
    field-by-field walk and the frozen ``__init__``. Same value."""
    t = type(s)
    if t is Resource:
        vals = _values(s)
        for name, v in kw.items():
            vals[_AT[name]] = v
        return _resource(vals)
    if t is Client and kw.keys() <= {"D", "phase", "next"}:
        d, phase, nxt = s.D, s.phase, s.next     # slot reads (see ``_values``)
        c = _new(Client)
        a, b, e = _C_SET
        a(c, kw.get("D", d))
        b(c, kw.get("phase", phase))
        e(c, kw.get("next", nxt))
        return c
    return replace(s, **kw)
