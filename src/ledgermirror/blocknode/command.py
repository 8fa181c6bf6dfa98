"""The ``ledgermirror blocknode`` command line (``cli.build_parser`` adds it). Light to import on purpose:
``ledgermirror --help`` reads it; ``blocknode/serve.py`` runs the command."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = commands.add_parser(
        "blocknode",
        help="a block node serving block files (for tests and simulations)",
        description="Block node tools.",
    )
    tools = command.add_subparsers(dest="blocknode_command", required=True, metavar="TOOL")
    serve = tools.add_parser(
        "serve",
        help="serve a folder of block files over the block node gRPC API",
        description="Serve the block files below --blocks (NNNNNNNNNNNNNNNNNNN.blk[.zstd], flat or in the "
        "bucket layout 0000/0000/0000/0000/NNN.blk.zstd, e.g. the output of `ledgermirror simulate --format "
        "blocks`) over the block node API: BlockStreamSubscribeService.subscribeBlockStream and "
        "BlockNodeService.serverStatus. A live subscription waits for files still to come. Import from it with "
        "`ledgermirror import --source grpc://HOST:PORT`.",
    )
    serve.add_argument("--blocks", type=Path, required=True, metavar="DIR", help="the folder of block files")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port to listen on (default 40840; 0: any free)")
