"""``state_overrides`` of POST /api/v1/contracts/call (HIP-1485; the reference's web3 ``StateOverride`` and
``StorageEntry`` request models) over mirrored state on embedded PostgreSQL: balance, nonce, code, ``state`` (the
whole storage) and ``state_diff`` (some slots), on an existing contract, a new address and an account, and every
bad entry refused with a 400 in the web3 error envelope."""

from __future__ import annotations

from typing import Any

import rlp
from starlette.testclient import TestClient
from tests.api.test_contract_call import HOLDER, SETUP, TARGET, bad, call, errors, post, selector, word
from tests.support import Ledger

from ledgermirror.ledger.evm import keccak256

FRESH = "0x" + "cd" * 20
COUNTER = 1  # CallTarget's slots: 0 a string, 1 counter, 2 the values mapping
RETURNS_42 = "0x602a60005260206000f3"  # the HIP's example code: returns the word 42


def slot(number: int, value: int) -> dict[str, str]:
    return {"key": "0x" + word(number), "value": "0x" + word(value)}


def test_storage_overrides(client: TestClient, ledger: Ledger) -> None:
    ledger.load(SETUP)
    assert call(client, TARGET, "counter()") == "0x" + word(5)
    assert call(client, TARGET, "values(uint256)", word(7)) == "0x" + word(49)
    # state_diff: the listed slot replaced, the others read the mirror
    diff = [{"address": TARGET, "state_diff": [slot(COUNTER, 99)]}]
    assert call(client, TARGET, "counter()", state_overrides=diff) == "0x" + word(99)
    assert call(client, TARGET, "values(uint256)", word(7), state_overrides=diff) == "0x" + word(49)
    # state: the whole storage, every slot not listed reads 0
    whole = [{"address": TARGET, "state": [slot(COUNTER, 11)]}]
    assert call(client, TARGET, "counter()", state_overrides=whole) == "0x" + word(11)
    assert call(client, TARGET, "values(uint256)", word(7), state_overrides=whole) == "0x" + word(0)
    # writes on top of an override stay in the call (increment reads the overridden counter)
    assert call(client, TARGET, "increment()", state_overrides=diff) == "0x" + word(100)
    assert call(client, TARGET, "counter()") == "0x" + word(5)
    # short keys and values, without 0x, upper case: the same slot
    short = [{"address": TARGET.upper().replace("0X", ""), "state_diff": [{"key": "1", "value": "FF"}]}]
    assert call(client, TARGET, "counter()", state_overrides=short) == "0x" + word(255)
    # empty lists override nothing (the reference skips them)
    empty = [{"address": TARGET, "state": [], "state_diff": []}]
    assert call(client, TARGET, "counter()", state_overrides=empty) == "0x" + word(5)


def test_code_balance_and_nonce_overrides(client: TestClient, ledger: Ledger) -> None:
    ledger.load(SETUP)
    # code at an address the mirror does not know: it becomes a contract (no INVALID_CONTRACT_ID for an opaque one)
    assert call(client, FRESH, "anything()", state_overrides=[{"address": FRESH, "code": RETURNS_42}]) == (
        "0x" + word(42)
    )
    # code replacing a contract's
    assert call(client, TARGET, "counter()", state_overrides=[{"address": TARGET, "code": RETURNS_42}]) == (
        "0x" + word(42)
    )
    # balance: a number of tinybars (the reference since 0.167) or a 0x quantity (before it)
    holder_word = "00" * 12 + HOLDER[2:]
    for balance in (12, "0xc"):
        overrides = [{"address": HOLDER, "balance": balance}]
        assert call(client, TARGET, "balanceOfAddress(address)", holder_word, state_overrides=overrides) == (
            "0x" + word(12)
        )
    # an overridden balance is what the call spends: paying more than it fails
    poor = [{"address": HOLDER, "balance": 10}]
    response = post(
        client,
        {"to": TARGET, "data": "0x" + selector("payMe()"), "value": 23, "from": HOLDER, "state_overrides": poor},
    )
    assert response.status_code == 400, response.text
    assert errors(response) == [{"message": "INSUFFICIENT_PAYER_BALANCE", "detail": "", "data": ""}]
    # nonce: the address of a contract created by the overridden account follows it
    for nonce in (7, "0x7"):
        created = call(client, TARGET, "deployChild()", state_overrides=[{"address": TARGET, "nonce": nonce}])
        expected = keccak256(rlp.encode([bytes.fromhex(TARGET[2:]), 7]))[12:]
        assert created == "0x" + expected.rjust(32, b"\0").hex()
    # an address given twice: its last entry
    twice = [
        {"address": TARGET, "state_diff": [slot(COUNTER, 1)]},
        {"address": TARGET, "state_diff": [slot(COUNTER, 2)]},
    ]
    assert call(client, TARGET, "counter()", state_overrides=twice) == "0x" + word(2)
    # an unknown opaque sender exists once overridden
    assert call(client, TARGET, "sender()", **{"from": FRESH}, state_overrides=[{"address": FRESH, "balance": 5}])


def test_bad_overrides(client: TestClient) -> None:
    def problems(overrides: Any) -> list[str]:
        return bad(client, {"to": TARGET, "state_overrides": overrides})

    assert problems({"address": TARGET}) == ["stateOverrides field must be a list"]
    assert problems([{"address": TARGET}] * 11) == ["stateOverrides field size must be between 0 and 10"]
    assert problems([{}]) == ["stateOverrides[0].address field must not be null"]
    assert problems(["x"]) == ["stateOverrides[0] field must be an object"]
    assert problems([{"address": "0x1234"}]) == ["stateOverrides[0].address field invalid hexadecimal string"]
    assert problems([{"address": TARGET, "state": [slot(0, 1)], "state_diff": [slot(1, 1)]}]) == [
        "stateOverrides[0].validStorage field state and state_diff are mutually exclusive"
    ]
    assert problems([{"address": TARGET, "balance": -1, "nonce": "0xzz", "code": "0xgg"}]) == [
        "stateOverrides[0].balance field must be between 0 and 9223372036854775807",
        "stateOverrides[0].code field invalid hexadecimal string",
        "stateOverrides[0].nonce field invalid hexadecimal string",
    ]
    assert problems([{"address": TARGET, "balance": 1 << 63, "nonce": True}]) == [
        "stateOverrides[0].balance field must be between 0 and 9223372036854775807",
        "stateOverrides[0].nonce field must be a non-negative integer",
    ]
    too_long = {"key": "0x" + "1" * 65, "value": "0x1"}
    assert problems([{"address": TARGET, "state_diff": [too_long, {"key": "0x1"}, 5]}]) == [
        "stateOverrides[0].state_diff[0].key field invalid hexadecimal string",
        "stateOverrides[0].state_diff[1].value field invalid hexadecimal string",
        "stateOverrides[0].state_diff[2] field must be an object with key and value",
    ]
    assert problems([{"address": TARGET, "state": "0x1"}]) == [
        "stateOverrides[0].state field must be a list of key and value entries"
    ]
    # the other fields' problems come in the same answer
    response = post(client, {"to": "0x", "state_overrides": [{}]})
    assert sorted(entry["detail"] for entry in errors(response)) == [
        "stateOverrides[0].address field must not be null",
        "to field invalid hexadecimal string",
    ]
