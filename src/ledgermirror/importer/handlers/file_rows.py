"""Walking a file: its items parsed (with their sidecar records) and handled in file order into a batch.

Per item, ``common.rows_of_item`` runs its handler and the rows every item gets; the items of one file share a
:class:`~.context.FileState`. (The importer reads the aliases a file's items name first:
``lookups.rows_of_file_with_lookups``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.common import rows_of_item
from ledgermirror.importer.handlers.context import FileState
from ledgermirror.importer.handlers.item import Item, item_of
from ledgermirror.importer.record_file_row import DIGEST_SHA_384

if TYPE_CHECKING:
    from ledgermirror.importer.record_file import RecordFile
    from ledgermirror.importer.sidecar_file import SidecarFile


def rows_of_file(record_file: RecordFile, batch: Batch, sidecars: Sequence[SidecarFile] = ()) -> None:
    """Every item of the file: its common rows and its handler's rows, in file order. Each item gets the
    records of the file's (verified) ``sidecars`` that carry its consensus timestamp. (The importer reads the
    aliases the items name first: ``lookups.rows_of_file_with_lookups``.)"""
    rows_of_items(record_file, items_of_file(record_file, sidecars), batch, sidecars)


def items_of_file(record_file: RecordFile, sidecars: Sequence[SidecarFile] = ()) -> list[Item]:
    """The file's items, parsed, with their sidecar records; a child of a failed parent is not successful."""
    hapi = tuple(record_file.hapi_version) if record_file.hapi_version is not None else None
    by_timestamp: dict[int, list[Any]] = {}
    for sidecar in sidecars:
        for sidecar_record in sidecar.records:
            by_timestamp.setdefault(ids.nanos(sidecar_record.consensus_timestamp), []).append(sidecar_record)
    successes: dict[int, bool] = {}
    items = []
    for index, record_item in enumerate(record_file.items):
        item = item_of(record_item, index, hapi_version=hapi)  # type: ignore[arg-type]
        found = by_timestamp.get(item.consensus_timestamp)
        if found:
            item.sidecar_records = tuple(found)
        parent = item.parent_consensus_timestamp
        if parent is not None and item.successful and not successes.get(parent, True):
            item.successful = False
        successes[item.consensus_timestamp] = item.successful
        items.append(item)
    return items


def rows_of_items(
    record_file: RecordFile, items: Sequence[Item], batch: Batch, sidecars: Sequence[SidecarFile] = ()
) -> FileState:
    """The rows of the file's parsed ``items``, then one ``sidecar_file`` row per sidecar (§5.7); returns what
    the items left for the end of the file (the synthetic logs whose addresses a lookup completes)."""
    file = FileState()
    for item in items:
        rows_of_item(item, batch, file)
        file.previous.append(item.consensus_timestamp)
        file.items[item.consensus_timestamp] = item
    for listed, sidecar in zip(record_file.sidecars, sidecars, strict=False):
        batch.insert(
            "sidecar_file",
            {
                "bytes": None,
                "count": len(sidecar.records),
                "consensus_end": record_file.consensus_end,
                "hash_algorithm": DIGEST_SHA_384,
                "hash": listed.hash,
                "id": listed.id,
                "name": sidecar.name,
                "size": sidecar.size,
                "types": sorted(listed.types),
            },
        )
    return file
