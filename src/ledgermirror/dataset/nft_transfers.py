"""The history of every NFT: its mint and, for a serial that left the treasury or was burned, the transfer or
burn, as ``transaction`` rows with their ``nft_transfer`` lists, and the minted version of the serial as an
``nft_history`` row (owned by the treasury from the mint until it moved).

The events are the ones :func:`~ledgermirror.dataset.nfts.nft_plan` decided (the ``nft`` rows' creation and
modification times), so ``/api/v1/tokens/{id}/nfts/{serial}/transactions`` finds a transaction at each of them.
Those times lie in the last quarter of the gaps between blocks (``World.between_blocks``), so they never collide
with a block's, a topic message's or a schedule's transaction.
"""

from __future__ import annotations

from asyncpg import Range

from ledgermirror.dataset.nfts import Serial, nft_plan, nft_tokens
from ledgermirror.dataset.tokens import content_uri
from ledgermirror.dataset.world import HBAR, NODE_ACCOUNTS, SECOND, Emit, Row, World, entity_id
from ledgermirror.ledger.transaction_codes import SUCCESS, type_number

TOKENMINT = type_number("TOKENMINT")
TOKENBURN = type_number("TOKENBURN")
CRYPTOTRANSFER = type_number("CRYPTOTRANSFER")
_FEE = HBAR // 20


def _transaction(world: World, at: int, kind: int, payer: int, *, token: int, moves: list[Row]) -> Row:
    return {
        "consensus_timestamp": at, "type": kind, "result": SUCCESS, "payer_account_id": payer,
        "valid_start_ns": at - 3 * SECOND, "valid_duration_seconds": 120,
        "node_account_id": entity_id(NODE_ACCOUNTS[at % len(NODE_ACCOUNTS)]),
        "entity_id": token if kind != CRYPTOTRANSFER else None, "max_fee": HBAR, "charged_tx_fee": _FEE,
        "transaction_hash": world.digest("nft transaction", at, 48), "index": 0, "nft_transfer": moves,
    }  # fmt: skip


def _move(token: int, serial: int, sender: int | None, receiver: int | None) -> Row:
    return {
        "is_approval": False, "receiver_account_id": receiver, "sender_account_id": sender,
        "serial_number": serial, "token_id": token,
    }  # fmt: skip


def nft_transfers(world: World) -> Emit:
    """``transaction`` rows of NFT mints, transfers and burns, and ``nft_history`` rows of minted serials."""
    for token in nft_tokens(world):
        plan = nft_plan(world, token)
        token_id = plan.facts.id
        treasury = entity_id(world.account_num(plan.facts.treasury))
        for serial in plan.serials:
            mint = [_move(token_id, serial.number, None, treasury)]
            minted = _transaction(world, serial.minted, TOKENMINT, treasury, token=token_id, moves=mint)
            yield "transaction", minted
            if serial.modified == serial.minted:
                continue
            yield "nft_history", _minted_version(world, token, token_id, treasury, serial)
            owner = None if serial.owner is None else entity_id(world.account_num(serial.owner))
            kind = TOKENBURN if owner is None else CRYPTOTRANSFER
            moved = [_move(token_id, serial.number, treasury, owner)]
            yield "transaction", _transaction(world, serial.modified, kind, treasury, token=token_id, moves=moved)


def _minted_version(world: World, token: int, token_id: int, treasury: int, serial: Serial) -> Row:
    return {
        "token_id": token_id, "serial_number": serial.number, "account_id": treasury,
        "created_timestamp": serial.minted, "deleted": False,
        "metadata": f"{content_uri(world, 'nft', token)}/{serial.number}.json".encode(),
        "timestamp_range": Range(serial.minted, serial.modified),
    }  # fmt: skip
