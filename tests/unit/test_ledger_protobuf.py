"""ledger/protobuf.py: the one lazy loader of the HAPI classes; ledger/custom_fees.py, which decodes with it."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from hiero_sdk_python.hapi.services import custom_fees_pb2

from ledgermirror.ledger import protobuf
from ledgermirror.ledger.custom_fees import FeeLimit, decode_fee_limits

_IMPORT_CHECK = """
import sys
import ledgermirror.api.app, ledgermirror.ledger.protobuf, ledgermirror.ledger.system_files
import ledgermirror.ledger.custom_fees, ledgermirror.fees.schedule, ledgermirror.fees.transaction
from ledgermirror.ledger import protobuf
assert not protobuf.loaded()
print(sorted(name for name in sys.modules if name.startswith("hiero_sdk_python")))
"""


def test_importing_the_app_does_not_import_the_hapi_modules() -> None:
    result = subprocess.run([sys.executable, "-c", _IMPORT_CHECK], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_classes_are_the_generated_ones_and_loaded_once() -> None:
    classes = protobuf.hapi()
    assert protobuf.loaded()
    assert protobuf.hapi() is classes
    assert classes.CustomFeeLimit is custom_fees_pb2.CustomFeeLimit
    assert classes.ExchangeRateSet.DESCRIPTOR.full_name == "proto.ExchangeRateSet"
    assert classes.CurrentAndNextFeeSchedule.DESCRIPTOR.full_name == "proto.CurrentAndNextFeeSchedule"
    assert classes.Transaction.DESCRIPTOR.full_name == "proto.Transaction"
    assert classes.TransactionBody.DESCRIPTOR.full_name == "proto.TransactionBody"
    assert classes.SignedTransaction.DESCRIPTOR.full_name == "proto.SignedTransaction"
    assert classes.SimpleFeeSchedule.DESCRIPTOR.full_name == "org.hiero.hapi.support.fees.FeeSchedule"
    assert classes.HederaFunctionality.DESCRIPTOR.full_name == "proto.HederaFunctionality"
    assert classes.Extra.DESCRIPTOR.full_name == "org.hiero.hapi.support.fees.Extra"
    assert issubclass(classes.DecodeError, Exception)


def test_preload_imports_on_a_worker_thread() -> None:
    script = (
        "import asyncio, importlib, threading\n"
        "from ledgermirror.ledger import protobuf\n"
        "calls = []\n"
        "original = importlib.import_module\n"
        "def spy(name, package=None):\n"
        "    if name.startswith(('hiero_sdk_python', 'google.protobuf')):\n"
        "        calls.append((name, threading.current_thread() is threading.main_thread()))\n"
        "    return original(name, package)\n"
        "importlib.import_module = spy\n"
        "asyncio.run(protobuf.preload())\n"
        "asyncio.run(protobuf.preload())\n"
        "print(protobuf.loaded(), len(calls), len({name for name, _ in calls}), sorted({m for _, m in calls}))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    loaded, calls, modules, on_main = result.stdout.split()
    assert (loaded, on_main) == ("True", "[False]")  # off the main thread
    assert int(calls) == int(modules) >= 8  # each module once (the Hapi classes come from 8 modules)


def test_hapi_module_is_the_generated_module() -> None:
    assert protobuf.hapi_module("services.custom_fees_pb2") is custom_fees_pb2
    assert protobuf.hapi_module("streams.hash_object_pb2").HashObject.DESCRIPTOR.full_name == "proto.HashObject"


def test_preload_is_a_no_op_once_loaded() -> None:
    protobuf.hapi()
    asyncio.run(protobuf.preload())
    assert protobuf.loaded()


def _limit(account: tuple[int, int, int] | None, *fees: tuple[int, tuple[int, int, int] | None]) -> bytes:
    message = custom_fees_pb2.CustomFeeLimit()
    if account is not None:
        message.account_id.shardNum, message.account_id.realmNum, message.account_id.accountNum = account
    for amount, token in fees:
        fee = message.fees.add()
        fee.amount = amount
        if token is not None:
            token_id = fee.denominating_token_id
            token_id.shardNum, token_id.realmNum, token_id.tokenNum = token
    return bytes(message.SerializeToString())


def test_decode_fee_limits() -> None:
    data = [
        _limit((0, 0, 1001), (5, None), (7, (0, 0, 5004))),
        _limit(None, (1, (1, 2, 3))),
        _limit((0, 0, 1002), (-3, (0, 0, 0))),
    ]
    assert decode_fee_limits(data) == [
        FeeLimit("0.0.1001", 5, None),
        FeeLimit("0.0.1001", 7, "0.0.5004"),
        FeeLimit(None, 1, "1.2.3"),
        FeeLimit("0.0.1002", -3, None),  # a token of num 0 renders as none
    ]
    assert decode_fee_limits([_limit((0, 0, 1001))]) == []  # no fees, no entries
    assert decode_fee_limits(None) == decode_fee_limits([]) == []


def test_decode_fee_limits_out_of_range_ids_render_as_none() -> None:
    data = [_limit((1024, 0, 1), (1, (0, 65536, 1))), _limit((0, 0, -1), (2, (-1, 0, 1)))]
    assert decode_fee_limits(data) == [FeeLimit(None, 1, None), FeeLimit(None, 2, None)]


def test_decode_fee_limits_skips_what_does_not_decode() -> None:
    good = _limit((0, 0, 1001), (5, None))
    assert decode_fee_limits([b"\xff\xff", good[:-1], good]) == [FeeLimit("0.0.1001", 5, None)]
