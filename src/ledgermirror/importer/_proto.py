"""The HAPI protobuf classes the stream readers need, from ``hiero-sdk-python``, imported on first use.

This is the only module of the importer that names the SDK's generated modules; it takes them from the shared
lazy loader (:func:`ledgermirror.ledger.protobuf.hapi_module`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ledgermirror.ledger.protobuf import hapi, hapi_module


@dataclass(frozen=True, slots=True)
class StreamProtos:
    record_stream_file: Any
    """``RecordStreamFile``, ``RecordStreamItem``, ``SidecarMetadata``."""
    signature_file: Any
    """``SignatureFile``, ``SignatureObject``."""
    sidecar_file: Any
    """``SidecarFile``, ``TransactionSidecarRecord``."""
    hash_object: Any
    """``HashObject``."""
    basic_types: Any
    """``SemanticVersion``, ``NodeAddressBook``, ``NodeAddress``."""
    transaction_record: Any
    """``TransactionRecord``."""
    transaction: Any
    """``Transaction``, ``TransactionBody``."""
    transaction_contents: Any
    """``SignedTransaction``."""
    decode_error: type[Exception]


@functools.cache
def protos() -> StreamProtos:
    return StreamProtos(
        record_stream_file=hapi_module("streams.record_stream_file_pb2"),
        signature_file=hapi_module("streams.signature_file_pb2"),
        sidecar_file=hapi_module("streams.sidecar_file_pb2"),
        hash_object=hapi_module("streams.hash_object_pb2"),
        basic_types=hapi_module("services.basic_types_pb2"),
        transaction_record=hapi_module("services.transaction_record_pb2"),
        transaction=hapi_module("services.transaction_pb2"),
        transaction_contents=hapi_module("services.transaction_contents_pb2"),
        decode_error=hapi().DecodeError,
    )
