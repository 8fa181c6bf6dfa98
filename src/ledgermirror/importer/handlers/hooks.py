"""Hooks (HIP-1195, reference §3.10): ``hook`` rows from the hook creations and deletions of CryptoCreate,
CryptoUpdate, ContractCreate and ContractUpdate; slot writes of a hook's initial storage and of HookStore
into ``hook_storage_change`` and ``hook_storage``.

Not done: storage changes of hook executions (sidecar state changes of 0.0.365 attributed through the parent
CryptoTransfer's hook queue). ``value_read`` of a written slot is the value written (the reference's value is
not documented here).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import asyncpg

from ledgermirror.db import hook_storage
from ledgermirror.importer.handlers import evm, ids
from ledgermirror.importer.handlers.base import Batch, Handler, Item
from ledgermirror.importer.handlers.entities import key_or_none

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
    """Slot writes: one ``hook_storage_change`` row each, and the slots' new values (after the rows so far)."""
    stamp = item.consensus_timestamp
    folded: dict[bytes, hook_storage.Slot] = {}
    for key, value in _slots(updates):
        deleted = not value
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
        folded[key] = (stamp, hook_id, stamp, owner, key, value, deleted)
    if folded:
        slots = list(folded.values())

        async def step(conn: asyncpg.Connection) -> dict[str, int]:
            return {"hook_storage": await hook_storage.upsert_slots(conn, slots)}

        batch.defer(step)


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
                "contract_id": ids.nullable(ids.contract_id(spec.contract_id)),
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


def _owner(hook_entity: Any) -> int:
    if hook_entity.WhichOneof("entity_id") == "contract_id":
        return ids.contract_id(hook_entity.contract_id)
    return ids.account_id(hook_entity.account_id)


def hook_store(item: Item, batch: Batch) -> None:
    body = item.body.hook_store
    owner = _owner(body.hook_id.entity_id)
    batch.set_transaction(entity_id=ids.nullable(owner))
    if item.successful and owner:
        write_storage(item, batch, owner, body.hook_id.hook_id, body.storage_updates)


HANDLERS: Mapping[str, Handler] = MappingProxyType({"hook_store": hook_store})
