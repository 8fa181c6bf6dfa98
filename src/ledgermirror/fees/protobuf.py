"""The HAPI protobuf modules of ``hiero-sdk-python``, imported on first use.

Importing them takes about half a second, so the API imports them on a worker thread (:func:`preload`)
before the first estimate instead of when the app is imported.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Modules:
    transaction: Any
    """``transaction_pb2``: ``Transaction`` and ``TransactionBody``."""
    contents: Any
    """``transaction_contents_pb2``: ``SignedTransaction``."""
    basic: Any
    """``basic_types_pb2``: ``HederaFunctionality``."""
    fees: Any
    """``fee_schedule_pb2``: ``FeeSchedule`` and the ``Extra`` enum."""
    decode_error: type[Exception]


@functools.cache
def modules() -> Modules:
    services = "hiero_sdk_python.hapi.services."
    return Modules(
        transaction=importlib.import_module(services + "transaction_pb2"),
        contents=importlib.import_module(services + "transaction_contents_pb2"),
        basic=importlib.import_module(services + "basic_types_pb2"),
        fees=importlib.import_module("hiero_sdk_python.hapi.fees.fee_schedule_pb2"),
        decode_error=importlib.import_module("google.protobuf.message").DecodeError,
    )


async def preload() -> None:
    """Import the modules on a worker thread (once), so the event loop keeps serving."""
    if modules.cache_info().currsize == 0:
        await asyncio.to_thread(modules)
