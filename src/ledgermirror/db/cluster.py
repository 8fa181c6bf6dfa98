"""The embedded cluster's folder across crashes: a first initialisation that is atomic, and the files a killed
server or command leaves behind (the lock file ``postmaster.pid``, pgserver's list of the processes using the
server).

**Initialisation.** ``initdb`` runs in a temporary folder beside the data folder, which is renamed into place
once complete and marked (:data:`INITIALISED`). A kill during it leaves only the temporary folder, removed by
the next start. A data folder without the mark that no server ever ran in (PostgreSQL writes
``postmaster.opts`` when a server starts in it) is an unfinished initialisation of an older version; it holds
no data and is made again.

**The lock file.** PostgreSQL removes a lock file whose process is gone and refuses one naming a live process.
It cannot tell a process that took over the number of a dead server, a zombie, or a file cut short by the
kill, and pgserver reads such files wrongly (a traceback, or "running" for a server that is not). Here the
PostgreSQL processes working in the folder decide: when the file's process is one of them the server runs and
is joined; when none is left the file is stale and removed (as PostgreSQL would remove it); the backends of a
killed postmaster, which hold its shared memory, are waited for.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

_log = logging.getLogger(__name__)

INITIALISED = "ledgermirror-initialised"
"""The mark of a data folder whose initialisation completed (PostgreSQL ignores files it does not know)."""
_TEMPORARY = ".init-"
LOCK_FILE = "postmaster.pid"
PID_LIST = ".handle_pids.json"
"""pgserver's list of the processes using the server (the last to exit stops it)."""
LOCK_FILE_LINES = 8
"""A server's lock file once it has started: pid, folder, start time, port, socket folder, host, shared memory,
status."""


class ClusterError(RuntimeError):
    """The data folder cannot be made usable without the operator (the message says what to do)."""


@contextlib.contextmanager
def folder_lock(pgdata: Path) -> Iterator[None]:
    """Serialise the repair and initialisation of ``pgdata`` between processes (released by the kernel when
    the holder dies)."""
    path = pgdata.parent / f".{pgdata.name}.lock"
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def is_initialised(pgdata: Path) -> bool:
    return (pgdata / "PG_VERSION").is_file() and (
        (pgdata / INITIALISED).exists() or (pgdata / "postmaster.opts").exists()
    )


def servers_in(pgdata: Path) -> list[psutil.Process]:
    """The live PostgreSQL processes working in ``pgdata`` (a postmaster and its children run in their data
    folder); zombies are dead."""
    found = []
    for process in psutil.process_iter(["name"]):
        if process.info["name"] != "postgres":
            continue
        try:
            if process.status() != psutil.STATUS_ZOMBIE and Path(process.cwd()) == pgdata:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def _wait_gone(processes: list[psutil.Process], seconds: float) -> list[psutil.Process]:
    _, alive = psutil.wait_procs(processes, timeout=seconds)
    return [process for process in alive if process.status() != psutil.STATUS_ZOMBIE]


def discard_unfinished(pgdata: Path) -> None:
    """Remove what a killed initialisation left: temporary folders, or a data folder no server ever ran in."""
    for leftover in pgdata.parent.glob(f"{pgdata.name}{_TEMPORARY}*"):
        _remove_cluster(leftover, "an initialisation that did not finish")
    if pgdata.exists() and not is_initialised(pgdata) and any(pgdata.iterdir()):
        _remove_cluster(pgdata, "an initialisation that did not finish (no server ever ran in it)")


def _remove_cluster(folder: Path, why: str) -> None:
    _log.warning("removing %s: %s", folder, why)
    for process in servers_in(folder):  # a standalone backend of the killed initdb
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    shutil.rmtree(folder, ignore_errors=True)


def initialise(pgdata: Path, initdb: Path, system_user: str | None, *, sync: bool) -> None:
    """``initdb`` into a temporary folder, marked and renamed to ``pgdata`` once complete. ``system_user`` runs
    it (and owns the folder) when not None. ``sync=False`` skips initdb's flush to disk (throwaway clusters)."""
    temporary = pgdata.parent / f"{pgdata.name}{_TEMPORARY}{os.getpid()}"
    temporary.mkdir(mode=0o700)
    if system_user is not None:
        shutil.chown(temporary, system_user, system_user)
    command = [str(initdb), "-D", str(temporary), "--auth=trust", "--auth-local=trust", "--encoding=utf8"]
    command += ["-U", "postgres", *([] if sync else ["--no-sync"])]
    _log.info("initialising the embedded PostgreSQL", extra={"pgdata": str(pgdata)})
    result = subprocess.run(command, capture_output=True, text=True, user=system_user, check=False, timeout=600)
    if result.returncode != 0:
        shutil.rmtree(temporary, ignore_errors=True)
        last = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[-1]
        raise ClusterError(f"initdb failed in {pgdata.parent}: {last}")
    mark = temporary / INITIALISED
    mark.write_text("initdb completed; this folder was then renamed into place\n")
    if sync:
        _fsync(mark)
        _fsync(temporary)
    if pgdata.exists():
        pgdata.rmdir()  # an empty folder (a step of an older start); anything else was discarded before
    temporary.rename(pgdata)
    _fsync(pgdata.parent)


def _fsync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def clear_stale_lock(pgdata: Path, *, wait_seconds: float = 30.0) -> None:
    """Leave a lock file whose server runs in ``pgdata``; remove a stale one, once the backends of its dead
    postmaster (which hold its shared memory) have exited."""
    lock = pgdata / LOCK_FILE
    try:
        text = lock.read_text()
    except FileNotFoundError:
        return
    lines = text.splitlines()
    pid = _lock_pid(lines)
    alive = servers_in(pgdata)
    if pid is not None and any(process.pid == pid for process in alive):
        if len(lines) < LOCK_FILE_LINES:  # the server has just started and is writing its file
            _wait_written(lock, wait_seconds)
        return
    if alive:  # the backends of a postmaster that died: they leave once they notice
        _log.info("waiting for the processes of a stopped server to exit", extra={"pgdata": str(pgdata)})
        alive = _wait_gone(alive, wait_seconds)
    if alive:
        pids = ", ".join(str(process.pid) for process in alive)
        raise ClusterError(
            f"PostgreSQL processes ({pids}) still run in {pgdata} but none is the server its lock file names; "
            "stop them and start again"
        )
    why = "its process is gone" if pid is None or not psutil.pid_exists(pid) else "it names another program"
    if pid is None:
        why = "it is incomplete"
    _log.warning("removing the stale lock file %s: %s", lock, why)
    socket_dirs = {pgdata, *([Path(lines[4].strip())] if len(lines) > 4 and lines[4].strip() else [])}
    for socket_dir in socket_dirs:  # the socket's own lock file, left by the same dead server
        for socket_lock in socket_dir.glob(".s.PGSQL.*.lock"):
            with contextlib.suppress(OSError):
                if not _is_postgres(_lock_pid(socket_lock.read_text().splitlines())):
                    socket_lock.unlink()
    lock.unlink(missing_ok=True)


def _lock_pid(lines: list[str]) -> int | None:
    """The process of a lock file (a standalone backend writes its pid negated), None when unreadable."""
    if not lines:
        return None
    try:
        return abs(int(lines[0].strip()))
    except ValueError:
        return None


def _wait_written(lock: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError):
            if len(lock.read_text().splitlines()) >= LOCK_FILE_LINES:
                return
        time.sleep(0.05)


def server_status(pgdata: Path) -> str | None:
    """The status line of a running server's lock file (``starting``, ``ready``, ``stopping``), else None."""
    try:
        lines = (pgdata / LOCK_FILE).read_text().splitlines()
    except FileNotFoundError:
        return None
    pid = _lock_pid(lines)
    if len(lines) < LOCK_FILE_LINES or pid is None:
        return None
    if not any(process.pid == pid for process in servers_in(pgdata)):
        return None
    return lines[LOCK_FILE_LINES - 1].strip()


def wait_until_ready(pgdata: Path, seconds: float) -> None:
    """Wait while a server of ``pgdata`` is starting (crash recovery) or stopping, so that it is either ready or
    gone; raise :class:`ClusterError` past ``seconds``."""
    deadline = time.monotonic() + seconds
    while (status := server_status(pgdata)) not in (None, "ready"):
        if time.monotonic() > deadline:
            raise ClusterError(f"the PostgreSQL server in {pgdata} stayed {status!r} for {seconds:.0f} s")
        time.sleep(0.1)


def prune_pid_list(pgdata: Path) -> None:
    """Keep only the live processes in pgserver's list of the server's users (a killed command never takes
    itself off, and the server would then outlive its last user); a list cut short by a kill is emptied."""
    path = pgdata / PID_LIST
    try:
        listed = json.loads(path.read_text())
    except FileNotFoundError:
        return
    except ValueError:
        listed = None
    if not isinstance(listed, list) or not all(isinstance(pid, int) for pid in listed):
        path.write_text("[]")
        return
    live = [pid for pid in listed if _running(pid)]
    if live != listed:
        path.write_text(json.dumps(live))


def _is_postgres(pid: int | None) -> bool:
    """Whether ``pid`` is a live PostgreSQL process (of any folder)."""
    if pid is None:
        return False
    try:
        process = psutil.Process(pid)
        return process.name() == "postgres" and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


_PROBE_ANSWERS = (
    "the database system is starting up",
    "the database system is in recovery mode",
    "the database system is shutting down",
    "the database system is not yet accepting connections",
    "the database system is not accepting connections",
)
"""What the server tells a connection while it starts or stops (pg_ctl's own probes get these): not a cause."""
_POSTMASTER_CAUSES = ("aborting startup", "startup process")
"""The postmaster's own lines (level LOG) when its startup process failed."""


def last_server_error(log: Path) -> str | None:
    """Why the server stopped or would not start: the log's last FATAL or PANIC line (or the postmaster's own
    line when its startup process failed), leaving out the answers to connections while it starts."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines[-200:]):
        level, _, text = line.partition("] ")[2].partition(":  ")
        cause = level in ("FATAL", "PANIC") or (level == "LOG" and text.startswith(_POSTMASTER_CAUSES))
        if cause and not text.startswith(_PROBE_ANSWERS):
            return text.strip()
    return None
