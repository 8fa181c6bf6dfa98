"""The API's databases when there are several: read replicas (PostgreSQL streaming standbys), and optionally the
primary, each with what the API knows of its health and freshness.

``LEDGERMIRROR_API_DB_URL`` may list several URLs, comma-separated (:func:`split_urls`; a libpq multi-host URL,
``postgresql://h1,h2/db``, stays one entry: only a comma followed by a new ``postgres://`` or
``postgresql://`` starts another). Each is a :class:`Member` with its own connections. A member is *usable*
when its last probe answered and its replay lag was within the bound; queries go to usable members only (the
one serving fewest queries now, in turn on ties), and a member that failed or fell behind is left until a later
probe finds it well again.

The probe (:data:`PROBE`, one round trip, every ``replica_check_seconds`` and on each readiness check) reads:

- whether the server is a standby, whether it has replayed everything it has received
  (``pg_last_wal_replay_lsn() >= pg_last_wal_receive_lsn()``), and whether its WAL receiver is connected to a
  primary (a row in ``pg_stat_wal_receiver``, whose ``pid`` every role may read);
- the age of the last transaction it replayed (``pg_last_xact_replay_timestamp()``);
- the newest consensus timestamp it holds (``max(record_file.consensus_end)``, the primary key's last entry), the
  index of that record file (the newest block number) and its greatest entity id (``entity``'s primary key's
  last entry): what a next link's bound may ask of it (:class:`Floor`).

The replay lag of a standby that has replayed all it received, from a connected WAL receiver, is 0. Otherwise (WAL
received and not replayed, or no WAL receiver: the primary is gone or unreachable, and what it commits meanwhile
never arrives) it is the smaller of the age of its last replayed transaction and the time since the probes first
saw it so: the first alone would call a standby of an idle primary hours behind the moment a checkpoint's WAL
arrives before it is replayed (or the moment its primary restarts); the second alone would miss a standby that
was already behind when the process started. Both grow while the standby stays cut off, so it fails readiness
and is left once the bound passes. Only streaming standbys are read so: a standby fed by ``restore_command``
alone has no WAL receiver and reads as cut off.

With one database nothing is chosen: its answers carry the header of its last probe (:attr:`Member.headers`,
made once per new newest timestamp), so the request path does no freshness work.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import asyncpg

from ledgermirror.db.connections import ConnectionSet

PROBE = """select pg_is_in_recovery() as standby,
       coalesce(pg_last_wal_replay_lsn() < pg_last_wal_receive_lsn(), false) as behind,
       pg_is_in_recovery() and not exists (select from pg_stat_wal_receiver) as cut_off,
       extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp())::float8 as replay_age,
       newest.consensus_end as newest, newest.index as newest_block,
       (select id from entity order by id desc limit 1) as newest_entity
from (select 1) as one
left join lateral (select consensus_end, index from record_file order by consensus_end desc limit 1) as newest
    on true"""
"""One round trip: standby or not, whether it has WAL received and not replayed, whether it is a standby without
a connected WAL receiver, the age of its last replayed transaction (null on a primary or before the first), its
newest consensus timestamp and block number, its greatest entity id (nulls when empty)."""

_NEXT_URL = re.compile(r",\s*(?=postgres(?:ql)?://)")


@dataclass(frozen=True, slots=True)
class Floor:
    """What a request needs a database to hold (``api/freshness.py`` reads it from a next link's bounds): a
    consensus timestamp, an entity id, a block number (None: nothing asked), or, with ``freshest``, the newest
    data any database has (for bounds of no global order, such as one token's serial numbers)."""

    ns: int | None = None
    entity: int | None = None
    block: int | None = None
    freshest: bool = False


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
    cut_off: bool = False
    """A standby whose last probe found no WAL receiver connected to a primary."""
    lag_seconds: float = 0.0
    newest_ns: int | None = None
    """The newest consensus timestamp it held at its last probe (a lower bound of what it holds now)."""
    newest_block: int | None = None
    """The index of that newest record file (the newest block number)."""
    newest_entity: int | None = None
    """The greatest entity id it held at its last probe."""
    headers: dict[str, str] = field(default_factory=dict)
    """The freshness headers of an answer read from it (``stamp(newest_ns)``, made once per new value; shared:
    never changed in place)."""
    behind_since: float | None = None
    """When the probes first saw it with WAL received and not replayed, or with no WAL receiver (None: caught up
    and connected at the last probe)."""
    max_lag_seconds: float = field(default=30.0, repr=False)
    stamp: Callable[[int], dict[str, str]] | None = field(default=None, repr=False)
    """Makes :attr:`headers` from the newest consensus timestamp (given by the API; None: no headers)."""

    @property
    def usable(self) -> bool:
        return self.answered and self.lag_seconds <= self.max_lag_seconds

    def holds(self, floor: Floor) -> bool:
        """Its last probe found at least what ``floor`` asks (``freshest`` is the caller's to check)."""
        return (
            (floor.ns is None or (self.newest_ns or 0) >= floor.ns)
            and (floor.entity is None or (self.newest_entity or 0) >= floor.entity)
            and (floor.block is None or (self.newest_block is not None and self.newest_block >= floor.block))
        )

    def record(self, row: asyncpg.Record, now: float) -> None:
        """What a probe answered (``now``: the monotonic clock when it answered)."""
        self.answered = True
        self.checked = True
        self.standby = bool(row["standby"])
        self.cut_off = bool(row["cut_off"])
        newest = row["newest"]
        if newest != self.newest_ns:
            self.newest_ns = newest
            self.headers = {} if newest is None or self.stamp is None else self.stamp(newest)
        self.newest_block = row["newest_block"]
        self.newest_entity = row["newest_entity"]
        if not row["behind"] and not self.cut_off:
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
            "cut_off": self.cut_off,
        }
