"""Synthetic contract logs of HAPI token operations (reference §1.15, ``persist.syntheticContractLogs``, on by
default): ERC-20/721 events in ``contract_log`` so that EVM tools see HTS tokens move.

* fungible transfers: TokenCreate, TokenMint, TokenBurn and TokenWipe give one ``Transfer`` per token transfer
  entry (from 0.0.0 for a credit, to 0.0.0 for a debit); any other list of at least two entries is paired
  senders to receivers, each side sorted by amount (largest first), then shard, realm and num, and each pair
  moves the smaller of what remains (the reference's ``TransferEventsGenerator``);
* NFT transfers: one ``Transfer`` per serial (the serial as ``topic3``; none for the treasury-change wildcard);
* CryptoApproveAllowance: ``Approval`` (owner, spender, amount) per token allowance, ``ApprovalForAll``
  (owner, spender, approved) per NFT allowance with ``approved_for_all``, ``Approval`` (owner, spender,
  serial) per NFT serial; CryptoDeleteAllowance: ``Approval`` (owner, 0.0.0, serial) per serial.

Columns: ``contract_id`` = ``root_contract_id`` = the token; ``topic0`` the event signature, ``topic1``/``topic2``
the ids' long-zero addresses and ``topic3`` the serial, without leading zero bytes (0.0.0 is empty), as
``contract_log`` stores topics; ``data`` the amount (or the approval flag) without leading zero bytes, else
empty; ``bloom`` one byte, 0x01 when the item has a contract result, else 0x00; ``index`` the file's running
log index; ``synthetic`` true for ``Transfer`` logs only. A child of an item with a contract result (a
precompile call, a hook execution) takes its parent's consensus timestamp, transaction index and hash. An item
with a contract result of HAPI 0.71 or later gets none: its consensus node emitted the logs itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import ItemContext
from ledgermirror.importer.handlers.item import Item

TRANSFER = bytes.fromhex("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")
APPROVAL = bytes.fromhex("8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925")
APPROVAL_FOR_ALL = bytes.fromhex("17307eab39ab6107e8899845ad3d59bd9653f200f220920489ca2b5937696c31")
NODE_LOGS_MINOR = 71
"""From HAPI 0.71 consensus nodes emit these logs for items with a contract result."""
SUPPLY_BODIES = frozenset({"tokenCreation", "tokenMint", "tokenBurn", "tokenWipe"})
_RESULTS = ("contractCallResult", "contractCreateResult")


def _has_result(item: Item) -> bool:
    return any(item.record.HasField(name) for name in _RESULTS)


def address(entity_id: int) -> bytes:
    """The id's long-zero EVM address (shard, realm, num) without leading zero bytes; 0.0.0 is empty."""
    if not entity_id:
        return b""
    parts = ids.parts(entity_id)
    raw = parts["shard"].to_bytes(4, "big") + parts["realm"].to_bytes(8, "big") + parts["num"].to_bytes(8, "big")
    return raw.lstrip(b"\0")


def word(value: int) -> bytes:
    """An unsigned value without leading zero bytes (0 is empty)."""
    return (value & (2**64 - 1)).to_bytes(8, "big").lstrip(b"\0")


def _log(
    item: Item,
    batch: Batch,
    context: ItemContext,
    token: int,
    topics: tuple[bytes, ...],
    *,
    data: bytes,
    transfer: bool,
) -> None:
    if _has_result(item) and item.hapi_at_least(NODE_LOGS_MINOR):
        return
    stamp, index, digest = item.consensus_timestamp, item.index, bytes(item.record.transactionHash[:32])
    parent = context.file.contract_parents.get(item.parent_consensus_timestamp or -1)
    if parent is not None:
        stamp, index, digest = parent
    padded = (*topics, None, None, None, None)[:4]
    batch.insert(
        "contract_log",
        {
            "bloom": b"\x01" if _has_result(item) else b"\x00",
            "consensus_timestamp": stamp,
            "contract_id": token,
            "data": data,
            "index": context.file.log_index,
            "topic0": padded[0],
            "topic1": padded[1],
            "topic2": padded[2],
            "topic3": padded[3],
            "payer_account_id": item.payer_account_id,
            "root_contract_id": token,
            "transaction_hash": digest,
            "transaction_index": index,
            "synthetic": transfer,
        },
    )
    context.file.log_index += 1


Parties = tuple[int, int]
"""(from, to) of an event: sender and receiver, or owner and spender."""


def transfer(item: Item, batch: Batch, context: ItemContext, token: int, parties: Parties, *, amount: int) -> None:
    sender, receiver = parties
    topics = (TRANSFER, address(sender), address(receiver))
    _log(item, batch, context, token, topics, data=word(amount), transfer=True)


def fungible_transfers(item: Item, batch: Batch, context: ItemContext, token: int, entries: Iterable[Any]) -> None:
    """The ``Transfer`` logs of one token's fungible transfer list."""
    listed = [(ids.account_id(entry.accountID), entry.amount, entry.accountID) for entry in entries]
    if item.body_name in SUPPLY_BODIES:
        for account, amount, _ in listed:
            if amount > 0:
                transfer(item, batch, context, token, (ids.EMPTY, account), amount=amount)
            elif amount < 0:
                transfer(item, batch, context, token, (account, ids.EMPTY), amount=-amount)
        return
    if len(listed) < 2:
        return

    def order(entry: tuple[int, int, Any]) -> tuple[int, int, int, int]:
        account = entry[2]
        return (-abs(entry[1]), account.shardNum, account.realmNum, account.accountNum)

    senders = sorted((entry for entry in listed if entry[1] <= 0), key=order)
    receivers = sorted((entry for entry in listed if entry[1] > 0), key=order)
    s = r = 0
    sent = received = 0
    while s < len(senders) and r < len(receivers):
        left = -senders[s][1] - sent
        wanted = receivers[r][1] - received
        amount = min(left, wanted)
        transfer(item, batch, context, token, (senders[s][0], receivers[r][0]), amount=amount)
        sent += amount
        received += amount
        if sent == -senders[s][1]:
            s, sent = s + 1, 0
        if received == receivers[r][1]:
            r, received = r + 1, 0


def nft_transfer(
    item: Item, batch: Batch, context: ItemContext, token: int, parties: Parties, *, serial: int
) -> None:
    sender, receiver = parties
    topics = (TRANSFER, address(sender), address(receiver), word(serial))
    _log(item, batch, context, token, topics, data=b"", transfer=True)


def approval(item: Item, batch: Batch, context: ItemContext, token: int, parties: Parties, *, amount: int) -> None:
    owner, spender = parties
    topics = (APPROVAL, address(owner), address(spender))
    _log(item, batch, context, token, topics, data=word(amount), transfer=False)


def nft_approval(
    item: Item, batch: Batch, context: ItemContext, token: int, parties: Parties, *, serial: int
) -> None:
    owner, spender = parties
    topics = (APPROVAL, address(owner), address(spender), word(serial))
    _log(item, batch, context, token, topics, data=b"", transfer=False)


def approval_for_all(
    item: Item, batch: Batch, context: ItemContext, token: int, parties: Parties, *, approved: bool
) -> None:
    owner, spender = parties
    topics = (APPROVAL_FOR_ALL, address(owner), address(spender))
    _log(item, batch, context, token, topics, data=b"\x01" if approved else b"\x00", transfer=False)
