"""The token service's handlers for account-token relationships (reference §3.2): associate, dissociate,
freeze, unfreeze, grant KYC and revoke KYC. Each writes versioned ``token_account`` rows on success; the main
entity is the account.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import asyncpg

from ledgermirror.db import token_state
from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.batch import Batch, Step
from ledgermirror.importer.handlers.context import Handler, ItemContext
from ledgermirror.importer.handlers.item import Item
from ledgermirror.importer.handlers.tokens import FROZEN, GRANTED, REVOKED, UNFROZEN


def association(account: int, token: int, consensus_timestamp: int) -> dict[str, Any]:
    """A new association at balance 0 (its freeze and KYC status left to the column defaults)."""
    return {
        "account_id": account,
        "token_id": token,
        "associated": True,
        "automatic_association": False,
        "balance": 0,
        "balance_timestamp": consensus_timestamp,
        "created_timestamp": consensus_timestamp,
        "timestamp_range": consensus_timestamp,
    }


def token_associate(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.tokenAssociate
    account = ids.account_id(body.account)
    context.set_transaction(entity_id=ids.nullable(account))
    if not item.successful:
        return
    for token_message in body.tokens:
        token = ids.token_id(token_message)
        batch.upsert("token_account", association(account, token, item.consensus_timestamp))
        context.touch(token)


def _deleted_token_holdings(item: Item, account: int) -> list[tuple[int, int]]:
    """(token, negative amount) of the record's token transfer lists that hold exactly one entry, a debit of
    the dissociating account: the shape of a dissociation from a deleted token (reference §1.6)."""
    found = []
    for token_list in item.record.tokenTransferLists:
        entries = token_list.transfers
        if len(entries) == 1 and entries[0].amount < 0 and ids.account_id(entries[0].accountID) == account:
            found.append((ids.token_id(token_list.token), int(entries[0].amount)))
    return found


def token_dissociate(item: Item, batch: Batch, context: ItemContext) -> None:
    """``associated = false`` from now on; the balance is inherited (the record's transfers zero it). From a
    deleted token, the token's supply drops by what the account held and its NFTs are deleted."""
    body = item.body.tokenDissociate
    account = ids.account_id(body.account)
    context.set_transaction(entity_id=ids.nullable(account))
    if not item.successful:
        return
    for token_message in body.tokens:
        token = ids.token_id(token_message)
        batch.upsert(
            "token_account",
            {
                "account_id": account,
                "token_id": token,
                "associated": False,
                "timestamp_range": item.consensus_timestamp,
            },
        )
        context.touch(token)
    holdings = _deleted_token_holdings(item, account)
    if holdings:
        tokens = [(token,) for token, _ in holdings]
        batch.defer(
            _dissociate_deleted(account, holdings, item.consensus_timestamp),
            touches={"token": tokens, "nft": tokens},
        )


def _dissociate_deleted(account: int, holdings: list[tuple[int, int]], stamp: int) -> Step:
    async def step(conn: asyncpg.Connection) -> dict[str, int]:
        counts: dict[str, int] = {}
        for token, amount in holdings:
            done = await token_state.dissociate_deleted_token(conn, token, account, amount, stamp)
            for name, count in done.items():
                counts[name] = counts.get(name, 0) + count
        return counts

    return step


def _status(body_name: str, column: str, value: int) -> Handler:
    """Freeze/unfreeze (``freeze_status``) and grant/revoke KYC (``kyc_status``) of one account and token."""

    def handler(item: Item, batch: Batch, context: ItemContext) -> None:
        body = getattr(item.body, body_name)
        account = ids.account_id(body.account)
        token = ids.token_id(body.token)
        context.set_transaction(entity_id=ids.nullable(account))
        context.touch(token)
        if item.successful:
            batch.upsert(
                "token_account",
                {
                    "account_id": account,
                    "token_id": token,
                    "associated": True,
                    column: value,
                    "timestamp_range": item.consensus_timestamp,
                },
            )

    return handler


HANDLERS: Mapping[str, Handler] = MappingProxyType(
    {
        "tokenAssociate": token_associate,
        "tokenDissociate": token_dissociate,
        "tokenFreeze": _status("tokenFreeze", "freeze_status", FROZEN),
        "tokenUnfreeze": _status("tokenUnfreeze", "freeze_status", UNFROZEN),
        "tokenGrantKyc": _status("tokenGrantKyc", "kyc_status", GRANTED),
        "tokenRevokeKyc": _status("tokenRevokeKyc", "kyc_status", REVOKED),
    }
)
"""Account-token relationship transactions by ``TransactionBody`` oneof name."""
