"""The ``coterie`` protocol: local coteries and AllocResource (Kakugawa & Yamashita).

Modules: ``structure`` (U, R, α) as a bipartite graph; ``quorums`` the local-coterie
constructions and validator; ``config`` a scenario's fixed setup; ``state`` the variables of
AllocResource; ``protocol`` its Cases; ``monitors`` Lemma 1 and the wait-for graph; ``view``
the quorum layout.
"""

from .protocol import Coterie

__all__ = ["Coterie"]
