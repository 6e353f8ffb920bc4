"""kout_tree: self-stabilizing k-out-of-ℓ exclusion on oriented trees.

Datta, Devismes, Horn, Larmore (HAL hal-00344193v3), Algorithms 1 (root) and 2 (other
processes).  Faithfulness notes: docs/protocols/kout_tree.md.
"""

from .protocol import KoutTree

__all__ = ["KoutTree"]
