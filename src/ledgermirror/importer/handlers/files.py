"""The file service (reference §3.4) and SystemDelete/SystemUndelete (§3.7).

FileCreate, FileUpdate and FileAppend write ``file_data`` on success (a FileUpdate without contents writes empty
bytes). A successful one on 0.0.101 or 0.0.102 also rebuilds that address book after the file's bytes are
written (``address_books.py``); 0.0.111/112/113 and the other system files are plain ``file_data``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ledgermirror.importer.handlers import address_books, ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import Handler, ItemContext
from ledgermirror.importer.handlers.entities import Operation, key_or_none, sanitize, upsert_entity
from ledgermirror.importer.handlers.item import Item

FILE = "FILE"
CONTRACT = "CONTRACT"


def _file_data(item: Item, batch: Batch, file_id: int, contents: bytes) -> None:
    if not item.successful or not file_id:
        return
    batch.insert(
        "file_data",
        {
            "consensus_timestamp": item.consensus_timestamp,
            "entity_id": file_id,
            "file_data": contents,
            "transaction_type": item.type,
        },
    )
    if ids.parts(file_id)["num"] in address_books.ADDRESS_BOOK_FILES:
        batch.address_book_changed = True
        batch.defer(address_books.rebuild_step(file_id, item.consensus_timestamp))


def _file_fields(body: Any, *, update: bool) -> dict[str, Any]:
    memo: str | None = sanitize(body.memo.value if update else body.memo)
    if update and not body.HasField("memo"):
        memo = None
    return {
        "expiration_timestamp": ids.nanos(body.expirationTime) if body.HasField("expirationTime") else None,
        "key": key_or_none(body, "keys"),
        "memo": memo,
    }


def file_create(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.fileCreate
    file_id = ids.file_id(item.record.receipt.fileID)
    context.set_transaction(entity_id=ids.nullable(file_id))
    upsert_entity(item, batch, file_id, Operation.CREATE, FILE, **_file_fields(body, update=False))
    _file_data(item, batch, file_id, bytes(body.contents))


def file_update(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.fileUpdate
    file_id = ids.file_id(body.fileID)
    context.set_transaction(entity_id=ids.nullable(file_id))
    upsert_entity(item, batch, file_id, Operation.UPDATE, FILE, **_file_fields(body, update=True))
    _file_data(item, batch, file_id, bytes(body.contents))


def file_append(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.fileAppend
    file_id = ids.file_id(body.fileID)
    context.set_transaction(entity_id=ids.nullable(file_id))
    _file_data(item, batch, file_id, bytes(body.contents))


def file_delete(item: Item, batch: Batch, context: ItemContext) -> None:
    file_id = ids.file_id(item.body.fileDelete.fileID)
    context.set_transaction(entity_id=ids.nullable(file_id))
    upsert_entity(item, batch, file_id, Operation.DELETE, FILE)


def _system_target(batch: Batch, body: Any) -> tuple[int, str]:
    if body.WhichOneof("id") == "contractID":
        return batch.contract_of(body.contractID), CONTRACT
    return ids.file_id(body.fileID), FILE


def system_delete(item: Item, batch: Batch, context: ItemContext) -> None:
    entity_id, entity_type = _system_target(batch, item.body.systemDelete)
    context.set_transaction(entity_id=ids.nullable(entity_id))
    upsert_entity(item, batch, entity_id, Operation.DELETE, entity_type)


def system_undelete(item: Item, batch: Batch, context: ItemContext) -> None:
    entity_id, entity_type = _system_target(batch, item.body.systemUndelete)
    context.set_transaction(entity_id=ids.nullable(entity_id))
    upsert_entity(item, batch, entity_id, Operation.UPDATE, entity_type)


HANDLERS: Mapping[str, Handler] = MappingProxyType(
    {
        "fileCreate": file_create,
        "fileUpdate": file_update,
        "fileAppend": file_append,
        "fileDelete": file_delete,
        "systemDelete": system_delete,
        "systemUndelete": system_undelete,
    }
)
