"""datta_ring: two-resource allocation with unknown participants on a rooted ring of resources
(Datta, Larmore, Devismes, Kawala, Potop-Butucaru; paper 000_6b7fd52daa412ecf.txt).

Variants: ``naive`` (the queues without detection), ``as-printed`` (the pseudocode literally),
``prose`` (the design with the printed slips fixed; it still deadlocks after a remote unloop),
``full`` (our smallest repair). See docs/protocols/datta_ring.md.
"""

from .protocol import DattaRing

__all__ = ["DattaRing"]
