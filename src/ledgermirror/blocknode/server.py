"""A block node for tests and simulations: the block node API (``subscribeBlockStream``, ``serverStatus``) over
gRPC, serving the block files of a folder (``ledgermirror blocknode serve``).

Each block goes out as its items, in sets of at most :data:`MAX_SET_BYTES` that never mix two blocks, followed by
an ``end_of_block`` with its number; a finished range ends with ``SUCCESS``. A live subscription (end block
``uint64`` max) waits for files that are not there yet, so a folder a simulator is still writing streams as it
grows. Items are sent as the bytes the file holds (never parsed and re-serialized).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc import aio

from ledgermirror.blocknode import wire
from ledgermirror.blocknode.folder import BlockFolder

MAX_SET_BYTES = 1 << 20
"""Item bytes per ``BlockItemSet`` message (gRPC's default receive limit is 4 MiB)."""
DEFAULT_PORT = 40840
"""The block node's usual port."""

_log = logging.getLogger("ledgermirror.blocknode")


def item_sets(items: list[bytes], limit: int = MAX_SET_BYTES) -> list[list[bytes]]:
    """A block's items cut into consecutive sets of at most ``limit`` bytes (an item larger goes alone)."""
    sets: list[list[bytes]] = []
    current: list[bytes] = []
    size = 0
    for item in items:
        if current and size + len(item) > limit:
            sets.append(current)
            current, size = [], 0
        current.append(item)
        size += len(item)
    if current:
        sets.append(current)
    return sets


@dataclass(slots=True)
class BlockNodeServer:
    """The servicer and its gRPC server. ``start`` binds, ``stop`` ends every stream at once."""

    folder: BlockFolder
    poll_seconds: float = 0.2
    """How often a live stream waiting for the next block looks at the folder again."""
    _server: aio.Server | None = field(default=None, init=False)
    blocks_sent: int = field(default=0, init=False)

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Listen on ``host:port`` (0: any free port) and return the port."""
        server = aio.server(options=[("grpc.so_reuseport", 0)])
        server.add_generic_rpc_handlers((self._handlers(),))
        try:
            bound: int = server.add_insecure_port(f"{host}:{port}")
        except RuntimeError as error:  # grpc's "Failed to bind to address"
            raise OSError(f"cannot listen on {host}:{port} (address in use or not available)") from error
        if bound == 0:
            raise OSError(f"cannot listen on {host}:{port}")
        await server.start()
        self._server = server
        _log.info("block node serving", extra={"folder": str(self.folder.root), "address": f"{host}:{bound}"})
        return bound

    async def stop(self, grace: float | None = None) -> None:
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None

    async def wait(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()

    def _handlers(self) -> grpc.GenericRpcHandler:
        subscribe = grpc.unary_stream_rpc_method_handler(
            self._subscribe, request_deserializer=wire.decode_subscribe, response_serializer=_identity
        )
        status = grpc.unary_unary_rpc_method_handler(
            self._server_status, request_deserializer=wire.decode_status_request, response_serializer=_identity
        )
        return _Routes({wire.SUBSCRIBE_METHOD: subscribe, wire.SERVER_STATUS_METHOD: status})

    async def _server_status(self, _request: None, _context: Any) -> bytes:
        self.folder.rescan()
        return wire.encode_availability(self.folder.availability())

    async def _subscribe(self, request: tuple[int, int], _context: Any) -> AsyncIterator[bytes]:
        start, end = request
        self.folder.rescan()
        available = self.folder.availability()
        _log.info("subscriber", extra={"start": start, "end": end, "first": available.first})
        if end < start:
            yield wire.encode_status(wire.Code.INVALID_END_BLOCK_NUMBER)
            return
        if start < available.first or available.first > available.last:
            yield wire.encode_status(
                wire.Code.INVALID_START_BLOCK_NUMBER
                if available.first <= available.last
                else wire.Code.NOT_AVAILABLE
            )
            return
        number = start
        while number <= end:
            if not self.folder.has(number):
                await asyncio.sleep(self.poll_seconds)
                self.folder.rescan()
                continue
            for chunk in item_sets(wire.split_block(self.folder.read(number))):
                yield wire.encode_items(chunk)
            yield wire.encode_block_end(number)
            self.blocks_sent += 1
            number += 1
        yield wire.encode_status(wire.Code.SUCCESS)


def _identity(data: bytes) -> bytes:
    return data


class _Routes(grpc.GenericRpcHandler):
    """Method path -> handler (the two services this node offers)."""

    def __init__(self, routes: dict[str, grpc.RpcMethodHandler[Any, Any]]) -> None:
        self._routes = routes

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler[Any, Any] | None:
        return self._routes.get(handler_call_details.method)
