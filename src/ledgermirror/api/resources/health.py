"""Liveness (the process answers) and readiness (a database answers within a second, fresh enough).

Readiness probes every database the API reads from (``db/replicas.py``): it is UP when one of them answers with
its replay lag within ``LEDGERMIRROR_REPLICA_MAX_LAG_SECONDS`` and, when ``LEDGERMIRROR_INGEST_MAX_LAG_SECONDS``
is set, holds a consensus timestamp that recent; ``checks.replication`` says which bound failed and
``databases`` lists each one with its lag (with several; with one, its lag is in ``replication_lag_seconds``).

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
from ledgermirror.db.replicas import Member
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
    database = ctx.database
    await database.probe_all(timeout=1.0)
    members = database.members
    listing = [member.status() for member in members] if len(members) > 1 else None
    answering = [member for member in members if member.answered]
    try:
        if not answering:
            raise DatabaseUnavailable("no database answered")
        with database.pinned():
            ingest = await asyncio.wait_for(_ingest(database), timeout=1.0)
    except (DatabaseUnavailable, TimeoutError):
        down: dict[str, Any] = {"status": "DOWN", "checks": {"database": "DOWN"}}
        if listing is not None:
            down["databases"] = listing
        return Response(orjson.dumps(down), status_code=503, headers=_HEADERS, media_type=JSON_TYPE)
    fresh = [member for member in answering if member.usable]
    settings = ctx.settings
    ingest_lag = _ingest_lag(ingest, fresh or answering)
    replication = "UP" if fresh else "DOWN"
    if (
        fresh
        and settings.ingest_max_lag_seconds > 0
        and (ingest_lag is None or ingest_lag > settings.ingest_max_lag_seconds)
    ):
        replication = "DOWN"
    body: dict[str, Any] = {
        "status": replication,
        "checks": {"database": "UP", "replication": replication},
        "ingest": ingest,
        "replication_lag_seconds": round(min(member.lag_seconds for member in answering), 1),
        "ingest_lag_seconds": None if ingest_lag is None else round(ingest_lag, 1),
    }
    if listing is not None:
        body["databases"] = listing
    status = 200 if replication == "UP" else 503
    return Response(orjson.dumps(body), status_code=status, headers=_HEADERS, media_type=JSON_TYPE)


def _ingest_lag(ingest: dict[str, Any] | None, members: list[Member]) -> float | None:
    """Seconds since the newest consensus timestamp: the importer's own record, else the freshest database's
    newest record file (a reference database); None when there is none."""
    if ingest is not None:
        lag: float = ingest["lag_seconds"]
        return lag
    newest = max((member.newest_ns for member in members if member.newest_ns is not None), default=None)
    return None if newest is None else max(time.time() - newest / 1e9, 0.0)


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
