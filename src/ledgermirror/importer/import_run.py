"""Running ``ledgermirror import`` (:mod:`.command` declares its arguments): options, signals and exit codes
around :func:`~.cutover.run_stream`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import signal
import sys
from collections.abc import Callable

import asyncpg

from ledgermirror.db import import_state
from ledgermirror.db.errors import CONNECTION_FAILURES
from ledgermirror.importer.balance_snapshots import SnapshotRules
from ledgermirror.importer.block_node import open_block_node_source
from ledgermirror.importer.cutover import run_stream
from ledgermirror.importer.errors import ImporterError, StreamFileError
from ledgermirror.importer.options import DEFAULT_FILES_PER_TRANSACTION, ImportOptions, parse_date
from ledgermirror.importer.outage import DISK_FULL, DatabaseFault, database_fault, next_wait
from ledgermirror.importer.progress import Progress, progress_for
from ledgermirror.importer.sources import SourceError, StoreRequests, open_store
from ledgermirror.metrics.importer import ImporterMetrics, MetricsProgress, serve
from ledgermirror.settings import Settings

EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_DATABASE = 3
EXIT_SOURCE = 4
EXIT_PORT = 5

_log = logging.getLogger("ledgermirror.importer")

Restart = Callable[[], None]
"""Starts the embedded server again if it is gone (the command's own server); raises ``RuntimeError`` when it
cannot."""


def snapshot_rules(settings: Settings) -> SnapshotRules | None:
    """The balance snapshot settings (``LEDGERMIRROR_IMPORT_BALANCE_SNAPSHOT_*``); None when disabled."""
    if not settings.import_balance_snapshot_enabled:
        return None
    return SnapshotRules(
        min_frequency_ns=settings.import_balance_snapshot_min_frequency_seconds * 1_000_000_000,
        initial_delay_ns=settings.import_balance_snapshot_initial_delay_seconds * 1_000_000_000,
        token_balances=settings.import_balance_snapshot_token_balances,
        shard=settings.shard,
        realm=settings.realm,
    )


def options_of(args: argparse.Namespace, settings: Settings | None = None) -> ImportOptions:
    try:
        start = parse_date(args.start_date) if args.start_date else None
        end = parse_date(args.end_date) if args.end_date else None
    except ValueError as error:
        raise ImporterError(f"bad date: {error}") from error
    for given, what in ((args.address_book, "address book"), (args.initial_balances, "balance snapshot")):
        if given is not None and not given.is_file():
            raise ImporterError(f"no {what} file at {given}")
    return ImportOptions(
        once=args.once,
        start=start,
        end=end,
        address_book=args.address_book,
        initial_balances=args.initial_balances,
        files_per_transaction=max(1, args.files_per_transaction or DEFAULT_FILES_PER_TRANSACTION),
        require_verified_proofs=args.require_verified_proofs,
        network=args.network,
        synthetic_log_evm_lookup=settings.import_synthetic_log_evm_lookup if settings is not None else True,
        balance_snapshots=snapshot_rules(settings or Settings()),
        balance_files=bool(getattr(args, "balance_files", False))
        or (settings is not None and settings.import_balance_files),
        overlap=(settings or Settings()).import_overlap,
    )


def run(
    args: argparse.Namespace, owner_url: str, settings: Settings | None = None, restart: Restart | None = None
) -> int:
    """Run the command on the database of ``owner_url``; ``restart`` brings the embedded server back after an
    outage (None for a configured database: its operator restarts it)."""
    if args.status:
        try:
            return asyncio.run(_status(owner_url))
        except CONNECTION_FAILURES as error:
            print(f"ledgermirror: the database is unavailable ({error})", file=sys.stderr)
            return EXIT_DATABASE
    if not args.source:
        print("ledgermirror: import needs --source (or --status)", file=sys.stderr)
        return EXIT_USAGE
    try:
        options = options_of(args, settings)
        if options.balance_files and (args.stream == "blocks" or args.source.startswith("grpc://")):
            raise ImporterError(
                "--balance-files starts a record stream import (balance files lie beside record files)"
            )
        if args.source.startswith("grpc://"):
            open_block_node_source(args.source)  # a bad block node address too
        else:
            open_store(args.source)  # a bad folder or URL is a usage error before connecting
    except (ImporterError, SourceError) as error:
        print(f"ledgermirror: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.metrics_port is not None and not 0 < args.metrics_port < 65536:
        print("ledgermirror: --metrics-port must be between 1 and 65535", file=sys.stderr)
        return EXIT_USAGE
    progress = progress_for(sys.stderr)
    stop_metrics = None
    metrics: ImporterMetrics | None = None
    if args.metrics_port is not None:
        metrics = ImporterMetrics()
        try:
            stop_metrics = serve(metrics, args.metrics_host, args.metrics_port)
        except OSError as error:
            print(
                f"ledgermirror: cannot serve metrics on {args.metrics_host}:{args.metrics_port}: {error}",
                file=sys.stderr,
            )
            return EXIT_PORT
        progress = MetricsProgress(progress, metrics)
    try:
        attempt = _Attempts(owner_url, args.source, args.stream, options, progress, metrics, restart)
        return asyncio.run(attempt.run())
    finally:
        if stop_metrics is not None:
            stop_metrics()


async def _status(owner_url: str) -> int:
    conn = await asyncpg.connect(owner_url)
    try:
        status = await import_state.import_status(conn)
        last = await import_state.last_record_file(conn)
    finally:
        await conn.close()
    shown: dict[str, object] = dataclasses.asdict(status) if status is not None else {"stream": "records"}
    if last is not None:
        shown["last_record_file"] = {"name": last.name, "index": last.index, "version": last.version}
    if status is not None and status.chain_only:
        shown["note"] = (
            f"{status.chain_only} blocks accepted as chain-verified only (their TSS / state proofs cannot be "
            "verified here)"
        )
    print(json.dumps(shown, indent=2))
    return 0


class _Attempts:
    """The import, attempted again after each fault of the database (:mod:`.outage`) while following."""

    def __init__(  # noqa: PLR0917 (the command's parts, each named where it is made)
        self,
        owner_url: str,
        source: str,
        stream: str,
        options: ImportOptions,
        progress: Progress,
        metrics: ImporterMetrics | None,
        restart: Restart | None,
    ) -> None:
        self.owner_url = owner_url
        self.source = source
        self.stream = stream
        self.options = options
        self.progress = progress
        self.metrics = metrics
        self.restart = restart
        self.stop = asyncio.Event()
        self.requests = StoreRequests()
        """The source's requests, over every attempt."""
        if metrics is not None:
            metrics.watch_store(self.requests)

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, self.stop.set)
        try:
            return await self._attempts()
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)

    async def _attempts(self) -> int:
        wait = self.options.poll_seconds
        while True:
            fault = await self._attempt()
            if isinstance(fault, int):
                return fault
            if self.options.once:
                print(f"ledgermirror: {fault.message}", file=sys.stderr)
                return EXIT_DATABASE
            _log.error("%s; trying again in %.0f s", fault.message, wait, extra={"cause": fault.cause})
            if self.metrics is not None:
                self.metrics.database_fault(fault.cause, fault.message)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), wait)
            if self.metrics is not None:
                self.metrics.database_fault(None)
            if self.stop.is_set():
                return 0
            wait = next_wait(wait, self.options.max_poll_seconds)
            if self.restart is not None and fault.cause != DISK_FULL:
                await self._restart()

    async def _restart(self) -> None:
        assert self.restart is not None
        try:
            await asyncio.to_thread(self.restart)
        except RuntimeError as error:
            _log.error("the embedded PostgreSQL did not start again: %s", error)

    async def _attempt(self) -> int | DatabaseFault:
        """One connection's import: the exit status, or the database's fault that ended it."""
        try:
            conn = await asyncpg.connect(self.owner_url, timeout=10)
        except CONNECTION_FAILURES as error:
            fault = database_fault(error, connection_lost=True)
            assert fault is not None
            return fault
        try:
            await run_stream(
                conn,
                self.source,
                self.options,
                self.stream,
                stop=self.stop,
                progress=self.progress,
                requests=self.requests,
            )
        except ImporterError as error:
            print(f"ledgermirror: {error}", file=sys.stderr)
            return EXIT_USAGE
        except SourceError as error:
            print(f"ledgermirror: {error}", file=sys.stderr)
            return EXIT_SOURCE
        except StreamFileError as error:
            print(f"ledgermirror: refused: {error}", file=sys.stderr)
            return EXIT_REFUSED
        except Exception as error:
            fault = database_fault(error, connection_lost=conn.is_closed())
            if fault is None:
                raise
            return fault
        finally:
            await _close(conn)
        return 0


async def _close(conn: asyncpg.Connection) -> None:
    """Close ``conn`` politely when it still works, else drop it."""
    try:
        if not conn.is_closed():
            await conn.close(timeout=5)
    except Exception as error:
        if not isinstance(error, (*CONNECTION_FAILURES, asyncpg.PostgresError)):
            raise
        conn.terminate()
