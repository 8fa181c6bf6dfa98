"""``ledgermirror blocknode serve``: a block node on this machine serving a folder of block files."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path

from ledgermirror.blocknode.folder import BlockFolder
from ledgermirror.blocknode.server import DEFAULT_PORT, BlockNodeServer
from ledgermirror.exits import EXIT_CANNOT_LISTEN, EXIT_USAGE
from ledgermirror.settings import Settings


def run(args: argparse.Namespace, settings: Settings, log_format: str) -> int:
    """``ledgermirror blocknode serve`` (``cli.COMMANDS``): its arguments only, no database."""
    if not args.blocks.is_dir():
        print(f"ledgermirror: no folder at {args.blocks}", file=sys.stderr)
        return EXIT_USAGE
    port = DEFAULT_PORT if args.port is None else args.port
    try:
        asyncio.run(_serve(args.blocks, args.host, port))
    except OSError as error:
        print(f"ledgermirror: {error}", file=sys.stderr)
        return EXIT_CANNOT_LISTEN
    return 0


async def _serve(folder: Path, host: str, port: int) -> None:
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
