"""The ``ledgermirror`` command: serve, demo, import, db migrate, db url (and the tools later issues add)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import errno
import getpass
import logging
import os
import socket
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import asyncpg

from ledgermirror import __version__, log
from ledgermirror.blocknode import command as blocknode_command
from ledgermirror.db.embedded import mask_password
from ledgermirror.grpc_api import server as grpc_api_server
from ledgermirror.importer import command as import_command
from ledgermirror.runtime import (
    DatabaseUnreachable,
    Prepared,
    check_reachable,
    exit_cleanly_on_sigterm,
    prepare,
)
from ledgermirror.settings import Settings, SettingsError
from ledgermirror.status import cli as status_cli
from ledgermirror.users import hash_password

EXIT_USAGE = 2
EXIT_DATABASE = 3
EXIT_CANNOT_LISTEN = 5
"""``serve``/``demo``: the address is taken (another server on the port) or cannot be listened on."""

_log = logging.getLogger("ledgermirror")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ledgermirror",
        description="A fast, honest mirror for Hiero/Hedera-style ledgers. Settings come from LEDGERMIRROR_* "
        "environment variables (see the README); with no LEDGERMIRROR_DB_URL an embedded PostgreSQL is used.",
    )
    parser.add_argument("--version", action="version", version=f"ledgermirror {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the REST API", description="Run the REST API (/api/v1).")
    _server_options(serve)
    serve.add_argument("--workers", type=_positive, default=None, help="worker processes (default 1)")

    demo = commands.add_parser(
        "demo",
        help="embedded database + demo data + the REST API",
        description="Start an embedded PostgreSQL in its own demo folder, load a small synthetic ledger "
        "once, and serve the REST API on it.",
    )
    _server_options(demo)
    demo.add_argument("--workers", type=_positive, default=None, help="worker processes (default 1)")

    db = commands.add_parser("db", help="database tools", description="Database tools.")
    db_commands = db.add_subparsers(dest="db_command", required=True, metavar="DB_COMMAND")
    db_commands.add_parser("migrate", help="apply the schema migrations", description="Apply migrations.")
    db_commands.add_parser(
        "url",
        help="print the connection URL in use (password masked)",
        description=(
            "Print the owner connection URL in use, password masked. For the embedded server this starts it."
        ),
    )
    conformance = commands.add_parser(
        "conformance",
        help="run the reference's JSON spec tests against our API",
        description="Run the reference mirror node's JSON spec tests through the in-process API on a "
        "throwaway embedded database, and compare status, body and headers of every URL check.",
    )
    conformance.add_argument("--specs", type=Path, required=True, help="the specs folder")
    conformance.add_argument(
        "--only",
        nargs="+",
        default=[],
        metavar="GLOB",
        help="only spec files whose path (relative to --specs) matches a glob",
    )
    conformance.add_argument("--json", type=Path, default=None, metavar="FILE", help="write a JSON report")
    conformance.add_argument(
        "--expected",
        type=Path,
        default=None,
        metavar="FILE",
        help="the expected-failures list (default: the bundled one)",
    )
    conformance.add_argument(
        "--update-expected",
        action="store_true",
        help="rewrite the expected-failures list to the current failures (keeps reasons)",
    )
    conformance.add_argument(
        "--reason", default="endpoint not built yet", help="reason for new entries written by --update-expected"
    )
    conformance.add_argument(
        "--reference-pagination",
        action="store_true",
        help="use the reference's rule that a full page always has a next link",
    )
    conformance.add_argument("--verbose", action="store_true", help="show the diffs of expected failures too")
    simulate = commands.add_parser(
        "simulate",
        help="write a simulated network's signed record streams and truth.json",
        description="Write a deterministic simulated network: node keys, an initial address book, signed "
        "record files (v6 with sidecars by default; v5, v2 or a mix) every 2 s in the recordstreams/record0.0.N/ "
        "layout, and truth.json.",
    )
    simulate.add_argument("--out", type=Path, required=True, help="the output folder")
    simulate.add_argument("--nodes", type=_positive, default=4, help="consensus nodes (default 4)")
    simulate.add_argument("--seconds", type=_positive, default=60, help="simulated seconds (default 60)")
    simulate.add_argument("--tps", type=_positive, default=100, help="transactions per second (default 100)")
    simulate.add_argument("--seed", type=int, default=0, help="the seed: same seed, same bytes (default 0)")
    simulate.add_argument(
        "--layout",
        choices=("account", "node-id"),
        default="account",
        help="node folders: recordstreams/record0.0.N/ (account, default) or HIP-679 simulated/0/<node>/record/",
    )
    simulate.add_argument(
        "--format",
        choices=("records", "blocks", "cutover", "native"),
        default="records",
        help="record files (default), wrapped record blocks under block/ (HIP-1056, signed record file proofs), "
        "cutover: the first half as record files, the rest as blocks; or native: HIP-1056 native blocks with a "
        "placeholder TSS proof (imported as chain-verified only)",
    )
    simulate.add_argument(
        "--record-version",
        choices=("6", "5", "2", "mixed"),
        default="6",
        help="record file version: 6 (default), 5, 2, or mixed (the first third v2, then v5, then v6); "
        "other than 6 only with --format records",
    )
    commands.add_parser(
        "hash-password",
        help="hash an API user's password for LEDGERMIRROR_USERS",
        description="Read a password (prompted on a terminal, else the first line of stdin) and print its "
        "PBKDF2-SHA256 hash, the password_hash of an entry of LEDGERMIRROR_USERS or LEDGERMIRROR_USERS_FILE.",
    )
    status_cli.register(commands)
    import_command.register(commands)
    blocknode_command.register(commands)
    return parser


def _server_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    command.add_argument("--port", type=_port, default=None, help="port to listen on (default 5551)")
    command.add_argument(
        "--grpc-port",
        type=_grpc_port,
        default=None,
        help="gRPC API port (default 5600; 0: off)",
    )


def _positive(text: str) -> int:
    value = int(text) if text.isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _port(text: str) -> int:
    value = int(text) if text.isdigit() else -1
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError(f"expected a port number 1-65535, got {text!r}")
    return value


def _grpc_port(text: str) -> int:
    return 0 if text == "0" else _port(text)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
    except SettingsError as error:
        print(f"ledgermirror: {error}", file=sys.stderr)
        return EXIT_USAGE
    log_format = log.configure(settings.log_level, settings.log_format)
    settings = dataclasses.replace(
        settings,
        host=args.host if getattr(args, "host", None) else settings.host,
        port=args.port if getattr(args, "port", None) else settings.port,
        workers=args.workers if getattr(args, "workers", None) else settings.workers,
        grpc_port=settings.grpc_port if getattr(args, "grpc_port", None) is None else args.grpc_port,
    )
    try:
        if args.command == "db":
            return _db(args.db_command, settings)
        if args.command in ("serve", "demo"):
            problem = listen_problem(settings.host, settings.port)
            if problem is None and settings.grpc_port:
                problem = listen_problem(settings.host, settings.grpc_port, "--grpc-port")
            if problem is not None:
                print(f"ledgermirror: {problem}", file=sys.stderr)
                return EXIT_CANNOT_LISTEN
        if args.command == "demo":
            return _demo(settings, log_format)
        if args.command == "conformance":
            return _conformance(args)
        if args.command == "status":
            return status_cli.run(args, settings)
        if args.command == "import":
            return _import(args, settings)
        if args.command in _ARGUMENTS_ONLY:
            return _ARGUMENTS_ONLY[args.command](args)
        return _serve(settings, log_format)
    except DatabaseUnreachable as error:
        print(f"ledgermirror: {error}", file=sys.stderr)
        return EXIT_DATABASE


def _hash_password(args: argparse.Namespace) -> int:
    password = getpass.getpass("password: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\r\n")
    if not password:
        print("ledgermirror: an empty password", file=sys.stderr)
        return EXIT_USAGE
    print(hash_password(password))
    return 0


def _db(command: str, settings: Settings) -> int:
    prepared = prepare(settings, run_migrations=command == "migrate")
    try:
        if command == "url":
            print(mask_password(prepared.owner_url))
        else:
            print("migrations applied")
    finally:
        prepared.stop()
    return 0


def _import(args: argparse.Namespace, settings: Settings) -> int:
    prepared = prepare(settings)
    try:
        return import_command.run(args, prepared.owner_url)
    finally:
        prepared.stop()


def listen_problem(host: str, port: int, option: str = "--port") -> str | None:
    """Why a server could not listen on ``host:port`` (bound and released at once, as uvicorn will bind it), or
    None. Checked before anything else starts, so a second server on a busy port says so and stops."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as error:
        return f"cannot listen on {host}:{port}: {error.strerror}"
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return (
                    f"port {port} on {host} is already in use (is another ledgermirror serve or demo running?); "
                    f"stop it or choose another port with {option}"
                )
            return f"cannot listen on {host}:{port}: {error.strerror}"
    return None


def announce(what: str, url: str, log_format: str) -> None:
    """Where the server will answer: for people, the URL alone on its own line; for machines, one log record."""
    if log_format == "text":
        print(f"{what} (Ctrl+C stops it):\n{url}", file=sys.stderr, flush=True)
    else:
        _log.info(what, extra={"url": url})


def _serve(settings: Settings, log_format: str, prepared: Prepared | None = None, what: str = "") -> int:
    prepared = prepared or prepare(settings)
    try:
        check_reachable(prepared.api_url)
        base = f"http://{settings.host}:{settings.port}"
        if settings.workers > 1 or settings.grpc_port:
            _share_metrics_between_workers()
        try:
            grpc_server = grpc_api_server.start_process(settings, prepared.api_url) if settings.grpc_port else None
        except OSError as error:  # taken since the check, or the server failed to start (its log says why)
            print(f"ledgermirror: {error}", file=sys.stderr)
            return EXIT_CANNOT_LISTEN
        try:
            if grpc_server is not None:
                announce("Ledger Mirror gRPC API at", f"{settings.host}:{settings.grpc_port}", log_format)
            announce(what or "Ledger Mirror REST API, with its docs at", f"{base}/api/v1/docs", log_format)
            _run_uvicorn(settings, prepared.api_url)
        finally:
            if grpc_server is not None:
                grpc_server.stop()
    finally:
        prepared.stop()
    return 0


def _demo(settings: Settings, log_format: str) -> int:
    from ledgermirror import dataset

    if settings.db_url:
        print(
            "ledgermirror: demo always uses its own embedded database; unset LEDGERMIRROR_DB_URL",
            file=sys.stderr,
        )
        return EXIT_USAGE
    prepared = prepare(settings, data_dir=settings.data_dir / "demo")

    async def load() -> None:
        conn = await asyncpg.connect(prepared.owner_url)
        try:
            if not await dataset.is_loaded(conn):
                counts = await dataset.load(conn, "small")
                print(f"demo data loaded: {sum(counts.values())} rows", file=sys.stderr)
        finally:
            await conn.close()

    asyncio.run(load())
    return _serve(settings, log_format, prepared, "Ledger Mirror demo, with the API's docs at")


def _conformance(args: argparse.Namespace) -> int:
    from ledgermirror.conformance import expected, runner

    if not args.specs.is_dir():
        print(f"ledgermirror: no specs folder at {args.specs}", file=sys.stderr)
        return EXIT_USAGE
    report = runner.run(
        args.specs,
        only=args.only,
        expected_file=args.expected,
        out=sys.stdout,
        verbose=args.verbose,
        reference_pagination=args.reference_pagination,
    )
    if args.json is not None:
        runner.write_json(report, args.json)
    if args.update_expected:
        path = args.expected or expected.bundled_path()
        count = runner.update_expected(report, path, args.reason)
        print(f"wrote {count} expected failures to {path}")
        return 0
    return 0 if report.ok else 1


def _simulate(args: argparse.Namespace) -> int:
    from ledgermirror.simulator.run import simulate

    summary = simulate(
        args.out,
        nodes=args.nodes,
        seconds=args.seconds,
        tps=args.tps,
        seed=args.seed,
        layout=args.layout,
        fmt=args.format,
        record_version=args.record_version,
    )
    print(
        f"simulated {summary.transactions} transactions in {summary.record_files} record files "
        f"({summary.sidecar_files} with a sidecar, {summary.bytes_written} bytes) into {summary.out} "
        f"in {summary.seconds_total:.1f} s (node keys {summary.seconds_keys:.1f} s)"
        + {
            "records": "",
            "blocks": "; written as wrapped record blocks under block/",
            "native": "; written as native blocks under block/",
        }.get(args.format, "; the second half written as wrapped record blocks under block/")
    )
    return 0


def _share_metrics_between_workers() -> None:
    """``/metrics`` sums every worker's values: a fresh multiprocess folder (the operator's
    ``PROMETHEUS_MULTIPROC_DIR`` if set, else a temporary one removed at exit) before the workers start."""
    import atexit
    import shutil
    import tempfile

    from ledgermirror.metrics import exposition

    chosen = os.environ.get(exposition.MULTIPROCESS_ENV)
    folder = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix="ledgermirror-metrics-"))
    exposition.prepare_multiprocess(folder)
    if not chosen:
        atexit.register(shutil.rmtree, folder, True)


def _run_uvicorn(settings: Settings, api_url: str) -> None:
    from ledgermirror import http_server

    exit_cleanly_on_sigterm()
    os.environ["LEDGERMIRROR_API_DB_URL"] = api_url
    sys.path.insert(0, str(Path(__file__).parent.parent))  # workers import the app by name (uvicorn's app_dir)
    config = http_server.bounded_config(
        "ledgermirror.api.asgi:app_from_env",
        settings,
        host=settings.host,
        port=settings.port,
        factory=True,
        workers=settings.workers,
        loop="uvloop",
    )
    http_server.run(config)


_ARGUMENTS_ONLY: dict[str, Callable[[argparse.Namespace], int]] = {
    "simulate": _simulate,
    "blocknode": blocknode_command.run,
    "hash-password": _hash_password,
}
"""Commands that need their arguments only (no database, no settings beyond logging)."""
