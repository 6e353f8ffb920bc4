""""Check this scenario": the explorer in a separate worker process, with progress and cancel.

- ``POST /api/check`` {scenario: gallery id or full object, variant?, max_states?} -> {"job"}
- ``GET /api/check/{job}`` -> {"state": running|done|cancelled|failed, "progress", "result"}
- ``DELETE /api/check/{job}`` -> cancels (the worker stops at its next progress report; a
  worker that does not stop within a grace period is terminated by the server that started it).

The search runs in its own process (``spawn``), so a long exploration never blocks the event
loop that serves the websocket sessions, and a cancelled one gives its memory back. The job
table lives in SQLite beside the links (``$ALLOCSCOPE_DATA/jobs.sqlite3``): the explorer process
writes its progress and result there itself, so with several server workers any of them answers
a poll, and ``ALLOCSCOPE_MAX_CHECKS`` holds across all of them (checked and claimed in one
``BEGIN IMMEDIATE`` transaction).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import secrets
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from protocols.scenario import ScenarioError, gallery, parse

from .limits import current, read_one
from .rawcheck import RawError, check_scenario

router = APIRouter()

MAX_JOBS = current().max_checks                  # running at once, across all workers
MAX_STATES = current().check_max_states
MAX_SECONDS = current().check_max_seconds
KEEP_SECONDS = 3600.0   # finished jobs are kept this long
GRACE = 2.0
STALE = 60.0            # a running job silent this long (its process died with its server)
_SCHEMA = ("CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, state TEXT NOT NULL, "
           "progress TEXT NOT NULL DEFAULT '{}', result TEXT, error TEXT NOT NULL DEFAULT '', "
           "cancel REAL, started REAL NOT NULL, beat REAL NOT NULL)")


class CheckRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scenario: str | dict[str, Any]
    variant: str | None = Field(default=None, max_length=40)
    max_states: int = Field(default=200_000, ge=1)


def jobs_path() -> Path:
    return (read_one("data") / "jobs.sqlite3").resolve()


def _db(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
    con.execute("PRAGMA busy_timeout=10000")
    con.execute("PRAGMA journal_mode=WAL")
    con.execute(_SCHEMA)
    return con


def _set(con: sqlite3.Connection, jid: str, **cols: Any) -> None:
    names = ", ".join(f"{k} = ?" for k in cols)
    con.execute(f"UPDATE jobs SET {names}, beat = ? WHERE id = ?",   # names are ours, not input
                (*cols.values(), time.time(), jid))


def _work(data: dict[str, Any], variant: str | None, max_states: int, path: str,
          jid: str) -> None:
    """Runs in the explorer process: explore, write progress and the result into the table."""
    from protocols.explorer import check
    con = _db(Path(path))
    seen = {"at": 0.0, "stop": False}

    def should_stop() -> bool:
        now = time.monotonic()
        if now - seen["at"] > 0.3:
            seen["at"] = now
            row = con.execute("SELECT cancel FROM jobs WHERE id = ?", (jid,)).fetchone()
            seen["stop"] = bool(row and row[0])
        return seen["stop"]

    def progress(p: dict[str, Any]) -> None:
        _set(con, jid, progress=json.dumps(p))
    try:
        sc = parse(data)
        res = check(sc, variant=variant, max_states=max_states, progress=progress,
                    progress_every=2_000, should_stop=should_stop, max_seconds=MAX_SECONDS)
        _set(con, jid, result=json.dumps(res),
             state="cancelled" if res.get("stopped") == "cancelled" else "done")
    except Exception as exc:                     # reported to the browser, never swallowed
        _set(con, jid, state="failed", error=f"{type(exc).__name__}: {exc}")
    finally:
        con.close()


_procs: dict[str, Any] = {}       # the explorer processes this server worker started
_lock = threading.Lock()
_cons: dict[Path, sqlite3.Connection] = {}


def _con() -> sqlite3.Connection:
    path = jobs_path()
    con = _cons.get(path)
    if con is None:
        con = _cons[path] = _db(path)
    return con


def _settle(con: sqlite3.Connection, jid: str) -> None:
    """What only the starting worker can see: its process died, or ignored a cancel."""
    proc = _procs.get(jid)
    if proc is None:
        return
    row = con.execute("SELECT state, cancel FROM jobs WHERE id = ?", (jid,)).fetchone()
    if row is None or row[0] != "running":
        proc.join(timeout=0.1)
        _procs.pop(jid, None)
        return
    if row[1] and time.time() - row[1] > GRACE:
        proc.terminate()
        _set(con, jid, state="cancelled")
    elif not proc.is_alive():
        _set(con, jid, state="failed", error=f"the worker stopped (exit code {proc.exitcode})")


def _scenario_data(req: CheckRequest) -> dict[str, Any]:
    if isinstance(req.scenario, str):
        sc = gallery().get(req.scenario)
        if sc is None:
            raise ScenarioError(f"scenario: no gallery scenario {req.scenario[:80]!r}")
        return sc.model_dump(mode="json", exclude_none=True)
    try:
        check_scenario(req.scenario, current())  # sizes and nesting, before pydantic
    except RawError as exc:
        raise ScenarioError(str(exc)) from None
    return parse(req.scenario).model_dump(mode="json", exclude_none=True)


@router.post("/api/check")
def start(req: CheckRequest) -> JSONResponse:
    if req.max_states > MAX_STATES:
        return JSONResponse({"detail": f"max_states: at most {MAX_STATES} on this server "
                                       "(ALLOCSCOPE_CHECK_MAX_STATES)"}, 413)
    try:
        data = _scenario_data(req)
    except ScenarioError as exc:
        return JSONResponse({"detail": str(exc)}, 400)
    jid = secrets.token_urlsafe(9)
    now = time.time()
    with _lock:
        con = _con()
        for k in list(_procs):
            _settle(con, k)
        con.execute("BEGIN IMMEDIATE")           # count and claim atomically, across workers
        try:
            con.execute("UPDATE jobs SET state = 'failed', error = 'its server stopped' "
                        "WHERE state = 'running' AND beat < ?", (now - STALE,))
            con.execute("DELETE FROM jobs WHERE state != 'running' AND beat < ?",
                        (now - KEEP_SECONDS,))
            running = con.execute("SELECT COUNT(*) FROM jobs WHERE state = 'running'").fetchone()[0]
            if running >= MAX_JOBS:
                con.execute("COMMIT")
                return JSONResponse({"detail": f"{MAX_JOBS} checks are already running on this "
                                               "server (ALLOCSCOPE_MAX_CHECKS): try again when "
                                               "one ends"}, 429)
            con.execute("INSERT INTO jobs (id, state, started, beat) VALUES (?, 'running', ?, ?)",
                        (jid, now, now))
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        ctx = mp.get_context("spawn")
        proc = ctx.Process(target=_work, args=(data, req.variant, req.max_states,
                                               str(jobs_path()), jid), daemon=True)
        proc.start()
        _procs[jid] = proc
    return JSONResponse({"job": jid, "url": f"/api/check/{jid}"}, 202)


def _unknown(jid: str) -> JSONResponse:
    return JSONResponse({"detail": f"no check {jid[:40]!r} on this server (it ended more than "
                                   "an hour ago, or never ran here)"}, 404)


@router.get("/api/check/{jid}")
def status(jid: str) -> JSONResponse:
    with _lock:
        con = _con()
        _settle(con, jid)
        row = con.execute("SELECT state, progress, result, error FROM jobs WHERE id = ?",
                          (jid,)).fetchone()
    if row is None:
        return _unknown(jid)
    state, progress, result, err = row
    return JSONResponse({"job": jid, "state": state, "progress": json.loads(progress or "{}"),
                         "max_seconds": MAX_SECONDS,
                         "result": json.loads(result) if result else None, "error": err})


@router.delete("/api/check/{jid}")
def cancel(jid: str) -> JSONResponse:
    with _lock:
        con = _con()
        con.execute("UPDATE jobs SET cancel = ? WHERE id = ? AND state = 'running' AND "
                    "cancel IS NULL", (time.time(), jid))
        _settle(con, jid)
        row = con.execute("SELECT state FROM jobs WHERE id = ?", (jid,)).fetchone()
    if row is None:
        return _unknown(jid)
    return JSONResponse({"job": jid, "state": row[0]})
