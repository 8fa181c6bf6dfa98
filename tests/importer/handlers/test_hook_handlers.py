"""Hooks (HIP-1195): created with an account, deleted by an update, storage written by HookStore."""

from __future__ import annotations

from tests.importer.handlers.items import (
    T0,
    account,
    basic,
    body,
    encoded,
    fetch,
    import_items,
    module,
    record_item,
)
from tests.support import Ledger

from ledgermirror.importer.handlers.evm import keccak256

hook_types = module("hook_types_pb2")


def word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def test_hook_lifecycle(ledger: Ledger) -> None:
    t1, t2, t3, t4 = T0 + 1, T0 + 2, T0 + 3, T0 + 4
    creation = hook_types.HookCreationDetails(
        extension_point=0,
        hook_id=7,
        admin_key=basic.Key(ed25519=b"\x01" * 32),
        evm_hook=hook_types.EvmHook(
            spec=hook_types.EvmHookSpec(contract_id=basic.ContractID(contractNum=4000)),
            storage_updates=[
                hook_types.EvmHookStorageUpdate(
                    storage_slot=hook_types.EvmHookStorageSlot(key=b"\x01", value=b"\x00\x00\x05")
                ),
                hook_types.EvmHookStorageUpdate(
                    mapping_entries=hook_types.EvmHookMappingEntries(
                        mapping_slot=b"\x02",
                        entries=[hook_types.EvmHookMappingEntry(key=b"\x0a", value=b"\x09")],
                    )
                ),
            ],
        ),
    )
    create = module("crypto_create_pb2").CryptoCreateTransactionBody(
        key=basic.Key(ed25519=b"\x02" * 32), hook_creation_details=[creation]
    )
    store = module("hook_store_pb2").HookStoreTransactionBody(
        hook_id=basic.HookId(entity_id=basic.HookEntityId(account_id=account(1001)), hook_id=7),
        storage_updates=[
            hook_types.EvmHookStorageUpdate(storage_slot=hook_types.EvmHookStorageSlot(key=b"\x01", value=b"")),
        ],
    )
    rewrite = module("hook_store_pb2").HookStoreTransactionBody(
        hook_id=basic.HookId(entity_id=basic.HookEntityId(account_id=account(1001)), hook_id=7),
        storage_updates=[
            hook_types.EvmHookStorageUpdate(
                storage_slot=hook_types.EvmHookStorageSlot(key=b"\x01", value=b"\x06")
            ),
        ],
    )
    update = module("crypto_update_pb2").CryptoUpdateTransactionBody(
        accountIDToUpdate=account(1001), hook_ids_to_delete=[7]
    )
    import_items(
        ledger.url, record_item(body("cryptoCreateAccount", create), at=t1, receipt={"accountID": account(1001)})
    )
    hook = fetch(ledger.url, "select * from hook")[0]
    assert (hook["owner_id"], hook["hook_id"], hook["contract_id"], hook["created_timestamp"]) == (
        encoded(1001), 7, encoded(4000), t1,
    )  # fmt: skip
    assert (hook["deleted"], hook["extension_point"], hook["type"]) == (False, "ACCOUNT_ALLOWANCE_HOOK", "EVM")
    assert hook["admin_key"] == basic.Key(ed25519=b"\x01" * 32).SerializeToString()
    mapped = keccak256(word(10) + word(2))
    slots = fetch(ledger.url, "select key, value, created_timestamp, deleted from hook_storage order by key")
    assert sorted((row["key"], row["value"]) for row in slots) == sorted([(word(1), b"\x05"), (mapped, b"\x09")])
    import_items(
        ledger.url,
        record_item(body("hook_store", store), at=t2),
        record_item(body("hook_store", rewrite), at=t3),
    )
    slot = fetch(ledger.url, "select * from hook_storage where key = $1", word(1))[0]
    assert (slot["value"], slot["deleted"], slot["created_timestamp"], slot["modified_timestamp"]) == (
        b"\x06",
        False,
        t3,
        t3,
    )  # fmt: skip  (a deleted slot written again starts anew)
    changes = fetch(
        ledger.url,
        "select consensus_timestamp, value_written, deleted from hook_storage_change where key = $1 order by 1",
        word(1),
    )
    assert changes == [
        {"consensus_timestamp": t1, "value_written": b"\x05", "deleted": False},
        {"consensus_timestamp": t2, "value_written": b"", "deleted": True},
        {"consensus_timestamp": t3, "value_written": b"\x06", "deleted": False},
    ]
    assert fetch(ledger.url, "select entity_id from transaction where consensus_timestamp = $1", t2) == [
        {"entity_id": encoded(1001)}
    ]
    import_items(ledger.url, record_item(body("cryptoUpdateAccount", update), at=t4))
    assert fetch(ledger.url, "select deleted, created_timestamp, contract_id from hook") == [
        {"deleted": True, "created_timestamp": t1, "contract_id": encoded(4000)}
    ]
    assert len(fetch(ledger.url, "select * from hook_history")) == 1


def test_a_slot_written_twice_by_one_transaction_keeps_its_last_value(ledger: Ledger) -> None:
    """One ``hook_storage_change`` row per slot and transaction (its key), the last write's value; it used to
    stop the import with a duplicate key."""

    def slot_update(value: bytes) -> object:
        return hook_types.EvmHookStorageUpdate(
            storage_slot=hook_types.EvmHookStorageSlot(key=b"\x03", value=value)
        )

    store = module("hook_store_pb2").HookStoreTransactionBody(
        hook_id=basic.HookId(entity_id=basic.HookEntityId(account_id=account(1001)), hook_id=7),
        storage_updates=[slot_update(b"\x01"), slot_update(b"\x02")],
    )
    import_items(ledger.url, record_item(body("hook_store", store), at=T0 + 1))
    changes = fetch(ledger.url, "select key, value_written from hook_storage_change")
    assert changes == [{"key": word(3), "value_written": b"\x02"}]
    assert fetch(ledger.url, "select value from hook_storage") == [{"value": b"\x02"}]
