"""``bench/scaling``: the figures of docs/scaling.md, in one bounded run on 127.0.0.1.

1. **Throughput.** A PostgreSQL primary and its streaming standby (``tests/replication.py``: the ``pgserver``
   wheel's binaries, ``pg_basebackup -R``, fsync off), the ``small`` data set (seed 1) loaded into the primary and
   replayed by the standby. Then, for each setup, ``ledgermirror serve`` processes of one worker each, no
   response cache (every request a query) and no gRPC, loaded by ``bench/run`` (one driver process per API
   process, all at once): one API process over the primary, two over the primary, one over the standby, two over
   the standby. Each driver reports requests/s, p99 and the API's and PostgreSQL's CPU per request.
2. **Replica lag under import.** A new pair; a simulated stream (``ledgermirror simulate``) imported into the
   primary (``ledgermirror import --once``) while ``pg_stat_replication`` is sampled every 200 ms: the replay lag
   (median, 90th percentile, maximum), the WAL sent and not yet replayed, the import's rate and the database's
   growth per transaction.

Everything listens on 127.0.0.1 only and stops at the end (or on an error); ``--max-minutes`` bounds the whole
run. The machine's load average is printed at the start and the end: the figures share the cores with it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
from tests.replication import Server, primary_and_standby, remove
from tests.status.live import free_port

from ledgermirror import dataset
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings
from ledgermirror.simulator.run import simulate

BENCH = Path(__file__).resolve().parent
SCENARIOS = ("account-by-id", "tokens-list", "transactions-first-page")
API_ROLE = "mirror_api"
HOST = "127.0.0.1"


@dataclass
class Setup:
    name: str
    processes: int
    database: str
    """``primary`` or ``standby``."""
    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Per scenario, each process's ``bench/run`` result."""


@dataclass
class Lag:
    transactions: int
    record_files: int
    import_seconds: float
    samples: int
    median_s: float
    p90_s: float
    max_s: float
    max_unreplayed_bytes: int
    growth_bytes: int

    @property
    def bytes_per_transaction(self) -> float:
        return self.growth_bytes / max(self.transactions, 1)


def _run_sql(url: str, text: str) -> Any:
    async def go() -> Any:
        conn = await asyncpg.connect(url)
        try:
            return await conn.fetchval(text)
        finally:
            await conn.close()

    return asyncio.run(go())


def _wait_caught_up(primary: Server, standby: Server, seconds: float = 120.0) -> None:
    wanted = _run_sql(primary.url, "select pg_current_wal_insert_lsn()::text")
    deadline = time.monotonic() + seconds
    while not _run_sql(standby.url, f"select pg_last_wal_replay_lsn() >= '{wanted}'::pg_lsn"):
        if time.monotonic() > deadline:
            raise SystemExit("the standby did not catch up")
        time.sleep(0.2)


def _load(primary: Server) -> dict[str, int]:
    prepare(Settings(db_url=primary.url), run_migrations=True)

    async def go() -> dict[str, int]:
        conn = await asyncpg.connect(primary.url)
        try:
            return await dataset.load(conn, "small", seed=1)
        finally:
            await conn.close()

    return asyncio.run(go())


@contextlib.contextmanager
def _serving(primary: Server, reader: Server, count: int) -> Iterator[list[tuple[str, int]]]:
    """``count`` ``serve`` processes reading ``reader`` (as the API's role): their base URLs and process ids."""
    env = {
        **os.environ,
        "LEDGERMIRROR_DB_URL": primary.url,
        "LEDGERMIRROR_API_DB_URL": reader.url_as(API_ROLE),
        "LEDGERMIRROR_RESPONSE_CACHE_ENTRIES": "0",
        "LEDGERMIRROR_LOG_LEVEL": "WARNING",
    }
    processes: list[tuple[str, subprocess.Popen[bytes]]] = []
    try:
        for _ in range(count):
            port = free_port()
            command = [sys.executable, "-m", "ledgermirror", "serve", "--host", HOST, "--port", str(port)]
            process = subprocess.Popen([*command, "--grpc-port", "0"], env=env, stdout=subprocess.DEVNULL)
            processes.append((f"http://{HOST}:{port}", process))
        for base, process in processes:
            _wait_ready(base, process)
        yield [(base, process.pid) for base, process in processes]
    finally:
        for _, process in processes:
            process.send_signal(signal.SIGINT)
        for _, process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(base: str, process: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"serve on {base} exited with {process.returncode}")
        with (
            contextlib.suppress(urllib.error.URLError, OSError),
            urllib.request.urlopen(base + "/health/readiness", timeout=2) as answer,
        ):
            if answer.status == 200:
                return
        time.sleep(0.2)
    raise SystemExit(f"serve on {base} did not become ready")


def _drive(servers: list[tuple[str, int]], args: argparse.Namespace, folder: Path, pg_data: Path) -> list[Any]:
    """One ``bench/run`` per server, all at once; each one's JSON results."""
    runs = []
    for number, (base, pid) in enumerate(servers):
        out = folder / f"run-{number}.json"
        command = [
            sys.executable,
            str(BENCH / "run"),
            "--url",
            base,
            "--api-pid",
            str(pid),
            "--pg-data",
            str(pg_data),
            "--seconds",
            str(args.seconds),
            "--connections",
            str(args.connections),
            "--json",
            str(out),
        ]
        for name in args.scenario or SCENARIOS:
            command += ["--scenario", name]
        runs.append((out, subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
    results = []
    for out, process in runs:
        if process.wait(timeout=args.seconds * 4 * len(args.scenario or SCENARIOS) + 120) != 0:
            raise SystemExit(f"bench/run failed ({process.returncode})")
        results.append(json.loads(out.read_text()))
    return results


def throughput(args: argparse.Namespace, folder: Path) -> list[Setup]:
    primary, standby = primary_and_standby(folder / "clusters")
    try:
        loaded = _load(primary)
        _wait_caught_up(primary, standby)
        print(f"loaded {sum(loaded.values()):,} rows (small, seed 1); the standby replayed them", file=sys.stderr)
        setups = [
            Setup("1 API process over the primary", 1, "primary"),
            Setup("2 API processes over the primary, loaded at once", 2, "primary"),
            Setup("1 API process over the standby", 1, "standby"),
            Setup("2 API processes over the standby, loaded at once", 2, "standby"),
        ]
        for setup in setups:
            reader = primary if setup.database == "primary" else standby
            with _serving(primary, reader, setup.processes) as servers:
                runs = _drive(servers, args, folder, reader.pgdata)
            for run in runs:
                for result in run:
                    setup.results.setdefault(result["scenario"], []).append(result)
            print(f"{setup.name}: done", file=sys.stderr)
        return setups
    finally:
        remove(primary, standby)


_REPLICATION = """select extract(epoch from replay_lag)::float8 as lag,
       pg_wal_lsn_diff(sent_lsn, replay_lsn)::bigint as unreplayed
from pg_stat_replication"""


def lag_under_import(args: argparse.Namespace, folder: Path) -> Lag:
    stream = folder / "stream"
    simulate(stream, nodes=2, seconds=args.lag_seconds, tps=args.tps, seed=2)
    primary, standby = primary_and_standby(folder / "lag-clusters")
    try:
        prepare(Settings(db_url=primary.url), run_migrations=True)
        _wait_caught_up(primary, standby)
        size_before = _run_sql(primary.url, "select pg_database_size(current_database())")
        command = [
            sys.executable,
            "-m",
            "ledgermirror",
            "import",
            "--source",
            str(stream),
            "--address-book",
            str(stream / "addressbook.bin"),
            "--initial-balances",
            str(stream / "initial-balances.pb.gz"),
            "--once",
            "--files-per-transaction",
            "5",
        ]
        env = {**os.environ, "LEDGERMIRROR_DB_URL": primary.url, "LEDGERMIRROR_LOG_LEVEL": "WARNING"}
        samples = asyncio.run(_sample_while(command, env, primary.url, args.max_minutes * 60))
        seconds, lags, unreplayed = samples
        _wait_caught_up(primary, standby)
        transactions = _run_sql(primary.url, "select count(*) from transaction")
        files = _run_sql(primary.url, "select count(*) from record_file")
        growth = _run_sql(primary.url, "select pg_database_size(current_database())") - size_before
        ordered = sorted(lags) or [0.0]
        return Lag(
            transactions=transactions,
            record_files=files,
            import_seconds=seconds,
            samples=len(lags),
            median_s=statistics.median(ordered),
            p90_s=ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))],
            max_s=ordered[-1],
            max_unreplayed_bytes=max(unreplayed, default=0),
            growth_bytes=growth,
        )
    finally:
        remove(primary, standby)


async def _sample_while(
    command: list[str], env: dict[str, str], url: str, limit: float
) -> tuple[float, list[float], list[int]]:
    """Run the import; sample ``pg_stat_replication`` every 200 ms until it exits. Its seconds and the samples."""
    conn = await asyncpg.connect(url)
    lags: list[float] = []
    unreplayed: list[int] = []
    try:
        started = time.monotonic()
        process = await asyncio.create_subprocess_exec(*command, env=env, stdout=asyncio.subprocess.DEVNULL)
        try:
            while process.returncode is None:
                if time.monotonic() - started > limit:
                    raise SystemExit("the import took longer than --max-minutes")
                for row in await conn.fetch(_REPLICATION):
                    if row["lag"] is not None:
                        lags.append(row["lag"])
                    if row["unreplayed"] is not None:
                        unreplayed.append(row["unreplayed"])
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), timeout=0.2)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        if process.returncode != 0:
            raise SystemExit(f"the import failed ({process.returncode})")
        return time.monotonic() - started, lags, unreplayed
    finally:
        await conn.close()


def report(setups: list[Setup], lag: Lag | None, load: tuple[str, str]) -> str:
    scenarios = [name for name in SCENARIOS if any(name in setup.results for setup in setups)] or sorted(
        {name for setup in setups for name in setup.results}
    )
    lines = [f"machine load average (1, 5, 15 min): at the start {load[0]}, at the end {load[1]}", ""]
    if setups:
        header = "| setup | " + " | ".join(
            f"{name} req/s (p99 ms; API, PostgreSQL CPU ms/req)" for name in scenarios
        )
        lines += [header + " | errors |", "|---" * (len(scenarios) + 2) + "|"]
        for setup in setups:
            cells = []
            errors = 0
            for name in scenarios:
                runs = setup.results.get(name, [])
                rps = sum(run["rps"] for run in runs)
                p99 = ", ".join(f"{run['p99_ms']:.0f}" for run in runs)
                requests = max(sum(run["requests"] for run in runs), 1)
                api = sum(run["api_cpu_ms_per_request"] * run["requests"] for run in runs) / requests
                # each driver counted all of PostgreSQL's CPU in the same window: one of them is the total
                database = statistics.mean(run["pg_cpu_ms_per_request"] * run["requests"] for run in runs)
                database /= requests
                errors += sum(run["errors"] for run in runs)
                cells.append(f"{rps:,.0f} ({p99}; {api:.2f}, {database:.2f})")
            lines.append(f"| {setup.name} | " + " | ".join(cells) + f" | {errors} |")
    if lag is not None:
        lines += [
            "",
            f"replica lag under import: {lag.transactions:,} transactions in {lag.record_files} record files "
            f"imported in {lag.import_seconds:.1f} s ({lag.transactions / lag.import_seconds:,.0f} tx/s); "
            f"{lag.samples} samples of pg_stat_replication: replay lag median {lag.median_s:.2f} s, "
            f"90th percentile {lag.p90_s:.2f} s, maximum {lag.max_s:.2f} s; at most "
            f"{lag.max_unreplayed_bytes / 1e6:.2f} MB of WAL sent and not yet replayed; the database grew by "
            f"{lag.growth_bytes / 1e6:.1f} MB, {lag.bytes_per_transaction:,.0f} bytes per transaction",
        ]
    return "\n".join(lines)


def _out_of_time(signum: int, frame: object) -> None:
    raise SystemExit("--max-minutes reached")


def _load_average() -> str:
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/scaling", description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=8.0, help="measured seconds per scenario (after 2 s warm-up)")
    p.add_argument("--connections", type=int, default=32, help="connections per bench/run driver")
    p.add_argument("--scenario", action="append", help=f"bench/run scenario (repeatable; default {SCENARIOS})")
    p.add_argument("--lag-seconds", type=int, default=60, help="simulated seconds of stream to import")
    p.add_argument("--tps", type=int, default=150, help="simulated transactions per second")
    p.add_argument("--skip-throughput", action="store_true")
    p.add_argument("--skip-lag", action="store_true")
    p.add_argument("--max-minutes", type=float, default=20.0, help="the whole run's bound")
    p.add_argument("--json", help="also write the results as JSON")
    p.add_argument("--report", metavar="JSON", help="only print the report of an earlier run's --json file")
    args = p.parse_args(argv)
    if args.report:
        saved = json.loads(Path(args.report).read_text())
        setups = [Setup(**setup) for setup in saved["setups"]]
        lag_fields = {key: value for key, value in (saved["lag"] or {}).items() if key != "bytes_per_transaction"}
        print(report(setups, Lag(**lag_fields) if lag_fields else None, (saved["load"][0], saved["load"][1])))
        return 0
    signal.signal(signal.SIGALRM, _out_of_time)
    signal.alarm(int(args.max_minutes * 60))
    folder = Path(tempfile.mkdtemp(prefix="lm-scaling-"))
    started_load = _load_average()
    try:
        setups = [] if args.skip_throughput else throughput(args, folder)
        lag = None if args.skip_lag else lag_under_import(args, folder)
    finally:
        signal.alarm(0)
        shutil.rmtree(folder, ignore_errors=True)
    print(report(setups, lag, (started_load, _load_average())))
    if args.json:
        body = {
            "load": [started_load, _load_average()],
            "setups": [asdict(setup) for setup in setups],
            "lag": None if lag is None else asdict(lag) | {"bytes_per_transaction": lag.bytes_per_transaction},
        }
        Path(args.json).write_text(json.dumps(body, indent=1) + "\n")
    return 0
