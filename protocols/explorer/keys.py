"""Canonical keys of global states: what the explorer deduplicates on.

Two global states get the same key exactly when the protocol cannot tell them apart: the key
keeps the process states, the messages in flight *without their numbers* (per directed channel
in order when channels are FIFO, as a multiset when they are unordered), who crashed, who is in
its critical section with which resources, and who waits. Message numbers, the step counter and
metrics are history, not state.

A protocol may also declare ``forget(config, pids, procs, messages)``: the state with values no
future step can read erased (coterie's dead Lamport times). Keys are taken after it; the search
audits the claim on sampled states (``audit.py``).

With a symmetry group (``Scenario.symmetry``), the key is the whole *orbit* of the state: the
frozenset of the keys of all its renamings. Two states then share a key exactly when one is a
renaming of the other, which needs no ordering of states (so no dependence on ``hash`` values).
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Callable, Hashable, Sequence
from operator import getitem
from typing import Any

from ..kernel import Protocol, State
from ..scenario import ScenarioError

MAX_GROUP = 720          # renamings tried per state; beyond this the reduction costs too much

Key = Hashable


def _rest(st: State, fifo: bool) -> tuple:
    """Everything of ``plain_key`` but the process states.

    Hot (once per transition): a message is a ``(seq, src, dst, kind, body)`` tuple, so slices
    stand for ``content()`` and ``(kind, body)``, and a plain dict counts the multiset (for the
    handful of messages in flight, ``Counter`` costs twice as much)."""
    if fifo:
        chans: dict[tuple[str, str], list] = {}
        for m in st.messages:
            c = m[1:3]
            q = chans.get(c)
            if q is None:
                chans[c] = [m[3:]]
            else:
                q.append(m[3:])
        msgs: Hashable = tuple((c, tuple(chans[c])) for c in sorted(chans))
    else:
        count: dict[tuple, int] = {}
        for m in st.messages:
            k = m[1:]
            count[k] = count.get(k, 0) + 1
        msgs = frozenset(count.items())
    return (msgs, st.crashed, st.cs, tuple(w[0] for w in st.waiting))


def plain_key(st: State, fifo: bool) -> Key:
    """The message-number-free identity of ``st``."""
    return (st.procs, *_rest(st, fifo))


def _group(pids: Sequence[str], classes: list[list[str]]) -> list[dict[str, str]]:
    """Every renaming that permutes each class of interchangeable pids among itself."""
    known = set(pids)
    seen: set[str] = set()
    for i, cls in enumerate(classes):
        for p in cls:
            if p not in known:
                raise ScenarioError(f"scenario.symmetry.{i}: no process {p!r}")
            if p in seen:
                raise ScenarioError(f"scenario.symmetry.{i}: {p!r} is in two classes")
            seen.add(p)
    size = 1
    for cls in classes:
        for k in range(2, len(cls) + 1):
            size *= k
    if size > MAX_GROUP:
        raise ScenarioError(f"scenario.symmetry: {size} renamings per state; at most {MAX_GROUP}")
    out = []
    for perms in itertools.product(*(itertools.permutations(c) for c in classes)):
        m = {p: p for p in pids}
        for cls, img in zip(classes, perms, strict=True):
            m.update(zip(cls, img, strict=True))
        out.append(m)
    return out


class Keyer:
    """The key function of one exploration, with its symmetry group (identity left out)."""

    def __init__(self, protocol: Protocol, config: Any, pids: Sequence[str], fifo: bool,
                 symmetry: list[list[str]] | None, forget: bool = True,
                 numbers: dict[Any, int] | None = None,
                 contents: Any = None) -> None:
        self.protocol = protocol
        self.config = config
        self.pids = tuple(pids)
        self.fifo = fifo
        self.index = {p: i for i, p in enumerate(self.pids)}
        classes = [list(c) for c in (symmetry or []) if len(c) > 1]
        self.group: list[dict[str, str]] = []
        self._forget = getattr(protocol, "forget", None) if forget else None
        # ``forget`` in parts (``Protocol.forget_parts``): erasures cached per context number
        parts = getattr(protocol, "forget_parts", None) if self._forget is not None else None
        self._parts = tuple(parts) if parts else None
        self._ctx_no: dict[Any, int] = {}
        self._ctxs: list[Any] = []          # the contexts, by number
        # ``Protocol.forget_context_parts``: the context from numbered parts. Per process
        # state (by ``n * len(pids) + i``) the number of its part; per content number the bit
        # of its part (0: it has none); per combination of those (the process parts' numbers,
        # the OR of the contents' bits) the context's number.
        cparts = getattr(protocol, "forget_context_parts", None) if self._parts else None
        self._cparts = tuple(cparts) if cparts else None
        # (optional fourth member) whether ``combine`` reads the content parts at all, given
        # the process parts: where it does not, the context is looked up by the process parts
        # alone, without the messages' bits
        self._reads = self._cparts[3] if self._cparts and len(self._cparts) > 3 else None
        k = len(self.pids)
        self._ppart: list[dict[int, int]] = [{} for _ in range(k)]     # per process index
        self._ppart_no: dict[Any, int] = {}
        self._ppart_of: list[Any] = []
        self._cbit: dict[int, int] = {}
        self._cpart_no: dict[Any, int] = {}
        self._cpart_of: list[Any] = []
        # the process parts' numbers -> the context's number, or -1 where it reads the
        # messages' parts; (process parts' numbers, OR of the messages' bits) -> the context's
        self._ctx_of_procs: dict[tuple, int] = {}
        self._ctx_of_parts: dict[tuple, int] = {}
        # per context number: erased process states (per process index, by state number) and
        # erased contents (by content number), by number
        self._fproc: list[list[dict[int, int]]] = []
        self._fcontent: list[dict[int, int]] = []
        # the last (crashed, cs, waiting) numbered, by identity: a state's successors mostly
        # share their parent's tuples (``_extra_number``)
        self._last_extra: tuple = (None, None, None, 0)
        if classes:
            self._ps = getattr(protocol, "permute_state", None)
            self._pm = getattr(protocol, "permute_message", None)
            if self._ps is None or self._pm is None:
                raise ScenarioError(f"scenario.symmetry: protocol {protocol.id} has no "
                                    "permute_state / permute_message hooks, so it does not "
                                    "support symmetry reduction")
            self.group = [m for m in _group(self.pids, classes)
                          if any(k != v for k, v in m.items())]
        # Without symmetry, keys name process states by number: each distinct process state
        # gets the next number when first met. Equal numbers mean equal states, so the keys
        # identify exactly what ``plain_key`` identifies, but hashing and comparing them costs
        # a tuple of small ints instead of every process's dataclass, and a successor's key
        # only numbers the processes its step touched (see ``key``). ``numbers``: the lean
        # table (``Transitions.numbers``), which numbers touched states as it steps.
        self._number: dict[Any, int] = numbers if numbers is not None else {}
        # Likewise, message contents (src, dst, kind, body) by number, and for FIFO channels
        # the number of each content's channel: ``contents`` is the search's ``Transitions``
        # (``content_number``, ``channel_of``), so that a fast-path successor's ``cnums`` are
        # these numbers; without it the keyer numbers contents itself.
        if contents is None:
            contents = _Contents()
        self._content_number: Callable[[tuple], int] = contents.content_number
        self._chan_of: list[int] = contents.channel_of
        # crashed / cs / waiting together, by number (almost always all empty: number 0)
        self._extra: dict[tuple, int] = {(frozenset(), (), ()): 0}
        self._extra_of: list[tuple] = [(frozenset(), (), ())]       # by number
        # (number, pid, its cs value, whether it waits) -> the number with pid's entries so
        # (``extra_after``)
        self._extra_step: dict[tuple, int] = {}
        # Every key so far had the one-byte form: try it first (``_narrow_key``). A search's
        # number tables only grow, so after its first wider key most will be wide. (Read by
        # ``Transitions``, which makes a successor's one-byte key itself while it holds.)
        self.narrow = True
        if self._forget is not None and self._parts is not None and not self.group:
            self.key_of = self._key_of_forgotten        # type: ignore[method-assign]
        elif self._forget is None and not self.group:
            self.key_of = self._key_of_plain            # type: ignore[method-assign]

    @property
    def size(self) -> int:
        return len(self.group) + 1

    def rename(self, st: State, m: dict[str, str]) -> State:
        """``st`` with every process id p replaced by m[p] (states moved to their new slots)."""
        procs: list = [None] * len(self.pids)
        for i, p in enumerate(self.pids):
            procs[self.index[m[p]]] = self._ps(self.config, st.procs[i], m)
        msgs = tuple(x._replace(src=m.get(x.src, x.src), dst=m.get(x.dst, x.dst),
                                body=self._pm(self.config, x.kind, x.body, m))
                     for x in st.messages)
        cs = tuple(sorted((m[p], r) for p, r in st.cs))
        waiting = tuple(sorted((m[w[0]], w[1], w[2]) for w in st.waiting))
        crashed = frozenset(m[p] for p in st.crashed)
        return State(tuple(procs), msgs, st.next_seq, crashed, cs, waiting)

    @property
    def forgets(self) -> bool:
        return self._forget is not None

    def forgotten(self, st: State) -> State:
        """``st`` with what the protocol's ``forget`` hook says no future step reads erased."""
        procs, msgs = self._forget(self.config, self.pids, st.procs, st.messages)
        return State(procs, msgs, st.next_seq, st.crashed, st.cs, st.waiting)

    def key(self, st: State, parent: Key | None = None,
            touched: tuple[int, ...] | None = None,
            numbers: tuple[int, ...] | None = None, nums: tuple[int, ...] | None = None,
            cnums: tuple[int, ...] | None = None) -> Key:
        """The canonical key of ``st``: a compact int (without symmetry: ``encode``). ``nums`` /
        ``cnums`` are the numbers of its process states and message contents when the caller
        knows them (``Transitions.step_fast``); ``parent``, ``touched`` and ``numbers`` are
        accepted for callers of the older signature and not needed."""
        if self._forget is not None:
            if self._parts is not None and not self.group:
                # by parts, numbering the state's process states and contents first (the
                # forget audit keys every successor it compares this way)
                nums, cnums = self._numbers(st, nums, cnums)
                return self._forgotten_key(st.procs, st.messages, nums, cnums, st.crashed,
                                           st.cs, st.waiting)
            st = self.forgotten(st)
            nums = cnums = None     # what is dead depends on every process, not just the touched
        if self.group:
            base = plain_key(st, self.fifo)
            return frozenset([base, *(plain_key(self.rename(st, m), self.fifo)
                                      for m in self.group)])
        nums, cnums = self._numbers(st, nums, cnums)
        return self.encode(nums, cnums, st)

    def _numbers(self, st: State, nums: Sequence[int] | None,
                 cnums: Sequence[int] | None) -> tuple[Sequence[int], Sequence[int]]:
        """The numbers of ``st``'s process states and message contents, where the caller did
        not already know them."""
        if nums is None:
            number = self._number
            nums = [number.setdefault(p, len(number)) for p in st.procs]
        if cnums is None:
            cn = self._content_number
            cnums = [cn(m[1:]) for m in st.messages]
        return nums, cnums

    def key_of(self, out: Any) -> Key:
        """``key`` of a fast-path successor (``Transitions.step_fast``'s ``Outcome``): without
        forget or symmetry, straight from its numbers and parts, without building its state."""
        if self._forget is not None and self._parts is not None and not self.group:
            return self._key_of_forgotten(out)
        return self._key_of_other(out)

    def _key_of_forgotten(self, out: Any) -> int:
        """``key_of`` under ``forget_parts`` (bound as ``key_of`` when it applies)."""
        procs, msgs, _seq, crashed, cs, waiting = out.parts
        return self._forgotten_key(procs, msgs, out.nums, out.cnums, crashed, cs, waiting)

    def _key_of_plain(self, out: Any) -> int:
        """``key_of`` without forget or symmetry (bound as ``key_of`` then: the search asks
        it for every successor not recognised from numbers, one call instead of three)."""
        _procs, _msgs, _seq, crashed, cs, waiting = out.parts
        return self.encode_parts(out.nums, out.cnums, crashed, cs, waiting)

    def _key_of_other(self, out: Any) -> Key:
        if self._forget is not None or self.group:
            return self.key(out.state, nums=out.nums, cnums=out.cnums)
        _procs, _msgs, _seq, crashed, cs, waiting = out.parts
        return self.encode_parts(out.nums, out.cnums, crashed, cs, waiting)

    def _forgotten_key(self, procs: tuple, msgs: tuple, nums: Sequence[int],
                       cnums: Sequence[int], crashed: frozenset, cs: tuple,
                       waiting: tuple) -> int:
        """``key`` under ``forget`` from the protocol's ``forget_parts``: the context once per
        state (from numbered parts with ``forget_context_parts``), then each process state (by
        its number) and message content (by its number) erased once per context and numbered
        as ``forgotten`` would number it, so the key is that of the whole-state path."""
        if self._cparts is None:
            ctx = self._parts[0](self.config, self.pids, procs, msgs)
            c = self._ctx_no.get(ctx)
            if c is None:
                c = self._context_number(ctx)
            return self.encode_parts(self._erase_procs(c, procs, nums),
                                     self._erase_contents(c, msgs, cnums) if msgs else [],
                                     crashed, cs, waiting)
        # Hot (coterie: every successor): lookups that are almost always hits, as ``map`` over
        # per-process-index dicts (no Python-level loop); a miss (KeyError) takes the helpers
        # that work the part out.
        try:
            pk = tuple(map(getitem, self._ppart, nums))
        except KeyError:
            pk = tuple([self._proc_part(i, n, procs[i]) for i, n in enumerate(nums)])
        c = self._ctx_of_procs.get(pk)
        if c is None:
            c = self._context_of_procs(pk)
        if c < 0:       # the context reads the messages' parts: the OR of their bits
            cb = self._cbit
            mask = 0
            try:
                for cn in cnums:
                    mask |= cb[cn]
            except KeyError:
                mask = 0
                for cn, m in zip(cnums, msgs, strict=True):
                    b = cb.get(cn)
                    mask |= b if b is not None else self._content_bit(cn, m)
            c = self._ctx_of_parts.get((pk, mask))
            if c is None:
                c = self._context_of_key(pk, mask)
        try:
            vals = list(map(getitem, self._fproc[c], nums))
        except KeyError:
            vals = self._erase_procs(c, procs, nums)
        if cnums:
            fm = self._fcontent[c]
            try:
                fc = list(map(fm.__getitem__, cnums))
            except KeyError:
                fc = self._erase_contents(c, msgs, cnums)
            vals += self._in_key_order(fc) if len(fc) > 1 else fc
        vals.append(self._extra_number(crashed, cs, waiting) if crashed or cs or waiting else 0)
        if self.narrow:
            key = _narrow_key(vals)
            if key is not None:
                return key
            self.narrow = False
        return _bytes(vals)

    def _proc_part(self, i: int, n: int, state: Any) -> int:
        """The number of the context part of process i's state numbered n."""
        x = self._ppart[i].get(n)
        if x is not None:
            return x
        part = self._cparts[0](self.config, self.pids[i], state)
        x = self._ppart_no.get(part)
        if x is None:
            x = self._ppart_no[part] = len(self._ppart_of)
            self._ppart_of.append(part)
        self._ppart[i][n] = x
        return x

    def _content_bit(self, cn: int, m: Any) -> int:
        """The bit of the context part of content number cn (message m): 0 when it has none."""
        part = self._cparts[1](self.config, m[1:])
        if part is None:
            b = 0
        else:
            x = self._cpart_no.get(part)
            if x is None:
                x = self._cpart_no[part] = len(self._cpart_of)
                self._cpart_of.append(part)
            b = 1 << x
        self._cbit[cn] = b
        return b

    def _context_of_procs(self, pk: tuple[int, ...]) -> int:
        """For process parts' numbers met for the first time: the context's number where
        ``combine`` does not read the messages' parts (the protocol's ``reads`` says so), else
        -1."""
        parts = tuple([self._ppart_of[x] for x in pk])
        if self._reads is None or self._reads(self.config, self.pids, parts):
            c = -1
        else:
            ctx = self._cparts[2](self.config, self.pids, parts, frozenset())
            c = self._ctx_no.get(ctx)
            if c is None:
                c = self._context_number(ctx)
        self._ctx_of_procs[pk] = c
        return c

    def _context_of_key(self, pk: tuple[int, ...], mask: int) -> int:
        """The context's number for a combination of part numbers met for the first time."""
        cparts = frozenset(p for x, p in enumerate(self._cpart_of) if mask >> x & 1)
        ctx = self._cparts[2](self.config, self.pids,
                              tuple([self._ppart_of[x] for x in pk]), cparts)
        c = self._ctx_no.get(ctx)
        if c is None:
            c = self._context_number(ctx)
        self._ctx_of_parts[(pk, mask)] = c
        return c

    def _context_number(self, ctx: Any) -> int:
        """The number of a context met for the first time (with its empty erasure caches)."""
        c = self._ctx_no[ctx] = len(self._ctx_no)
        self._ctxs.append(ctx)
        self._fproc.append([{} for _ in self.pids])
        self._fcontent.append({})
        return c

    def _erase_proc(self, c: int, i: int, n: int, state: Any) -> int:
        """The number of process i's state (numbered n) erased in context c (cached)."""
        number = self._number
        f = self._fproc[c][i][n] = number.setdefault(
            self._parts[1](self.config, self.pids[i], state, self._ctxs[c]), len(number))
        return f

    def _erase_content(self, c: int, cn: int, m: Any) -> int:
        """The number of content cn (message m) erased in context c (cached)."""
        f = self._fcontent[c][cn] = self._content_number(
            self._parts[2](self.config, m[1:], self._ctxs[c]))
        return f

    def _erase_procs(self, c: int, procs: tuple, nums: Sequence[int]) -> list[int]:
        """The erased numbers of every process state in context c."""
        fp = self._fproc[c]
        out = []
        for i, n in enumerate(nums):
            f = fp[i].get(n)
            out.append(f if f is not None else self._erase_proc(c, i, n, procs[i]))
        return out

    def _erase_contents(self, c: int, msgs: tuple, cnums: Sequence[int]) -> list[int]:
        """The erased numbers of every message content in context c."""
        fm = self._fcontent[c]
        out = []
        for m, cn in zip(msgs, cnums, strict=True):
            f = fm.get(cn)
            out.append(f if f is not None else self._erase_content(c, cn, m))
        return out

    def encode(self, nums: Sequence[int], cnums: Sequence[int], st: State) -> int:
        """The key, bytes read as an int (``_bytes``): the process-state numbers, the message-content numbers (sorted for
        unordered channels; FIFO: each channel's queue in turn), then the number of (crashed,
        cs, waiting pids). The number of processes is fixed, so the length tells where the
        messages end: equal bytes mean equal keys of ``plain_key``. One byte a number while all
        are below 255; else a 0xFF marker and two bytes each while all are below 65,535; else a
        0xFFFFFF marker and four bytes each (a one-byte key never starts with 0xFF, a two-byte
        one never with 0xFFFF, so the three forms cannot meet)."""
        return self.encode_parts(nums, cnums, st.crashed, st.cs, st.waiting)

    def encode_parts(self, nums: Sequence[int], cnums: Sequence[int], crashed: frozenset,
                     cs: tuple, waiting: tuple) -> int:
        """``encode`` from a state's parts. Hot (once per transition of a search): the
        unordered channels' sort and ``_extra_number``'s answer for the tuples asked last are
        inline."""
        vals = [*nums, *(cnums if len(cnums) < 2 else sorted(cnums) if not self.fifo
                         else self._in_key_order(cnums))]
        if crashed or cs or waiting:
            last = self._last_extra
            vals.append(last[3] if last[2] is waiting and last[1] is cs and last[0] is crashed
                        else self._extra_number(crashed, cs, waiting))
        else:
            vals.append(0)
        if self.narrow:
            key = _narrow_key(vals)
            if key is not None:
                return key
            self.narrow = False
        return _bytes(vals)

    def _in_key_order(self, cnums: Sequence[int]) -> list[int]:
        """Content numbers in the key's order: by channel under FIFO (a channel's messages keep
        their order), else by number (in-flight messages are a set)."""
        if self.fifo:
            return sorted(cnums, key=self._chan_of.__getitem__)
        return sorted(cnums)

    def _extra_number(self, crashed: frozenset, cs: tuple, waiting: tuple) -> int:
        """The number of (crashed, cs, waiting pids)."""
        last = self._last_extra
        if last[2] is waiting and last[1] is cs and last[0] is crashed:
            return last[3]
        ex = (crashed, cs, tuple([w[0] for w in waiting]))
        e = self._extra.get(ex)
        if e is None:
            e = self._new_extra(ex)
        self._last_extra = (crashed, cs, waiting, e)
        return e

    def _new_extra(self, ex: tuple) -> int:
        e = self._extra[ex] = len(self._extra_of)
        self._extra_of.append(ex)
        return e

    # ---- successor keys from numbers (``Transitions.successor_keys``) -------------------
    def extra_number(self, crashed: frozenset, cs: tuple, waiting: tuple) -> int:
        """The number ``encode_parts`` gives a state's (crashed, cs, waiting pids). Hot (once
        per expanded state): the answer for the tuples asked last is inline."""
        if crashed or cs or waiting:
            last = self._last_extra
            if last[2] is waiting and last[1] is cs and last[0] is crashed:
                return last[3]
            return self._extra_number(crashed, cs, waiting)
        return 0

    def extra_after(self, e: int, pid: str, csv: Any, waits: bool) -> int:
        """The number of the (crashed, cs, waiting pids) numbered ``e`` with ``pid``'s
        entries changed to ``csv`` (its resources in its critical section, None: outside)
        and ``waits``: a local step's successor, without building its cs and waiting tuples
        (a few distinct answers, each worked out once)."""
        k = (e, pid, csv, waits)
        x = self._extra_step.get(k)
        if x is None:
            crashed, cs, who = self._extra_of[e]
            rest = [c for c in cs if c[0] != pid]
            if csv is not None:
                rest.append((pid, csv))
                rest.sort()
            waiters = [w for w in who if w != pid]
            if waits:
                waiters.append(pid)
                waiters.sort()
            ex = (crashed, tuple(rest), tuple(waiters))
            x = self._extra.get(ex)
            if x is None:
                x = self._new_extra(ex)
            self._extra_step[k] = x
        return x

    def step_key(self, nums: tuple[int, ...], i: int, n: int, cnums: Sequence[int],
                 extra: int) -> int:
        """``encode_parts`` of a successor from its numbers: ``nums`` with process i's
        number replaced by ``n``, its content numbers ``cnums`` (in message order) and its
        ``extra_number``. Hot (once per transition of a search): no successor tuples built."""
        vals = list(nums)
        vals[i] = n
        if len(cnums) > 1:
            vals += sorted(cnums) if not self.fifo else self._in_key_order(cnums)
        else:
            vals += cnums
        vals.append(extra)
        if self.narrow:
            key = _narrow_key(vals)
            if key is not None:
                return key
            self.narrow = False
        return _bytes(vals)


def _bytes(vals: list[int]) -> int:
    """``encode``'s key of the numbers ``vals`` (a list the call may extend): their bytes, one
    byte each while all are below 255, else the marked two- or four-byte form, then a final
    0x01, read as one little-endian int. The final byte is never 0, so the int keeps every
    byte and the length (equal ints, equal bytes); an int of n bytes takes about 24 + n bytes
    of memory, a ``bytes`` object 33 + n."""
    top = max(vals)
    if top < 0xFF:
        vals.append(1)
        return int.from_bytes(bytes(vals), "little")
    if top < 0xFFFF:
        return int.from_bytes(b"\xff" + array("H", vals).tobytes() + b"\x01", "little")
    return int.from_bytes(b"\xff\xff\xff" + array("I", vals).tobytes() + b"\x01", "little")


def _narrow_key(vals: list[int]) -> int | None:
    """``_bytes(vals)`` if every number is below 255 (its one-byte form), else None with
    ``vals`` as it was. ``bytearray`` refuses a number above 255 and a search for the byte
    0xFF (``memchr``) finds a 255, both in C, where ``_bytes``' ``max`` compares the numbers
    one by one as objects (a third of a small key's cost); but a refusal costs an exception,
    so a keyer asks this only until its first wider key (``Keyer.narrow``)."""
    vals.append(1)
    try:
        one = bytearray(vals)       # (made faster than bytes; read the same)
    except ValueError:              # a number above 255
        one = None
    if one is not None and 0xFF not in one:
        return int.from_bytes(one, "little")
    del vals[-1]
    return None


class _Contents:
    """Message contents by number, for a keyer used without a ``Transitions``."""

    def __init__(self) -> None:
        self.numbers: dict[tuple, int] = {}
        self.channel_of: list[int] = []
        self.channels: dict[tuple, int] = {}

    def content_number(self, content: tuple) -> int:
        n = self.numbers.get(content)
        if n is None:
            n = self.numbers[content] = len(self.numbers)
            self.channel_of.append(self.channels.setdefault(content[:2], len(self.channels)))
        return n
