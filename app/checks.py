""""Check this scenario": the explorer in a separate worker process, with progress and cancel.

- ``POST /api/check`` {scenario: gallery id or full object, variant?, max_states?} -> {"job"}
- ``GET /api/check/{job}`` -> {"state": running|done|cancelled|failed, "progress", "result"}
- ``DELETE /api/check/{job}`` -> cancels (the worker stops at its next progress report; a
  worker that does not stop within a grace period is terminated).

The search runs in its own process (``spawn``), so a long exploration never blocks the event
loop that serves the websocket sessions, and a cancelled one gives its memory back. Jobs live
in the worker process that started them (with several server workers, a poll that lands on
another worker gets a 404 that says so).
"""

from __future__ import annotations

import multiprocessing as mp
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from protocols.scenario import ScenarioError, gallery, parse

from .limits import current
from .rawcheck import RawError, check_scenario

router = APIRouter()

MAX_JOBS = current().max_checks                  # running at once
MAX_STATES = current().check_max_states
MAX_SECONDS = current().check_max_seconds
KEEP_DONE = 50
GRACE = 2.0


class CheckRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scenario: str | dict[str, Any]
    variant: str | None = Field(default=None, max_length=40)
    max_states: int = Field(default=200_000, ge=1)


@dataclass
class Job:
    process: Any
    inbox: Any                      # the parent's end of a Pipe: progress, then the result
    cancel: Any                     # an mp.Event the worker polls
    started: float = field(default_factory=time.monotonic)
    state: str = "running"
    progress: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: str = ""
    cancelled_at: float | None = None


_jobs: dict[str, Job] = {}
_lock = threading.Lock()


def _work(data: dict[str, Any], variant: str | None, max_states: int, conn: Any,
          cancel: Any) -> None:
    """Runs in the worker process: explore, report progress, send the result last."""
    from protocols.explorer import check
    try:
        sc = parse(data)
        res = check(sc, variant=variant, max_states=max_states, progress=conn.send,
                    progress_every=2_000, should_stop=cancel.is_set, max_seconds=MAX_SECONDS)
        conn.send({"result": res})
    except Exception as exc:                     # reported to the browser, never swallowed
        conn.send({"error": f"{type(exc).__name__}: {exc}"})
    finally:
        conn.close()


def _drain(job: Job) -> None:
    """Read everything the worker sent so far; settle the job's state."""
    try:
        while job.inbox.poll():
            msg = job.inbox.recv()
            if "result" in msg:
                job.result = msg["result"]
                stopped = job.result.get("stopped")
                job.state = "cancelled" if stopped == "cancelled" else "done"
            elif "error" in msg:
                job.state, job.error = "failed", msg["error"]
            else:
                job.progress = msg
    except (EOFError, OSError):
        pass
    if job.state == "running":
        if job.cancelled_at is not None and time.monotonic() - job.cancelled_at > GRACE:
            job.process.terminate()
            job.state = "cancelled"
        elif not job.process.is_alive() and not job.inbox.poll():
            job.state, job.error = "failed", f"the worker stopped (exit code {job.process.exitcode})"
    if job.state != "running":
        job.process.join(timeout=0.1)


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
    with _lock:
        for job in _jobs.values():
            _drain(job)
        if sum(j.state == "running" for j in _jobs.values()) >= MAX_JOBS:
            return JSONResponse({"detail": f"{MAX_JOBS} checks are already running on this "
                                           "server: try again when one ends"}, 429)
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe(duplex=False)
        cancel = ctx.Event()
        proc = ctx.Process(target=_work, args=(data, req.variant, req.max_states, child, cancel),
                           daemon=True)
        proc.start()
        child.close()
        jid = secrets.token_urlsafe(9)
        _jobs[jid] = Job(proc, parent, cancel)
        done = [k for k, j in _jobs.items() if j.state != "running"]
        for k in done[:-KEEP_DONE] if len(done) > KEEP_DONE else []:
            del _jobs[k]
    return JSONResponse({"job": jid, "url": f"/api/check/{jid}"}, 202)


def _unknown(jid: str) -> JSONResponse:
    return JSONResponse({"detail": f"no check {jid[:40]!r} on this server worker (it ended long "
                                   "ago, or runs on another worker)"}, 404)


@router.get("/api/check/{jid}")
def status(jid: str) -> JSONResponse:
    with _lock:
        job = _jobs.get(jid)
        if job is None:
            return _unknown(jid)
        _drain(job)
        body = {"job": jid, "state": job.state, "progress": job.progress,
                "max_seconds": MAX_SECONDS, "result": job.result, "error": job.error}
    return JSONResponse(body)


@router.delete("/api/check/{jid}")
def cancel(jid: str) -> JSONResponse:
    with _lock:
        job = _jobs.get(jid)
        if job is None:
            return _unknown(jid)
        if job.state == "running":
            job.cancel.set()
            job.cancelled_at = time.monotonic()
        _drain(job)
        return JSONResponse({"job": jid, "state": job.state})
