"""Liveness (the process answers) and readiness (the database answers within a second)."""

from __future__ import annotations

import asyncio

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ledgermirror.api.context import context_of
from ledgermirror.api.responses import JSON_TYPE
from ledgermirror.db.errors import DatabaseUnavailable

_HEADERS = {"cache-control": "no-store"}


async def liveness(request: Request) -> Response:
    return Response(orjson.dumps({"status": "UP"}), headers=_HEADERS, media_type=JSON_TYPE)


async def readiness(request: Request) -> Response:
    ctx = context_of(request)
    try:
        await asyncio.wait_for(ctx.database.fetchval("select 1"), timeout=1.0)
    except (DatabaseUnavailable, TimeoutError):
        body = {"status": "DOWN", "checks": {"database": "DOWN"}}
        return Response(orjson.dumps(body), status_code=503, headers=_HEADERS, media_type=JSON_TYPE)
    body = {"status": "UP", "checks": {"database": "UP"}}
    return Response(orjson.dumps(body), headers=_HEADERS, media_type=JSON_TYPE)


ROUTES = [
    Route("/health/liveness", liveness, methods=["GET"]),
    Route("/health/readiness", readiness, methods=["GET"]),
]
