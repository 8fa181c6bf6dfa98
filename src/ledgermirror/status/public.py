"""The eight public endpoints under ``/api/v2`` (GET, HEAD, OPTIONS), rendered from one snapshot per request."""

from __future__ import annotations

import logging

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ledgermirror.status import http, render
from ledgermirror.status.db import ACQUIRE_SECONDS
from ledgermirror.status.state import StatusState
from ledgermirror.status.store import read_snapshot
from ledgermirror.status.wire import from_ns

_log = logging.getLogger(__name__)


async def render_all(state: StatusState) -> dict[str, bytes]:
    """Every public body from one consistent read (so summary, status and components never disagree)."""
    async with state.read_pool().connection(ACQUIRE_SECONDS) as conn:
        snapshot = await read_snapshot(conn)
    view = render.build(snapshot, from_ns(state.clock.now_ns()), state.settings)
    return {name: orjson.dumps(view.payload(name)) for name in render.ENDPOINTS}


def _endpoint(name: str) -> Route:
    async def handle(request: Request) -> Response:
        if request.method == "OPTIONS":
            return http.preflight()
        state: StatusState = request.app.state.status
        body = state.cache.get(name)
        if body is None:
            generation = state.cache.generation
            bodies = await render_all(state)
            for key, value in bodies.items():
                state.cache.put(key, value, read_in=generation)
            body = bodies[name]
        return http.json_response(request, body, state.settings.cache_seconds)

    return Route(f"/api/v2/{name}", handle, methods=["GET", "HEAD", "OPTIONS"], name=f"status:{name}")


ROUTES = [_endpoint(name) for name in render.ENDPOINTS]
