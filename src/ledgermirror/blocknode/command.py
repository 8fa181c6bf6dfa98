"""``ledgermirror blocknode serve``: a block node on this machine serving a folder of block files."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path

EXIT_CANNOT_LISTEN = 5


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


def run(args: argparse.Namespace) -> int:
    from ledgermirror.blocknode.server import DEFAULT_PORT

    if not args.blocks.is_dir():
        print(f"ledgermirror: no folder at {args.blocks}", file=sys.stderr)
        return 2
    port = DEFAULT_PORT if args.port is None else args.port
    try:
        asyncio.run(_serve(args.blocks, args.host, port))
    except OSError as error:
        print(f"ledgermirror: {error}", file=sys.stderr)
        return EXIT_CANNOT_LISTEN
    return 0


async def _serve(folder: Path, host: str, port: int) -> None:
    from ledgermirror.blocknode.folder import BlockFolder
    from ledgermirror.blocknode.server import BlockNodeServer

    server = BlockNodeServer(BlockFolder(folder))
    bound = await server.start(host, port)
    print(f"block node serving {folder} on {host}:{bound}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    waiting = asyncio.ensure_future(server.wait())
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({waiting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    await server.stop(grace=1.0)
    for task in (waiting, stopping):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
