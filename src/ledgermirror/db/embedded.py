"""The embedded PostgreSQL: a private server from the ``pgserver`` wheel, in a data folder.

It listens on a Unix socket inside the data folder only (no TCP port), runs with trust authentication for local
users, and stops when the process that started it exits.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

_log = logging.getLogger(__name__)


class EmbeddedPostgres:
    def __init__(self, data_dir: Path) -> None:
        self.pgdata = data_dir / "pgdata"
        self._server: Any = None

    def start(self) -> str:
        """Start (or join) the server and return the owner connection URL."""
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        _log.info("starting embedded PostgreSQL", extra={"pgdata": str(self.pgdata)})
        self._server = _pgserver().get_server(self.pgdata, cleanup_mode="stop")
        return str(self._server.get_uri())

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None

    def restart_postmaster(self) -> None:
        """Stop and start the server process in place (used by recovery tests)."""
        self.stop_postmaster()
        self.start_postmaster()

    def stop_postmaster(self) -> None:
        _pgserver()._commands.pg_ctl(
            ["-w", "-m", "fast", "stop"], pgdata=self.pgdata, user=self._server.system_user
        )

    def start_postmaster(self) -> None:
        self._server.ensure_postgres_running()


def _pgserver() -> Any:
    """Import pgserver lazily: importing it probes the runtime folder (and warns when XDG_RUNTIME_DIR is unset)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
        import pgserver._commands

    return pgserver


def with_user(url: str, user: str) -> str:
    """The same server and database, another user (no password: the embedded server trusts local users)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{quote(user)}@{host}").geturl()


def mask_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None or parts.password == "":
        return url
    userinfo, _, host = parts.netloc.rpartition("@")
    user = userinfo.partition(":")[0]
    return parts._replace(netloc=f"{user}:***@{host}").geturl()
