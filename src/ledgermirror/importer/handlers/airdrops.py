"""Airdrops (reference §3.2 items 13-14, §5.4): ``token_airdrop`` rows keyed by (sender, receiver, token,
serial; 0 for a fungible airdrop) with their state PENDING, CLAIMED or CANCELLED.

TokenAirdrop writes the record's new pending airdrops (airdrops that went straight through are only token and
NFT transfers). Claim and cancel close the pending state into history; the amount is inherited; an airdrop
whose sender or receiver does not resolve is skipped. A claim also
associates the receiver with the token unless it is associated already, in this batch or in the database (a
deferred step, before the item's own transfers are applied). None of them has a main entity.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import asyncpg

from ledgermirror.db import token_state
from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import Handler, ItemContext
from ledgermirror.importer.handlers.item import Item
from ledgermirror.importer.handlers.token_accounts import association

PENDING, CLAIMED, CANCELLED = "PENDING", "CLAIMED", "CANCELLED"


def _airdrop_key(batch: Batch, pending_id: Any) -> dict[str, int]:
    """sender_account_id, receiver_account_id, token_id and serial_number of a ``PendingAirdropId``."""
    if pending_id.WhichOneof("token_reference") == "non_fungible_token":
        token = ids.token_id(pending_id.non_fungible_token.token_ID)
        serial = int(pending_id.non_fungible_token.serial_number)
    else:
        token = ids.token_id(pending_id.fungible_token_type)
        serial = 0
    return {
        "sender_account_id": batch.account_of(pending_id.sender_id),
        "receiver_account_id": batch.account_of(pending_id.receiver_id),
        "token_id": token,
        "serial_number": serial,
    }


def token_airdrop(item: Item, batch: Batch, context: ItemContext) -> None:
    if not item.successful:
        return
    for pending in item.record.new_pending_airdrops:
        key = _airdrop_key(batch, pending.pending_airdrop_id)
        fungible = key["serial_number"] == 0
        batch.upsert(
            "token_airdrop",
            {
                **key,
                "amount": pending.pending_airdrop_value.amount if fungible else None,
                "state": PENDING,
                "timestamp_range": item.consensus_timestamp,
            },
        )
        context.touch(key["sender_account_id"], key["receiver_account_id"], key["token_id"])


def _settle(state: str, body_name: str) -> Handler:
    def handler(item: Item, batch: Batch, context: ItemContext) -> None:
        if not item.successful:
            return
        stamp = item.consensus_timestamp
        associations: list[dict[str, Any]] = []
        for pending_id in getattr(item.body, body_name).pending_airdrops:
            key = _airdrop_key(batch, pending_id)
            if not key["sender_account_id"] or not key["receiver_account_id"]:
                continue  # a party that does not resolve: skipped (a recoverable error in the reference)
            batch.upsert("token_airdrop", {**key, "state": state, "timestamp_range": stamp})
            context.touch(key["sender_account_id"], key["receiver_account_id"], key["token_id"])
            if state == CLAIMED:
                receiver, token = key["receiver_account_id"], key["token_id"]
                held = batch.latest("token_account", receiver, token)
                if held is None or not held.get("associated"):
                    associations.append(association(receiver, token, stamp))
        if associations:
            by_pair = {(row["account_id"], row["token_id"]): row for row in associations}
            rows, key_pairs = list(by_pair.values()), list(by_pair)

            async def step(conn: asyncpg.Connection) -> dict[str, int]:
                return await token_state.associate_new(conn, rows)

            batch.defer(step, touches={"token_account": list(key_pairs)})

    return handler


HANDLERS: Mapping[str, Handler] = MappingProxyType(
    {
        "tokenAirdrop": token_airdrop,
        "tokenClaimAirdrop": _settle(CLAIMED, "tokenClaimAirdrop"),
        "tokenCancelAirdrop": _settle(CANCELLED, "tokenCancelAirdrop"),
    }
)
"""Airdrop transactions by ``TransactionBody`` oneof name."""
