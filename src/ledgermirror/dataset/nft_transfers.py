"""The transactions that moved each NFT, from the same decisions as the ``nft`` rows (``nfts.nft_plan``): a
TOKENMINT per serial to the treasury, a CRYPTOTRANSFER from the treasury to the serial's owner, a TOKENBURN for a
burned serial. Each is a ``transaction`` with its ``nft_transfer`` list, its ``transaction_hash`` row and its fee
``crypto_transfer`` rows (paid by the treasury).

The transactions happen when the ``nft`` rows say (mint at ``created_timestamp``, transfer or burn when the serial
last changed), except that a time falling inside a block's window moves to after it: the blocks' record files
count exactly the transactions in their windows.
"""

from __future__ import annotations

import random
from typing import Any

import orjson

from ledgermirror.dataset.nfts import NftPlan, nft_plan
from ledgermirror.dataset.world import FEE_COLLECTOR, NODE_ACCOUNTS, SECOND, Emit, World, entity_id
from ledgermirror.ledger.transaction_codes import CRYPTOTRANSFER, SUCCESS, type_number

TOKENMINT = type_number("TOKENMINT")
TOKENBURN = type_number("TOKENBURN")
_VALID_DURATION = 120


def outside_blocks(world: World, at: int) -> int:
    """``at``, or, when it falls inside a block's window, the same offset after the window (distinct times stay
    distinct; every profile's blocks are more than twice their window apart)."""
    offset = (at - world.start) % world.block_interval
    shift = world.block_window + 1
    if at >= world.start and offset <= world.block_window and offset + shift < world.block_interval:
        return at + shift
    return at


def _transaction(
    world: World, rng: random.Random, at: int, kind: int, *, payer: int, entity: int, moved: dict[str, Any]
) -> Emit:
    fee = 50_000 + rng.randrange(100_000)
    node = NODE_ACCOUNTS[rng.randrange(len(NODE_ACCOUNTS))]
    tx_hash = world.digest("nft-transaction", at, 48)
    payer_id = entity_id(payer)
    yield "transaction", {
        "consensus_timestamp": at, "type": kind, "result": SUCCESS, "payer_account_id": payer_id,
        "valid_start_ns": at - rng.randrange(SECOND, 8 * SECOND), "valid_duration_seconds": _VALID_DURATION,
        "node_account_id": entity_id(node), "entity_id": entity if kind != CRYPTOTRANSFER else None,
        "max_fee": 2 * fee, "charged_tx_fee": fee, "transaction_hash": tx_hash,
        "nft_transfer": orjson.dumps([moved]).decode(),
    }  # fmt: skip
    yield "transaction_hash", {
        "consensus_timestamp": at, "hash": tx_hash[:32], "payer_account_id": payer_id, "hash_suffix": tx_hash[32:],
    }  # fmt: skip
    for account, amount in ((payer, -fee), (node, fee // 10), (FEE_COLLECTOR, fee - fee // 10)):
        yield "crypto_transfer", {
            "entity_id": entity_id(account), "consensus_timestamp": at, "amount": amount,
            "payer_account_id": payer_id, "is_approval": False,
        }  # fmt: skip


def _token_transfers(world: World, plan: NftPlan) -> Emit:
    facts = plan.facts
    rng = random.Random(world.digest("nft-transfers", facts.id))
    treasury = world.account_num(facts.treasury)
    treasury_id = entity_id(treasury)
    for serial in plan.serials:
        minted: dict[str, Any] = {
            "is_approval": False, "receiver_account_id": treasury_id, "sender_account_id": None,
            "serial_number": serial.number, "token_id": facts.id,
        }  # fmt: skip
        yield from _transaction(
            world,
            rng,
            outside_blocks(world, serial.minted),
            TOKENMINT,
            payer=treasury,
            entity=facts.id,
            moved=minted,
        )
        if serial.modified == serial.minted:
            continue  # still with the treasury
        receiver = None if serial.owner is None else entity_id(world.account_num(serial.owner))
        moved = {**minted, "receiver_account_id": receiver, "sender_account_id": treasury_id}
        kind = TOKENBURN if serial.owner is None else CRYPTOTRANSFER
        yield from _transaction(
            world, rng, outside_blocks(world, serial.modified), kind, payer=treasury, entity=facts.id, moved=moved
        )


def nft_transfers(world: World) -> Emit:
    """Every NFT's mint, transfer and burn transactions, token by token."""
    for rank in range(world.nft_tokens):
        yield from _token_transfers(world, nft_plan(world, world.nft_token(rank)))
