"""Parsing posted transactions: both forms, signature counts, size, and every parse error."""

from __future__ import annotations

import pytest
from hiero_sdk_python.hapi.services import transaction_contents_pb2 as contents
from hiero_sdk_python.hapi.services import transaction_pb2 as tx
from tests.fees.builders import body, legacy, signed

from ledgermirror.fees import schedule
from ledgermirror.fees.calculator import calculate
from ledgermirror.fees.transaction import (
    NO_BODY_BYTES,
    UNKNOWN_TYPE,
    UNPARSEABLE,
    TransactionError,
    functionality_of,
    parse,
)


def test_signed_form() -> None:
    data = signed(body(cryptoTransfer=None), 3)
    parsed = parse(data)
    assert (parsed.data_case, parsed.functionality, parsed.signatures, parsed.size) == (
        "cryptoTransfer",
        "CryptoTransfer",
        3,
        len(data),
    )


def test_legacy_form() -> None:
    parsed = parse(legacy(body(tokenMint=None), 2))
    assert (parsed.functionality, parsed.signatures) == ("TokenMint", 2)


def test_signed_bytes_win_over_body_bytes() -> None:
    transaction = tx.Transaction.FromString(signed(body(cryptoDelete=None), 1))
    transaction.bodyBytes = body(tokenMint=None).SerializeToString()
    assert parse(transaction.SerializeToString()).functionality == "CryptoDelete"


def test_unknown_fields_do_not_count_as_bytes() -> None:
    data = signed(body(cryptoDelete=None))
    assert parse(data + b"\xa0\x06\x01").size == len(data)  # field 100, varint 1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff", UNPARSEABLE),
        (b"\x0a\x05ab", UNPARSEABLE),  # truncated length-delimited field
        (tx.Transaction(signedTransactionBytes=b"\xff\xff").SerializeToString(), UNPARSEABLE),
        (tx.Transaction(bodyBytes=b"\x0a\x09").SerializeToString(), UNPARSEABLE),
        (
            tx.Transaction(
                signedTransactionBytes=contents.SignedTransaction(bodyBytes=b"\x0a\x09").SerializeToString()
            ).SerializeToString(),
            UNPARSEABLE,
        ),
        (b"\x22\x00", NO_BODY_BYTES),  # an empty sigMap only
        (tx.Transaction(bodyBytes=body().SerializeToString()).SerializeToString(), UNKNOWN_TYPE),
        (signed(body()), UNKNOWN_TYPE),
    ],
)
def test_errors(data: bytes, message: str) -> None:
    with pytest.raises(TransactionError, match=f"^{message}$"):
        parse(data)


@pytest.mark.parametrize("case", ["freeze", "uncheckedSubmit", "node_stake_update", "state_signature_transaction"])
def test_types_without_a_price_are_unknown(case: str) -> None:
    with pytest.raises(TransactionError, match=f"^{UNKNOWN_TYPE}$"):
        calculate(schedule.default(), parse(signed(body(**{case: None}))))


def test_every_scheduled_transaction_type_is_priced() -> None:
    default = schedule.default()
    priced = set()
    for field in tx.TransactionBody.DESCRIPTOR.oneofs_by_name["data"].fields:
        if functionality_of(field.name) in default.services:
            calculate(default, parse(signed(body(**{field.name: None}))))
            priced.add(functionality_of(field.name))
    queries = {
        name
        for name in default.services
        if name.startswith(("CryptoGet", "ContractGet", "FileGet", "TokenGet", "ScheduleGet", "Get"))
        or name in {"ContractCallLocal", "ConsensusGetTopicInfo", "TransactionGetRecord", "TransactionGetReceipt"}
    }
    assert priced == set(default.services) - queries


def test_functionality_names() -> None:
    assert functionality_of("cryptoCreateAccount") == "CryptoCreate"
    assert functionality_of("token_update_nfts") == "TokenUpdateNfts"
    assert functionality_of("tokenAirdrop") == "TokenAirdrop"
    assert functionality_of("hook_store") == "HookStore"
