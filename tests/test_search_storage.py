"""Issue 15 (memory): the search's compact storage gives back exactly what was stored.

Edges kept as spans of narrow arrays (widened when a value does not fit; ends made explicit
when nodes come out of order), repeated values kept once (``Interned``), and keys as ints
read from the key's bytes: each must read back what a plain list or the bytes would."""

from __future__ import annotations

import random

from protocols.explorer.engine import Graph, Interned, Search, SearchOptions, search
from protocols.explorer.keys import _bytes, _narrow_key, plain_key
from protocols.kernel import Transitions
from protocols.kernel.transitions import Outcome
from protocols.runner import build
from protocols.scenario import parse

TWO = {"id": "two", "title": "two clients, two resources", "protocol": "datta_ring",
       "topology": {"ring": ["R1", "R2"]},
       "workload": {"clients": [{"id": "C1", "requests": [["R1", "R2"]]},
                                {"id": "C2", "requests": [["R2", "R1"]]}]}}


def test_edges_read_back_in_order_out_of_order_and_widened():
    rnd = random.Random(7)
    g = Graph()
    want: dict[int, tuple[list[int], list[int]]] = {}
    # nodes 0..39 in order (starts only), then 40..79 shuffled (ends made explicit); values
    # past 65,535 widen the two-byte arrays
    for i in list(range(40)) + rnd.sample(range(40, 80), 40):
        n = rnd.randint(0, 4)
        succ = [rnd.choice([0, 3, 65_535, 70_000]) for _ in range(n)]
        codes = [rnd.choice([2, 7, 300_000]) for _ in range(n)]
        g.succ[i] = succ
        g.codes[i] = codes
        want[i] = (succ, codes)
        if i == 20:     # mid-way, still two bytes and still in order
            assert g.succ.end is None
    assert g.succ.end is not None and g.succ.flat.typecode == "i" == g.codes.flat.typecode
    assert sorted(g.succ) == sorted(want) and len(g.succ) == len(g.codes) == 80
    for i, (succ, codes) in want.items():
        assert g.succ[i] == tuple(succ) and g.codes[i] == tuple(codes)
        assert list(range(*g.succ.span(i))) == list(range(*g.codes.span(i)))


def test_codes_must_follow_their_successors():
    g = Graph()
    g.succ[0] = [1, 2]
    for bad in ([5], [5, 6, 7]):
        try:
            g.codes[0] = bad
        except ValueError:
            pass
        else:   # pragma: no cover - the check is the test
            raise AssertionError("codes with another length than the successors accepted")
    try:
        g.codes[1] = [4]
    except ValueError:
        pass
    else:   # pragma: no cover
        raise AssertionError("codes of a node without successors accepted")


def test_interned_reads_back_and_widens():
    seq = Interned()
    values = [frozenset({f"p{k % 300}"}) for k in range(900)]
    for v in values:
        seq.append(v)
    assert len(seq) == 900 and list(seq) == values and seq[899] == values[899]
    assert seq.items.typecode == "H" and len(seq.values) == 300


def test_int_keys_tell_apart_what_the_bytes_do():
    lists = [[0], [0, 0], [1], [1, 0], [0, 1], [254], [255], [255, 0], [0, 255], [65_535],
             [65_535, 0], [70_000], [0, 70_000], [3, 1], [3, 1, 0]]
    keys = [_bytes(list(v)) for v in lists]
    assert len(set(keys)) == len(lists)
    assert all(isinstance(k, int) for k in keys)



def test_int_keys_are_the_documented_bytes():
    """``_bytes``' three forms, byte for byte (the key's meaning): one byte a number while all
    are below 255, else 0xFF and two bytes each while all are below 65,535, else 0xFFFFFF and
    four bytes each; then 0x01. ``_narrow_key`` gives the first form or None."""
    def ref(vals: list[int]) -> int:
        top = max(vals)
        if top < 0xFF:
            raw = bytes(vals)
        elif top < 0xFFFF:
            raw = b"\xff" + b"".join(v.to_bytes(2, "little") for v in vals)
        else:
            raw = b"\xff\xff\xff" + b"".join(v.to_bytes(4, "little") for v in vals)
        return int.from_bytes(raw + b"\x01", "little")
    for vals in ([0], [7, 3, 254], [254, 255], [255], [3, 256], [0, 65_534], [65_535, 1],
                 [1, 70_000, 2], [254] * 12):
        assert _bytes(list(vals)) == ref(list(vals)), vals
        # the one-byte form alone (a keyer's first try, ``Keyer._narrow``): None, with the
        # numbers left as they were, where a number is 255 or more
        mine = list(vals)
        narrow = _narrow_key(mine)
        assert narrow == (ref(list(vals)) if max(vals) < 0xFF else None), vals
        assert narrow is not None or mine == list(vals)

def _named_edges(order: str) -> tuple[int, int, set, bool]:
    """The whole naive two-client ring searched in ``order`` with its edges kept: states,
    transitions, the edges named by their ends' ``plain_key`` (keys number process states in
    the order a search meets them) and edge labels, and whether nodes came in order."""
    ts = Transitions(build(parse(TWO), "naive"))
    s = Search(ts, SearchOptions(order=order, keep_edges=True, stop_at_first=False))
    s.run()
    g = s.graph
    states = [ts.initial]           # each node's state, replayed along its parent's edge
    for i in range(1, len(g.parent)):
        here = states[g.parent[i]]
        ev = next(e for e in ts.enabled_in(here) if e.id == g.via[i])
        states.append(ts.step(here, ev).state)
    name = [plain_key(st, ts.fifo) for st in states]
    label_of = {n: lab for lab, n in g.labels.items()}
    edges = {(name[i], name[j], label_of[c >> 2], c & 3)
             for i in g.succ for j, c in zip(g.succ[i], g.codes[i], strict=True)}
    return len(g.parent), g.transitions, edges, g.succ.end is None


def test_depth_first_graph_equals_breadth_first_graph():
    """Depth-first sets nodes out of order (explicit ends): the same states, edges and edge
    labels as breadth-first."""
    n1, t1, e1, in_order1 = _named_edges("bfs")
    n2, t2, e2, in_order2 = _named_edges("dfs")
    assert (n1, t1) == (n2, t2) and e1 == e2 and len(e1) > 500
    assert in_order1 and not in_order2
    res = search(build(parse(TWO), "naive"), SearchOptions(order="dfs"))
    assert res.result == "deadlock"


def test_depths_read_back_past_one_byte():
    """A search's depths are kept one byte each until a state is 256 or more steps deep, then
    widened (``Graph.depth``, ``widened``): a chain of 300 states reads back 0..299."""
    s = Search(Transitions(build(parse(TWO), "naive")), SearchOptions())
    parent = -1
    for k in range(300):
        parent = s._add(("chain", k), parent, "e", frozenset({"C1"}))
    assert list(s.graph.depth) == list(range(300)) and s.max_depth == 299
    assert len(s.graph.waiting) == 300 and s.graph.waiting[299] == frozenset({"C1"})


def _chaos_group(first: int, last: int) -> list:
    """kout_tree ``chaos`` family instances ``first``..``last`` (one instance's corrupted
    starts: issue 14's groups), as scenarios."""
    from protocols.verify import get, tasks
    idx = set(range(first, last + 1))
    by_index = {t["index"]: t for t in tasks(get("kout_tree", "chaos"), "full", only=idx,
                                             max_states=1)}
    return [parse(by_index[i]["scenario"]) for i in sorted(idx)]


def test_packed_frontier_states_read_back_and_keep_no_per_state_waiting_entries():
    """A kout_tree chaos group search packs most of its frontier (``Transitions.pack``): each
    packed state unpacks to equal parts and numbers, and what ``pack`` numbers and keeps for
    the whole search does not grow with the states (the waiting entries' ``cs_entries``
    counts, nearly one per state, travel inside the packed bytes)."""
    scs = _chaos_group(70, 79)
    sims = [build(sc, "full") for sc in scs]
    ts = Transitions(sims[0])
    packed = 0
    pack = ts.pack

    def checked_pack(out):
        nonlocal packed
        blob = pack(out)
        assert ts.unpack(blob) == (out.parts, out.nums, out.cnums)
        packed += 1
        return blob

    ts.pack = checked_pack
    s = Search(ts, SearchOptions(max_states=30_000, starts=tuple(x.state() for x in sims[1:]),
                                 events=sims[0].protocol.explore_events(sims[0].config)))
    assert s.run().kind == "limit"
    assert packed > 20_000
    assert ts.packed_extras < 200, ts.packed_extras


def test_pack_keeps_waiting_entries_whose_counts_do_not_fit_in_four_bytes():
    """A waiting entry whose numbers the packed bytes cannot hold (a count past 2**32 - 1, a
    value that is not an int) is numbered whole, as before, and still reads back equal."""
    sim = build(_chaos_group(70, 70)[0], "full")
    ts = Transitions(sim)
    ev = ts.enabled_in(ts.initial)[0]
    out = ts.step(ts.initial, ev)
    nums, cnums = ts.state_numbers(out.state)
    pid = sim.pids[0]
    for waiting in ((), ((pid, 1, 0),), ((pid, 1, 2**32 - 1),), ((pid, 1, 2**32),),
                    ((pid, 1, "x"),), ((pid, 2**40, 5),), ((pid, 1),), ((pid, 1, 3, 4),)):
        parts = (*out.parts[:5], waiting)
        fake = Outcome(None, None, False, frozenset())
        fake.parts, fake.nums, fake.cnums = parts, nums, cnums
        assert ts.unpack(ts.pack(fake)) == (parts, nums, cnums)
