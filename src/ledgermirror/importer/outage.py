"""The database failing under the importer: which failures are the database's, how the operator is told, and
the wait between attempts.

Two kinds (:class:`DatabaseFault`): the database is **unavailable** (it restarts, fast or immediate shutdown,
crash recovery, or cannot be reached) and its **disk is full** (PostgreSQL's ``53100``: a file could not be
extended). Either way the open transaction rolls back, so nothing of it is written: what was committed ends at
a whole group of files, and the next attempt resumes after the last ``record_file`` row, as a restart does.
Following, the importer waits (doubling from ``options.poll_seconds`` to ``options.max_poll_seconds``) and
tries again; ``--once`` stops with the exit status ``EXIT_DATABASE``.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from ledgermirror.db.errors import CONNECTION_FAILURES

DISK_FULL = "disk_full"
UNAVAILABLE = "unavailable"


@dataclass(frozen=True, slots=True)
class DatabaseFault:
    cause: str
    """:data:`DISK_FULL` or :data:`UNAVAILABLE` (the metric's label)."""
    message: str
    """One line for the operator: what failed and what to do."""


_ALWAYS_THE_DATABASE: tuple[type[BaseException], ...] = (
    *(kind for kind in CONNECTION_FAILURES if kind not in (OSError, TimeoutError)),
    asyncpg.InsufficientResourcesError,
)


def database_fault(error: BaseException, *, connection_lost: bool) -> DatabaseFault | None:
    """The database's fault behind ``error``, or None when it is not one. A socket error or a time-out is the
    database's only when the connection is gone (``connection_lost``; the source raises those too)."""
    if isinstance(error, asyncpg.DiskFullError):
        return DatabaseFault(
            DISK_FULL,
            f"the database's disk is full ({_first_line(error)}); nothing of the open transaction was written: "
            "free space on the database's disk (the data folder, or the server's) and the import continues where "
            "it stopped",
        )
    if isinstance(error, _ALWAYS_THE_DATABASE) or (isinstance(error, CONNECTION_FAILURES) and connection_lost):
        detail = _first_line(error) or type(error).__name__
        return DatabaseFault(
            UNAVAILABLE,
            f"the database is unavailable ({detail}); nothing of the open transaction was written: the import "
            "continues where it stopped once the database answers",
        )
    return None


def _first_line(error: BaseException) -> str:
    """The error's message without the hint and detail lines asyncpg adds."""
    return str(error).strip().partition("\n")[0]


def next_wait(seconds: float, ceiling: float) -> float:
    return min(seconds * 2, ceiling)
