"""Liveness (the process answers) and readiness (the database answers within a second).

Readiness also reports, as ``ingest``, what the importer last accepted and how it verified it (the
``import_status`` row the importer keeps): the stream, the last block or file and its consensus time, how far
that is behind now, and whether blocks were accepted on the hash chain only (proofs this mirror cannot verify,
e.g. TSS). It is information: readiness stays UP while the database answers. Over a database without the table
(a reference database) ``ingest`` is null.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import asyncpg
import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ledgermirror.api.context import context_of
from ledgermirror.api.responses import JSON_TYPE
from ledgermirror.db.errors import DatabaseUnavailable
from ledgermirror.db.pool import Database
from ledgermirror.db.sql import Column, Op, Select
from ledgermirror.ledger.timestamps import format_ns

_HEADERS = {"cache-control": "no-store"}
_INGEST = """select stream, last_index, last_name, last_consensus_end, last_proof, last_proof_verified,
       chain_only_blocks, first_chain_only_index
from import_status"""
_ROW_ID = Column("id")


async def liveness(request: Request) -> Response:
    return Response(orjson.dumps({"status": "UP"}), headers=_HEADERS, media_type=JSON_TYPE)


async def readiness(request: Request) -> Response:
    ctx = context_of(request)
    try:  # both reads inside: the database can go between them
        await asyncio.wait_for(ctx.database.fetchval("select 1"), timeout=1.0)
        ingest = await asyncio.wait_for(_ingest(ctx.database), timeout=1.0)
    except (DatabaseUnavailable, TimeoutError):
        down = {"status": "DOWN", "checks": {"database": "DOWN"}}
        return Response(orjson.dumps(down), status_code=503, headers=_HEADERS, media_type=JSON_TYPE)
    body: dict[str, Any] = {"status": "UP", "checks": {"database": "UP"}, "ingest": ingest}
    return Response(orjson.dumps(body), headers=_HEADERS, media_type=JSON_TYPE)


async def _ingest(database: Database) -> dict[str, Any] | None:
    try:
        rows = await database.fetch(Select(_INGEST).compare(_ROW_ID, Op.EQ, 1).build())
    except asyncpg.UndefinedTableError:
        return None
    if not rows:
        return None
    row = rows[0]
    return {
        "stream": row["stream"],
        "last_index": row["last_index"],
        "last_name": row["last_name"],
        "last_consensus_timestamp": format_ns(row["last_consensus_end"]),
        "lag_seconds": round(max(time.time() - row["last_consensus_end"] / 1e9, 0.0), 1),
        "last_proof": row["last_proof"],
        "verified": "proof" if row["last_proof_verified"] else "chain only",
        "chain_only_blocks": row["chain_only_blocks"],
        "first_chain_only_index": row["first_chain_only_index"],
    }


ROUTES = [
    Route("/health/liveness", liveness, methods=["GET"]),
    Route("/health/readiness", readiness, methods=["GET"]),
]
