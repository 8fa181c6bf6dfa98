"""Appended rows written on a second connection, committed with the importer's transaction in two phases.

The importer's background writer spends most of a late batch waiting for PostgreSQL, and the biggest part of
that is the COPY of the append-only tables (``transaction``, ``crypto_transfer``, ``transaction_hash``,
``token_transfer``), which nothing else in the batch reads. :class:`Appender` writes them on a connection of
its own while the main connection merges the rest, so two server processes work on the batch at once. The two
transactions still commit as one:

1. the main transaction ``A`` takes its transaction id (``pg_current_xact_id``) before anything else;
2. the appender's transaction ``B`` writes its rows and ends with ``PREPARE TRANSACTION`` under a name holding
   ``A``'s id (:func:`gid_of`): its rows are on disk, invisible, and survive a crash of either side;
3. ``A`` commits (its ``record_file`` rows are the import's position);
4. ``B`` is committed with ``COMMIT PREPARED``.

A crash between 3 and 4 leaves ``B`` prepared; :func:`settle`, run by the importer before it reads its position,
commits it when ``A`` committed (``pg_xact_status``) and rolls it back otherwise, so the tables end as if the
two had been one transaction. Readers may see ``A``'s rows a moment before ``B``'s (a new ``record_file`` row
before its transactions, for the few milliseconds of step 4); a live topic subscription is not affected:
``topic_message`` and the commit's ``NOTIFY`` stay in ``A``.

It needs ``max_prepared_transactions`` above 0 (the embedded server sets it; PostgreSQL's default is 0) and
PostgreSQL 13 or later (``pg_current_xact_id``); elsewhere (:func:`supported` false, or a Citus coordinator,
whose own two-phase commit owns prepared transactions) the importer writes everything on one connection.
"""

from __future__ import annotations

import re

import asyncpg

GID_PREFIX = "ledgermirror-import-"
_GID = re.compile(rf"^{GID_PREFIX}(\d+)$")

_SUPPORTED = """
select current_setting('max_prepared_transactions')::int > 0
   and current_setting('server_version_num')::int >= 130000
   and not exists (select from pg_extension where extname = 'citus')
"""
_CURRENT_XID = "select pg_current_xact_id()::text"
_PREPARED = """
select gid from pg_prepared_xacts
where database = current_database() and gid like $1
order by prepared
"""
_XACT_STATUS = "select pg_xact_status($1::text::xid8)"


async def supported(conn: asyncpg.Connection) -> bool:
    """Whether the server takes prepared transactions (and is not a Citus coordinator)."""
    return bool(await conn.fetchval(_SUPPORTED))


def gid_of(xid: str) -> str:
    """The name of the prepared transaction that commits with the transaction of id ``xid``."""
    if not xid.isdigit():
        raise ValueError(f"not a transaction id: {xid!r}")
    return f"{GID_PREFIX}{xid}"


def _statement(command: str, gid: str) -> str:
    """``PREPARE TRANSACTION`` and its two endings take the name as a literal, not a parameter: only a name of
    :func:`gid_of`'s form is written into the text."""
    if _GID.match(gid) is None:
        raise ValueError(f"not an import transaction name: {gid!r}")
    return f"{command} '{gid}'"


async def settle(conn: asyncpg.Connection) -> dict[str, bool]:
    """End the prepared import transactions a crash left: each committed when the main transaction named in it
    committed, else rolled back; returns name -> committed. ``conn`` must not be in a transaction."""
    settled: dict[str, bool] = {}
    for gid in [record["gid"] for record in await conn.fetch(_PREPARED, f"{GID_PREFIX}%")]:
        found = _GID.match(gid)
        if found is None:
            continue
        committed = await conn.fetchval(_XACT_STATUS, found.group(1)) == "committed"
        await conn.execute(_statement("commit prepared" if committed else "rollback prepared", gid))
        settled[gid] = committed
    return settled


class Appender:
    """The second connection's side of a batch: :meth:`begin` with the main transaction's id, write on
    :attr:`conn`, :meth:`prepare` before the main transaction commits, :meth:`commit` after it, or
    :meth:`abandon` when anything failed before the main commit."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn
        self._gid: str | None = None
        self._prepared = False

    async def begin(self, main: asyncpg.Connection) -> None:
        """Start the appender's transaction for the transaction open on ``main``."""
        self._gid = gid_of(await main.fetchval(_CURRENT_XID))
        self._prepared = False
        await self.conn.execute("begin")

    async def prepare(self) -> None:
        """Phase one: the rows on disk under the main transaction's name (call before the main commit)."""
        assert self._gid is not None
        await self.conn.execute(_statement("prepare transaction", self._gid))
        self._prepared = True

    async def commit(self) -> None:
        """Phase two, after the main transaction committed."""
        assert self._gid is not None and self._prepared
        await self.conn.execute(_statement("commit prepared", self._gid))
        self._gid, self._prepared = None, False

    async def abandon(self) -> None:
        """The main transaction ended without a known commit (an error before it, or during it): the
        appender's rows are rolled back, or, when prepared, ended as :func:`settle` would (a main commit whose
        answer was lost still commits them)."""
        gid, prepared = self._gid, self._prepared
        self._gid, self._prepared = None, False
        if gid is None or self.conn.is_closed():
            return  # a prepared transaction outlives its connection: settle() ends it
        if prepared:
            found = _GID.match(gid)
            assert found is not None
            committed = await self.conn.fetchval(_XACT_STATUS, found.group(1)) == "committed"
            await self.conn.execute(_statement("commit prepared" if committed else "rollback prepared", gid))
        elif self.conn.is_in_transaction():
            await self.conn.execute("rollback")
