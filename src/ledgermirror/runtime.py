"""Getting a database ready for a command: embedded or configured, migrated, with the API's read-only role."""

from __future__ import annotations

import asyncio
import logging
import signal
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from ledgermirror.db.embedded import (
    EmbeddedPostgres,
    EmbeddedStartError,
    default_shared_buffers_mb,
    mask_password,
    with_user,
)
from ledgermirror.db.migrate import migrate
from ledgermirror.db.replicas import split_urls
from ledgermirror.db.roles import ensure_api_role
from ledgermirror.exits import DatabaseUnreachable
from ledgermirror.settings import Settings

_log = logging.getLogger(__name__)


@dataclass(slots=True)
class Prepared:
    owner_url: str
    api_url: str
    embedded: EmbeddedPostgres | None

    def stop(self) -> None:
        if self.embedded is not None:
            self.embedded.stop()


def prepare(
    settings: Settings,
    *,
    data_dir: Path | None = None,
    run_migrations: bool | None = None,
    durable: bool = True,
) -> Prepared:
    """Start the embedded server when no URL is configured; migrate it (or, on request, a configured one).

    ``durable=False`` makes an embedded server a throwaway one (no fsync: see ``EmbeddedPostgres``), for the
    test suite and the conformance runner only; it has no effect on a configured database.
    """
    embedded: EmbeddedPostgres | None = None
    if settings.db_url:
        owner_url = settings.db_url
    else:
        embedded = EmbeddedPostgres(
            data_dir or settings.data_dir,
            durable=durable,
            shared_buffers_mb=settings.embedded_shared_buffers_mb or default_shared_buffers_mb(),
            max_wal_size_mb=settings.embedded_max_wal_size_mb,
        )
        try:
            owner_url = embedded.start()
        except EmbeddedStartError as error:
            raise DatabaseUnreachable(str(error)) from error
    should_migrate = embedded is not None if run_migrations is None else run_migrations
    try:
        role_ready = asyncio.run(_setup(owner_url, settings.api_role, migrate_schema=should_migrate))
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        if embedded is not None:
            embedded.stop()
        raise DatabaseUnreachable(f"cannot use the database at {mask_password(owner_url)}: {error}") from error
    if settings.api_db_url:
        api_url = settings.api_db_url
    elif embedded is not None and role_ready:
        api_url = with_user(owner_url, settings.api_role)
    else:
        _log.warning("LEDGERMIRROR_API_DB_URL is not set: the API uses the owner connection in read-only sessions")
        api_url = owner_url
    return Prepared(owner_url, api_url, embedded)


async def _setup(url: str, role: str, *, migrate_schema: bool) -> bool:
    conn = await asyncpg.connect(url, timeout=10)
    try:
        if not migrate_schema:
            return False
        await migrate(conn)
        return await ensure_api_role(conn, role)
    finally:
        await conn.close()


def check_reachable(urls: str) -> None:
    """Raise :class:`DatabaseUnreachable` unless one of ``urls`` (one URL, or several comma-separated: the API's
    replicas) accepts a connection; the others may come later, the API leaves them until they answer."""

    async def probe(url: str) -> None:
        conn = await asyncpg.connect(url, timeout=10)
        await conn.close()

    problems = []
    for url in split_urls(urls):
        try:
            asyncio.run(probe(url))
            return
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as error:
            problems.append(f"cannot connect to {mask_password(url)}: {error}")
            _log.warning(problems[-1])
    raise DatabaseUnreachable("; ".join(problems) or "no database URL given")


def _exit(signum: int, frame: object) -> None:
    raise SystemExit(0)


def exit_cleanly_on_sigterm() -> None:
    """uvicorn re-raises SIGTERM after its graceful shutdown; exiting through Python then runs our clean-up
    (stopping the embedded PostgreSQL) instead of dying on the default handler."""
    signal.signal(signal.SIGTERM, _exit)
