"""Synthetic contract logs of HAPI token operations (reference §1.15, ``persist.syntheticContractLogs``, on by
default; ``SyntheticContractLogServiceImpl`` and ``SyntheticLogListener``): ERC-20/721 events in
``contract_log`` so that EVM tools see HTS tokens move.

* fungible transfers: TokenCreate, TokenMint, TokenBurn and TokenWipe give one ``Transfer`` per token transfer
  entry (from 0.0.0 for a credit, to 0.0.0 for a debit); any other list of at least two entries is paired
  senders to receivers, each side sorted by amount (largest first), then shard, realm and num, and each pair
  moves the smaller of what remains (the reference's ``TransferEventsGenerator``);
* NFT transfers: one indexed ``Transfer`` per serial (the serial as ``topic3``; the treasury-change wildcard
  -1 too, as the reference);
* CryptoApproveAllowance: ``Approval`` (owner, spender, amount) per token allowance, ``ApprovalForAll``
  (owner, spender, approved) per NFT allowance with ``approved_for_all``, ``Approval`` (owner, spender,
  serial) per NFT serial; CryptoDeleteAllowance: ``Approval`` (owner, 0.0.0, serial) per serial.

Columns: ``contract_id`` = ``root_contract_id`` = the token; ``topic0`` the event signature, ``topic1``/``topic2``
the ids' long-zero addresses (the num only, as the reference's ``toEvmAddress``) and ``topic3`` the serial,
without leading zero bytes (0.0.0 is empty), as ``contract_log`` stores topics; ``data`` the amount (or the
approval flag) without leading zero bytes, else empty; ``bloom`` one byte, 0x01 when the item has a contract
result, else 0x00; ``index`` the file's running log index; ``synthetic`` true for fungible ``Transfer`` logs
only (the reference's ``TransferContractLog``; NFT transfers are its ``TransferIndexedContractLog``).

Skipped: for an item with a contract result (a precompile call), every log but a fungible ``Transfer``, and
from HAPI 0.71 that one too (its consensus node emitted the logs itself). A log of an item whose
contract-related parent is known (a hook execution among its earlier siblings, else a parent with a contract
result) takes that parent's consensus timestamp, transaction index and hash, ``contract_id`` from the parent's
``contractCallResult`` and ``root_contract_id`` from its receipt.

At the end of each file (:func:`complete_addresses`, the reference's ``SyntheticLogListener``, setting
``LEDGERMIRROR_IMPORT_SYNTHETIC_LOG_EVM_LOOKUP``, on by default) the fungible ``Transfer`` logs get the EVM
address of their sender and receiver where it has one (``topic1``, ``topic2``), and a log whose bloom is the
0x01 marker a real 256-byte bloom of its contract's address and its topics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import ContractParent, FileState, ItemContext, SyntheticTransfer
from ledgermirror.importer.handlers.item import Item
from ledgermirror.ledger.evm import log_bloom

TRANSFER = bytes.fromhex("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")
APPROVAL = bytes.fromhex("8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925")
APPROVAL_FOR_ALL = bytes.fromhex("17307eab39ab6107e8899845ad3d59bd9653f200f220920489ca2b5937696c31")
NODE_LOGS_MINOR = 71
"""From HAPI 0.71 consensus nodes emit these logs for items with a contract result."""
SUPPLY_BODIES = frozenset({"tokenCreation", "tokenMint", "tokenBurn", "tokenWipe"})
HOOK_CONTRACT_NUM = 365
"""The hook system contract 0.0.365 (0x16d): a child call to it is a hook execution."""
CONTRACT_LOG_MARKER = b"\x01"
"""The bloom of a synthetic log of an item with a contract result until :func:`complete_addresses`."""
NO_BLOOM = b"\x00"
ADDRESS_LENGTH = 20
_RESULTS = ("contractCallResult", "contractCreateResult")

Parties = tuple[int, int]
"""(from, to) of an event: sender and receiver, or owner and spender."""


def result_of(record: Any) -> Any:
    """The record's ``contractCallResult`` or ``contractCreateResult``, None when it has neither."""
    for name in _RESULTS:
        if record.HasField(name):
            return getattr(record, name)
    return None


def address(entity_id: int) -> bytes:
    """The id's long-zero EVM address without leading zero bytes: its num only, as the reference's
    ``trim(toEvmAddress(id))`` (shard and realm are not in it); 0.0.0 is empty."""
    if not entity_id:
        return b""
    return ids.parts(entity_id)["num"].to_bytes(8, "big").lstrip(b"\0")


def long_zero_address(entity_id: int) -> bytes:
    """The 20-byte long-zero address of an id (12 zero bytes, then the num)."""
    return ids.parts(entity_id)["num"].to_bytes(ADDRESS_LENGTH, "big")


def word(value: int) -> bytes:
    """An unsigned value without leading zero bytes (0 is empty)."""
    return (value & (2**64 - 1)).to_bytes(8, "big").lstrip(b"\0")


def contract_parent(item: Item, transaction_hash: bytes) -> ContractParent:
    """What children of ``item`` (which has a contract result) take for their synthetic logs."""
    record = item.record
    contract = ids.contract_id(record.contractCallResult.contractID) if record.HasField(_RESULTS[0]) else 0
    result = result_of(record)
    return ContractParent(
        consensus_timestamp=item.consensus_timestamp,
        index=item.index,
        transaction_hash=transaction_hash,
        contract_id=contract,
        root_contract_id=ids.contract_id(record.receipt.contractID),
        result_contract_num=result.contractID.contractNum if result is not None else 0,
    )


def _contract_related_parent(item: Item, file: FileState) -> ContractParent | None:
    """The reference's ``getContractRelatedParent``: a hook execution among the item's earlier siblings (for
    a child with a contract result not itself of 0.0.365), else its parent if that has a contract result."""
    parent_stamp = item.parent_consensus_timestamp
    if parent_stamp is None:
        return None
    own = result_of(item.record)
    if own is not None and own.contractID.contractNum != HOOK_CONTRACT_NUM:
        for stamp in reversed(file.previous):
            if stamp == parent_stamp:
                break
            candidate = file.contract_parents.get(stamp)
            if candidate is None:
                break
            if candidate.result_contract_num == HOOK_CONTRACT_NUM:
                return candidate
    return file.contract_parents.get(parent_stamp)


def _log(
    item: Item,
    batch: Batch,
    context: ItemContext,
    token: int,
    topics: tuple[bytes, ...],
    *,
    data: bytes,
    parties: Parties | None = None,
) -> None:
    """One synthetic log; ``parties`` (sender, receiver) marks a fungible ``Transfer`` (``synthetic``)."""
    contract_origin = result_of(item.record) is not None
    if contract_origin and (parties is None or item.hapi_at_least(NODE_LOGS_MINOR)):
        return
    file = context.file
    parent = _contract_related_parent(item, file)
    if parent is not None:
        stamp, index, digest = parent.consensus_timestamp, parent.index, parent.transaction_hash
        contract, root_contract = parent.contract_id, parent.root_contract_id
    else:
        stamp, index, digest = item.consensus_timestamp, item.index, bytes(item.record.transactionHash[:32])
        contract = root_contract = token
    padded = (*topics, None, None, None, None)[:4]
    row = {
        "bloom": CONTRACT_LOG_MARKER if contract_origin else NO_BLOOM,
        "consensus_timestamp": stamp,
        "contract_id": contract,
        "data": data,
        "index": file.log_index,
        "topic0": padded[0],
        "topic1": padded[1],
        "topic2": padded[2],
        "topic3": padded[3],
        "payer_account_id": item.payer_account_id,
        "root_contract_id": root_contract,
        "transaction_hash": digest,
        "transaction_index": index,
        "synthetic": parties is not None,
    }
    batch.insert("contract_log", row)
    file.log_index += 1
    if parties is not None and (contract or parties[0] or parties[1]):
        file.synthetic_transfers.append(SyntheticTransfer(row, contract, *parties))


def address_lookups(file: FileState) -> set[int]:
    """The ids whose EVM addresses :func:`complete_addresses` needs (contracts, senders, receivers)."""
    wanted: set[int] = set()
    for log in file.synthetic_transfers:
        wanted.update(entity_id for entity_id in (log.contract_id, log.sender, log.receiver) if entity_id)
    return wanted


def complete_addresses(file: FileState, batch: Batch, stored: Mapping[int, bytes]) -> None:
    """The end of a file (the reference's ``SyntheticLogListener.onEnd``): each synthetic ``Transfer`` log's
    ``topic1``/``topic2`` become the sender's/receiver's EVM address (``stored``: the database's non-empty
    ``entity.evm_address`` by id; else the one the batch gives the entity), without leading zero bytes, where
    it has one; a log whose bloom is the marker gets the bloom of its contract's address (the EVM address,
    else the 20-byte long-zero address) and its four topics."""

    def evm_address(entity_id: int) -> bytes | None:
        found = stored.get(entity_id)
        if found is None:
            held = batch.latest("entity", entity_id)
            found = held.get("evm_address") if held is not None else None
        return bytes(found).lstrip(b"\0") if found else None

    for log in file.synthetic_transfers:
        row = log.row
        for entity_id, topic in ((log.sender, "topic1"), (log.receiver, "topic2")):
            if entity_id and (found := evm_address(entity_id)) is not None:
                row[topic] = found
        if row["bloom"] == CONTRACT_LOG_MARKER:
            contract_address = evm_address(log.contract_id) if log.contract_id else None
            if contract_address is None:
                contract_address = long_zero_address(log.contract_id)
            topics = [row[name] for name in ("topic0", "topic1", "topic2", "topic3") if row[name] is not None]
            row["bloom"] = log_bloom(contract_address, topics)
    file.synthetic_transfers.clear()


def transfer(item: Item, batch: Batch, context: ItemContext, token: int, parties: Parties, *, amount: int) -> None:
    sender, receiver = parties
    topics = (TRANSFER, address(sender), address(receiver))
    _log(item, batch, context, token, topics, data=word(amount), parties=parties)


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
    """The reference's ``TransferIndexedContractLog``: not ``synthetic``, and skipped for an item with a
    contract result."""
    sender, receiver = parties
    topics = (TRANSFER, address(sender), address(receiver), word(serial))
    _log(item, batch, context, token, topics, data=b"")


def approval(item: Item, batch: Batch, context: ItemContext, token: int, parties: Parties, *, amount: int) -> None:
    owner, spender = parties
    topics = (APPROVAL, address(owner), address(spender))
    _log(item, batch, context, token, topics, data=word(amount))


def nft_approval(
    item: Item, batch: Batch, context: ItemContext, token: int, parties: Parties, *, serial: int
) -> None:
    owner, spender = parties
    topics = (APPROVAL, address(owner), address(spender), word(serial))
    _log(item, batch, context, token, topics, data=b"")


def approval_for_all(
    item: Item, batch: Batch, context: ItemContext, token: int, parties: Parties, *, approved: bool
) -> None:
    owner, spender = parties
    topics = (APPROVAL_FOR_ALL, address(owner), address(spender))
    _log(item, batch, context, token, topics, data=b"\x01" if approved else b"\x00")
