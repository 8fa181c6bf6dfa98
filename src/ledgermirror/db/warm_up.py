"""Warming the hot routes' indexes into the cache before the API serves (``ledgermirror serve``).

After PostgreSQL starts on a cold page cache, every index page a request needs is a random read of its own, and
an account page needs dozens: on a disk of a few hundred reads a second the first requests take seconds each
(docs/performance.md, "A cold start"). Read front to back instead, the same indexes come in large sequential
reads, many times faster; ``serve`` does that once, before its workers start, within a time bound
(``LEDGERMIRROR_WARM_UP_SECONDS``), most useful indexes first.

How, in order of preference:

- ``pg_prewarm(index, 'read')`` when the extension is installed in the database (a stock server ships it;
  the ``pgserver`` wheel's embedded server does not);
- else ``pg_read_binary_file`` over the index's files, in :data:`CHUNK_BYTES` pieces (each read goes through
  the OS page cache, which is where PostgreSQL's next read finds it), when the role may read the server's
  files (a superuser, such as the embedded server's owner, or a member of ``pg_read_server_files``);
- else nothing (logged): a cold start is then only slower, never refused (``api/admission.py``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import asyncpg

_log = logging.getLogger(__name__)

HOT_INDEXES: tuple[str, ...] = (
    "entity_pkey",
    "entity_stake_pkey",
    "entity__alias",
    "entity__evm_address",
    "token_account_pkey",
    "staking_reward_transfer_pkey",
    "token_transfer__account_timestamp",
    "token_transfer__token_account_timestamp",
    "transaction_pkey",
    "crypto_transfer__consensus_timestamp",
    "crypto_transfer__entity_id_consensus_timestamp",
)
"""The indexes ``/api/v1/accounts/{id}`` and the account routes read (``pg_statio_user_indexes`` after a cold
run of ``bench/coldstart``), smallest and most read first: a warm-up cut short by its time bound has done the
most useful ones. An index missing from the database is skipped."""

CHUNK_BYTES = 16 * 2**20
"""One ``pg_read_binary_file`` call: large enough for sequential reads, small enough for the server's memory
and for the time bound to be checked often."""
SEGMENT_BYTES = 2**30
"""PostgreSQL's file segment size (a relation's data is in files of at most this many bytes)."""

_PREWARM = "select exists (select 1 from pg_extension where extname = 'pg_prewarm')"
_READS_FILES = """select rolsuper or pg_has_role(current_user, 'pg_read_server_files', 'member')
from pg_roles where rolname = current_user"""
_FILES = """select i.name, pg_relation_filepath(c.oid) as path, pg_relation_size(c.oid) as bytes
from unnest($1::text[]) with ordinality as i(name, position)
join pg_class c on c.oid = to_regclass(i.name)
order by i.position"""
_READ_CHUNK = "select coalesce(length(pg_read_binary_file($1, $2, $3, true)), 0)"
_PREWARM_ONE = "select pg_prewarm($1::regclass, 'read')"


@dataclass(slots=True)
class WarmUp:
    """What a warm-up did."""

    method: str
    """``pg_prewarm``, ``files`` or ``none``."""
    indexes: list[str] = field(default_factory=list)
    """The indexes read to their end."""
    bytes_read: int = 0
    seconds: float = 0.0
    cut_short: bool = False
    """The time bound ended it before every index was read."""


async def warm_up(
    conn: asyncpg.Connection,
    seconds: float,
    indexes: tuple[str, ...] = HOT_INDEXES,
    *,
    now: Callable[[], float] = time.monotonic,
) -> WarmUp:
    """Read ``indexes`` (those that exist) into the cache, for at most about ``seconds`` (one
    :data:`CHUNK_BYTES` read or one index's ``pg_prewarm`` more at most)."""
    started = now()
    deadline = started + seconds
    listed = await conn.fetch(_FILES, list(indexes))
    if await conn.fetchval(_PREWARM):
        done = WarmUp("pg_prewarm")
        for row in listed:
            if now() >= deadline:
                done.cut_short = True
                break
            await conn.fetchval(_PREWARM_ONE, row["name"])
            done.indexes.append(row["name"])
            done.bytes_read += row["bytes"]
    elif await conn.fetchval(_READS_FILES):
        done = WarmUp("files")
        for row in listed:
            finished, read = await _read_files(conn, row["path"], row["bytes"], deadline, now)
            done.bytes_read += read
            if not finished:
                done.cut_short = True
                break
            done.indexes.append(row["name"])
    else:
        done = WarmUp("none")
    done.seconds = now() - started
    return done


async def _read_files(
    conn: asyncpg.Connection, path: str, size: int, deadline: float, now: Callable[[], float]
) -> tuple[bool, int]:
    """Read a relation's ``size`` bytes from its segment files; whether it got to the end, and the bytes read."""
    read = 0
    while read < size:
        if now() >= deadline:
            return False, read
        segment, offset = divmod(read, SEGMENT_BYTES)
        name = path if segment == 0 else f"{path}.{segment}"
        length = min(CHUNK_BYTES, SEGMENT_BYTES - offset, size - read)
        got = int(await conn.fetchval(_READ_CHUNK, name, offset, length))
        if got == 0:
            break  # the relation shrank since it was measured
        read += got
    return True, read


async def warm_up_at(url: str, seconds: float) -> WarmUp:
    """:func:`warm_up` over a connection of its own to ``url`` (the owner's: it may read the server's files),
    logged; a failure is logged too, and the API starts all the same (a cold start is slower, not wrong)."""
    try:
        conn = await asyncpg.connect(url, timeout=10)
        try:
            done = await warm_up(conn, seconds)
        finally:
            await conn.close()
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        _log.warning("the hot indexes were not warmed", extra={"error": str(error)})  # only slower, not wrong
        return WarmUp("none")
    _log.info(
        "warmed the hot indexes",
        extra={
            "method": done.method,
            "indexes": len(done.indexes),
            "megabytes": round(done.bytes_read / 2**20),
            "seconds": round(done.seconds, 2),
            "cut_short": done.cut_short,
        },
    )
    return done
