"""Building posted transactions for the fee tests: a ``TransactionBody`` -> ``Transaction`` bytes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from hiero_sdk_python.hapi.fees import fee_schedule_pb2
from hiero_sdk_python.hapi.services import basic_types_pb2 as basic
from hiero_sdk_python.hapi.services import transaction_contents_pb2 as contents
from hiero_sdk_python.hapi.services import transaction_pb2 as tx

import ledgermirror.fees

UPSTREAM_SCHEDULE = (
    Path(__file__).resolve().parents[3] / "shared" / "upstream" / "fees" / "simpleFeesSchedules.json"
)
SHIPPED_SCHEDULE = Path(ledgermirror.fees.__file__).parent / "default-schedule.json"


def key(seed: int = 1) -> basic.Key:
    return basic.Key(ed25519=bytes([seed]) * 32)


def signed(body: tx.TransactionBody, signatures: int = 0) -> bytes:
    """``Transaction{signedTransactionBytes}`` with ``signatures`` sig pairs."""
    signed_transaction = contents.SignedTransaction(bodyBytes=body.SerializeToString())
    for index in range(signatures):
        signed_transaction.sigMap.sigPair.add(pubKeyPrefix=bytes([index + 1]), ed25519=bytes([index]) * 64)
    return tx.Transaction(signedTransactionBytes=signed_transaction.SerializeToString()).SerializeToString()


def legacy(body: tx.TransactionBody, signatures: int = 0) -> bytes:
    """The deprecated ``Transaction{bodyBytes, sigMap}`` form."""
    transaction = tx.Transaction(bodyBytes=body.SerializeToString())
    for index in range(signatures):
        transaction.sigMap.sigPair.add(pubKeyPrefix=bytes([index + 1]), ed25519=bytes([index]) * 64)
    return transaction.SerializeToString()


def body(**data: Any) -> tx.TransactionBody:
    """A body with a transaction id, node and fee, and ``data`` (one ``case=message`` or ``case=None``)."""
    message = tx.TransactionBody(transactionFee=200_000_000, memo="fees")
    message.transactionID.accountID.accountNum = 2
    message.transactionID.transactionValidStart.seconds = 1_700_000_000
    message.nodeAccountID.accountNum = 3
    for case, value in data.items():
        if value is None:
            getattr(message, case).SetInParent()
        else:
            getattr(message, case).CopyFrom(value)
    return message


def schedule_json() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SHIPPED_SCHEDULE.read_text())
    return loaded


def schedule_bytes(edit: Callable[[dict[str, Any]], None] | None = None) -> bytes:
    """The upstream JSON schedule as ``FeeSchedule`` protobuf bytes, optionally edited first."""
    data = schedule_json()
    if edit is not None:
        edit(data)
    message = json_format.ParseDict(data, fee_schedule_pb2.FeeSchedule(), ignore_unknown_fields=True)
    return bytes(message.SerializeToString())
