"""ledger/transaction_codes.py: transaction type and result codes, their names, and the named constants."""

from __future__ import annotations

import pytest
from hiero_sdk_python.hapi.services import response_code_pb2, transaction_pb2

from ledgermirror.ledger import transaction_codes
from ledgermirror.ledger.transaction_codes import (
    RESULT_NAMES,
    TYPE_NAMES,
    TYPE_NUMBERS,
    result_name,
    result_number,
    type_name,
    type_number,
)


def test_type_names_round_trip() -> None:
    for number, name in TYPE_NAMES.items():
        assert type_name(number) == name
        assert type_number(name) == number
        assert TYPE_NUMBERS[name] == number
    assert len(set(TYPE_NAMES.values())) == len(TYPE_NAMES)


def test_result_names_round_trip() -> None:
    for number, name in RESULT_NAMES.items():
        assert result_name(number) == name
        assert result_number(name) == number
    assert len(set(RESULT_NAMES.values())) == len(RESULT_NAMES)


def test_unknown_numbers_and_names() -> None:
    assert type_name(0) == type_name(-1) == type_name(10_000) == "UNKNOWN"
    assert result_name(-1) == result_name(100_000) == "UNKNOWN"
    assert TYPE_NUMBERS["REGISTEREDNODECREATE"] is None  # accepted as a filter name, matches nothing
    with pytest.raises(KeyError):
        type_number("REGISTEREDNODECREATE")
    with pytest.raises(KeyError):
        type_number("NOSUCHTYPE")
    with pytest.raises(KeyError):
        result_number("NOSUCHRESULT")


def test_the_tables_cannot_be_changed() -> None:
    with pytest.raises(TypeError):
        TYPE_NAMES[1] = "X"  # type: ignore[index]
    with pytest.raises(TypeError):
        RESULT_NAMES[1] = "X"  # type: ignore[index]


@pytest.mark.parametrize(
    ("constant", "number"),
    [
        ("CONTRACTCREATEINSTANCE", 8),
        ("CRYPTOCREATEACCOUNT", 11),
        ("CRYPTOTRANSFER", 14),
        ("CRYPTOUPDATEACCOUNT", 15),
        ("FILEAPPEND", 16),
        ("FILECREATE", 17),
        ("FILEUPDATE", 19),
        ("TOKENCREATION", 29),
        ("SUCCESS", 22),
        ("INSUFFICIENT_ACCOUNT_BALANCE", 28),
    ],
)
def test_named_constants(constant: str, number: int) -> None:
    assert getattr(transaction_codes, constant) == number


def test_results_agree_with_hapi() -> None:
    """Every result we name has that number in HAPI's ResponseCodeEnum (of the installed hiero-sdk-python)."""
    enum = response_code_pb2.ResponseCodeEnum
    known = {value.number: value.name for value in enum.DESCRIPTOR.values}
    disagreeing = {number: name for number, name in RESULT_NAMES.items() if known.get(number, name) != name}
    assert disagreeing == {}


def test_types_agree_with_the_transaction_body() -> None:
    """A type's number is the field number of its body in HAPI's TransactionBody, where the names can be matched
    (the body field names differ in case and wording, so only the ones that match after lower-casing count)."""
    fields = {
        field.name.lower().replace("_", ""): field.number
        for field in transaction_pb2.TransactionBody.DESCRIPTOR.fields
    }
    matched = {name: fields[name.lower()] for name in TYPE_NAMES.values() if name.lower() in fields}
    assert len(matched) >= 20
    assert {name: number for name, number in matched.items() if TYPE_NUMBERS[name] != number} == {}


def test_hook_dispatch_is_type_76() -> None:
    """The reference's type names include HOOKDISPATCH (76), between HOOKSTORE and LEDGERIDPUBLICATION."""
    assert type_number("HOOKSTORE") == 75
    assert type_number("HOOKDISPATCH") == 76
    assert type_number("LEDGERIDPUBLICATION") == 77
