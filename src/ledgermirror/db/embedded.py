"""The embedded PostgreSQL: a private server from the ``pgserver`` wheel, in a data folder.

It listens on a Unix socket inside the data folder only (no TCP port), runs with trust authentication for local
users, and stops when the process that started it exits.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import stat
import subprocess
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

with warnings.catch_warnings():  # importing pgserver probes its runtime folder, and warns without XDG_RUNTIME_DIR
    warnings.simplefilter("ignore")
    from pgserver._commands import POSTGRES_BIN_PATH
    from pgserver.postgres_server import PostgresServer, get_server
    from pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

from ledgermirror.db import cluster

_log = logging.getLogger(__name__)

SYSTEM_USER = "pgserver"
"""The system user pgserver runs the server as when started by root (PostgreSQL refuses to run as root)."""
READY_SECONDS = 120.0
"""How long a start waits for a server of the folder that is starting or stopping, besides a crash recovery's
replay of its WAL (:data:`SLOWEST_REPLAY_MB_PER_SECOND`)."""
SLOWEST_REPLAY_MB_PER_SECOND = 20
"""How slowly a crashed server may replay its WAL before the start gives up waiting (a tenth of the 170 to
210 MB/s measured here): a start waits up to ``READY_SECONDS`` plus ``max_wal_size`` at this rate (16 GiB:
about 15 minutes) for a server replaying its WAL."""
HUGE_PAGES_WORTH_MB = 1024
"""A page cache from this size on is worth putting on huge pages: at 6 GB, 13 % less server CPU a transaction
over a long import (docs/performance.md, eleventh session)."""
_SHARED_MAPPINGS = {"/dev/zero (deleted)": False, "/anon_hugepage (deleted)": True}
"""How Linux names PostgreSQL's main shared memory (an anonymous shared mapping) in ``/proc/<pid>/maps``, and
whether that name means huge pages."""


DEFAULT_MAX_WAL_SIZE_MB = 16384
"""How much WAL may build up between two checkpoints (``max_wal_size``), unless configured: 16 GiB, against
PostgreSQL's 1 GB. After a checkpoint the first change of each page writes the whole page to the WAL; an import
changes pages all over the growing indexes (``transaction_hash``, ``crypto_transfer`` by account), so the closer
the checkpoints the more of its WAL is whole pages, and every checkpoint writes the pages changed since the last
once more. Measured over ten million transactions (docs/performance.md, seventeenth session): at 4 GB, 17
checkpoints, 40.0 GB of WAL and 5.0 M buffers written by them; at 16 GiB, 2 checkpoints, 23.8 GB and 0.95 M.
Durability is unchanged (every commit is still flushed). The cost: the WAL kept on the data folder's disk grows
to about this size during a long import, and recovery after a crash replays up to it."""


class EmbeddedStartError(RuntimeError):
    """The embedded server could not be started; the message is one line saying why and what to do."""


class EmbeddedPostgres:
    """The server of one data folder. ``durable=False`` is for throwaway clusters (the test suite, the
    conformance runner): no fsync, asynchronous commits, no full-page writes, so nothing survives a crash of
    the machine, and loading and emptying tables costs no disk flushes. ``serve`` and ``demo`` keep the default.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        durable: bool = True,
        shared_buffers_mb: int = 0,
        max_wal_size_mb: int = DEFAULT_MAX_WAL_SIZE_MB,
    ) -> None:
        self.pgdata = data_dir / "pgdata"
        self.durable = durable
        self.settings = server_settings(
            durable=durable, shared_buffers_mb=shared_buffers_mb, max_wal_size_mb=max_wal_size_mb
        )
        self.recovery_seconds = READY_SECONDS + max_wal_size_mb / SLOWEST_REPLAY_MB_PER_SECOND
        self._server: Any = None

    def start(self) -> str:
        """Start (or join) the server and return the owner connection URL. What a crash or a kill left in the
        folder is repaired first (:mod:`.cluster`); a start that still fails raises :class:`EmbeddedStartError`."""
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        pgdata = self.pgdata.resolve()
        _log.info("starting embedded PostgreSQL", extra={"pgdata": str(pgdata), "durable": self.durable})
        try:
            with cluster.folder_lock(pgdata):
                cluster.discard_unfinished(pgdata)
                if not cluster.is_initialised(pgdata):
                    cluster.initialise(
                        pgdata, POSTGRES_BIN_PATH / "initdb", _system_user(pgdata), sync=self.durable
                    )
                cluster.clear_stale_lock(pgdata)
                cluster.wait_until_ready(pgdata, self.recovery_seconds)
                cluster.prune_pid_list(pgdata)
                # Written before the server starts: shared_buffers is read only then. A server of this folder
                # that is already running (joined) re-reads the rest below and takes shared_buffers at its
                # next start.
                conf = pgdata / "postgresql.conf"
                changed = write_server_settings(conf, self.settings)
                changed |= write_throwaway_settings(conf, throwaway=not self.durable)
                self._server = self._started(pgdata)
        except cluster.ClusterError as error:
            raise EmbeddedStartError(str(error)) from error
        except (subprocess.SubprocessError, AssertionError, OSError, RuntimeError) as error:
            raise _start_failure(pgdata, error) from error
        if changed:
            os.kill(self._server.get_pid(), signal.SIGHUP)  # a joined server re-reads its configuration
        if self.durable and (advice := self.huge_pages_advice()):
            _log.info(advice)
        return str(self._server.get_uri())

    def _started(self, pgdata: Path) -> Any:
        """pgserver's handle of the server, started (or joined). pgserver allows ``pg_ctl start`` 10 s, and a
        server that crashed first replays its WAL since the last checkpoint (up to ``max_wal_size``: 1.8 GB took
        10.6 s here); when the start times out while the server is still starting, the handle pgserver kept of
        the attempt is dropped, the recovery waited for and the recovered server joined."""
        try:
            return get_server(pgdata, cleanup_mode="stop")
        except subprocess.TimeoutExpired as timeout:
            failed = PostgresServer._instances.pop(pgdata, None)  # else get_server would return it again
            if failed is not None:
                atexit.unregister(failed._cleanup)
            self._wait_for_recovery(pgdata, timeout)
            return get_server(pgdata, cleanup_mode="stop")

    def _wait_for_recovery(self, pgdata: Path, timeout: subprocess.TimeoutExpired) -> None:
        """After ``pg_ctl start`` timed out: wait for the server, still starting (replaying its WAL) or ready by
        now, to be ready, up to :attr:`recovery_seconds`; raise the timeout again when no server runs."""
        if cluster.server_status(pgdata) is None:
            raise timeout
        _log.info(
            "the embedded PostgreSQL is recovering from a crash (replaying its WAL); waiting for it",
            extra={"pgdata": str(pgdata), "up_to_seconds": round(self.recovery_seconds)},
        )
        cluster.wait_until_ready(pgdata, self.recovery_seconds)

    def huge_pages_advice(self, worth_bytes: int = HUGE_PAGES_WORTH_MB * 2**20) -> str | None:
        """What to do to put the running server's page cache on huge pages (:func:`huge_pages_advice`), read
        from ``/proc``; None when it is on them, too small to matter, or the system does not say."""
        if self._server is None:
            return None
        try:
            maps = Path(f"/proc/{self._server.get_pid()}/maps").read_text()
            meminfo = Path("/proc/meminfo").read_text()
        except (OSError, ValueError):
            return None
        return huge_pages_advice(maps, meminfo, worth_bytes=worth_bytes)

    def ensure_running(self) -> None:
        """Start the server again if it is gone (its postmaster killed, or stopped by someone else), repairing
        what it left as :meth:`start` does; nothing when it runs. Raises :class:`EmbeddedStartError`."""
        if self._server is None:
            self.start()
            return
        pgdata = self.pgdata.resolve()
        try:
            with cluster.folder_lock(pgdata):
                cluster.clear_stale_lock(pgdata)
                cluster.wait_until_ready(pgdata, self.recovery_seconds)
                try:
                    self._server.ensure_postgres_running()
                except subprocess.TimeoutExpired as timeout:
                    self._wait_for_recovery(pgdata, timeout)
                    self._server.ensure_postgres_running()
        except cluster.ClusterError as error:
            raise EmbeddedStartError(str(error)) from error
        except (subprocess.SubprocessError, AssertionError, OSError, RuntimeError) as error:
            raise _start_failure(pgdata, error) from error

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None


def shared_memory_mapping(maps: str) -> tuple[int, bool] | None:
    """The server's main shared memory in its postmaster's ``/proc/<pid>/maps``: the largest anonymous shared
    mapping, as its size in bytes and whether it is on huge pages; None when there is none."""
    found: tuple[int, bool] | None = None
    for line in maps.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or len(fields[1]) < 4 or fields[1][3] != "s" or fields[5] not in _SHARED_MAPPINGS:
            continue
        start, _, end = fields[0].partition("-")
        size = int(end, 16) - int(start, 16)
        if found is None or size > found[0]:
            found = (size, _SHARED_MAPPINGS[fields[5]])
    return found


def meminfo_value(meminfo: str, name: str) -> int | None:
    """A number of ``/proc/meminfo`` (``kB`` values in bytes), or None when it is not there."""
    for line in meminfo.splitlines():
        key, _, value = line.partition(":")
        if key == name:
            number, _, unit = value.strip().partition(" ")
            return int(number) * (1024 if unit == "kB" else 1)
    return None


def huge_pages_advice(maps: str, meminfo: str, *, worth_bytes: int) -> str | None:
    """One line for the operator when the server's page cache (``maps``: its postmaster's ``/proc/<pid>/maps``)
    of ``worth_bytes`` or more is on normal pages: how many huge pages it needs (its shared memory rounded up,
    which is PostgreSQL's own ``shared_memory_size_in_huge_pages``) and the ``vm.nr_hugepages`` that reserves
    them beside those other programs hold; None when it is on huge pages, smaller, or the system has none."""
    mapping = shared_memory_mapping(maps)
    page = meminfo_value(meminfo, "Hugepagesize")
    total = meminfo_value(meminfo, "HugePages_Total")
    free = meminfo_value(meminfo, "HugePages_Free")
    if mapping is None or page is None or total is None or free is None:
        return None
    size, huge = mapping
    if huge or size < worth_bytes:
        return None
    needed = -(-size // page)
    where = (
        f"{free:,} of the system's huge pages are free: restart the server to use them"
        if free >= needed
        else f"reserve them as root (sysctl -w vm.nr_hugepages={total - free + needed}) and restart the server"
    )
    return (
        f"the embedded PostgreSQL's page cache ({size // 2**20:,} MB of shared memory) is on normal pages; "
        f"on {needed:,} huge pages of {page // 2**10:,} kB a long import costs the server about 13 % less CPU: "
        f"{where} (README, Performance)"
    )


def _start_failure(pgdata: Path, error: BaseException) -> EmbeddedStartError:
    cause = cluster.last_server_error(pgdata / "log") or f"{type(error).__name__}: {error}"
    return EmbeddedStartError(
        f"the embedded PostgreSQL in {pgdata} did not start: {cause} (its log: {pgdata / 'log'})"
    )


def _system_user(pgdata: Path) -> str | None:
    """The system user to run ``initdb`` as: pgserver's own when running as root (made ready as pgserver
    makes it: the user, and the folders it must traverse and read), else None (this process's user)."""
    if os.geteuid() != 0:
        return None
    ensure_user_exists(SYSTEM_USER)
    readable = stat.S_IRGRP | stat.S_IROTH
    traversable = readable | stat.S_IXGRP | stat.S_IXOTH
    pgdata.parent.chmod(pgdata.parent.stat().st_mode | traversable)  # where initdb's folder is made
    ensure_prefix_permissions(pgdata.parent)
    ensure_prefix_permissions(POSTGRES_BIN_PATH)
    ensure_folder_permissions(POSTGRES_BIN_PATH, traversable)
    ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", readable)
    return SYSTEM_USER


CHECKPOINT_SETTINGS = {"max_wal_size": f"{DEFAULT_MAX_WAL_SIZE_MB}MB", "checkpoint_timeout": "15min"}
"""Every embedded server: fewer checkpoints than PostgreSQL's defaults (1 GB, 5 min), see
:data:`DEFAULT_MAX_WAL_SIZE_MB`."""
ANALYZE_SETTINGS = {"autovacuum_analyze_scale_factor": "0.5"}
"""Every embedded server: autovacuum analyzes a table once half as many rows as it held have changed since its
last analyze, not a tenth (PostgreSQL's default). A catch-up import grows its tables by a tenth within
autovacuum's one-minute round for most of its run, so at the default each large table was analyzed every one
or two minutes, at 0.2 to 0.45 s of CPU each (a sample of 30,000 rows): over ten million transactions, 781
analyzes and 71.5 s of CPU, 9 % of the server's; at half, 349 analyzes and 28.8 s (docs/performance.md,
eighteenth session). Nothing the import writes depends on the statistics (its merges' plans do not); the
statistics that go stale as a table grows are those of its newest timestamps and ids, and for a value beyond an
indexed column's histogram the planner reads the index's actual end. A server taking a few transactions a
second grows its large tables by a tenth, let alone a half, seldom at either setting."""
MAX_SHARED_BUFFERS_MB = 8192
"""The automatic ``shared_buffers`` (a quarter of the machine's memory) stops here."""


CGROUP_MEMORY_LIMITS = (
    Path("/sys/fs/cgroup/memory.max"),
    Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
)
"""Where a container's memory limit is read (cgroup v2, then v1): in a container the machine's memory is the
host's, and a page cache sized from it would outgrow the container's limit."""


def memory_bytes(limits: tuple[Path, ...] = CGROUP_MEMORY_LIMITS) -> int:
    """The machine's memory, or the container's limit when it is smaller (``max`` or no file: no limit)."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in limits:
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            memory = min(memory, int(text))
    return memory


def default_shared_buffers_mb(memory: int | None = None) -> int:
    """A quarter of the memory (:func:`memory_bytes` unless given) in MiB, at least initdb's 128 and at most
    :data:`MAX_SHARED_BUFFERS_MB` (PostgreSQL's own sizing advice for a dedicated server; the rest stays with the
    OS page cache)."""
    available = memory_bytes() if memory is None else memory
    return max(128, min(MAX_SHARED_BUFFERS_MB, available // 4 // 2**20))


def server_settings(
    *, durable: bool, shared_buffers_mb: int, max_wal_size_mb: int = DEFAULT_MAX_WAL_SIZE_MB
) -> dict[str, str]:
    """What every embedded server gets (:data:`CHECKPOINT_SETTINGS`, with ``max_wal_size_mb`` of WAL between
    checkpoints, and :data:`ANALYZE_SETTINGS`) and, for a durable one, PostgreSQL's own page cache of
    ``shared_buffers_mb``: an import's index pages (random inserts into ``crypto_transfer`` by account and
    ``transaction_hash``) outgrow initdb's 128 MB within the first million transactions, after which every insert
    reads its page back from the OS and writes another out (docs/performance.md). A throwaway server keeps
    initdb's 128 MB (the test suite starts many)."""
    settings = {**CHECKPOINT_SETTINGS, **ANALYZE_SETTINGS, "max_wal_size": f"{max_wal_size_mb}MB"}
    if durable and shared_buffers_mb > 0:
        settings["shared_buffers"] = f"{shared_buffers_mb}MB"
    return settings


_SETTINGS_BEGIN = "# ledgermirror: server settings (durable as ever; a crash replays more WAL)\n"
_SETTINGS_END = "# ledgermirror: end of server settings\n"
_LEGACY_BEGIN = "# ledgermirror: fewer checkpoints (durable as ever; a crash replays more WAL)\n"
_LEGACY_END = "# ledgermirror: end of checkpoint settings\n"
"""The block an earlier release wrote (checkpoint settings only), replaced by the settings block."""


def _without_block(text: str, begin: str, end: str) -> str:
    before, found, after = text.partition(begin)
    return before + after.partition(end)[2] if found else text


def write_server_settings(conf: Path, settings: Mapping[str, str]) -> bool:
    """Put the settings block after the file's own lines (``initdb`` writes ``max_wal_size``) and before the
    throwaway block, replacing an older one (or a block of an earlier release); True when the file changed."""
    text = conf.read_text()
    block = _SETTINGS_BEGIN + "".join(f"{name} = {value}\n" for name, value in settings.items()) + _SETTINGS_END
    without = _without_block(_without_block(text, _SETTINGS_BEGIN, _SETTINGS_END), _LEGACY_BEGIN, _LEGACY_END)
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
