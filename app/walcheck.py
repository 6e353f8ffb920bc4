"""Is a SQLite write-ahead log intact? Read it frame by frame and check SQLite's own checksums.

SQLite treats the first frame whose checksum fails as the end of the log and silently ignores
everything after it, so a damaged or half-truncated ``-wal`` file loses every link written after
the damage, and the server would start as if nothing happened. :func:`wal_problem` finds such
damage before SQLite opens the database: a frame of the current log (same salts) that fails its
checksum, intact frames after a bad one, or a log cut in the middle of a frame (but not the
lone frame header a process killed between SQLite's two writes of a frame leaves).
(Format: https://www.sqlite.org/fileformat2.html#walformat — 32-byte header, then frames of a
24-byte header and one page, each checksummed cumulatively.)
"""

from __future__ import annotations

import struct
from pathlib import Path

MAGIC = (0x377F0682, 0x377F0683)
HEADER = 32
FRAME_HEADER = 24


def _checksum(data: bytes, big: bool, s0: int, s1: int) -> tuple[int, int]:
    words = struct.unpack((">" if big else "<") + f"{len(data) // 4}I", data)
    m = 0xFFFFFFFF
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & m
        s1 = (s1 + words[i + 1] + s0) & m
    return s0, s1


def wal_problem(wal: Path) -> str | None:
    """None when the log is absent, empty or intact; otherwise a sentence saying what is wrong."""
    try:
        raw = wal.read_bytes()
    except FileNotFoundError:
        return None
    if not raw:
        return None
    if len(raw) < HEADER:
        return f"it is {len(raw)} bytes, shorter than its own header"
    magic, _version, page, _seq, salt1, salt2, c1, c2 = struct.unpack(">8I", raw[:HEADER])
    if magic not in MAGIC:
        return "it does not start like a SQLite write-ahead log"
    big = magic & 1 == 1
    if _checksum(raw[:24], big, 0, 0) != (c1, c2):
        return "its header fails its checksum"
    if page < 512 or page > 65536 or page & (page - 1):
        return f"its page size {page} is impossible"
    size = FRAME_HEADER + page
    whole, rest = divmod(len(raw) - HEADER, size)
    s = (c1, c2)
    good = 0
    for k in range(whole):
        at = HEADER + k * size
        pgno, _commit, f1, f2, fc1, fc2 = struct.unpack(">6I", raw[at:at + FRAME_HEADER])
        if (f1, f2) != (salt1, salt2):
            break                               # left over from an older log: not ours
        s = _checksum(raw[at:at + 8], big, *s)
        s = _checksum(raw[at + FRAME_HEADER:at + size], big, *s)
        if s != (fc1, fc2) or pgno == 0:
            later = sum(raw[HEADER + j * size + 8:HEADER + j * size + 16]
                        == struct.pack(">2I", salt1, salt2) for j in range(k + 1, whole))
            return (f"frame {k} of {whole} fails its checksum"
                    + (f" and {later} later frames of the same log would be dropped" if later
                       else ""))
        good += 1
    if rest and good == whole:
        tail = raw[HEADER + whole * size:]
        if rest == FRAME_HEADER and tail[8:16] == struct.pack(">2I", salt1, salt2):
            # SQLite writes a frame's header and its page in two writes: a process killed
            # between them (kill -9 in a burst) leaves this header alone. Its transaction never
            # committed, so no answered write is in it, and SQLite drops it: not damage.
            return None
        return f"it ends in the middle of frame {whole} (cut short: {rest} stray bytes)"
    return None
