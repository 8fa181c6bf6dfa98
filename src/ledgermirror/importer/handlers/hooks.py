"""Hooks (HIP-1195, reference §3.10): ``hook`` rows from the hook creations and deletions of CryptoCreate,
CryptoUpdate, ContractCreate and ContractUpdate; slot writes of a hook's initial storage and of HookStore
into ``hook_storage_change`` and ``hook_storage``.

Hook executions: a CryptoTransfer's body names the allowance hooks it calls; :func:`hook_queue` lists them in
the reference's execution order (every pre-transaction hook, then every pre-post hook for its "pre" call,
then the same for its "post" call; per transfer entry: HBAR entries, then per token its fungible entries and
its NFT transfers, sender hook before receiver hook). Each execution is a child ContractCall to 0.0.365 whose
sidecar state changes of 0.0.365 are that hook's storage: :func:`hook_storage_changes` writes them as
``hook_storage_change`` rows (slot, value read, value written as given, as the reference does; no
``hook_storage`` row) under the next (owner, hook) of the parent's queue.

``value_read`` of a HookStore or initial-storage write is the value written (the reference's value is not
documented here).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import asyncpg

from ledgermirror.db import hook_storage
from ledgermirror.importer.handlers import evm, ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import Handler, ItemContext
from ledgermirror.importer.handlers.entities import key_or_none
from ledgermirror.importer.handlers.item import Item
from ledgermirror.importer.items_read_ahead import AMOUNT_HOOK_CALL

WORD = 32


def _word(data: bytes) -> bytes:
    """A slot key: left-padded to 32 bytes."""
    return bytes(data).rjust(WORD, b"\x00")[-WORD:]


def _trimmed(data: bytes) -> bytes:
    """A slot value without its leading zero bytes (empty: the slot is deleted)."""
    return bytes(data).lstrip(b"\x00")


def _slots(updates: Iterable[Any]) -> list[tuple[bytes, bytes]]:
    """(key, value) of each slot write, mapping entries at keccak(key ‖ mapping slot)."""
    writes = []
    for update in updates:
        case = update.WhichOneof("update")
        if case == "storage_slot":
            writes.append((_word(update.storage_slot.key), _trimmed(update.storage_slot.value)))
        elif case == "mapping_entries":
            mapping_slot = _word(update.mapping_entries.mapping_slot)
            for entry in update.mapping_entries.entries:
                if entry.WhichOneof("entry_key") == "preimage":
                    key = evm.keccak256(bytes(entry.preimage))
                else:
                    key = _word(entry.key)
                writes.append((evm.keccak256(key + mapping_slot), _trimmed(entry.value)))
    return writes


def write_storage(item: Item, batch: Batch, owner: int, hook_id: int, updates: Iterable[Any]) -> None:
    """Slot writes: one ``hook_storage_change`` row per slot (a slot written twice by one transaction keeps its
    last value: the row's key is owner, hook, slot and timestamp), and the slots' new values (after the rows so
    far)."""
    stamp = item.consensus_timestamp
    folded: dict[bytes, hook_storage.Slot] = {}
    for key, value in _slots(updates):
        folded[key] = (stamp, hook_id, stamp, owner, key, value, not value)
    for _, _, _, _, key, value, deleted in folded.values():
        batch.insert(
            "hook_storage_change",
            {
                "consensus_timestamp": stamp,
                "hook_id": hook_id,
                "owner_id": owner,
                "key": key,
                "value_read": value,
                "value_written": value,
                "deleted": deleted,
            },
        )
    if folded:
        slots = list(folded.values())

        async def step(conn: asyncpg.Connection) -> dict[str, int]:
            return {"hook_storage": await hook_storage.upsert_slots(conn, slots)}

        batch.defer(step, touches={"hook_storage": None})


_AMOUNT_HOOKS = (AMOUNT_HOOK_CALL, "pre_tx_allowance_hook")
_SENDER_HOOKS = ("sender_allowance_hook_call", "pre_tx_sender_allowance_hook")
_RECEIVER_HOOKS = ("receiver_allowance_hook_call", "pre_tx_receiver_allowance_hook")
"""Each: the oneof of a transfer's hook call, and its member called before the transfer only (the other member,
``pre_post_...``, is called before and after)."""


def hook_queue(item: Item, batch: Batch, context: ItemContext, hbar_entries: Iterable[Any]) -> None:
    """The (owner, hook id) pairs a CryptoTransfer calls, in execution order; ``hbar_entries`` are its HBAR
    transfers that call a hook (the handler reads them once), in body order."""
    pre: list[tuple[int, int]] = []
    pre_post: list[tuple[int, int]] = []

    def add(owner: Any, holder: Any, names: tuple[str, str]) -> None:
        oneof, single = names
        name = holder.WhichOneof(oneof)
        if name is None:
            return
        call = getattr(holder, name)
        if call.WhichOneof("id") == "hook_id":
            (pre if name == single else pre_post).append((batch.account_of(owner), call.hook_id))

    for entry in hbar_entries:
        add(entry.accountID, entry, _AMOUNT_HOOKS)
    for token_list in item.body.cryptoTransfer.tokenTransfers:
        for entry in token_list.transfers:
            if entry.WhichOneof(AMOUNT_HOOK_CALL) is not None:
                add(entry.accountID, entry, _AMOUNT_HOOKS)
        for nft in token_list.nftTransfers:
            add(nft.senderAccountID, nft, _SENDER_HOOKS)
            add(nft.receiverAccountID, nft, _RECEIVER_HOOKS)
    if pre or pre_post:
        context.file.hook_queues[item.consensus_timestamp] = pre + pre_post + pre_post


def hook_storage_changes(item: Item, batch: Batch, context: ItemContext, storage_changes: Iterable[Any]) -> None:
    """The 0.0.365 state changes of one hook execution: ``hook_storage_change`` rows of the next hook of the
    parent CryptoTransfer's queue (none when the queue is empty: the reference logs a recoverable error)."""
    queue = context.file.hook_queues.get(item.parent_consensus_timestamp or -1)
    if not queue:
        return
    owner, hook_id = queue.pop(0)
    if not owner:
        return
    for change in storage_changes:
        batch.insert(
            "hook_storage_change",
            {
                "consensus_timestamp": item.consensus_timestamp,
                "hook_id": hook_id,
                "owner_id": owner,
                "key": bytes(change.slot),
                "value_read": bytes(change.value_read),
                "value_written": bytes(change.value_written.value) if change.HasField("value_written") else None,
                "deleted": False,
            },
        )


def create_hooks(item: Item, batch: Batch, owner: int, creations: Iterable[Any]) -> None:
    """Each EVM hook whose spec names a contract: a ``hook`` row and its initial storage."""
    if not item.successful or not owner:
        return
    stamp = item.consensus_timestamp
    for details in creations:
        if details.WhichOneof("hook") != "evm_hook":
            continue
        spec = details.evm_hook.spec
        if spec.WhichOneof("bytecode_source") != "contract_id":
            continue
        batch.upsert(
            "hook",
            {
                "owner_id": owner,
                "hook_id": details.hook_id,
                "contract_id": ids.nullable(batch.contract_of(spec.contract_id)),
                "admin_key": key_or_none(details, "admin_key"),
                "created_timestamp": stamp,
                "deleted": False,
                "extension_point": "ACCOUNT_ALLOWANCE_HOOK",
                "type": "EVM",
                "timestamp_range": stamp,
            },
        )
        write_storage(item, batch, owner, details.hook_id, details.evm_hook.storage_updates)


def delete_hooks(item: Item, batch: Batch, owner: int, hook_ids: Iterable[int]) -> None:
    if not item.successful or not owner:
        return
    for hook_id in hook_ids:
        batch.upsert(
            "hook",
            {"owner_id": owner, "hook_id": hook_id, "deleted": True, "timestamp_range": item.consensus_timestamp},
        )


def _owner(batch: Batch, hook_entity: Any) -> int:
    if hook_entity.WhichOneof("entity_id") == "contract_id":
        return batch.contract_of(hook_entity.contract_id)
    return batch.account_of(hook_entity.account_id)


def hook_store(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.hook_store
    owner = _owner(batch, body.hook_id.entity_id)
    context.set_transaction(entity_id=ids.nullable(owner))
    if item.successful and owner:
        write_storage(item, batch, owner, body.hook_id.hook_id, body.storage_updates)


HANDLERS: Mapping[str, Handler] = MappingProxyType({"hook_store": hook_store})
