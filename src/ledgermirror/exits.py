"""How a ``ledgermirror`` command ends when it cannot do its work: the exit statuses the commands share, and the
failure that ends every command needing a database (``cli.main`` prints its message, no traceback)."""

from __future__ import annotations

EXIT_USAGE = 2
"""A bad option or setting."""
EXIT_DATABASE = 3
"""The database cannot be used (:class:`DatabaseUnreachable`)."""
EXIT_CANNOT_LISTEN = 5
"""A server's address is taken (another server on the port) or cannot be listened on."""


class DatabaseUnreachable(RuntimeError):
    """The database the settings name cannot be reached or prepared (``runtime.prepare``)."""
