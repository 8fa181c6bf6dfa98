"""ledger/system_files.py: decoding the contents of files 0.0.111 (fee schedules) and 0.0.112 (exchange rates)."""

from __future__ import annotations

import pytest
from hiero_sdk_python.hapi.services import basic_types_pb2
from tests.hapi_files import CORRUPT, fee_file, rate_file

from ledgermirror.ledger import system_files
from ledgermirror.ledger.system_files import FeeEntry, Rate, RateSet, Schedule, Schedules, Undecodable


def test_decode_exchange_rates() -> None:
    assert system_files.decode_exchange_rates(rate_file()) == RateSet(
        Rate(30000, 450041, 1651762800), Rate(30000, 435305, 1651766400)
    )
    assert system_files.decode_exchange_rates(rate_file(nxt=None)).next is None
    assert system_files.decode_exchange_rates(rate_file((1, 12, None), None)).current == Rate(1, 12, None)
    assert system_files.decode_exchange_rates(b"") == RateSet(None, None)


def test_decode_the_reference_fixture() -> None:
    data = bytes.fromhex("0a1008b0ea0110cac1181a0608a0a1d09306121008b0ea0110e18e191a0608b0bdd09306")
    assert system_files.decode_exchange_rates(data) == RateSet(
        Rate(30000, 401610, 1651773600), Rate(30000, 411489, 1651777200)
    )


@pytest.mark.parametrize("data", [CORRUPT, rate_file()[:-1], b"\xff\xff\xff"])
def test_truncated_or_garbage_does_not_decode(data: bytes) -> None:
    with pytest.raises(Undecodable):
        system_files.decode_exchange_rates(data)
    with pytest.raises(Undecodable):
        system_files.decode_fee_schedules(data)


def test_decode_fee_schedules() -> None:
    data = fee_file(([(84, 953000), (6, None), (1, 5)], 1700000000), ([], None))
    message = basic_types_pb2.CurrentAndNextFeeSchedule.FromString(data)
    message.currentFeeSchedule.transactionFeeSchedule.add(hederaFunctionality=7)  # no fees at all
    assert system_files.decode_fee_schedules(message.SerializeToString()) == Schedules(
        Schedule((FeeEntry(84, 953000), FeeEntry(6, None), FeeEntry(1, 5), FeeEntry(7, None)), 1700000000),
        Schedule((), None),
    )
    assert system_files.decode_fee_schedules(b"") == Schedules(None, None)


def test_decode_uses_the_first_fee_only() -> None:
    message = basic_types_pb2.CurrentAndNextFeeSchedule()
    item = message.currentFeeSchedule.transactionFeeSchedule.add(hederaFunctionality=6)
    item.fees.add().servicedata.gas = 10
    item.fees.add().servicedata.gas = 20
    schedules = system_files.decode_fee_schedules(message.SerializeToString())
    assert schedules.current == Schedule((FeeEntry(6, 10),), None)
