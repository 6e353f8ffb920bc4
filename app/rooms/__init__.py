"""Classroom rooms (issue 19): a teacher drives one session, a class follows it live, answers
predict rounds, runs class experiments, forks and rejoins — on one worker or across several
through Redis. See docs/websocket.md ("Rooms") and docs/deployment.md ("Rooms")."""

from __future__ import annotations

from fastapi import FastAPI

from .hub import Hub, make_bus


def install(app: FastAPI) -> None:
    """Add the room routes and this worker's hub (``app.state.rooms``) to an app; its limits
    and ``ALLOCSCOPE_REDIS_URL`` come from the app's settings (app/limits.py)."""
    from . import conn, routes
    settings = app.state.limits
    app.state.rooms = Hub(make_bus(settings), settings)
    app.include_router(routes.router)
    app.include_router(conn.router)

    async def _close_rooms() -> None:
        await app.state.rooms.close()
    app.router.on_shutdown.append(_close_rooms)
