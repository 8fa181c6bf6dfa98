"""POST /api/v1/network/fees in the seed's described form (LEDGERMIRROR_FEE_ESTIMATE_DESCRIBED_FORM): amounts
before the high-volume multiplier, the multiplier in thousandths and only for a flagged body, and ``notes``."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.api.test_network_fee_estimate import SCHEDULE_FILE, T0, TWO_SIGNATURES, post, submit, token_transfer
from tests.fees.builders import body, key, schedule_bytes, signed
from tests.support import Ledger, reconfigure

from ledgermirror.fees import notes
from ledgermirror.settings import Settings


@pytest.fixture
def described(client: TestClient, api_settings: Settings) -> TestClient:
    reconfigure(client, dataclasses.replace(api_settings, fee_estimate_described_form=True))
    return client


def high_volume_create() -> bytes:
    message = body()
    message.cryptoCreateAccount.key.CopyFrom(key())
    message.high_volume = True
    return signed(message, 1)


def flagged_transfer() -> bytes:
    message = body()
    message.high_volume = True
    for account, amount in ((1001, -1), (1002, 1)):
        message.cryptoTransfer.transfers.accountAmounts.add(amount=amount).accountID.accountNum = account
    return signed(message, 1)


def test_default_form_is_the_reference(client: TestClient) -> None:
    state = post(client, high_volume_create(), "?mode=STATE&high_volume_throttle=10000").json()
    assert (state["high_volume_multiplier"], state["total"]) == (200, 100_000_000_000)
    assert "notes" not in state


def test_described_totals_before_the_multiplier(described: TestClient) -> None:
    state = post(described, high_volume_create(), "?mode=STATE&high_volume_throttle=10000").json()
    assert (state["high_volume_multiplier"], state["total"]) == (200_000, 500_000_000)
    assert state["total"] * state["high_volume_multiplier"] // 1000 == 100_000_000_000
    assert (
        post(described, high_volume_create(), "?mode=STATE&high_volume_throttle=0").json()[
            "high_volume_multiplier"
        ]
        == 4000
    )
    assert list(state) == ["high_volume_multiplier", "network", "node", "notes", "service", "total"]


def test_described_multiplier_only_for_a_flagged_body(described: TestClient) -> None:
    plain = post(described, signed(body(cryptoTransfer=None), 2)).json()
    assert plain == {
        **{k: v for k, v in TWO_SIGNATURES.items() if k != "high_volume_multiplier"},
        "notes": [notes.DEFAULT_SCHEDULE],
    }
    intrinsic = post(described, high_volume_create(), "?high_volume_throttle=10000").json()
    assert (intrinsic["high_volume_multiplier"], intrinsic["total"]) == (1000, 500_000_000)
    assert intrinsic["notes"] == [notes.DEFAULT_SCHEDULE, notes.INTRINSIC_HIGH_VOLUME]


def test_notes_intrinsic_skips_state(described: TestClient, ledger: Ledger) -> None:
    ledger.execute(
        "insert into file_data (file_data, consensus_timestamp, entity_id, transaction_type)"
        " values ($1, $2, $3, 19)",
        schedule_bytes(),
        T0,
        SCHEDULE_FILE,
    )
    assert post(described, token_transfer(5001)).json()["notes"] == [notes.INTRINSIC_TOKENS]
    assert post(described, submit()).json()["notes"] == [notes.INTRINSIC_TOPIC]
    assert post(described, signed(body(cryptoTransfer=None), 2)).json()["notes"] == []


def test_notes_state_names_unknown_tokens_and_topics(described: TestClient, ledger: Ledger) -> None:
    unknown_token = "Token 0.0.5001 was not found: priced as a fungible token without custom fees"
    unknown_topic = "Topic 0.0.6001 was not found: priced as a topic without custom fees"
    assert post(described, token_transfer(5001), "?mode=STATE").json()["notes"] == [
        notes.DEFAULT_SCHEDULE,
        unknown_token,
    ]
    assert post(described, submit(), "?mode=STATE").json()["notes"] == [notes.DEFAULT_SCHEDULE, unknown_topic]
    ledger.execute(
        "insert into token (token_id, created_timestamp, decimals, initial_supply, name, symbol,"
        " treasury_account_id, timestamp_range, freeze_status, kyc_status)"
        " values (5001, 1, 0, 0, 't', 'T', 98, '[1,)', 0, 0)"
    )
    ledger.execute(
        "insert into entity (id, num, realm, shard, type, timestamp_range)"
        " values (6001, 6001, 0, 0, 'TOPIC', '[1,)')"
    )
    assert post(described, token_transfer(5001), "?mode=STATE").json()["notes"] == [notes.DEFAULT_SCHEDULE]
    assert post(described, submit(), "?mode=STATE").json()["notes"] == [notes.DEFAULT_SCHEDULE]


def test_notes_high_volume_flag_on_an_unpriced_type(described: TestClient) -> None:
    answer: dict[str, Any] = post(described, flagged_transfer(), "?mode=STATE&high_volume_throttle=10000").json()
    assert answer["high_volume_multiplier"] == 1000
    assert answer["notes"] == [
        notes.DEFAULT_SCHEDULE,
        "CryptoTransfer has no high-volume pricing: the high-volume flag changes nothing",
    ]
