"""Named variants: one frozen table of features per protocol, and variants as sets of them.

The base variant (``as-printed`` where the paper has pseudocode) is a literal transcription: it
switches no feature on, so its code reads line by line against the paper. Every other variant
(``prose``, ``full``, the ablations) is a name for a set of features, each with a one-line reason
and the erratum entry of docs/protocols/<id>.md it answers. Handlers ask ``ctx.has("R1")``
instead of comparing variant names, so what a variant changes is written in one place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Feature:
    """One departure from the printed pseudocode (a repair, or the prose's reading)."""

    name: str        # how handlers ask for it: ctx.has(name)
    reason: str      # one line: what goes wrong without it (an ablation: what it takes away)
    erratum: str     # the erratum entry it answers: "<protocol>:<entry id>" of
                     # protocols/erratum/files (docs/protocols/<id>.md is made from it)
    kind: str = "repair"   # repair | reading | ablation | paper (the paper's own other
                           # variant); an ablation or a paper variant answers no erratum entry


@dataclass(frozen=True)
class Variants:
    """The features a protocol knows, and which of them each named variant switches on."""

    features: tuple[Feature, ...]
    named: Mapping[str, frozenset[str]]
    default: str
    _order: tuple[str, ...] = field(default=(), repr=False)

    @property
    def names(self) -> tuple[str, ...]:
        return self._order

    def on(self, variant: str) -> frozenset[str]:
        """The features ``variant`` switches on (KeyError for an unknown variant)."""
        return self.named[variant]

    def describe(self) -> list[dict]:
        """The table as data (for docs and the API): each variant with its features' reasons."""
        return [{"variant": v, "features": [{"name": f.name, "reason": f.reason,
                                             "erratum": f.erratum, "kind": f.kind}
                                            for f in self.features if f.name in self.named[v]]}
                for v in self._order]


def table(features: Iterable[Feature], variants: Mapping[str, Iterable[str]],
          default: str) -> Variants:
    """Build and check a variants table: every feature a variant names exists, and the default
    is one of the variants. Variants keep the order they are given in."""
    feats = tuple(features)
    known = {f.name for f in feats}
    if len(known) != len(feats):
        raise ValueError("two features share a name")
    named: dict[str, frozenset[str]] = {}
    for v, fs in variants.items():
        s = frozenset(fs)
        unknown = s - known
        if unknown:
            raise ValueError(f"variant {v!r} names unknown features: {', '.join(sorted(unknown))}")
        named[v] = s
    if default not in named:
        raise ValueError(f"default variant {default!r} is not one of {', '.join(named)}")
    return Variants(feats, named, default, tuple(named))
