"""The block node client against real gRPC servers on 127.0.0.1: our simulated block node serving block files,
and small misbehaving nodes written here (stalled, wrong block, no history)."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
import zstandard
from grpc import aio
from hiero_sdk_python.hapi.block.stream import block_pb2
from tests.blocknode.serving import FIXTURES, TrippingFolder, synthetic_block, write_blocks

from ledgermirror.blocknode import subscribe_pb2, subscribe_pb2_grpc, wire
from ledgermirror.blocknode.client import (
    BlockNodeClient,
    BlockNodeError,
    ClientOptions,
    StreamedBlock,
    parse_endpoints,
)
from ledgermirror.blocknode.folder import BlockFolder, block_number_of
from ledgermirror.blocknode.server import MAX_SET_BYTES, BlockNodeServer, item_sets

FAST = ClientOptions(stall_seconds=2.0, status_seconds=2.0, backoff_seconds=0.05, max_backoff_seconds=0.2)
GUARD_SECONDS = 60.0
"""Every scenario is bounded: a hang fails the test instead of the run."""


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(scenario(), GUARD_SECONDS)

    return asyncio.run(bounded())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def collect(client: BlockNodeClient, start: int | None, **kwargs: Any) -> list[StreamedBlock]:
    return [block async for block in client.blocks(start, follow=False, **kwargs)]


def test_fixture_blocks_stream_byte_for_byte() -> None:
    async def scenario() -> tuple[list[StreamedBlock], wire.Availability]:
        server = BlockNodeServer(BlockFolder(FIXTURES))
        port = await server.start()
        try:
            async with aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                status = channel.unary_unary(wire.SERVER_STATUS_METHOD)
                available = wire.decode_availability(await status(wire.encode_status_request()))
            return await collect(BlockNodeClient([f"127.0.0.1:{port}"], FAST), None), available
        finally:
            await server.stop()

    blocks, available = run(scenario)
    assert available == wire.Availability(7, 8)  # 16 is not in the unbroken run after 7
    assert [block.number for block in blocks] == [7, 8]
    for block in blocks:
        path = FIXTURES / "0000" / "0000" / "0000" / "0000" / f"{block.number:03d}.blk.zstd"
        assert block.data == zstandard.ZstdDecompressor().decompress(path.read_bytes())
        assert block_pb2.Block.FromString(block.data).items[0].block_header.number == block.number


def test_the_published_typed_stub_reads_our_node() -> None:
    """A client built from the generated stub (parsed SDK BlockItems) gets the same blocks, end markers and
    the final SUCCESS."""

    async def scenario() -> list[subscribe_pb2.SubscribeStreamResponse]:
        server = BlockNodeServer(BlockFolder(FIXTURES))
        port = await server.start()
        try:
            async with aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = subscribe_pb2_grpc.BlockStreamSubscribeServiceStub(channel)
                request = subscribe_pb2.SubscribeStreamRequest(start_block_number=7, end_block_number=8)
                return [response async for response in stub.subscribeBlockStream(request)]
        finally:
            await server.stop()

    responses = run(scenario)
    kinds = [response.WhichOneof("response") for response in responses]
    assert kinds == ["block_items", "end_of_block", "block_items", "end_of_block", "status"]
    assert responses[0].block_items.block_items[0].block_header.number == 7
    assert len(responses[0].block_items.block_items) == 80
    assert [responses[1].end_of_block.block_number, responses[3].end_of_block.block_number] == [7, 8]
    assert responses[-1].status == subscribe_pb2.SubscribeStreamResponse.SUCCESS


@pytest.mark.parametrize(
    ("start", "end", "code"),
    [
        (9, 8, wire.Code.INVALID_END_BLOCK_NUMBER),
        (3, 8, wire.Code.INVALID_START_BLOCK_NUMBER),
    ],
)
def test_bad_ranges_end_with_their_status(start: int, end: int, code: wire.Code) -> None:
    async def scenario() -> list[wire.Response]:
        server = BlockNodeServer(BlockFolder(FIXTURES))
        port = await server.start()
        try:
            async with aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                call = channel.unary_stream(wire.SUBSCRIBE_METHOD)
                return [wire.decode_response(data) async for data in call(wire.encode_subscribe(start, end))]
        finally:
            await server.stop()

    assert run(scenario) == [wire.Status(code)]


def test_flat_and_plain_files_and_large_blocks(tmp_path: Path) -> None:
    """Flat 19-digit names, uncompressed .blk, and a block larger than one item set (several messages)."""
    write_blocks(tmp_path, range(0, 3), layout="flat", compress=False, filler=4, filler_size=MAX_SET_BYTES // 2)

    async def scenario() -> list[StreamedBlock]:
        server = BlockNodeServer(BlockFolder(tmp_path))
        port = await server.start()
        try:
            return await collect(BlockNodeClient([f"127.0.0.1:{port}"], FAST), 0)
        finally:
            await server.stop()

    blocks = run(scenario)
    assert [block.number for block in blocks] == [0, 1, 2]
    assert [block.data for block in blocks] == [
        synthetic_block(number, filler=4, filler_size=MAX_SET_BYTES // 2) for number in range(3)
    ]
    assert len(item_sets(wire.split_block(blocks[0].data))) == 4  # header + first filler, then one each


def test_item_sets_and_names() -> None:
    assert item_sets([b"a" * 6, b"b" * 5, b"c" * 20, b"d"], limit=10) == [
        [b"a" * 6],
        [b"b" * 5],
        [b"c" * 20],
        [b"d"],
    ]
    assert item_sets([b"a", b"b", b"c"], limit=10) == [[b"a", b"b", b"c"]]
    assert block_number_of(Path("x/0000/0000/0000/0000/007.blk.zstd")) == 7
    assert block_number_of(Path("x/0000000000000012345.blk")) == 12345
    assert block_number_of(Path("x/0000/0000/007.blk.zstd")) is None
    assert block_number_of(Path("x/0000000000000012345.rcd")) is None
    assert parse_endpoints("grpc://a:1, grpc://127.0.0.1:40840/") == ["a:1", "127.0.0.1:40840"]
    for bad in ("grpc://a", "http://a:1", "grpc://a:0", "grpc://:5", "grpc://a:99999"):
        with pytest.raises(BlockNodeError):
            parse_endpoints(bad)


def test_resume_after_the_node_dies_mid_stream(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The node is stopped while it streams block 12 (live subscription); it comes back on the same port and the
    client goes on from the block after the last one it delivered: every block once, in order."""
    write_blocks(tmp_path, range(0, 30))
    caplog.set_level(logging.WARNING, "ledgermirror.blocknode")

    async def scenario() -> tuple[list[int], int]:
        port = free_port()
        restarted: list[BlockNodeServer] = []

        def trip() -> None:
            async def bounce() -> None:
                await first.stop(None)
                await asyncio.sleep(0.3)
                again = BlockNodeServer(BlockFolder(tmp_path))
                await again.start(port=port)
                restarted.append(again)

            asyncio.get_running_loop().create_task(bounce())

        first = BlockNodeServer(TrippingFolder(tmp_path, 12, trip))
        await first.start(port=port)
        client = BlockNodeClient([f"127.0.0.1:{port}"], FAST)
        stop = asyncio.Event()
        seen: list[int] = []
        try:
            async for block in client.blocks(0, follow=True, stop=stop):
                seen.append(block.number)
                if block.number == 29:
                    stop.set()
        finally:
            await first.stop()
            for server in restarted:
                await server.stop()
        return seen, len(restarted)

    seen, restarts = run(scenario)
    assert restarts == 1
    assert seen == list(range(30))
    assert any(record.getMessage() == "block node failed" for record in caplog.records)


def test_restart_resumes_from_the_block_asked(tmp_path: Path) -> None:
    """A new client (the importer restarted) asks for the block after the last one stored."""
    write_blocks(tmp_path, range(0, 10))

    async def scenario() -> tuple[list[int], list[int]]:
        server = BlockNodeServer(BlockFolder(tmp_path))
        port = await server.start()
        try:
            first = await collect(BlockNodeClient([f"127.0.0.1:{port}"], FAST), 0)
            write_blocks(tmp_path, range(10, 15))
            second = await collect(BlockNodeClient([f"127.0.0.1:{port}"], FAST), first[-1].number + 1)
        finally:
            await server.stop()
        return [block.number for block in first], [block.number for block in second]

    first, second = run(scenario)
    assert first == list(range(10))
    assert second == list(range(10, 15))


def test_fallback_when_the_first_node_is_down_or_lacks_history(tmp_path: Path) -> None:
    full, late = tmp_path / "full", tmp_path / "late"
    write_blocks(full, range(0, 8))
    write_blocks(late, range(5, 8))

    async def scenario() -> tuple[list[StreamedBlock], list[StreamedBlock], str]:
        good = BlockNodeServer(BlockFolder(full))
        partial = BlockNodeServer(BlockFolder(late))
        good_port, partial_port = await good.start(), await partial.start()
        try:
            down = await collect(BlockNodeClient([f"127.0.0.1:{free_port()}", f"127.0.0.1:{good_port}"], FAST), 0)
            lacking = await collect(
                BlockNodeClient([f"127.0.0.1:{partial_port}", f"127.0.0.1:{good_port}"], FAST), 0
            )
        finally:
            await good.stop()
            await partial.stop()
        return down, lacking, f"127.0.0.1:{good_port}"

    down, lacking, good_address = run(scenario)
    for blocks in (down, lacking):
        assert [block.number for block in blocks] == list(range(8))
        assert {block.node for block in blocks} == {good_address}


def test_no_node_answers(tmp_path: Path) -> None:
    client = BlockNodeClient([f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"], FAST)
    with pytest.raises(BlockNodeError, match="no block node could serve block 0"):
        run(lambda: collect(client, 0))


class Misbehaving:
    """A block node written here: its status claims blocks 0..9; its stream is given by ``behaviour``."""

    def __init__(self, behaviour: Callable[[int], AsyncIterator[bytes]]) -> None:
        self.behaviour = behaviour
        self.server = aio.server()
        self.subscriptions = 0

    async def start(self) -> int:
        async def status(_request: bytes, _context: Any) -> bytes:
            return wire.encode_availability(wire.Availability(0, 9))

        async def subscribe(request: bytes, _context: Any) -> AsyncIterator[bytes]:
            self.subscriptions += 1
            start, _end = wire.decode_subscribe(request)
            async for message in self.behaviour(start):
                yield message

        handlers = {
            "org.hiero.block.api.BlockNodeService": {"serverStatus": grpc.unary_unary_rpc_method_handler(status)},
            "org.hiero.block.api.BlockStreamSubscribeService": {
                "subscribeBlockStream": grpc.unary_stream_rpc_method_handler(subscribe)
            },
        }
        self.server.add_generic_rpc_handlers(
            tuple(grpc.method_handlers_generic_handler(name, methods) for name, methods in handlers.items())
        )
        port = self.server.add_insecure_port("127.0.0.1:0")
        await self.server.start()
        return int(port)


async def _stalls_after_two(start: int) -> AsyncIterator[bytes]:
    for number in (start, start + 1):
        yield wire.encode_items(wire.split_block(synthetic_block(number)))
        yield wire.encode_block_end(number)
    yield wire.encode_items(wire.split_block(synthetic_block(start + 2))[:1])  # a header, then silence
    await asyncio.sleep(GUARD_SECONDS)


async def _sends_the_wrong_block(start: int) -> AsyncIterator[bytes]:
    yield wire.encode_items(wire.split_block(synthetic_block(start + 1)))
    yield wire.encode_block_end(start + 1)


async def _no_end_markers(start: int) -> AsyncIterator[bytes]:
    """An older node: no end_of_block; a header starts the next block, SUCCESS ends the last."""
    for number in range(start, 10):
        yield wire.encode_items(wire.split_block(synthetic_block(number)))
    yield wire.encode_status(wire.Code.SUCCESS)


@pytest.mark.parametrize("behaviour", [_stalls_after_two, _sends_the_wrong_block])
def test_a_bad_node_hands_over_to_the_next(
    tmp_path: Path, behaviour: Callable[[int], AsyncIterator[bytes]], caplog: pytest.LogCaptureFixture
) -> None:
    write_blocks(tmp_path, range(0, 10))
    caplog.set_level(logging.WARNING, "ledgermirror.blocknode")
    options = ClientOptions(stall_seconds=0.5, status_seconds=2.0, backoff_seconds=30.0, max_backoff_seconds=30.0)

    async def scenario() -> tuple[list[StreamedBlock], int]:
        bad = Misbehaving(behaviour)
        good = BlockNodeServer(BlockFolder(tmp_path))
        bad_port, good_port = await bad.start(), await good.start()
        try:
            blocks = await collect(
                BlockNodeClient([f"127.0.0.1:{bad_port}", f"127.0.0.1:{good_port}"], options), 0
            )
        finally:
            await bad.server.stop(None)
            await good.stop()
        return blocks, bad.subscriptions

    blocks, subscriptions = run(scenario)
    assert [block.number for block in blocks] == list(range(10))
    assert [block.data for block in blocks] == [synthetic_block(number) for number in range(10)]
    assert subscriptions == 1
    reasons = [
        getattr(record, "reason", "") for record in caplog.records if record.getMessage() == "block node failed"
    ]
    expected = "no message for 0.5 s at block 2" if behaviour is _stalls_after_two else "where block 0 was due"
    assert any(expected in reason for reason in reasons), reasons


def test_a_node_without_end_markers() -> None:
    async def scenario() -> list[StreamedBlock]:
        node = Misbehaving(_no_end_markers)
        port = await node.start()
        try:
            return await collect(BlockNodeClient([f"127.0.0.1:{port}"], FAST), 4)
        finally:
            await node.server.stop(None)

    blocks = run(scenario)
    assert [block.number for block in blocks] == list(range(4, 10))
    assert [block.data for block in blocks] == [synthetic_block(number) for number in range(4, 10)]
