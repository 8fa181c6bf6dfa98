"""The one loader of the HAPI protobuf classes generated in ``hiero-sdk-python``: imported once, on first use.

Importing the generated modules takes about half a second, so nothing imports them at module level: code
that decodes calls :func:`hapi` (which imports on the first call), and the API first awaits :func:`preload`,
which runs that import on a worker thread so the event loop keeps serving.

The fields of :class:`Hapi` are typed with the package's ``.pyi`` stubs (mypy reads them although the package
has no ``py.typed`` marker: see ``follow_untyped_imports`` in ``pyproject.toml``).
"""

from __future__ import annotations

import asyncio
import functools
import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hiero_sdk_python.hapi.fees import fee_schedule_pb2
    from hiero_sdk_python.hapi.services import (
        basic_types_pb2,
        contract_types_pb2,
        custom_fees_pb2,
        exchange_rate_pb2,
        transaction_contents_pb2,
        transaction_pb2,
    )


@dataclass(frozen=True, slots=True)
class Hapi:
    """The HAPI message and enum classes the mirror decodes."""

    Transaction: type[transaction_pb2.Transaction]
    TransactionBody: type[transaction_pb2.TransactionBody]
    SignedTransaction: type[transaction_contents_pb2.SignedTransaction]
    HederaFunctionality: type[basic_types_pb2.HederaFunctionality]
    CurrentAndNextFeeSchedule: type[basic_types_pb2.CurrentAndNextFeeSchedule]
    """File 0.0.111."""
    ExchangeRateSet: type[exchange_rate_pb2.ExchangeRateSet]
    """File 0.0.112."""
    CustomFeeLimit: type[custom_fees_pb2.CustomFeeLimit]
    """The elements of ``transaction.max_custom_fees``."""
    SimpleFeeSchedule: type[fee_schedule_pb2.FeeSchedule]
    """File 0.0.113 (``org.hiero.hapi.support.fees.FeeSchedule``)."""
    Extra: type[fee_schedule_pb2.Extra]
    """The simple fee schedule's ``Extra`` enum."""
    TransactionID: type[basic_types_pb2.TransactionID]
    """``topic_message.initial_transaction_id``."""
    KeyList: type[basic_types_pb2.KeyList]
    """``topic.fee_exempt_key_list``."""
    ContractFunctionResult: type[contract_types_pb2.ContractFunctionResult]
    """``contract_result.function_result`` (the sender alias of a result without ``sender_id``)."""
    DecodeError: type[Exception]
    """What ``FromString`` raises for bytes that are not a message of its type."""


@functools.cache
def hapi_module(name: str) -> Any:
    """A generated module by its name below ``hiero_sdk_python.hapi`` (e.g. ``streams.hash_object_pb2``),
    imported on the first call: the only place that imports one (the stream readers' ``importer/_proto.py``
    takes theirs from here)."""
    return importlib.import_module("hiero_sdk_python.hapi." + name)


@functools.cache
def hapi() -> Hapi:
    """The classes, importing their modules on the first call."""
    transaction = hapi_module("services.transaction_pb2")
    basic = hapi_module("services.basic_types_pb2")
    fees = hapi_module("fees.fee_schedule_pb2")
    return Hapi(
        Transaction=transaction.Transaction,
        TransactionBody=transaction.TransactionBody,
        SignedTransaction=hapi_module("services.transaction_contents_pb2").SignedTransaction,
        HederaFunctionality=basic.HederaFunctionality,
        CurrentAndNextFeeSchedule=basic.CurrentAndNextFeeSchedule,
        ExchangeRateSet=hapi_module("services.exchange_rate_pb2").ExchangeRateSet,
        CustomFeeLimit=hapi_module("services.custom_fees_pb2").CustomFeeLimit,
        SimpleFeeSchedule=fees.FeeSchedule,
        Extra=fees.Extra,
        TransactionID=basic.TransactionID,
        KeyList=basic.KeyList,
        ContractFunctionResult=hapi_module("services.contract_types_pb2").ContractFunctionResult,
        DecodeError=importlib.import_module("google.protobuf.message").DecodeError,
    )


def loaded() -> bool:
    """Whether :func:`hapi` has imported the modules already."""
    return hapi.cache_info().currsize > 0


async def preload() -> None:
    """Import the modules on a worker thread (once), so the event loop keeps serving meanwhile."""
    if not loaded():
        await asyncio.to_thread(hapi)
