"""The token service's handlers for tokens themselves (reference §3.2): create, update, delete, pause, unpause,
fee schedule update, reject, and the supply changes of mint, burn and wipe (their NFT rows: ``nfts.py``).

Every handler sets the item's main entity whatever the status; rows are written only on success. A partial
token update (TokenUpdate, pause, unpause) is merged like any row, but inserts nothing: the ``token`` table
inserts no row without ``created_timestamp`` (``inserted_with``, the reference's ``skipPartialUpdate``), so an
update of a token the database never saw created is dropped; a treasury change of an NFT class also moves its
NFTs, in a deferred step. A supply change is a ``token`` row
without range: it sets ``total_supply`` of an existing token in place and makes no history.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import asyncpg

from ledgermirror.db import token_state, write
from ledgermirror.importer.handlers import custom_fees, ids, nfts
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import Handler, ItemContext
from ledgermirror.importer.handlers.entities import Operation, key_or_none, sanitize, upsert_entity
from ledgermirror.importer.handlers.item import Item

TOKEN = "TOKEN"
FROZEN, UNFROZEN = 1, 2  # freeze_status; NOT_APPLICABLE is 0
GRANTED, REVOKED = 1, 2  # kyc_status
NOT_APPLICABLE = 0
_SUPPLY_TYPES = ("INFINITE", "FINITE")
_TOKEN_TYPES = ("FUNGIBLE_COMMON", "NON_FUNGIBLE_UNIQUE")
_TOKEN_KEYS = (  # TokenCreate/TokenUpdate field -> token column
    ("fee_schedule_key", "fee_schedule_key"),
    ("freezeKey", "freeze_key"),
    ("kycKey", "kyc_key"),
    ("pause_key", "pause_key"),
    ("supplyKey", "supply_key"),
    ("wipeKey", "wipe_key"),
    ("metadata_key", "metadata_key"),
)
_METADATA_HAPI_MINOR = 49


def _seconds(message: Any, field: str) -> int | None:
    return int(getattr(message, field).seconds) if message.HasField(field) else None


def _nanos(message: Any, field: str) -> int | None:
    return ids.nanos(getattr(message, field)) if message.HasField(field) else None


def _keys(body: Any) -> dict[str, bytes | None]:
    return {column: key_or_none(body, field) for field, column in _TOKEN_KEYS}


# Create ------------------------------------------------------------------------------------------------------


def token_create(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.tokenCreation
    token = ids.token_id(item.record.receipt.tokenID)
    context.set_transaction(entity_id=ids.nullable(token))
    if not item.successful:
        return
    stamp = item.consensus_timestamp
    auto_renew = batch.account_of(body.autoRenewAccount) if body.HasField("autoRenewAccount") else ids.EMPTY
    upsert_entity(
        item,
        batch,
        token,
        Operation.CREATE,
        TOKEN,
        key=key_or_none(body, "adminKey"),
        auto_renew_account_id=auto_renew or None,
        auto_renew_period=_seconds(body, "autoRenewPeriod"),
        expiration_timestamp=_nanos(body, "expiry"),
        memo=sanitize(body.memo),
    )
    keys = _keys(body)
    if not item.hapi_at_least(_METADATA_HAPI_MINOR):
        keys["metadata_key"] = None
    freeze_key = keys["freeze_key"] is not None
    kyc_key = keys["kyc_key"] is not None
    treasury = ids.account_id(body.treasury)
    row: dict[str, Any] = {
        "token_id": token,
        "created_timestamp": stamp,
        "decimals": body.decimals,
        "freeze_default": body.freezeDefault,
        "initial_supply": body.initialSupply,
        "total_supply": body.initialSupply,
        "max_supply": body.maxSupply,
        "name": body.name,
        "symbol": body.symbol,
        "supply_type": _SUPPLY_TYPES[body.supplyType] if body.supplyType < 2 else _SUPPLY_TYPES[0],
        "type": _TOKEN_TYPES[body.tokenType] if body.tokenType < 2 else _TOKEN_TYPES[0],
        "treasury_account_id": treasury,
        "freeze_status": (FROZEN if body.freezeDefault else UNFROZEN) if freeze_key else NOT_APPLICABLE,
        "kyc_status": REVOKED if kyc_key else NOT_APPLICABLE,
        "pause_status": "UNPAUSED" if keys["pause_key"] is not None else "NOT_APPLICABLE",
        "timestamp_range": stamp,
        **keys,
    }
    if item.hapi_at_least(_METADATA_HAPI_MINOR):
        row["metadata"] = bytes(body.metadata)
    batch.upsert("token", row)
    custom_fees.write_custom_fee(item, batch, token, custom_fees.fee_lists(body.custom_fees, token))
    _associate_at_create(
        item, batch, context, body, token, treasury=treasury, freeze_key=freeze_key, kyc_key=kyc_key
    )


def _associate_at_create(
    item: Item,
    batch: Batch,
    context: ItemContext,
    body: Any,
    token: int,
    *,
    treasury: int,
    freeze_key: bool,
    kyc_key: bool,
) -> None:
    """The record's automatic associations, else the treasury and the collectors of fees in the new token."""
    listed = [
        ids.account_id(association.account_id)
        for association in item.record.automatic_token_associations
        if ids.token_id(association.token_id) == token
    ]
    if not item.record.automatic_token_associations:
        listed = [treasury, *custom_fees.collectors_in_own_token(body.custom_fees)]
    stamp = item.consensus_timestamp
    for account in dict.fromkeys(listed):
        if not account:
            continue
        batch.upsert(
            "token_account",
            {
                "account_id": account,
                "token_id": token,
                "associated": True,
                "automatic_association": False,
                "balance": 0,
                "balance_timestamp": stamp,
                "created_timestamp": stamp,
                "freeze_status": UNFROZEN if freeze_key else NOT_APPLICABLE,
                "kyc_status": GRANTED if kyc_key else NOT_APPLICABLE,
                "timestamp_range": stamp,
            },
        )
        context.touch(account)


# Update, delete, pause ---------------------------------------------------------------------------------------


def _token_update(batch: Batch, row: dict[str, Any], treasury_moves: list[tuple[int, int, int, int]]) -> None:
    """A partial token row (``token`` inserts no row without ``created_timestamp``: an update of a token never
    seen created is dropped); a treasury change of an NFT class also moves the NFTs, in a deferred step that
    needs the rows before it."""
    if not treasury_moves:
        batch.upsert("token", row)
        return

    async def step(conn: asyncpg.Connection) -> dict[str, int]:
        counts = {"token": await write.upsert(conn, "token", [row])}
        for token, old, new, stamp in treasury_moves:
            for name, count in (await token_state.move_nft_treasury(conn, token, old, new, stamp)).items():
                counts[name] = counts.get(name, 0) + count
        return counts

    token = row["token_id"]
    accounts = {(account, moved) for moved, old, new, _ in treasury_moves for account in (old, new)}
    touches = {
        "token": [(token,)],
        "nft": [(moved,) for moved, _, _, _ in treasury_moves],
        "token_account": accounts,
    }
    batch.defer(step, touches=touches)


def _treasury_moves(item: Item) -> list[tuple[int, int, int, int]]:
    """The record's wildcard NFT transfers (serial -1): (token, old treasury, new treasury, timestamp)."""
    moves = []
    for token_list in item.record.tokenTransferLists:
        for transfer in token_list.nftTransfers:
            if transfer.serialNumber == nfts.TREASURY_WILDCARD:
                old = ids.account_id(transfer.senderAccountID)
                new = ids.account_id(transfer.receiverAccountID)
                if old and new:
                    moves.append((ids.token_id(token_list.token), old, new, item.consensus_timestamp))
    return moves


def token_update(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.tokenUpdate
    token = ids.token_id(body.token)
    context.set_transaction(entity_id=ids.nullable(token))
    if not item.successful:
        return
    memo = sanitize(body.memo.value) if body.HasField("memo") else None
    upsert_entity(
        item,
        batch,
        token,
        Operation.UPDATE,
        TOKEN,
        key=key_or_none(body, "adminKey"),
        auto_renew_account_id=batch.account_of(body.autoRenewAccount)
        if body.HasField("autoRenewAccount")
        else None,
        auto_renew_period=_seconds(body, "autoRenewPeriod"),
        expiration_timestamp=_nanos(body, "expiry"),
        memo=memo,
    )
    row: dict[str, Any] = {"token_id": token, "timestamp_range": item.consensus_timestamp}
    row.update((column, value) for column, value in _keys(body).items() if value is not None)
    if body.HasField("metadata") and item.hapi_at_least(_METADATA_HAPI_MINOR):
        row["metadata"] = bytes(body.metadata.value)
    if body.name:
        row["name"] = body.name
    if body.symbol:
        row["symbol"] = body.symbol
    if body.HasField("treasury") and ids.account_id(body.treasury):
        row["treasury_account_id"] = ids.account_id(body.treasury)
    _token_update(batch, row, _treasury_moves(item))


def token_delete(item: Item, batch: Batch, context: ItemContext) -> None:
    token = ids.token_id(item.body.tokenDeletion.token)
    context.set_transaction(entity_id=ids.nullable(token))
    upsert_entity(item, batch, token, Operation.DELETE, TOKEN)


def _pause(status: str, body_name: str) -> Handler:
    def handler(item: Item, batch: Batch, context: ItemContext) -> None:
        token = ids.token_id(getattr(item.body, body_name).token)
        context.set_transaction(entity_id=ids.nullable(token))
        if item.successful:
            row = {"token_id": token, "pause_status": status, "timestamp_range": item.consensus_timestamp}
            _token_update(batch, row, [])

    return handler


def fee_schedule_update(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.token_fee_schedule_update
    token = ids.token_id(body.token_id)
    context.set_transaction(entity_id=ids.nullable(token))
    if item.successful:
        custom_fees.write_custom_fee(item, batch, token, custom_fees.fee_lists(body.custom_fees, token))


def token_reject(item: Item, batch: Batch, context: ItemContext) -> None:
    """The owner (else the payer); the record's transfers back to the treasuries do the rest."""
    body = item.body.tokenReject
    owner = batch.account_of(body.owner) if body.HasField("owner") else ids.EMPTY
    context.set_transaction(entity_id=ids.nullable(owner or item.payer_account_id))


# Supply ------------------------------------------------------------------------------------------------------


def _total_supply(item: Item, batch: Batch, token: int) -> None:
    """``total_supply`` = the receipt's new total supply, on the stored token (no history)."""
    batch.upsert("token", {"token_id": token, "total_supply": item.record.receipt.newTotalSupply})


def token_mint(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.tokenMint
    token = ids.token_id(body.token)
    context.set_transaction(entity_id=ids.nullable(token))
    if item.successful:
        _total_supply(item, batch, token)
        nfts.mint(item, batch, token, list(item.record.receipt.serialNumbers), list(body.metadata))


def token_burn(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.tokenBurn
    token = ids.token_id(body.token)
    context.set_transaction(entity_id=ids.nullable(token))
    if item.successful:
        _total_supply(item, batch, token)
        nfts.delete(item, batch, token, list(body.serialNumbers))


def token_wipe(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.tokenWipe
    token = ids.token_id(body.token)
    context.set_transaction(entity_id=ids.nullable(token))
    context.touch(ids.account_id(body.account))
    if item.successful:
        _total_supply(item, batch, token)
        nfts.delete(item, batch, token, list(body.serialNumbers))


HANDLERS: Mapping[str, Handler] = MappingProxyType(
    {
        "tokenCreation": token_create,
        "tokenUpdate": token_update,
        "tokenDeletion": token_delete,
        "token_pause": _pause("PAUSED", "token_pause"),
        "token_unpause": _pause("UNPAUSED", "token_unpause"),
        "token_fee_schedule_update": fee_schedule_update,
        "tokenReject": token_reject,
        "tokenMint": token_mint,
        "tokenBurn": token_burn,
        "tokenWipe": token_wipe,
        "token_update_nfts": nfts.update_nfts,
    }
)
"""Token-level transactions by ``TransactionBody`` oneof name."""
