"""``bench/pgserver``: a stand-alone PostgreSQL server for the benchmarks, with an operator's settings.

The embedded server (``db/embedded.py``) runs PostgreSQL with initdb's defaults (``random_page_cost`` 4, JIT
on; 128 MB of shared buffers for a throwaway server, a quarter of the memory for a durable one since
2026-11-28). A production database is tuned for its machine. This tool runs the same
binaries (the ``pgserver`` wheel's, PostgreSQL 16; or any other ``--bin-dir``, such as Debian's
``/usr/lib/postgresql/15/bin``, which also ships ``pg_trgm``, ``btree_gist`` and ``pg_stat_statements``) as a
server of its own, on 127.0.0.1 and a socket in its data folder, with either setting set:

- ``default``: what initdb writes (the embedded server's settings, checkpoint spacing aside);
- ``production``: what an operator would set on this machine (``PRODUCTION_SETTINGS``).

``start`` prints the owner URL (``postgresql://postgres@127.0.0.1:PORT/postgres``); ``bench/generate`` creates
the database named in ``LEDGERMIRROR_DB_URL`` when it does not exist.
"""

from __future__ import annotations

import argparse
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pgserver

DEFAULT_BIN_DIR = Path(pgserver.__file__).parent / "pginstall" / "bin"
SYSTEM_USER = "pgserver"
"""PostgreSQL refuses to run as root: as root the server runs as this user (the one the wheel creates)."""

PRODUCTION_SETTINGS: dict[str, str] = {
    # Memory: a quarter of the machine's 24 GiB for PostgreSQL's own cache, the rest left to the OS page cache.
    "shared_buffers": "6GB",
    "effective_cache_size": "18GB",
    "work_mem": "32MB",
    "maintenance_work_mem": "1GB",
    "wal_buffers": "16MB",
    # Storage: the disk is an SSD (virtio block device); random reads cost about what sequential ones do.
    "random_page_cost": "1.1",
    "effective_io_concurrency": "200",
    # Two cores: at most one parallel worker per query, two in all.
    "max_worker_processes": "2",
    "max_parallel_workers": "2",
    "max_parallel_workers_per_gather": "1",
    "max_parallel_maintenance_workers": "1",
    # Short OLTP queries: JIT compiling costs more than it saves. (No statement of the API's scenarios comes near
    # jit_above_cost: docs/performance.md, "Two layouts"; the pgserver wheel is built without JIT anyway.)
    "jit": "off",
    # Writes: checkpoints spaced as the embedded server spaces them.
    "min_wal_size": "1GB",
    "max_wal_size": "4GB",
    "checkpoint_timeout": "15min",
    "checkpoint_completion_target": "0.9",
}
"""The ``production`` settings: what PGTune-style sizing gives for a 2-core, 24 GiB machine with an SSD serving
a web application, with JIT off."""

DEFAULT_SETTINGS: dict[str, str] = {"max_wal_size": "4GB", "checkpoint_timeout": "15min"}
"""The ``default`` settings: initdb's, with the embedded server's checkpoint spacing (``db/embedded.py``)."""

SETTINGS = {"production": PRODUCTION_SETTINGS, "default": DEFAULT_SETTINGS}
_INCLUDE = "include_if_exists = 'ledgermirror-bench.conf'\n"


def settings_text(name: str, port: int) -> str:
    lines = [f"# bench/pgserver --settings {name} (rewritten at every start)\n"]
    lines.append("listen_addresses = '127.0.0.1'\n")
    lines.append(f"port = {port}\n")
    lines += [f"{key} = '{value}'\n" for key, value in SETTINGS[name].items()]
    return "".join(lines)


def _server_user() -> str | None:
    return SYSTEM_USER if os.geteuid() == 0 else None


def _own(path: Path, user: str | None) -> None:
    if user is None:
        return
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)


def initialise(bin_dir: Path, pgdata: Path, user: str | None) -> None:
    pgdata.mkdir(parents=True, exist_ok=True)
    _own(pgdata, user)
    pgdata.chmod(0o700)
    subprocess.run(
        [str(bin_dir / "initdb"), "-D", str(pgdata), "--auth=trust", "--encoding=utf8", "-U", "postgres"],
        check=True,
        stdout=subprocess.DEVNULL,
        user=user,
    )
    with (pgdata / "postgresql.conf").open("a") as conf:
        conf.write("\n" + _INCLUDE)


def start(bin_dir: Path, data_dir: Path, settings: str, port: int) -> str:
    user = _server_user()
    data_dir.mkdir(parents=True, exist_ok=True)
    if user is not None:
        data_dir.chmod(0o755)
    pgdata = data_dir / "pgdata"
    if not (pgdata / "PG_VERSION").exists():
        initialise(bin_dir, pgdata, user)
    conf = pgdata / "ledgermirror-bench.conf"
    conf.write_text(settings_text(settings, port))
    _own(conf, user)
    subprocess.run(
        [
            str(bin_dir / "pg_ctl"),
            "-D",
            str(pgdata),
            "-w",
            "-l",
            str(pgdata / "log"),
            "-o",
            f"-k {pgdata}",
            "start",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        user=user,
    )
    return f"postgresql://postgres@127.0.0.1:{port}/postgres"


def stop(bin_dir: Path, data_dir: Path) -> None:
    subprocess.run(
        [str(bin_dir / "pg_ctl"), "-D", str(data_dir / "pgdata"), "-w", "-m", "fast", "stop"],
        check=True,
        stdout=subprocess.DEVNULL,
        user=_server_user(),
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/pgserver", description=__doc__.split("\n\n")[0])
    p.add_argument("action", choices=["start", "stop"])
    p.add_argument("--data-dir", type=Path, required=True, help="folder of the server (pgdata/ inside)")
    p.add_argument("--settings", choices=sorted(SETTINGS), default="production")
    p.add_argument("--port", type=int, default=5433, help="TCP port on 127.0.0.1")
    p.add_argument(
        "--bin-dir", type=Path, default=DEFAULT_BIN_DIR, help="PostgreSQL binaries (default: pgserver's)"
    )
    args = p.parse_args(argv)
    data_dir = args.data_dir.resolve()
    if args.action == "start":
        print(start(args.bin_dir, data_dir, args.settings, args.port))
    else:
        stop(args.bin_dir, data_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
