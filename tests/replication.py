"""A PostgreSQL primary and its streaming standby on 127.0.0.1, from the binaries the project ships (the
``pgserver`` wheel): ``initdb``, ``pg_basebackup -R`` (``standby.signal`` and ``primary_conninfo``), ``pg_ctl``."""

from __future__ import annotations

import contextlib
import importlib
import os
import pwd
import shutil
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.status.live import free_port

WAIT_SECONDS = 60
SETTINGS = {
    "fsync": "off",  # throwaway clusters
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "wal_level": "replica",
    "max_wal_senders": "4",
    "hot_standby": "on",
    "wal_receiver_status_interval": "1s",
    "shared_buffers": "32MB",
}


def _pgserver() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # importing it probes XDG_RUNTIME_DIR
        return importlib.import_module("pgserver")


def _system_user() -> str | None:
    """The user the server runs as: ``pgserver``'s own when we are root (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return None
    utils = importlib.import_module("pgserver.utils")
    utils.ensure_user_exists("pgserver")
    return "pgserver"


@dataclass
class Server:
    pgdata: Path
    port: int
    user: str | None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def url_as(self, role: str) -> str:
        return f"postgresql://{role}@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        _pgserver().pg_ctl(
            [
                "-w",
                "-t",
                str(WAIT_SECONDS),
                "-o",
                f"-h 127.0.0.1 -p {self.port} -k ''",
                "-l",
                str(self.log),
                "start",
            ],
            pgdata=self.pgdata,
            user=self.user,
            timeout=WAIT_SECONDS + 30,
        )

    def stop(self, mode: str = "fast") -> None:
        with contextlib.suppress(subprocess.CalledProcessError):  # not running
            _pgserver().pg_ctl(
                ["-w", "-t", str(WAIT_SECONDS), "-m", mode, "stop"],
                pgdata=self.pgdata,
                user=self.user,
                timeout=WAIT_SECONDS + 30,
            )

    @property
    def log(self) -> Path:
        return self.pgdata.parent / f"{self.pgdata.name}.log"


def _own(path: Path, user: str | None) -> None:
    if user is None:
        return
    entry = pwd.getpwnam(user)
    utils = importlib.import_module("pgserver.utils")
    utils.ensure_prefix_permissions(path)
    os.chown(path, entry.pw_uid, entry.pw_gid)


def primary_and_standby(folder: Path) -> tuple[Server, Server]:
    """A new primary and a streaming standby of it, both running; trust authentication on 127.0.0.1."""
    pgserver = _pgserver()
    user = _system_user()
    folder.mkdir(parents=True, exist_ok=True)
    _own(folder, user)
    primary = Server(folder / "primary", free_port(), user)
    primary.pgdata.mkdir()
    _own(primary.pgdata, user)
    pgserver.initdb(
        ["--auth=trust", "--encoding=utf8", "-U", "postgres"], pgdata=primary.pgdata, user=user, timeout=120
    )
    with (primary.pgdata / "postgresql.conf").open("a") as conf:
        conf.writelines(f"{name} = '{value}'\n" for name, value in SETTINGS.items())
    with (primary.pgdata / "pg_hba.conf").open("a") as hba:
        hba.write("host replication all 127.0.0.1/32 trust\n")
    primary.start()
    standby = Server(folder / "standby", free_port(), user)
    standby.pgdata.mkdir(mode=0o700)
    _own(standby.pgdata, user)
    pgserver.pg_basebackup(
        [
            "-h",
            "127.0.0.1",
            "-p",
            str(primary.port),
            "-U",
            "postgres",
            "-D",
            str(standby.pgdata),
            "-R",
            "-X",
            "stream",
        ],
        user=user,
        timeout=120,
    )
    standby.start()
    return primary, standby


def remove(primary: Server, standby: Server) -> None:
    standby.stop("immediate")
    primary.stop("immediate")
    shutil.rmtree(primary.pgdata.parent, ignore_errors=True)
