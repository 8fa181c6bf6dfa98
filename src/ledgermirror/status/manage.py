"""The management HTTP API under ``/manage/v1``: every route writes, and every one needs a valid API key.

Keys go in ``Authorization: Bearer <key>`` (``OAuth <key>``, Statuspage's v1 style, works too). Answers are
JSON: ``{"id": ...}`` on creation (201), ``{"ok": true}`` otherwise, ``{"error": "..."}`` on failure.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ledgermirror.status import components_ops, incidents_ops, keys, maintenances_ops
from ledgermirror.status.db import ACQUIRE_SECONDS, Conn
from ledgermirror.status.errors import BodyTooLarge, ManageError, NotFound, Unauthorized
from ledgermirror.status.state import StatusState
from ledgermirror.status.wire import from_ns, is_id

_log = logging.getLogger(__name__)

Create = Callable[[Conn, Any, dt.datetime, str], Awaitable[str]]
Change = Callable[[Conn, str, Any, dt.datetime, str], Awaitable[int | None]]
"""A change; a maintenance change returns the automatic moves it wrote down first (counted as metrics)."""


def _json(status_code: int, payload: dict[str, Any]) -> Response:
    return Response(orjson.dumps(payload), status_code=status_code, media_type="application/json")


def _token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() in ("bearer", "oauth") and value.strip():
        return value.strip()
    return None


def _too_large(limit: int) -> BodyTooLarge:
    return BodyTooLarge(f"the body is larger than {limit} bytes")


def _check_declared_length(request: Request, limit: int) -> None:
    """Refuse at once a body whose ``Content-Length`` already says it is too large (nothing is read)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise _too_large(limit)


async def _read_body(request: Request, limit: int) -> bytes:
    """The body, read chunk by chunk and refused as soon as it passes ``limit`` bytes (chunked bodies too)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


async def _run(request: Request, work: Callable[[Conn, dt.datetime, str, Any], Awaitable[Any]]) -> Response:
    state: StatusState = request.app.state.status
    response = await _write(request, state, work)
    result = "ok" if response.status_code < 300 else str(response.status_code)
    state.metrics.writes.labels(request.scope["route"].path, result).inc()
    return response


async def _write(
    request: Request, state: StatusState, work: Callable[[Conn, dt.datetime, str, Any], Awaitable[Any]]
) -> Response:
    pool = state.write_pool()
    if pool is None:
        return _json(503, {"error": "the management API is not enabled on this instance"})
    limit = state.settings.max_body_bytes
    try:
        _check_declared_length(request, limit)
        async with pool.connection(ACQUIRE_SECONDS) as conn:
            token = _token(request)
            key = await keys.verify(conn, token) if token else None
            if key is None:
                raise Unauthorized("a valid API key is required")
            body = await _read_body(request, limit)
            try:
                data = orjson.loads(body) if body.strip() else {}
            except orjson.JSONDecodeError:
                return _json(400, {"error": "the body is not valid JSON"})
            result = await work(conn, from_ns(state.clock.now_ns()), f"key:{key.id} ({key.name})", data)
    except ManageError as error:
        headers = {"www-authenticate": "Bearer"} if error.status_code == 401 else None
        return Response(
            orjson.dumps({"error": error.message}),
            status_code=error.status_code,
            media_type="application/json",
            headers=headers,
        )
    state.cache.clear()
    if isinstance(result, str):
        return _json(201, {"id": result})
    if isinstance(result, int) and result:
        state.metrics.automatic_changes.labels("maintenance").inc(result)
    return _json(200, {"ok": True})


def _create(path: str, action: Create) -> Route:
    async def handle(request: Request) -> Response:
        return await _run(request, lambda conn, now, actor, data: action(conn, data, now, actor))

    return Route(path, handle, methods=["POST"])


def _change(path: str, method: str, action: Change) -> Route:
    async def handle(request: Request) -> Response:
        target = request.path_params["id"]

        async def work(conn: Conn, now: dt.datetime, actor: str, data: Any) -> int | None:
            if not is_id(target):
                raise NotFound(f"no such id {target}")
            return await action(conn, target, data, now, actor)

        return await _run(request, work)

    return Route(path, handle, methods=[method])


BASE = "/manage/v1"
ROUTES = [
    _create(f"{BASE}/components", components_ops.create_component),
    _change(f"{BASE}/components/{{id}}", "PATCH", components_ops.update_component),
    _create(f"{BASE}/groups", components_ops.create_group),
    _change(f"{BASE}/groups/{{id}}", "PATCH", components_ops.update_group),
    _create(f"{BASE}/incidents", incidents_ops.open_incident),
    _change(f"{BASE}/incidents/{{id}}", "PATCH", incidents_ops.update_incident),
    _change(f"{BASE}/incidents/{{id}}/resolve", "POST", incidents_ops.resolve_incident),
    _change(f"{BASE}/incidents/{{id}}/postmortem", "POST", incidents_ops.write_postmortem),
    _create(f"{BASE}/maintenances", maintenances_ops.schedule),
    _change(f"{BASE}/maintenances/{{id}}", "PATCH", maintenances_ops.update_maintenance),
    _change(f"{BASE}/maintenances/{{id}}/cancel", "POST", maintenances_ops.cancel),
]
"""Every write route (the auth tests walk this list)."""
