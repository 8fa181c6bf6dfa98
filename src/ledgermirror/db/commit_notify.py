"""The importer's announcement of a commit, for the gRPC API's live topic subscriptions.

The importer calls :func:`notify_commit` inside the transaction it is about to commit; PostgreSQL delivers a
``NOTIFY`` only when (and if) that transaction commits, so a listener never hears of rows it cannot read yet.
The payload is the newest consensus timestamp of the commit (nanoseconds, decimal text). The API's topic hub
listens on :data:`CHANNEL` on one connection (``grpc_api/topic_hub.py``).
"""

from __future__ import annotations

import asyncpg

CHANNEL = "ledgermirror_commit"

_NOTIFY = "select pg_notify($1, $2)"


async def notify_commit(conn: asyncpg.Connection, newest_consensus_timestamp: int | None) -> None:
    """Announce, at the commit of the open transaction, that rows up to ``newest_consensus_timestamp`` are
    in. Nothing is announced for a transaction that wrote no file (``None``)."""
    if newest_consensus_timestamp is not None:
        await conn.execute(_NOTIFY, CHANNEL, str(newest_consensus_timestamp))


def committed_timestamp(payload: str) -> int | None:
    """The timestamp an announcement carries, or None for a payload that is not ours."""
    return int(payload) if payload.isdigit() else None
