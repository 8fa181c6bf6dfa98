"""Block nodes as a :class:`~.block_source.BlockSource`: ``--source grpc://host:port[,grpc://host2:port...]``.

The transport (status, subscription, resume after a reconnect, fallback across nodes, backoff, stall
detection) is :class:`ledgermirror.blocknode.client.BlockNodeClient`; this module adapts it to the pipeline's
contract: blocks as :class:`~.block_source.SourceBlock` (named ``<19-digit number>.blk``, ``size`` the bytes
received), ``SourceError`` when no node can serve, and a block the pipeline refused (it asks again from the
same number) counts against the node that sent it, so the next attempt starts at another node.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from ledgermirror.blocknode.client import (
    BlockNodeClient,
    BlockNodeError,
    ClientOptions,
    is_block_node_source,
    parse_endpoints,
)
from ledgermirror.importer.block_source import BlockUnpacker, SourceBlock, block_name
from ledgermirror.importer.sources import SourceError


@dataclass(slots=True)
class BlockNodeSource:
    """``follow=False``: each call of :meth:`blocks` ends when no node has more (the pipeline asks again);
    ``follow=True``: a live subscription that runs until the pipeline stops consuming."""

    client: BlockNodeClient
    follow: bool = False
    stop: asyncio.Event | None = None
    description: str = ""
    _last: tuple[int, str] | None = field(default=None, init=False)
    """The number and node of the last block handed out."""

    async def blocks(self, start: int | None, unpacker: BlockUnpacker | None = None) -> AsyncIterator[SourceBlock]:
        """The node's blocks as they stream in; ``unpacker`` is not used (they come uncompressed, one at a time:
        the import's own reading hashes them)."""
        if self._last is not None and start is not None and start <= self._last[0]:
            self.client.penalize(self._last[1], f"block {start} was refused by the importer")
        try:
            async for block in self.client.blocks(start, follow=self.follow, stop=self.stop):
                self._last = (block.number, block.node)
                yield SourceBlock(
                    block.number, block_name(block.number, compressed=False), block.data, len(block.data)
                )
        except BlockNodeError as error:
            raise SourceError(str(error)) from error

    async def close(self) -> None:
        """Nothing held between calls: each subscription closes its channel when it ends."""


def open_block_node_source(
    text: str,
    *,
    follow: bool = False,
    stop: asyncio.Event | None = None,
    options: ClientOptions | None = None,
) -> BlockNodeSource:
    """The source for ``grpc://host:port[,grpc://host2:port...]``, or ``SourceError`` for a bad address."""
    if not is_block_node_source(text):
        raise SourceError(f"not a block node source: {text!r}")
    try:
        endpoints = parse_endpoints(text)
    except BlockNodeError as error:
        raise SourceError(str(error)) from error
    client = BlockNodeClient(endpoints, options or ClientOptions())
    return BlockNodeSource(client, follow=follow, stop=stop, description=text)
