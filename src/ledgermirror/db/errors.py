"""Errors of the data layer, for the layers above to translate (the API answers ``503`` for
:class:`DatabaseUnavailable`); nothing here knows about HTTP."""

from __future__ import annotations

import asyncio

import asyncpg


class DatabaseUnavailable(Exception):
    """The database cannot be reached, refused the connection, or a statement ran out of time."""


CONNECTION_FAILURES: tuple[type[BaseException], ...] = (
    OSError,
    asyncio.TimeoutError,
    asyncpg.PostgresConnectionError,  # class 08: the connection failed or does not exist
    asyncpg.InterfaceError,  # the connection is closed, or the pool is closing
    asyncpg.InternalClientError,  # the protocol lost its state ("cannot switch to state 12") when a server went
    asyncpg.OperatorInterventionError,  # class 57: admin/crash shutdown, cannot connect now, query canceled
    asyncpg.TooManyConnectionsError,
)
"""What a query raises when the database, not the statement, is at fault: the outage, never a bug (``503``).
``QueryCanceledError`` (the statement timeout, class 57) is among them."""


def connection_is_broken(error: BaseException) -> bool:
    """True when the connection that raised ``error`` must not serve another query (every failure above but a
    statement that ran out of time, after which the session is as good as before)."""
    return not isinstance(error, (asyncpg.QueryCanceledError, asyncpg.TooManyConnectionsError))
