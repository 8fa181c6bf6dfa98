"""The HAPI protobuf classes the stream readers need, from ``hiero-sdk-python``, imported on first use.

This is the only module of the importer that names the SDK's generated modules: when the shared lazy loader
(``ledgermirror.ledger.protobuf``) lands, this file becomes a thin re-export of it.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import Any


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
    """``Transaction``."""
    decode_error: type[Exception]


@functools.cache
def protos() -> StreamProtos:
    hapi = "hiero_sdk_python.hapi."
    return StreamProtos(
        record_stream_file=importlib.import_module(hapi + "streams.record_stream_file_pb2"),
        signature_file=importlib.import_module(hapi + "streams.signature_file_pb2"),
        sidecar_file=importlib.import_module(hapi + "streams.sidecar_file_pb2"),
        hash_object=importlib.import_module(hapi + "streams.hash_object_pb2"),
        basic_types=importlib.import_module(hapi + "services.basic_types_pb2"),
        transaction_record=importlib.import_module(hapi + "services.transaction_record_pb2"),
        transaction=importlib.import_module(hapi + "services.transaction_pb2"),
        decode_error=importlib.import_module("google.protobuf.message").DecodeError,
    )
