"""Blocks from block nodes over gRPC: ``--source grpc://host:port[,grpc://host2:port...]``.

:meth:`BlockNodeClient.blocks` yields each block once, in order, as the serialized ``Block`` (its items exactly
as the node sent them) with its number, from the block the caller asks for. Behind it:

* **Status first.** Each connection asks the node's ``serverStatus`` which blocks it holds, then subscribes from
  the next block wanted: to the node's last block (``follow=False``, import what is there) or without end
  (``follow=True``, live blocks as they come).
* **Resume.** After any failure the next subscription starts at the block after the last one yielded, so a
  reconnect neither skips nor repeats a block; across restarts the caller passes the block after the last one
  it stored.
* **Fallback.** Endpoints are tried in the order given; a node that cannot be reached, answers an error, sends
  something that is not the next block, lacks the block wanted, or stays silent for ``stall_seconds`` is left
  for the next one, and comes back after a backoff that doubles with each consecutive failure (from
  ``backoff_seconds`` to ``max_backoff_seconds``); a node that delivers a block is forgiven.
* **Checks.** Every block starts with its header, its number is the one expected, and ``end_of_block`` names it.
  Hash chain and proofs are the importer's checks, after this.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from grpc import aio

from ledgermirror.blocknode import wire

SCHEME = "grpc://"
ONCE_ATTEMPTS = 3
"""``follow=False``: consecutive failures of a node after which it is given up for this run."""
_log = logging.getLogger("ledgermirror.blocknode")


class BlockNodeError(Exception):
    """No block node could serve the stream (every one failed), or a source that names none."""


class _NodeFailure(Exception):
    """One node failed this attempt (the reason is the message); the client moves on to the next node."""


@dataclass(frozen=True, slots=True)
class StreamedBlock:
    number: int
    data: bytes
    """The serialized ``com.hedera.hapi.block.stream.Block``."""
    node: str
    """The ``host:port`` it came from."""


@dataclass(frozen=True, slots=True)
class ClientOptions:
    stall_seconds: float = 20.0
    """A stream with no message for this long is a stalled node (blocks come every ~2 s on a live network)."""
    status_seconds: float = 5.0
    """Deadline of the ``serverStatus`` call that opens each attempt."""
    backoff_seconds: float = 0.5
    max_backoff_seconds: float = 30.0
    max_message_bytes: int = 64 << 20


def is_block_node_source(source: str) -> bool:
    return source.startswith(SCHEME)


def parse_endpoints(source: str) -> list[str]:
    """``grpc://host:port[,grpc://host2:port...]`` -> ``["host:port", ...]``, or ``BlockNodeError``."""
    endpoints = []
    for part in source.split(","):
        text = part.strip()
        if not text.startswith(SCHEME):
            raise BlockNodeError(f"not a block node address (grpc://host:port): {text!r}")
        address = text[len(SCHEME) :].rstrip("/")
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise BlockNodeError(f"a block node address needs a host and a port 1-65535: {text!r}")
        endpoints.append(address)
    return endpoints


@dataclass(slots=True)
class _Node:
    address: str
    failures: int = 0
    ready_at: float = 0.0


@dataclass(slots=True)
class BlockNodeClient:
    """Node health (failures, backoff) lasts as long as the client, across calls of :meth:`blocks`."""

    endpoints: list[str]
    options: ClientOptions = field(default_factory=ClientOptions)
    _nodes: list[_Node] = field(init=False)

    def __post_init__(self) -> None:
        self._nodes = [_Node(address) for address in self.endpoints]

    def penalize(self, address: str, reason: str) -> None:
        """Count a failure against a node from outside (its block was refused by the importer's checks), so
        the next call starts elsewhere."""
        for node in self._nodes:
            if node.address == address:
                self._failed(node, _NodeFailure(reason), None)

    async def blocks(
        self, start: int | None, *, follow: bool, stop: asyncio.Event | None = None
    ) -> AsyncIterator[StreamedBlock]:
        """Blocks from ``start`` (None: the first block of the first node that answers), each once and in
        order. ``follow=False`` ends when every node was asked since the last block and none had more (or
        raises ``BlockNodeError`` if none answered); ``follow=True`` ends only when ``stop`` is set."""
        if not self.endpoints:
            raise BlockNodeError("no block node configured")
        nodes = self._nodes
        stop = stop or asyncio.Event()
        wanted = start
        settled = _Round(len(nodes))
        current = 0
        self._another_chance(follow)
        while not stop.is_set():
            if not follow and self._finished(settled, wanted):
                return
            ready = _next_ready(nodes, current, skip=settled.skipped(follow))
            if ready is None:
                waiting = [node.ready_at for i, node in enumerate(nodes) if i not in settled.skipped(follow)]
                await _sleep(stop, min(waiting) - time.monotonic())
                continue
            current = ready
            node = nodes[current]
            progressed = False
            try:
                async for block in self._attempt(node.address, wanted, follow):
                    wanted = block.number + 1
                    node.failures = 0
                    progressed = True
                    yield block
                    if stop.is_set():
                        return
            except _NodeFailure as failure:
                self._failed(node, failure, wanted)
                settled.failed_at(current, progressed)
            else:
                settled.ended_at(current, progressed)
                if follow and not progressed:
                    await _sleep(stop, self.options.backoff_seconds)
            current = (current + 1) % len(nodes)

    def _another_chance(self, follow: bool) -> None:
        """``follow=False``: every node given up in an earlier call gets one more attempt in this one."""
        if not follow:
            for node in self._nodes:
                node.failures = min(node.failures, ONCE_ATTEMPTS - 1)

    def _finished(self, settled: _Round, wanted: int | None) -> bool:
        """``follow=False``: true once every node, since the last block, said it has nothing more or failed,
        and one of them answered. When all failed: another round after their backoff, until each failed
        ``ONCE_ATTEMPTS`` times in a row, then ``BlockNodeError``."""
        if not settled.complete():
            return False
        if settled.exhausted:
            return True
        if all(node.failures >= ONCE_ATTEMPTS for node in self._nodes):
            raise BlockNodeError(
                f"no block node could serve block {'the first' if wanted is None else wanted}: "
                + ", ".join(self.endpoints)
            )
        settled.failed.clear()
        return False

    def _failed(self, node: _Node, failure: _NodeFailure, wanted: int | None) -> None:
        node.failures += 1
        backoff = min(self.options.max_backoff_seconds, self.options.backoff_seconds * 2 ** (node.failures - 1))
        node.ready_at = time.monotonic() + backoff
        _log.warning(
            "block node failed",
            extra={"node": node.address, "reason": str(failure), "next_block": wanted, "backoff_s": backoff},
        )

    async def _attempt(self, address: str, wanted: int | None, follow: bool) -> AsyncIterator[StreamedBlock]:
        """One connection: status, then one subscription; raises ``_NodeFailure`` for anything that is not a
        clean end."""
        options = [
            ("grpc.max_receive_message_length", self.options.max_message_bytes),
            ("grpc.enable_retries", 0),
        ]
        async with aio.insecure_channel(address, options=options) as channel:
            try:
                status_call = channel.unary_unary(
                    wire.SERVER_STATUS_METHOD, request_serializer=_identity, response_deserializer=_identity
                )
                reply = await status_call(wire.encode_status_request(), timeout=self.options.status_seconds)
                available = wire.decode_availability(reply)
            except aio.AioRpcError as error:
                raise _NodeFailure(f"serverStatus: {error.code().name} {error.details()}") from error
            except Exception as error:
                raise _NodeFailure(f"serverStatus: {error}") from error
            empty = available.first > available.last
            if empty and wanted is None:
                if follow:
                    raise _NodeFailure("holds no block yet")
                return
            first = available.first if wanted is None else wanted
            if first > available.last:
                if not follow:
                    return  # nothing more here; a live subscription waits for it
            elif first < available.first:
                raise _NodeFailure(f"holds blocks {available.first}-{available.last}, not {first}")
            end = wire.UINT64_MAX if follow else available.last
            async for block in self._subscribe(channel, address, first, end):
                yield block

    async def _subscribe(
        self, channel: aio.Channel, address: str, start: int, end: int
    ) -> AsyncIterator[StreamedBlock]:
        call = channel.unary_stream(
            wire.SUBSCRIBE_METHOD, request_serializer=_identity, response_deserializer=_identity
        )
        stream = call(wire.encode_subscribe(start, end))
        expected = start
        items: list[bytes] = []
        try:
            while True:
                try:
                    async with asyncio.timeout(self.options.stall_seconds):
                        data = await stream.read()
                except TimeoutError as error:
                    raise _NodeFailure(
                        f"no message for {self.options.stall_seconds} s at block {expected}"
                    ) from error
                if not isinstance(data, bytes):  # aio.EOF
                    raise _NodeFailure(f"stream ended without a status at block {expected}")
                response = wire.decode_response(data)
                if isinstance(response, wire.Items):
                    if items and response.items and wire.is_block_header(response.items[0]):
                        yield self._block(address, items, expected, None)  # a node that sends no end_of_block
                        expected += 1
                        items = []
                    if not items and (not response.items or not wire.is_block_header(response.items[0])):
                        raise _NodeFailure(f"block {expected} does not start with its header")
                    items.extend(response.items)
                elif isinstance(response, wire.BlockEnd):
                    yield self._block(address, items, expected, response.number)
                    expected += 1
                    items = []
                elif response.code == wire.Code.SUCCESS:
                    if items:
                        yield self._block(address, items, expected, None)
                    return
                else:
                    raise _NodeFailure(f"status {response.code.name} at block {expected}")
        except aio.AioRpcError as error:
            raise _NodeFailure(f"subscribeBlockStream: {error.code().name} {error.details()}") from error
        except wire.WireError as error:
            raise _NodeFailure(str(error)) from error
        finally:
            stream.cancel()

    @staticmethod
    def _block(address: str, items: list[bytes], expected: int, ended: int | None) -> StreamedBlock:
        if not items:
            raise _NodeFailure(f"end of block {ended} without items")
        number = wire.header_number(items[0])
        if number != expected or (ended is not None and ended != number):
            raise _NodeFailure(f"sent block {number} (end of block {ended}) where block {expected} was due")
        return StreamedBlock(number, wire.join_block(items), address)


def _identity(data: bytes) -> bytes:
    return data


@dataclass(slots=True)
class _Round:
    """Which nodes are settled for this call: said, since the last block, that they hold nothing more, or
    failed (a node that failed is not waited for again in this call unless every node failed)."""

    size: int
    exhausted: set[int] = field(default_factory=set)
    """Answered that it holds nothing more."""
    failed: set[int] = field(default_factory=set)

    def ended_at(self, node: int, progressed: bool) -> None:
        if progressed:
            self.exhausted = {node}
        else:
            self.exhausted.add(node)

    def failed_at(self, node: int, progressed: bool) -> None:
        if progressed:
            self.exhausted = set()
        self.failed.add(node)

    def complete(self) -> bool:
        return len(self.exhausted | self.failed) == self.size

    def skipped(self, follow: bool) -> set[int]:
        """Nodes not to ask again in this round: none when following (a live stream retries every node)."""
        return set() if follow else self.exhausted | self.failed


def _next_ready(nodes: list[_Node], current: int, skip: set[int]) -> int | None:
    """The first node from ``current`` on (wrapping) whose backoff is over and that is not skipped."""
    now = time.monotonic()
    for step in range(len(nodes)):
        index = (current + step) % len(nodes)
        if index not in skip and nodes[index].ready_at <= now:
            return index
    return None


async def _sleep(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), max(0.0, seconds))


__all__ = [
    "BlockNodeClient",
    "BlockNodeError",
    "ClientOptions",
    "StreamedBlock",
    "is_block_node_source",
    "parse_endpoints",
]
