"""Sidecar files (``sidecar/<ts>_NN.rcd.gz``): a gzipped ``SidecarFile`` protobuf, no version prefix."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ledgermirror.importer._proto import protos
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.record_file import decompress

STATE_CHANGES = 1
ACTIONS = 2
BYTECODE = 3
_TYPE_OF_FIELD = {"state_changes": STATE_CHANGES, "actions": ACTIONS, "bytecode": BYTECODE}


@dataclass(frozen=True, slots=True)
class SidecarFile:
    name: str
    hash: bytes
    """SHA-384 of the decompressed bytes: what ``SidecarMetadata.hash`` states."""
    records: tuple[Any, ...]
    """The parsed ``TransactionSidecarRecord`` messages."""
    size: int

    @property
    def types(self) -> frozenset[int]:
        """The ``SidecarType`` values of the records (migration-only records count by their content)."""
        found = set()
        for record in self.records:
            kind = record.WhichOneof("sidecar_records")
            if kind in _TYPE_OF_FIELD:
                found.add(_TYPE_OF_FIELD[kind])
        return frozenset(found)


def read_sidecar_file(name: str, data: bytes) -> SidecarFile:
    content = decompress(name, data)
    modules = protos()
    try:
        message = modules.sidecar_file.SidecarFile.FromString(content)
    except modules.decode_error as error:
        raise StreamParseError(name, f"bad SidecarFile: {error}") from error
    return SidecarFile(name, hashlib.sha384(content).digest(), tuple(message.sidecar_records), len(data))
