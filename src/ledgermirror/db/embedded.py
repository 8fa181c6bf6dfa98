"""The embedded PostgreSQL: a private server from the ``pgserver`` wheel, in a data folder.

It listens on a Unix socket inside the data folder only (no TCP port), runs with trust authentication for local
users, and stops when the process that started it exits.
"""

from __future__ import annotations

import logging
import os
import signal
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

with warnings.catch_warnings():  # importing pgserver probes its runtime folder, and warns without XDG_RUNTIME_DIR
    warnings.simplefilter("ignore")
    from pgserver.postgres_server import get_server

_log = logging.getLogger(__name__)


class EmbeddedPostgres:
    """The server of one data folder. ``durable=False`` is for throwaway clusters (the test suite, the
    conformance runner): no fsync, asynchronous commits, no full-page writes, so nothing survives a crash of
    the machine, and loading and emptying tables costs no disk flushes. ``serve`` and ``demo`` keep the default.
    """

    def __init__(self, data_dir: Path, *, durable: bool = True) -> None:
        self.pgdata = data_dir / "pgdata"
        self.durable = durable
        self._server: Any = None

    def start(self) -> str:
        """Start (or join) the server and return the owner connection URL."""
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        _log.info("starting embedded PostgreSQL", extra={"pgdata": str(self.pgdata), "durable": self.durable})
        self._server = get_server(self.pgdata, cleanup_mode="stop")
        conf = self.pgdata / "postgresql.conf"
        if write_checkpoint_settings(conf) | write_throwaway_settings(conf, throwaway=not self.durable):
            os.kill(self._server.get_pid(), signal.SIGHUP)  # the postmaster re-reads its configuration
        return str(self._server.get_uri())

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None


CHECKPOINT_SETTINGS = {"max_wal_size": "4GB", "checkpoint_timeout": "15min"}
"""Every embedded server: fewer checkpoints than PostgreSQL's defaults (1 GB, 5 min). After a checkpoint the
first change of each page writes the whole page to the WAL; an import changes pages all over the growing
indexes (``transaction_hash``, ``crypto_transfer`` by account), so frequent checkpoints write most index changes
as full pages, and that WAL fills ``max_wal_size`` and calls the next checkpoint sooner. Durability is
unchanged (every commit is still flushed); recovery after a crash replays at most ``max_wal_size`` of WAL."""
_CHECKPOINT_BEGIN = "# ledgermirror: fewer checkpoints (durable as ever; a crash replays more WAL)\n"
_CHECKPOINT_END = "# ledgermirror: end of checkpoint settings\n"


def write_checkpoint_settings(conf: Path) -> bool:
    """Put the checkpoint settings block after the file's own lines (``initdb`` writes ``max_wal_size``) and
    before the throwaway block, replacing an older one; True when the file changed."""
    text = conf.read_text()
    block = _CHECKPOINT_BEGIN + "".join(f"{name} = {value}\n" for name, value in CHECKPOINT_SETTINGS.items())
    block += _CHECKPOINT_END
    before, begin, after = text.partition(_CHECKPOINT_BEGIN)
    without = before + after.partition(_CHECKPOINT_END)[2] if begin else text
    kept, marker, throwaway = without.partition(_MARKER)
    updated = kept + ("" if kept.endswith("\n") or not kept else "\n") + block + marker + throwaway
    if updated == text:
        return False
    with conf.open("r+") as out:  # rewriting in place keeps the file's owner (the server's system user)
        out.write(updated)
        out.truncate()
    return True


THROWAWAY_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
_MARKER = "# ledgermirror: throwaway cluster (tests, conformance); never for data that must survive a crash\n"


def write_throwaway_settings(conf: Path, *, throwaway: bool) -> bool:
    """Add (or, for a durable server, remove) the throwaway settings block; True when the file changed."""
    text = conf.read_text()
    kept, marked, _ = text.partition(_MARKER)
    if throwaway == bool(marked):
        return False
    if throwaway:
        lines = "".join(f"{name} = {value}\n" for name, value in THROWAWAY_SETTINGS.items())
        with conf.open("a") as out:  # appending keeps the file's owner (the server's system user)
            out.write(("" if kept.endswith("\n") else "\n") + _MARKER + lines)
    else:
        with conf.open("r+") as out:
            out.truncate(len(kept.encode()))
    return True


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
