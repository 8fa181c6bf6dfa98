"""``ledgermirror import``: its arguments (loaded with every command, so it imports nothing of the importer;
running it is :mod:`.import_run`)."""

from __future__ import annotations

import argparse
from pathlib import Path


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
    command.add_argument(
        "--balance-files",
        action="store_true",
        help="empty database: start from the signed account balance file (accountBalances/) nearest at or before "
        "the start, with its HBAR and token balances (LEDGERMIRROR_IMPORT_BALANCE_FILES)",
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
