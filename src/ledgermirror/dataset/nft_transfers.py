"""The history of every NFT, from the same decisions as the ``nft`` rows (``nfts.nft_plan``): a TOKENMINT per
serial to the treasury, a CRYPTOTRANSFER from the treasury to the serial's owner, a TOKENBURN for a burned serial.
Each is a ``transaction`` with its ``nft_transfer`` list, its ``transaction_hash`` row and its fee
``crypto_transfer`` rows (paid by the treasury); a serial that left the treasury also gets its minted version in
``nft_history`` (owned by the treasury from the mint until it moved).

The transactions happen exactly when the ``nft`` rows say (mint at ``created_timestamp``, transfer or burn when the
serial last changed), so ``/api/v1/tokens/{id}/nfts/{serial}/transactions`` finds one at each event. ``nft_plan``
places those times in the last quarter of the gaps between blocks (``World.between_blocks``): the blocks' record
files count exactly the transactions in their windows, and topic messages and schedules use the gaps' first half.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
from asyncpg import Range

from ledgermirror.dataset.nfts import NftPlan, Serial, nft_plan
from ledgermirror.dataset.tokens import content_uri
from ledgermirror.dataset.world import FEE_COLLECTOR, NODE_ACCOUNTS, SECOND, Emit, Row, World, entity_id
from ledgermirror.ledger.transaction_codes import CRYPTOTRANSFER, SUCCESS, type_number

TOKENMINT = type_number("TOKENMINT")
TOKENBURN = type_number("TOKENBURN")
_VALID_DURATION = 120


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


def _minted_version(world: World, plan: NftPlan, treasury_id: int, serial: Serial) -> Row:
    token = plan.facts.index
    return {
        "token_id": plan.facts.id, "serial_number": serial.number, "account_id": treasury_id,
        "created_timestamp": serial.minted, "deleted": False,
        "metadata": f"{content_uri(world, 'nft', token)}/{serial.number}.json".encode(),
        "timestamp_range": Range(serial.minted, serial.modified),
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
            world, rng, serial.minted, TOKENMINT, payer=treasury, entity=facts.id, moved=minted
        )
        if serial.modified == serial.minted:
            continue  # still with the treasury
        yield "nft_history", _minted_version(world, plan, treasury_id, serial)
        receiver = None if serial.owner is None else entity_id(world.account_num(serial.owner))
        moved = {**minted, "receiver_account_id": receiver, "sender_account_id": treasury_id}
        kind = TOKENBURN if serial.owner is None else CRYPTOTRANSFER
        yield from _transaction(world, rng, serial.modified, kind, payer=treasury, entity=facts.id, moved=moved)


def nft_transfers(world: World) -> Emit:
    """Every NFT's mint, transfer and burn transactions and minted versions, token by token."""
    for rank in range(world.nft_tokens):
        yield from _token_transfers(world, nft_plan(world, world.nft_token(rank)))
