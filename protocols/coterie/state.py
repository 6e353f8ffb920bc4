"""The variables of AllocResource (Section 4) as frozen, hashable data.

Every process plays two roles. As a *requester* u it runs Cases 1–3 and 8 and keeps its chosen
quorum q, the stamp of its QUERY, the copies of D_v received so far, and the set G_u it holds.
As a quorum *member* v it runs Cases 4–7 and keeps the paper's D_v, W_v, T_v and X_v. The
Lamport clock C_u is shared by both roles. A stamp is ``(C, id)``: Lamport time with the
process id as tie-break, so smaller means higher priority and no two requests tie.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

Stamp = tuple[int, int]                       # (logical time, process id number)
Entry = tuple[str, str | None, int]           # (r, holder or None for ⊥, t): one row of D_v
Copy = tuple[str, tuple[Entry, ...]]          # (v, D_v restricted to α(u)) kept by u


@dataclass(frozen=True, slots=True)
class Requester:
    """u's side of a request. ``phase``: idle | query (waiting in Case 1) | cs (holds G_u)."""

    phase: str = "idle"
    k: int = 0                                 # resources wanted by the current request
    q: tuple[str, ...] = ()                    # the quorum chosen in Case 1
    ts: Stamp | None = None                    # stamp of the current QUERY
    copies: tuple[Copy, ...] = ()              # latest D_v per member v, sorted by v (Case 3)
    G: tuple[str, ...] = ()                    # G_u: resources locked and being accessed
    done: int = 0                              # requests made so far (index into the workload)

    def with_copy(self, v: str, d: tuple[Entry, ...]) -> "Requester":
        rest = tuple(c for c in self.copies if c[0] != v)
        return replace(self, copies=tuple(sorted(rest + ((v, d),))))

    def without_copy(self, v: str) -> "Requester":
        return replace(self, copies=tuple(c for c in self.copies if c[0] != v))

    def has_all(self) -> bool:
        """A RESPONSE from every v ∈ q is held: the first condition of Case 1."""
        if self.phase != "query":       # most states (a monitor asks on every state)
            return False
        have = {c[0] for c in self.copies}
        return all(v in have for v in self.q)

    def A(self, alpha: tuple[str, ...]) -> tuple[str, ...]:
        """A_u: the r ∈ α(u) with D_v(r) = (⊥, t) in every copy held (Case 1)."""
        free = []
        for r in alpha:
            if all(holder is None for _v, d in self.copies for (s, holder, _t) in d if s == r):
                free.append(r)
        return tuple(free)


@dataclass(frozen=True, slots=True)
class Member:
    """v's side: the paper's D_v, W_v, T_v, X_v, plus whether v awaits a reply to a PREEMPT."""

    D: tuple[Entry, ...] = ()                  # D_v(r) for r ∈ R_v, sorted by r
    W: str | None = None                       # W_v: who holds v's permission (⊥ = None)
    T: Stamp | None = None                     # T_v: the stamp of W_v's QUERY
    X: tuple[tuple[Stamp, str], ...] = ()      # X_v: waiting QUERYs, sorted by stamp
    preempting: bool = False                   # a PREEMPT to W_v awaits RETURN or LOCK (Case 4)

    def with_D(self, rows: dict[str, tuple[str | None, int]]) -> "Member":
        return replace(self, D=tuple((r, *rows[r]) if r in rows else (r, h, t)
                                     for (r, h, t) in self.D))

    def D_for(self, alpha: tuple[str, ...]) -> tuple[Entry, ...]:
        """The part of D_v on α(u): all a RESPONSE to u needs to carry (end of Section 4)."""
        return tuple(e for e in self.D if e[0] in alpha)

    def enqueue(self, stamp: Stamp, u: str) -> "Member":
        if (stamp, u) in self.X:
            return self
        return replace(self, X=tuple(sorted(self.X + ((stamp, u),))))


@dataclass(frozen=True, slots=True)
class Proc:
    """One process of AllocResource: C_u and both roles."""

    C: int = 0
    req: Requester = Requester()
    mem: Member = Member()
