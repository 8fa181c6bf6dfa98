"""Running ``ledgermirror import`` (:mod:`.command` declares its arguments): options, signals and exit codes
around :func:`~.cutover.run_stream`."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import signal
import sys

import asyncpg

from ledgermirror.db import import_state
from ledgermirror.importer.block_node import open_block_node_source
from ledgermirror.importer.cutover import run_stream
from ledgermirror.importer.errors import ImporterError, StreamFileError
from ledgermirror.importer.options import DEFAULT_FILES_PER_TRANSACTION, ImportOptions, parse_date
from ledgermirror.importer.progress import Progress, progress_for
from ledgermirror.importer.sources import SourceError, open_store
from ledgermirror.metrics.importer import ImporterMetrics, MetricsProgress, serve

EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_SOURCE = 4
EXIT_PORT = 5


def options_of(args: argparse.Namespace, *, synthetic_log_evm_lookup: bool = True) -> ImportOptions:
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
        synthetic_log_evm_lookup=synthetic_log_evm_lookup,
    )


def run(args: argparse.Namespace, owner_url: str, *, synthetic_log_evm_lookup: bool = True) -> int:
    if args.status:
        return asyncio.run(_status(owner_url))
    if not args.source:
        print("ledgermirror: import needs --source (or --status)", file=sys.stderr)
        return EXIT_USAGE
    try:
        options = options_of(args, synthetic_log_evm_lookup=synthetic_log_evm_lookup)
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
        return asyncio.run(_run(owner_url, args.source, args.stream, options, progress))
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


async def _run(owner_url: str, source: str, stream: str, options: ImportOptions, progress: Progress) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    conn = await asyncpg.connect(owner_url)
    try:
        await run_stream(conn, source, options, stream, stop=stop, progress=progress)
    except ImporterError as error:
        print(f"ledgermirror: {error}", file=sys.stderr)
        return EXIT_USAGE
    except SourceError as error:
        print(f"ledgermirror: {error}", file=sys.stderr)
        return EXIT_SOURCE
    except StreamFileError as error:
        print(f"ledgermirror: refused: {error}", file=sys.stderr)
        return EXIT_REFUSED
    finally:
        await conn.close()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    return 0
