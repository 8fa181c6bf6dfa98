"""The contract routes' shared pieces against the database: the block of one result or of a page
(``contract_blocks``) and the resolution of ``{contractIdOrAddress}`` (``contract_ref``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest, InternalError, NotFound
from ledgermirror.api.resources.contracts import contract_blocks, contract_ref
from ledgermirror.api.resources.contracts.contract_blocks import NO_BLOCK, Block

T = TypeVar("T")
SECOND = 1_000_000_000
HASH_A = "aa" * 48
HASH_B = "bb" * 48


def run(client: TestClient, call: Callable[[AppContext], Awaitable[T]]) -> T:
    """Run a coroutine of the app's context on the client's event loop (where its pool lives)."""
    ctx: AppContext = client.app.state.ctx  # type: ignore[attr-defined]
    portal: Any = client.portal  # type: ignore[attr-defined]
    result: T = portal.call(call, ctx)
    return result


def record_file(index: int, start: int, end: int, digest: str, gas_used: int) -> dict[str, Any]:
    return {
        "index": index,
        "consensus_start": start * SECOND,
        "consensus_end": end * SECOND,
        "hash": digest,
        "gas_used": gas_used,
    }


@pytest.fixture
def blocks(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load({"recordFiles": [record_file(7, 100, 102, HASH_A, -1), record_file(8, 104, 106, HASH_B, 400)]})
    return client


def test_block_of_one_timestamp(blocks: TestClient) -> None:
    first = run(blocks, lambda ctx: contract_blocks.block_at(ctx, 101 * SECOND))
    assert first == Block(hash=HASH_A, number=7, gas_used=-1)
    assert (first.block_hash, first.block_gas_used) == ("0x" + HASH_A, None)
    # between files: the next file to close (the reference's rule for one result)
    gap = run(blocks, lambda ctx: contract_blocks.block_at(ctx, 103 * SECOND))
    assert (gap.number, gap.block_gas_used) == (8, 400)
    assert run(blocks, lambda ctx: contract_blocks.block_at(ctx, 106 * SECOND)).number == 8
    after = run(blocks, lambda ctx: contract_blocks.block_at(ctx, 106 * SECOND + 1))
    assert after is NO_BLOCK
    assert (after.block_hash, after.number, after.block_gas_used) == ("0x", None, None)


def test_blocks_of_a_page(blocks: TestClient) -> None:
    stamps = [100 * SECOND, 102 * SECOND, 103 * SECOND, 105 * SECOND, 99 * SECOND, 107 * SECOND]
    found = run(blocks, lambda ctx: contract_blocks.blocks_of(ctx, stamps))
    assert {stamp: block.number for stamp, block in found.items()} == {
        100 * SECOND: 7,
        102 * SECOND: 7,
        105 * SECOND: 8,
    }  # a timestamp no file contains (a gap, before, after) has no block
    assert run(blocks, lambda ctx: contract_blocks.blocks_of(ctx, [])) == {}


def test_blocks_of_a_page_reach_ten_seconds_past_its_last_timestamp(blocks: TestClient, ledger: Ledger) -> None:
    ledger.load({"recordFiles": [record_file(9, 107, 118, "cc" * 48, 0)]})
    found = run(blocks, lambda ctx: contract_blocks.blocks_of(ctx, [101 * SECOND, 107 * SECOND]))
    assert found[101 * SECOND].number == 7
    assert 107 * SECOND not in found  # its file closes more than 10 s after the page's last timestamp
    found = run(blocks, lambda ctx: contract_blocks.blocks_of(ctx, [108 * SECOND]))
    assert found[108 * SECOND].number == 9


ADDRESS = "71eefd0a9cd0bd31b8cb3bec4c4cc3d4e6e1e2a4"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("5001", 5001), ("0.0.5001", 5001), ("0x0000000000000000000000000000000000001389", 5001), ("9999", 9999)],
)
def test_resolve_ids_without_a_lookup(client: TestClient, text: str, expected: int) -> None:
    assert run(client, lambda ctx: contract_ref.resolve_contract(text, ctx)) == expected


def test_resolve_create2_addresses(client: TestClient, ledger: Ledger) -> None:
    ledger.load(
        {
            "contracts": [
                {"num": 5001, "evm_address": ADDRESS},
                {"num": 5002, "evm_address": "11" * 20, "deleted": True},
                {"num": 5003, "evm_address": "22" * 20},
                {"num": 5004, "evm_address": "22" * 20},
            ],
            "accounts": [{"num": 5005, "evm_address": "33" * 20}],
        }
    )
    for text in (ADDRESS, "0x" + ADDRESS.upper(), "0.0." + ADDRESS, "7.8." + ADDRESS):
        assert run(client, lambda ctx, text=text: contract_ref.resolve_contract(text, ctx)) == 5001
    for address in ("11" * 20, "33" * 20, "44" * 20):  # deleted, an account, nobody
        with pytest.raises(NotFound) as raised:
            run(client, lambda ctx, address=address: contract_ref.resolve_contract("0x" + address, ctx))
        assert raised.value.messages == (f"No contract with the given evm address 0x{address} has been found.",)
    with pytest.raises(InternalError):  # two live contracts with one address: a broken database
        run(client, lambda ctx: contract_ref.resolve_contract("22" * 20, ctx))
    with pytest.raises(BadRequest):
        run(client, lambda ctx: contract_ref.resolve_contract("results", ctx))
