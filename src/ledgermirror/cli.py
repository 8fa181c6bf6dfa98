"""The ``ledgermirror`` command: its command line (every command's options, for ``--help`` and parsing), the
settings and logging every command starts with, and the dispatch to the module that runs the command.

A command's module is imported only when that command runs (:data:`COMMANDS`, by name), and this module imports
only what declares the command line: ``ledgermirror --help`` loads no database driver, server, SDK or
generator (``tests/cli/test_cli_imports.py`` holds it to that).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ledgermirror import __version__, log
from ledgermirror.blocknode import command as blocknode_command
from ledgermirror.exits import EXIT_DATABASE, EXIT_USAGE, DatabaseUnreachable
from ledgermirror.importer import command as import_command
from ledgermirror.settings import Settings, SettingsError
from ledgermirror.status import arguments as status_arguments


class Command(Protocol):
    """What a command's module runs: ``run(args, settings, log_format) -> exit status``."""

    def __call__(self, args: argparse.Namespace, settings: Settings, log_format: str) -> int: ...


COMMANDS: dict[str, str] = {
    "serve": "ledgermirror.commands.serve",
    "demo": "ledgermirror.commands.demo",
    "db": "ledgermirror.commands.database",
    "conformance": "ledgermirror.commands.conformance",
    "simulate": "ledgermirror.commands.simulate",
    "hash-password": "ledgermirror.commands.hash_password",
    "import": "ledgermirror.commands.importing",
    "status": "ledgermirror.status.cli",
    "blocknode": "ledgermirror.blocknode.serve",
}
"""Each command and the module whose ``run`` does it (imported when the command runs)."""


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
    migrate = db_commands.add_parser(
        "migrate", help="apply the schema migrations", description="Apply migrations."
    )
    migrate.add_argument(
        "--citus",
        action="store_true",
        help="then distribute the tables as the reference does on Citus (the server must have the extension; "
        "docs/scaling.md)",
    )
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
        "wrapped in blocks with --format blocks or cutover; not with --format native",
    )
    simulate.add_argument(
        "--evm-contracts",
        action="store_true",
        help="also deploy and call an ERC-20, an ERC-721 and a reader of HTS tokens, executed by py-evm "
        "(their results and sidecars what the EVM produced; truth.json lists their views as evm_tokens)",
    )
    commands.add_parser(
        "hash-password",
        help="hash an API user's password for LEDGERMIRROR_USERS",
        description="Read a password (prompted on a terminal, else the first line of stdin) and print its "
        "PBKDF2-SHA256 hash, the password_hash of an entry of LEDGERMIRROR_USERS or LEDGERMIRROR_USERS_FILE.",
    )
    status_arguments.register(commands)
    import_command.register(commands)
    blocknode_command.register(commands)
    return parser


def _server_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    command.add_argument("--port", type=_port, default=None, help="port to listen on (default 5551)")
    command.add_argument("--grpc-port", type=_grpc_port, default=None, help="gRPC API port (default 5600; 0: off)")


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
    run: Command = importlib.import_module(COMMANDS[args.command]).run
    try:
        return run(args, settings, log_format)
    except DatabaseUnreachable as error:
        print(f"ledgermirror: {error}", file=sys.stderr)
        return EXIT_DATABASE
