"""The short-link store: SQLite in WAL mode under ``$ALLOCSCOPE_DATA`` (default ``./data``).

Links are content-addressed and immutable: the id is the first 80 bits of the sha256 of the
link's canonical JSON in base32, so saving the same state twice gives the same id, and a row is
never updated. WAL mode with ``synchronous=FULL`` means a POST that was answered is on disk, even
if the server is killed right after; several server processes (``uvicorn --workers 4``, or hosts
sharing a volume) may use one file at once. SQL is only ever run with parameters.

A clean stop checkpoints the log into the main file (``close``), so ``links.sqlite3`` alone
holds every link; opening refuses a damaged or cut-short ``-wal`` (``app/walcheck.py``) with a
sentence saying what to do, instead of silently dropping what was written after the damage.
Backups and restores go through SQLite's online backup API (:func:`backup`, :func:`restore`,
``allocscope links backup|restore|verify``), safe while servers run.

For the websocket's ``{"op": "load", "link": id}``: call :func:`get_link`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from .limits import read_one
from .linkstate import LinkError, LinkRecord, canonical, open_record, record_from
from .walcheck import wal_problem

DATA_ENV = "ALLOCSCOPE_DATA"
DB_NAME = "links.sqlite3"
ID_RE = re.compile(r"^[a-z2-7]{16}$")
_SCHEMA = ("CREATE TABLE IF NOT EXISTS links (id TEXT PRIMARY KEY, body BLOB NOT NULL, "
           "created INTEGER NOT NULL)")


class StoreError(RuntimeError):
    """The database cannot be used (corrupt, locked, unwritable); the message says which."""


def data_dir() -> Path:
    """``$ALLOCSCOPE_DATA``, read afresh (tests point it at a new folder per module)."""
    return read_one("data")


def link_id(raw: bytes) -> str:
    """16 lower-case base32 characters of sha256(raw): same content, same id."""
    return base64.b32encode(hashlib.sha256(raw).digest()[:10]).decode().lower()


class LinkStore:
    """One SQLite file; one connection per process, serialised by a lock (writes are tiny)."""

    def __init__(self, path: Path, timeout: float = 5.0, check_wal: bool = True) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the data folder {path.parent} ({exc.strerror}); "
                             f"set {DATA_ENV} to a writable folder") from None
        wal = path.with_name(path.name + "-wal")
        problem = wal_problem(wal) if check_wal else None
        if problem:
            raise StoreError(
                f"{wal} is damaged: {problem}. Starting on it would silently lose the links "
                f"written after the damage. Stop every server on this folder, then restore a "
                f"backup (allocscope links restore FILE), or keep what is intact: allocscope "
                f"links backup SAVED --accept-damaged, move {path.name} and its -wal and -shm "
                f"files away, and allocscope links restore SAVED (docs/deployment.md)")
        try:
            con = sqlite3.connect(path, timeout=timeout, isolation_level=None,
                                  check_same_thread=False)
            con.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            mode = con.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"{path}: cannot switch to WAL mode (got {mode!r})")
            con.execute("PRAGMA synchronous=FULL")
            check = con.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise StoreError(f"{path} is corrupt ({check}); restore it from a backup "
                                 "(docs/deployment.md) or move it away to start empty")
            con.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(_explain(path, exc)) from None
        self._con = con

    def put(self, raw: bytes) -> str:
        """Store a canonical link; returns its id (the existing one if already stored)."""
        lid = link_id(raw)
        with self._lock:
            try:
                cur = self._con.execute(
                    "INSERT OR IGNORE INTO links (id, body, created) VALUES (?, ?, ?)",
                    (lid, raw, int(time.time())))
                if cur.rowcount == 0:
                    row = self._con.execute("SELECT body FROM links WHERE id = ?", (lid,)).fetchone()
                    if row is None or bytes(row[0]) != raw:
                        raise StoreError(f"link id collision on {lid}")
            except sqlite3.DatabaseError as exc:
                raise StoreError(_explain(self.path, exc)) from None
        return lid

    def get(self, lid: str) -> bytes | None:
        with self._lock:
            try:
                row = self._con.execute("SELECT body FROM links WHERE id = ?", (lid,)).fetchone()
            except sqlite3.DatabaseError as exc:
                raise StoreError(_explain(self.path, exc)) from None
        return None if row is None else bytes(row[0])

    def count(self) -> int:
        with self._lock:
            return int(self._con.execute("SELECT COUNT(*) FROM links").fetchone()[0])

    def checkpoint(self) -> None:
        """Copy the log into the main file and empty it (other processes may still be reading;
        then SQLite does what it can, and the last one to close finishes it)."""
        with self._lock:
            try:
                self._con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.DatabaseError:
                pass

    def close(self) -> None:
        """Checkpoint, then close: after a clean stop ``links.sqlite3`` alone holds every link."""
        self.checkpoint()
        with self._lock:
            self._con.close()


def _explain(path: Path, exc: sqlite3.DatabaseError) -> str:
    msg = str(exc)
    if "locked" in msg or "busy" in msg:
        return (f"{path} is locked by another process ({msg}); stop whatever holds it "
                "(an open sqlite3 shell, a stuck backup) and start again")
    if "not a database" in msg or "malformed" in msg or "corrupt" in msg:
        return (f"{path} is not a usable SQLite database ({msg}); restore it from a backup "
                "(docs/deployment.md) or move it away to start empty")
    if "readonly" in msg or "unable to open" in msg:
        return f"{path} cannot be opened for writing ({msg}); check {DATA_ENV} and permissions"
    return f"{path}: {msg}"


_stores: dict[Path, LinkStore] = {}
_stores_lock = threading.Lock()


def get_store() -> LinkStore:
    """The store for the current ``$ALLOCSCOPE_DATA`` (opened, and checked, on first use)."""
    path = (data_dir() / DB_NAME).resolve()
    with _stores_lock:
        st = _stores.get(path)
        if st is None:
            st = _stores[path] = LinkStore(path)
        return st


def reset_stores() -> None:
    """Close every open store (tests simulating a restart)."""
    with _stores_lock:
        for st in _stores.values():
            st.close()
        _stores.clear()


def save_link(rec: LinkRecord) -> str:
    return get_store().put(canonical(rec.model_dump()))


def load_record(lid: str) -> LinkRecord:
    """The stored record of a short link, validated; LinkError 400 (bad id) / 404 (unknown)."""
    if not isinstance(lid, str) or not ID_RE.match(lid):
        # said for a teacher who pasted a link: what an id looks like, and the likely cause
        text = str(lid)
        cut = len(text) < 16 and re.fullmatch(r"[a-z2-7]*", text) is not None
        raise LinkError(400, f"link id {text[:40]!r} is not a share link: a link id is 16 "
                             f"characters, letters a–z and digits 2–7 (this one has {len(text)})"
                             + (" — was the end of the link cut off when it was copied?"
                                if cut else ""))
    raw = get_store().get(lid)
    if raw is None:
        raise LinkError(404, f"no link {lid!r}: it was never made here, or the link data "
                             "folder was replaced")
    try:
        data = json.loads(raw)
    except ValueError:
        raise LinkError(400, f"link {lid}: stored data is not JSON") from None
    return record_from(data)


def get_link(lid: str) -> dict[str, Any]:
    """A short link, replayed and verified, as plain JSON for the websocket's ``load``.

    Returns ``{"scenario", "variant", "schedule", "step", "protocol", "version", "state_hash",
    "notice"}``: load ``scenario`` (a gallery id or a full object) with ``variant`` and
    ``schedule``, then go to ``step``; the resulting ``state_hash`` is the recorded one (this call
    already replayed it). ``notice`` is "" or a sentence to show (the protocol's version changed
    but the replay is identical). Raises ``app.linkstate.LinkError`` with ``.status`` (400 bad id
    or altered link, 404 unknown id, 409 protocol changed and the replay differs, 413 too large)
    and ``.message`` (a sentence for the user); ``StoreError`` when the database is unusable.
    """
    opened = open_record(load_record(lid))
    out = opened.record.model_dump()
    for k in ("format", "trail", "fingerprint"):
        out.pop(k, None)
    out["notice"] = opened.notice
    out["diverged"] = opened.diverged
    return out


# ---------------------------------------------------------------------- backup / restore / verify

def _count_file(path: Path) -> int:
    con = sqlite3.connect(path)
    try:
        check = con.execute("PRAGMA integrity_check").fetchone()[0]
        if check != "ok":
            raise StoreError(f"{path} fails SQLite's integrity check ({check})")
        try:
            return int(con.execute("SELECT COUNT(*) FROM links").fetchone()[0])
        except sqlite3.DatabaseError:
            raise StoreError(f"{path} has no links table: not a links backup") from None
    except sqlite3.DatabaseError as exc:
        raise StoreError(_explain(path, exc)) from None
    finally:
        con.close()


def backup(dest: Path, accept_damaged: bool = False) -> int:
    """Copy the live store to ``dest`` with SQLite's online backup API (consistent even while
    servers write); returns the links in the copy. ``dest`` is written whole, then renamed."""
    src = LinkStore((data_dir() / DB_NAME).resolve(), check_wal=not accept_damaged)
    tmp = dest.with_name(dest.name + ".part")
    tmp.unlink(missing_ok=True)
    try:
        out = sqlite3.connect(tmp)
        with src._lock:
            src._con.backup(out)
        out.close()
    finally:
        src._con.close()
    n = _count_file(tmp)
    tmp.replace(dest)
    return n


def restore(source: Path) -> int:
    """Replace the live store's content with a backup's (through the backup API, so servers
    that have it open see the restored links at once); returns the links restored."""
    if not source.is_file():
        raise StoreError(f"{source}: no such backup file")
    n = _count_file(source)
    live = LinkStore((data_dir() / DB_NAME).resolve(), check_wal=False)
    try:
        src = sqlite3.connect(source)
        with live._lock:
            src.backup(live._con)
        src.close()
    finally:
        live.close()
    return n


def verify() -> dict[str, Any]:
    """The live store's health: the log, SQLite's integrity check, the number of links."""
    path = (data_dir() / DB_NAME).resolve()
    st = LinkStore(path)                 # raises on a damaged log
    try:
        with st._lock:
            check = st._con.execute("PRAGMA integrity_check").fetchone()[0]
        if check != "ok":
            raise StoreError(f"{path} fails SQLite's integrity check ({check}); restore a backup")
        return {"file": str(path), "links": st.count(), "integrity": "ok"}
    finally:
        st._con.close()
