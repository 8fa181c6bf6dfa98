"""``ledgermirror import``: options, signals and exit codes around :func:`~.pipeline.run_import`."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ledgermirror.importer.pipeline import ImportOptions
    from ledgermirror.importer.progress import Progress

EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_SOURCE = 4
EXIT_PORT = 5


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = commands.add_parser(
        "import",
        help="import verified record streams and block streams from a folder, a bucket or block nodes",
        description="Import record stream files (verified before anything is written) from a local folder in "
        "the network's bucket layout (recordstreams/record0.0.N/ or <network>/<shard>/<node>/record/) or from "
        "s3://bucket/prefix or gs://bucket/prefix (credentials from the usual AWS_* / GOOGLE_* variables; "
        "requester-pays), into the database `ledgermirror db url` names. Without --once it follows the "
        "stream until interrupted.",
    )
    command.add_argument(
        "--source",
        default=None,
        help="folder, s3://bucket/prefix, gs://bucket/prefix, or grpc://host:port[,grpc://...] block nodes",
    )
    command.add_argument(
        "--stream",
        choices=("records", "blocks", "auto"),
        default="auto",
        help="records, blocks (HIP-1056 block files or block nodes), or auto (default): records, then blocks "
        "from the block after the last record file",
    )
    command.add_argument(
        "--require-verified-proofs",
        action="store_true",
        help="blocks: refuse a block whose proof cannot be verified here (TSS) instead of accepting it as "
        "chain-verified only",
    )
    command.add_argument(
        "--status", action="store_true", help="print the import status (last block, how it was verified) and exit"
    )
    command.add_argument(
        "--address-book",
        type=Path,
        default=None,
        metavar="FILE",
        help="a NodeAddressBook protobuf file (e.g. 0.0.102) to bootstrap the node set of an empty database",
    )
    command.add_argument(
        "--initial-balances",
        type=Path,
        default=None,
        metavar="FILE",
        help="an AllAccountBalances snapshot (*_Balances.pb[.gz]) giving an empty database its genesis balances",
    )
    command.add_argument("--once", action="store_true", help="import what is there, then exit")
    command.add_argument(
        "--network",
        default=None,
        metavar="NAME",
        help="the ledger's network: mainnet applies mainnet's errata (its missing transactions, balance file "
        "offsets), another name never; default: when the address book is mainnet's",
    )
    command.add_argument(
        "--start-date",
        default=None,
        metavar="DATE",
        help="empty database: start at the first file at or after DATE (YYYY-MM-DD[THH:MM:SS[.f]]Z, UTC); "
        "default: a folder from its first file, a bucket from its newest",
    )
    command.add_argument("--end-date", default=None, metavar="DATE", help="stop after the last file before DATE")
    command.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        metavar="PORT",
        help="serve Prometheus metrics on this port while importing (docs/metrics.md)",
    )
    command.add_argument(
        "--metrics-host", default="127.0.0.1", metavar="HOST", help="address of the metrics server (127.0.0.1)"
    )
    command.add_argument(
        "--files-per-transaction",
        type=int,
        default=None,
        metavar="N",
        help="files per database transaction while catching up (default 50)",
    )


def options_of(args: argparse.Namespace) -> ImportOptions:
    from ledgermirror.importer.pipeline import (
        DEFAULT_FILES_PER_TRANSACTION,
        ImporterError,
        ImportOptions,
        parse_date,
    )

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
    )


def run(args: argparse.Namespace, owner_url: str) -> int:
    from ledgermirror.importer.pipeline import ImporterError
    from ledgermirror.importer.progress import progress_for
    from ledgermirror.importer.sources import SourceError, open_store

    if args.status:
        return asyncio.run(_status(owner_url))
    if not args.source:
        print("ledgermirror: import needs --source (or --status)", file=sys.stderr)
        return EXIT_USAGE
    try:
        options = options_of(args)
        if args.source.startswith("grpc://"):
            from ledgermirror.importer.block_node import open_block_node_source

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
        from ledgermirror.metrics.importer import ImporterMetrics, MetricsProgress, serve

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
    import dataclasses
    import json

    import asyncpg

    from ledgermirror.db import import_state

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
    import asyncpg

    from ledgermirror.importer.cutover import run_stream
    from ledgermirror.importer.errors import StreamFileError
    from ledgermirror.importer.pipeline import ImporterError
    from ledgermirror.importer.sources import SourceError

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
