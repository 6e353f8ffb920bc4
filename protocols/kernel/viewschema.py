"""The pinned shape of ``Protocol.view(sim)``: what the browser's drawing code relies on.

Nodes and edges may carry protocol-specific fields beyond these (the layout modules in
static/js/views/ read them); the ones named here mean the same in every protocol.
tests/test_contract.py validates the view of every gallery scenario against it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ViewNode(_Open):
    """One process, resource or other drawn node, at (x, y) in a 1000 x 700 box."""

    id: str
    x: float
    y: float
    label: str | None = None          # drawn in the node (default: id)
    kind: str = "process"             # process | resource | client | controller | root | ...
    cs: bool = False                  # in its critical section (green)
    waiting: bool = False             # waits for its critical section (a ring around it)
    crashed: bool = False             # crossed out
    token: bool = False               # holds a token (a yellow dot; also ``holder``)
    phase: str | None = None          # a word for the tooltip ("idle", "wanting", ...)
    badges: list[str] = Field(default_factory=list)   # short texts under the node
    # (the badge "token" is not drawn as text: set ``token`` instead)


class ViewEdge(_Open):
    src: str
    dst: str
    kind: str = "edge"                # ring | tree | wait | grant | dependency | ...
    dashed: bool = False
    directed: bool = True


class ViewQueue(_Open):
    node: str
    name: str
    items: list[str]


class View(_Open):
    layout: Literal["ring", "tree", "quorum", "game"]
    nodes: list[ViewNode]
    edges: list[ViewEdge] = Field(default_factory=list)
    queues: list[ViewQueue] = Field(default_factory=list)
    cycles: list[list[str]] = Field(default_factory=list)
    extra: dict = Field(default_factory=dict)
