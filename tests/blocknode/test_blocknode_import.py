"""A simulated network's blocks streamed from a block node on 127.0.0.1 into the mirror: the rows and the REST
API match the simulation's truth; an importer restart and a node that dies mid-stream resume with no gap and
no duplicate; a node that is down hands over to the next."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from starlette.testclient import TestClient
from tests.blocknode.serving import FIXTURES, TrippingFolder
from tests.blocknode.test_blocknode_stream import GUARD_SECONDS, free_port
from tests.importer.fixtures import SIGNING_BOOK
from tests.importer.importing import fetch

from ledgermirror.blocknode.client import ClientOptions
from ledgermirror.blocknode.folder import BlockFolder
from ledgermirror.blocknode.server import BlockNodeServer
from ledgermirror.db.reset import reset
from ledgermirror.importer import block_node
from ledgermirror.importer.block_pipeline import run_block_import
from ledgermirror.importer.cutover import run_stream
from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.progress import ImportStats
from ledgermirror.runtime import Prepared
from ledgermirror.simulator.run import INITIAL_BALANCES

pytestmark = pytest.mark.usefixtures("ledger")


def _truth(network: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((network / "truth.json").read_text())
    return loaded


def _options(network: Path, **changes: Any) -> ImportOptions:
    settings: dict[str, Any] = {
        "once": True,
        "poll_seconds": 0.05,
        "max_poll_seconds": 0.2,
        "address_book": network / "addressbook.bin",
        "initial_balances": network / INITIAL_BALANCES,
    }
    return ImportOptions(**(settings | changes))


def _blocks_of(network: Path) -> list[Path]:
    return sorted((network / "block").rglob("*.blk.zstd"))


def _copy_blocks(network: Path, target: Path, count: int) -> None:
    for path in _blocks_of(network)[:count]:
        destination = target / path.relative_to(network)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)


async def _import(url: str, source: str, options: ImportOptions) -> ImportStats:
    conn = await asyncpg.connect(url)
    try:
        return await asyncio.wait_for(run_stream(conn, source, options), GUARD_SECONDS)
    finally:
        await conn.close()


async def _served(folder: BlockFolder, scenario: Any, port: int = 0) -> Any:
    server = BlockNodeServer(folder)
    bound = await server.start(port=port)
    try:
        return await scenario(bound)
    finally:
        await server.stop()


def _indexes(url: str) -> list[int]:
    return [row["index"] for row in fetch(url, "select index from record_file order by consensus_end")]


def _balances_match(url: str, truth: dict[str, Any]) -> None:
    balances = {row["id"]: row["balance"] for row in fetch(url, "select id, balance from entity")}
    expected = {int(account.rsplit(".", 1)[1]): balance for account, balance in truth["balances"].items()}
    assert {account: balances.get(account) for account in expected} == expected


@pytest.mark.parametrize("fmt", ["blocks", "native"])
def test_stream_into_the_mirror_and_the_api_answers(
    fmt: str, simulated_blocks: Callable[[str], Path], database: Prepared, client: TestClient
) -> None:
    """Wrapped record blocks (signed record file proofs) and native blocks (chain-verified only)."""
    network = simulated_blocks(fmt)
    truth = _truth(network)
    url = database.owner_url

    async def scenario(port: int) -> ImportStats:
        return await _import(url, f"grpc://127.0.0.1:{port}", _options(network))

    stats = asyncio.run(_served(BlockFolder(network), scenario))
    count = truth["record_files"]["count"]
    assert count == len(_blocks_of(network)) >= 8
    assert stats.files == count
    assert _indexes(url) == list(range(count))
    assert fetch(url, "select count(*) from transaction")[0][0] == truth["transactions"]["count"]
    _balances_match(url, truth)

    blocks = client.get("/api/v1/blocks", params={"order": "asc", "limit": 100})
    assert blocks.status_code == 200
    listed = blocks.json()["blocks"]
    assert [block["number"] for block in listed] == list(range(count))
    assert [block["count"] for block in listed] == [file["count"] for file in truth["record_files"]["files"]]
    if fmt == "blocks":  # a wrapped block's row is its record file's
        assert [block["hash"][2:] for block in listed] == [file["hash"] for file in truth["record_files"]["files"]]
    else:  # a native block's is the block's: its root hash, chained by the footers
        assert [block["previous_hash"] for block in listed[1:]] == [block["hash"] for block in listed[:-1]]
    account, balance = next((a, b) for a, b in sorted(truth["accounts"].items()) if b["balance"] > 0)
    answer = client.get(f"/api/v1/accounts/{account}")
    assert answer.status_code == 200
    assert answer.json()["balance"]["balance"] == balance["balance"]
    last = client.get(f"/api/v1/blocks/{count - 1}")
    assert last.status_code == 200
    assert last.json()["name"] == (truth["record_files"]["last"] if fmt == "blocks" else f"{count - 1:019d}.blk")


def test_an_importer_restart_resumes_after_the_last_stored_block(
    network: Path, database: Prepared, tmp_path: Path
) -> None:
    truth = _truth(network)
    url = database.owner_url
    count = truth["record_files"]["count"]
    _copy_blocks(network, tmp_path, 3)
    folder = BlockFolder(tmp_path)

    async def scenario(port: int) -> tuple[int, int]:
        source = f"grpc://127.0.0.1:{port}"
        first = await _import(url, source, _options(network))
        _copy_blocks(network, tmp_path, count)  # the node receives the rest of the stream
        second = await _import(url, source, _options(network))
        return first.files, second.files

    assert asyncio.run(_served(folder, scenario)) == (3, count - 3)
    assert _indexes(url) == list(range(count))
    _balances_match(url, truth)


def test_the_node_dies_mid_stream_and_comes_back(network: Path, database: Prepared) -> None:
    """Following a live node that is stopped while it streams block 4 and restarted on its port: the importer
    reconnects, asks for the block after the last one it received, and ends with every block once."""
    truth = _truth(network)
    url = database.owner_url
    count = truth["record_files"]["count"]

    async def scenario() -> tuple[int, list[int]]:
        port = free_port()
        servers: list[BlockNodeServer] = []

        def trip() -> None:
            async def bounce() -> None:
                await servers[0].stop(None)
                await asyncio.sleep(0.3)
                again = BlockNodeServer(BlockFolder(network))
                await again.start(port=port)
                servers.append(again)

            asyncio.get_running_loop().create_task(bounce())

        servers.append(BlockNodeServer(TrippingFolder(network, 4, trip)))
        await servers[0].start(port=port)
        stop = asyncio.Event()
        options = ClientOptions(
            stall_seconds=5.0, status_seconds=2.0, backoff_seconds=0.05, max_backoff_seconds=0.2
        )
        source = block_node.open_block_node_source(f"grpc://127.0.0.1:{port}", options=options)
        conn = await asyncpg.connect(url)
        try:
            importing = asyncio.create_task(
                run_block_import(conn, source, _options(network, once=False), stop=stop)
            )
            while len(await _stored(url)) < count and not importing.done():
                await asyncio.sleep(0.1)
            stop.set()
            await importing
        finally:
            await conn.close()
            for server in servers:
                await server.stop()
        return len(servers), await _stored(url)

    restarted, stored = asyncio.run(asyncio.wait_for(scenario(), GUARD_SECONDS))
    assert restarted == 2
    assert stored == list(range(count))
    _balances_match(url, truth)


async def _stored(url: str) -> list[int]:
    conn = await asyncpg.connect(url)
    try:
        return [row["index"] for row in await conn.fetch("select index from record_file order by index")]
    finally:
        await conn.close()


def test_the_first_node_down_the_second_serves(network: Path, database: Prepared) -> None:
    truth = _truth(network)
    url = database.owner_url

    async def scenario(port: int) -> ImportStats:
        source = f"grpc://127.0.0.1:{free_port()},grpc://127.0.0.1:{port}"
        return await _import(url, source, _options(network))

    stats = asyncio.run(_served(BlockFolder(network), scenario))
    assert stats.files == truth["record_files"]["count"]
    assert _indexes(url) == list(range(truth["record_files"]["count"]))


def test_native_fixture_blocks_from_a_node_write_the_rows_of_the_files(database: Prepared, tmp_path: Path) -> None:
    """The reference's native blocks 7 and 8 (TSS proofs: chain-verified only) from a block node write what
    the same files write; only the name (``.blk``: a node sends no file) and size (uncompressed) differ."""
    url = database.owner_url
    (tmp_path / "addressbook.bin").write_bytes(SIGNING_BOOK.read_bytes())
    shutil.copytree(FIXTURES, tmp_path / "blockstreams")
    options = _options(tmp_path, initial_balances=None)
    block_specific = {"name", "size", "load_start", "load_end"}

    def stored() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        files = [
            {key: value for key, value in row.items() if key not in block_specific}
            for row in fetch(url, "select * from record_file order by index")
        ]
        transactions = [dict(row) for row in fetch(url, "select * from transaction order by consensus_timestamp")]
        return files, transactions

    async def from_node(port: int) -> ImportStats:
        return await _import(url, f"grpc://127.0.0.1:{port}", options)

    streamed = asyncio.run(_served(BlockFolder(FIXTURES), from_node))
    assert streamed.files == 2
    names = [row["name"] for row in fetch(url, "select name from record_file order by index")]
    assert names == ["0000000000000000007.blk", "0000000000000000008.blk"]
    from_the_node = stored()
    asyncio.run(_reset(url))
    assert asyncio.run(_import(url, str(tmp_path), _options(tmp_path, initial_balances=None))).files == 2
    assert stored() == from_the_node
    assert [row["index"] for row in from_the_node[0]] == [7, 8]


async def _reset(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await reset(conn)
    finally:
        await conn.close()
