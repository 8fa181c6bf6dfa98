"""The API's databases when there are several: read replicas (PostgreSQL streaming standbys), and optionally the
primary, each with what the API knows of its health and freshness.

``LEDGERMIRROR_API_DB_URL`` may list several URLs, comma-separated (:func:`split_urls`; a libpq multi-host URL,
``postgresql://h1,h2/db``, stays one entry: only a comma followed by a new ``postgres://`` or
``postgresql://`` starts another). Each is a :class:`Member` with its own connections. A member is *usable*
when its last probe answered and its replay lag was within the bound; queries go to usable members only (the
one serving fewest queries now, in turn on ties), and a member that failed or fell behind is left until a later
probe finds it well again.

The probe (:data:`PROBE`, one round trip, every ``replica_check_seconds`` and on each readiness check) reads:

- whether the server is a standby, and whether it has replayed everything it has received
  (``pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn()``);
- the age of the last transaction it replayed (``pg_last_xact_replay_timestamp()``);
- the newest consensus timestamp it holds (``max(record_file.consensus_end)``, the primary key's last entry).

The replay lag of a standby that has replayed all it received is 0. Otherwise it is the smaller of the age of
its last replayed transaction and the time since the probes first saw it behind: the first alone would call a
standby of an idle primary hours behind the moment a checkpoint's WAL arrives before it is replayed; the second
alone would miss a standby that was already behind when the process started. A standby whose WAL receiver has
lost the primary cannot tell that it misses anything: its lag reads 0 while its newest consensus timestamp stops,
which the ingest lag bound (readiness) catches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import asyncpg

from ledgermirror.db.connections import ConnectionSet

PROBE = """select pg_is_in_recovery() as standby,
       coalesce(pg_last_wal_replay_lsn() < pg_last_wal_receive_lsn(), false) as behind,
       extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp())::float8 as replay_age,
       (select consensus_end from record_file order by consensus_end desc limit 1) as newest"""
"""One round trip: standby or not, whether it has WAL received and not replayed, the age of its last replayed
transaction (null on a primary or before the first), its newest consensus timestamp (null when empty)."""

_NEXT_URL = re.compile(r",\s*(?=postgres(?:ql)?://)")


def describe(url: str) -> str:
    """A database's name for logs and the readiness body: its host, port and database, never its credentials."""
    parts = urlsplit(url)
    where = parts.netloc.rpartition("@")[2] or "local socket"
    return f"{where}{parts.path}" if parts.scheme else "database"


def split_urls(text: str) -> list[str]:
    """The URLs of a comma-separated list (a multi-host URL stays one); blanks dropped."""
    return [url.strip() for url in _NEXT_URL.split(text) if url.strip()]


@dataclass(slots=True)
class Member:
    """One database the API reads from, with what its last probe found."""

    label: str
    """The URL without its password, for logs and the readiness body."""
    pool: ConnectionSet
    in_use: int = 0
    answered: bool = True
    """Its last probe (or query) reached it; a connection failure clears it until a probe answers again."""
    checked: bool = False
    """Probed at least once."""
    standby: bool = False
    lag_seconds: float = 0.0
    newest_ns: int | None = None
    """The newest consensus timestamp it held at its last probe (a lower bound of what it holds now)."""
    behind_since: float | None = None
    """When the probes first saw it with WAL received and not replayed (None: caught up at the last probe)."""
    max_lag_seconds: float = field(default=30.0, repr=False)

    @property
    def usable(self) -> bool:
        return self.answered and self.lag_seconds <= self.max_lag_seconds

    def record(self, row: asyncpg.Record, now: float) -> None:
        """What a probe answered (``now``: the monotonic clock when it answered)."""
        self.answered = True
        self.checked = True
        self.standby = bool(row["standby"])
        self.newest_ns = row["newest"]
        if not row["behind"]:
            self.behind_since = None
            self.lag_seconds = 0.0
            return
        if self.behind_since is None:
            self.behind_since = now
        replay_age = row["replay_age"]
        behind_for = now - self.behind_since
        self.lag_seconds = behind_for if replay_age is None else max(min(replay_age, behind_for), 0.0)

    def failed(self) -> None:
        self.answered = False
        self.checked = True

    def status(self) -> dict[str, object]:
        """This member in the readiness body."""
        return {
            "url": self.label,
            "role": "standby" if self.standby else "primary",
            "status": "UP" if self.usable else "DOWN",
            "answered": self.answered,
            "lag_seconds": round(self.lag_seconds, 1),
            "newest_consensus_ns": self.newest_ns,
        }
