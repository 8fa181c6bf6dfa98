"""``bench/coldstart``: the API's first seconds on a cold server: PostgreSQL restarted, its files out of the OS
page cache, then load at once.

The steps, on an embedded database folder that ``bench/generate`` filled:

1. ``ledgermirror serve`` on the folder (its own embedded PostgreSQL), ids sampled through the API for the
   scenario, the server stopped again (which stops PostgreSQL: the folder's ``postmaster.pid`` is gone);
2. the database's files evicted from the OS page cache: ``--evict files`` (the default) asks the kernel to drop
   each file of the folder's ``pgdata`` (``posix_fadvise(POSIX_FADV_DONTNEED)`` after a ``sync``: clean pages
   only, which after a clean shutdown is all of them), which needs no privilege and leaves the rest of the
   machine's cache alone; ``--evict system`` writes ``1`` to ``/proc/sys/vm/drop_caches`` (root only, and it
   empties the cache of every process on the machine: other work sharing it is slowed too); ``--evict none``
   keeps the cache (PostgreSQL's own buffers are empty after the restart all the same);
3. ``ledgermirror serve`` started again; as soon as its port answers, ``--connections`` clients run the scenario
   for ``--seconds``, and the run is reported in windows: requests, 503s (with what they said), other errors,
   p50/p99/max latency. The resident size of ``pgdata`` (``fincore``, when installed) is printed before and
   after the eviction and after the run.

Anything passed with ``--env NAME=VALUE`` is given to the server (``LEDGERMIRROR_...`` settings), so one data
folder can be measured with and without a setting, one run after the other.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench._driver import drive
from bench._scenarios import SCENARIOS, Sample, sample

WINDOWS = (0.0, 5.0, 15.0, 30.0)
"""Window edges in seconds from the load's start (the last window runs to the end of the load)."""
STOP_SECONDS = 60.0
READY_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class Window:
    start: float
    end: float
    requests: int
    refused_503: int
    """Answers 503, of any cause."""
    other_errors: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    causes: dict[str, int]
    """The 503s by the start of their body."""


def _percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def windows(events: list[tuple[float, float, int, bytes]], started: float, edges: list[float]) -> list[Window]:
    """The answers by the window their end fell in (seconds from ``started``); the last window is everything."""
    out = []
    spans = [*itertools.pairwise(edges), (0.0, float("inf"))]
    for start, end in spans:
        chosen = [event for event in events if start <= event[0] - started < end]
        latencies = [event[1] * 1000 for event in chosen]
        causes: dict[str, int] = {}
        for _, _, status, body in chosen:
            if status == 503:
                cause = body.decode("utf-8", "replace")[:100]
                causes[cause] = causes.get(cause, 0) + 1
        out.append(
            Window(
                start=start,
                end=end,
                requests=len(chosen),
                refused_503=sum(1 for event in chosen if event[2] == 503),
                other_errors=sum(1 for event in chosen if event[2] >= 400 and event[2] != 503),
                p50_ms=_percentile(latencies, 0.50),
                p99_ms=_percentile(latencies, 0.99),
                max_ms=max(latencies, default=float("nan")),
                causes=causes,
            )
        )
    return out


def table(rows: list[Window]) -> str:
    lines = [
        "| window (s) | requests | 503 | other errors | p50 ms | p99 ms | max ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        span = "all" if row.end == float("inf") else f"{row.start:g}-{row.end:g}"
        lines.append(
            f"| {span} | {row.requests} | {row.refused_503} | {row.other_errors} | {row.p50_ms:.1f} "
            f"| {row.p99_ms:.1f} | {row.max_ms:.1f} |"
        )
    return "\n".join(lines)


def resident_mb(folder: Path) -> float | None:
    """How much of ``folder``'s files is in the OS page cache (``fincore``), or None without it."""
    fincore = shutil.which("fincore")
    if fincore is None:
        return None
    files = [str(path) for path in folder.rglob("*") if path.is_file()]
    total = 0
    for start in range(0, len(files), 500):
        done = subprocess.run(
            [fincore, "--bytes", "--noheadings", "--raw", "--output", "RES", *files[start : start + 500]],
            capture_output=True,
            text=True,
            check=False,
        )
        total += sum(int(line) for line in done.stdout.split() if line.isdigit())
    return total / 2**20


def evict(folder: Path, how: str) -> None:
    """Drop ``folder``'s files from the OS page cache (``files``), or the whole cache (``system``)."""
    os.sync()
    if how == "system":
        try:
            Path("/proc/sys/vm/drop_caches").write_text("1\n")
        except OSError as error:
            message = f"--evict system: cannot write /proc/sys/vm/drop_caches ({error}); use --evict files"
            raise SystemExit(message) from error
        return
    if how != "files":
        return
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        except OSError:
            pass
        finally:
            os.close(fd)


BLKIO = Path("/sys/fs/cgroup/blkio")


class ReadLimit:
    """A cgroup (v1 ``blkio``) whose members may read at most ``iops`` times a second from the block device that
    holds ``folder``: a disk as slow as a cloud volume, for the server and its PostgreSQL only (they join it
    at their start). This machine's disk is a virtual one that the host's own cache serves, which a cold
    cache of ours hardly slows down."""

    def __init__(self, folder: Path, iops: int) -> None:
        device = os.stat(folder).st_dev
        self.path = BLKIO / f"ledgermirror-coldstart-{os.getpid()}"
        try:
            self.path.mkdir(exist_ok=True)
            (self.path / "blkio.throttle.read_iops_device").write_text(
                f"{os.major(device)}:{os.minor(device)} {iops}\n"
            )
        except OSError as error:
            raise SystemExit(f"--read-iops: cannot set up a blkio cgroup under {BLKIO} ({error})") from error

    def join(self) -> None:
        """Make the calling process a member (run in the server's process before it starts anything)."""
        (self.path / "cgroup.procs").write_text(f"{os.getpid()}\n")

    def remove(self) -> None:
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)  # members still leaving


class Server:
    """``ledgermirror serve`` on a data folder, as a child process."""

    def __init__(
        self, data_dir: Path, port: int, workers: int, env: dict[str, str], limit: ReadLimit | None = None
    ) -> None:
        self.limit = limit
        self.data_dir = data_dir
        self.port = port
        command = Path(sys.executable).parent / "ledgermirror"
        self.args = [str(command), "serve", "--port", str(port), "--workers", str(workers)]
        self.env = {
            **os.environ,
            "LEDGERMIRROR_DATA_DIR": str(data_dir),
            "LEDGERMIRROR_RESPONSE_CACHE_ENTRIES": "0",
            "LEDGERMIRROR_GRPC_PORT": "0",
            **env,
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.log = (data_dir / "coldstart-server.log").open("ab")
        """The server's log (stderr), beside the database folder."""

    def start(self) -> float:
        """Start it; the seconds until its port accepts connections."""
        started = time.monotonic()
        self.process = subprocess.Popen(
            self.args,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            preexec_fn=None if self.limit is None else self.limit.join,  # noqa: PLW1509 (no threads here)
        )
        while True:
            if self.process.poll() is not None:
                raise SystemExit(f"the server exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return time.monotonic() - started
            except OSError:
                if time.monotonic() - started > READY_SECONDS:
                    raise SystemExit("the server did not listen in time") from None
                time.sleep(0.02)

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None
        pid_file = self.data_dir / "pgdata" / "postmaster.pid"
        deadline = time.monotonic() + STOP_SECONDS
        while pid_file.exists() and time.monotonic() < deadline:  # the embedded PostgreSQL stops after it
            time.sleep(0.1)
        if pid_file.exists():
            raise SystemExit(f"PostgreSQL of {self.data_dir} is still running: {pid_file} is there")


async def _sample(base_url: str) -> Sample:
    return await sample(base_url)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/coldstart", description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", required=True, type=Path, help="an embedded database folder (bench/generate)")
    p.add_argument("--scenario", default="account-by-id-spread", choices=sorted(SCENARIOS))
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--port", type=int, default=5613)
    p.add_argument("--evict", choices=["files", "system", "none"], default="files")
    p.add_argument(
        "--read-iops",
        type=int,
        default=0,
        help="limit the server's and PostgreSQL's disk reads to this many a second (a blkio cgroup; root only), "
        "as a cloud volume would; 0: no limit",
    )
    p.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server (repeatable)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="also write the windows as JSON")
    args = p.parse_args(argv)
    env = dict(item.split("=", 1) for item in args.env)
    base_url = f"http://127.0.0.1:{args.port}"
    pgdata = args.data_dir / "pgdata"
    server = Server(args.data_dir, args.port, args.workers, env)
    try:
        server.start()
        data = asyncio.run(_sample(base_url))
    finally:
        server.stop()
    before = resident_mb(pgdata)
    evict(pgdata, args.evict)
    after = resident_mb(pgdata)
    limit = ReadLimit(pgdata, args.read_iops) if args.read_iops else None
    server = Server(args.data_dir, args.port, args.workers, env, limit)
    try:
        start_seconds = server.start()
        started = time.monotonic()
        stats = asyncio.run(
            drive(
                base_url,
                SCENARIOS[args.scenario](data, random.Random(args.seed)),
                seconds=args.seconds,
                connections=args.connections,
                timeline=True,
            )
        )
    finally:
        server.stop()
        if limit is not None:
            limit.remove()
    finished = resident_mb(pgdata)
    edges = [edge for edge in WINDOWS if edge < args.seconds] + [args.seconds]
    rows = windows(stats.timeline or [], started, edges)
    print(
        f"{args.scenario}, {args.connections} connections, {args.workers} workers, evict {args.evict}, "
        f"read IOPS {args.read_iops or 'unlimited'}, "
        f"env {env or '{}'}: server listening {start_seconds:.2f} s after its start; pgdata resident "
        f"{_mb(before)} before the eviction, {_mb(after)} after it, {_mb(finished)} after the run"
    )
    print(table(rows))
    for row in rows[-1:]:
        for cause, count in row.causes.items():
            print(f"  503 x{count}: {cause}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"start_seconds": start_seconds, "env": env, "windows": [asdict(row) for row in rows]},
                indent=1,
                default=str,
            )
        )
    return 0


def _mb(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f} MB"
