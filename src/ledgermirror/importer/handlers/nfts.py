"""``nft`` rows of the token service (reference §3.2, §5.3): mint, burn and wipe, and TokenUpdateNfts.

Every change opens a new range and moves the previous state to ``nft_history`` (the writer's upsert). The
owner of a minted NFT comes from the record's NFT transfer (``common.py``), merged at the same timestamp; a
burned or wiped NFT is deleted and loses its owner (a deferred step sets ``account_id`` NULL, the reference's
upsert rule); TokenUpdateNfts changes only the metadata and keeps the spenders (a deferred step, since the
writer's upsert clears spenders on any change).
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from ledgermirror.db import token_state
from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import ItemContext
from ledgermirror.importer.handlers.item import Item

TREASURY_WILDCARD = -1
"""The serial number of the NFT transfer that reports a treasury change of an NFT class."""


def mint(item: Item, batch: Batch, token: int, serials: Sequence[int], metadata: Sequence[bytes]) -> None:
    """One NFT per receipt serial with the body's metadata at the same position (the shorter list wins)."""
    stamp = item.consensus_timestamp
    for serial, data in zip(serials, metadata, strict=False):
        batch.upsert(
            "nft",
            {
                "token_id": token,
                "serial_number": serial,
                "created_timestamp": stamp,
                "deleted": False,
                "metadata": bytes(data),
                "timestamp_range": stamp,
            },
        )


def delete(item: Item, batch: Batch, token: int, serials: Sequence[int]) -> None:
    """Burned or wiped NFTs: deleted, without owner."""
    if not serials:
        return
    stamp = item.consensus_timestamp
    for serial in serials:
        batch.upsert(
            "nft", {"token_id": token, "serial_number": serial, "deleted": True, "timestamp_range": stamp}
        )
    serial_list = list(serials)

    async def step(conn: asyncpg.Connection) -> dict[str, int]:
        return await token_state.clear_deleted_owners(conn, token, serial_list)

    batch.defer(step, touches={"nft": [(token, serial) for serial in serial_list]})


def update_nfts(item: Item, batch: Batch, context: ItemContext) -> None:
    """TokenUpdateNfts: new metadata for the listed serials (nothing without metadata)."""
    body = item.body.token_update_nfts
    token = ids.token_id(body.token)
    context.set_transaction(entity_id=ids.nullable(token))
    if not item.successful or not body.HasField("metadata") or not body.serial_numbers:
        return
    serials = list(body.serial_numbers)
    metadata = bytes(body.metadata.value)
    stamp = item.consensus_timestamp

    async def step(conn: asyncpg.Connection) -> dict[str, int]:
        return await token_state.update_nft_metadata(conn, token, serials, metadata, stamp)

    batch.defer(step, touches={"nft": [(token, serial) for serial in serials]})
