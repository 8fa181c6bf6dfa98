"""GET /api/v1/accounts/{id} against a real PostgreSQL: current and historical state, the embedded
transactions, every parameter and every bad input (path forms and their errors: test_account_ref.py)."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests import support
from tests.api.test_accounts import reference_errors
from tests.support import Ledger

from ledgermirror.api.resources.transactions.transaction_render import custom_fee_limits
from ledgermirror.clock import Clock, SystemClock
from ledgermirror.settings import Settings

ALIAS = "KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72HMQ"
KEY = "7a3c7a3c5477bdf4a63742647d7cfc4544acc1899d07141caf4cd9fea2f75b28"
T = 1_234_567_890_000_000_000


def ts(offset: int) -> str:
    return str(T + offset)


def text(offset: int) -> str:
    return f"1234567890.{offset:09d}"


SETUP: dict[str, Any] = {
    "accounts": [
        {"num": 3},
        {"num": 7},
        {
            "num": 8,
            "balance": 80,
            "balance_timestamp": "2345",
            "created_timestamp": "9999123456789",
            "alias": ALIAS,
            "evm_address": "ac384c53f03855fa1b3616052f8ba32c6c2a2fec",
            "staked_node_id": 8,
            "stake_period_start": 800,
        },
        {"num": 9},
        {"num": 98},
        {"num": 800},
        {"num": 2, "memo": "Mirror node created synthetic treasury account"},
    ],
    "entities": [{"num": 5000, "type": "TOKEN"}],
    "entityStakes": [{"id": 8, "end_stake_period": 810, "pending_reward": 123}],
    "tokenaccounts": [
        {"account_id": "0.0.8", "token_id": "0.0.99999", "balance": 88},
        {"account_id": "0.0.8", "token_id": "0.0.99998", "balance": 8},
        {"account_id": "0.0.8", "token_id": "0.0.99997", "balance": 7, "associated": False},
    ],
    "cryptotransfers": [
        {
            "consensus_timestamp": ts(1),
            "payerAccountId": "0.0.7",
            "recipientAccountId": "0.0.8",
            "amount": 25,
            "nodeAccountId": "0.0.3",
            "treasuryAccountId": "0.0.98",
        },
        {
            "consensus_timestamp": ts(5),
            "payerAccountId": "0.0.8",
            "recipientAccountId": "0.0.9",
            "amount": 10,
            "nodeAccountId": "0.0.3",
            "treasuryAccountId": "0.0.98",
        },
        {
            "consensus_timestamp": ts(16),
            "senderAccountId": "0.0.800",
            "recipientAccountId": "0.0.8",
            "amount": 900,
            "nodeAccountId": "0.0.3",
            "treasuryAccountId": "0.0.98",
        },
        {
            "consensus_timestamp": ts(17),
            "senderAccountId": "0.0.800",
            "recipientAccountId": "0.0.123",
            "amount": 15000,
            "nodeAccountId": "0.0.3",
            "treasuryAccountId": "0.0.98",
        },
    ],
    "transactions": [
        # a child record with a parent: listed
        {
            "consensus_timestamp": ts(6),
            "payerAccountId": "0.0.8",
            "nodeAccountId": "0.0.3",
            "type": 15,
            "nonce": 1,
            "parent_consensus_timestamp": ts(5),
            "charged_tx_fee": 0,
            "entity_id": "0.0.9",
        },
        # a synthetic child record (nonce, no parent, not an account creation or update): not listed
        {"consensus_timestamp": ts(10), "payerAccountId": "0.0.8", "type": 22, "nonce": 2, "charged_tx_fee": 0},
        # an account creation child record without a parent: listed
        {"consensus_timestamp": ts(11), "payerAccountId": "0.0.8", "type": 11, "nonce": 1, "charged_tx_fee": 0},
        # tokens received, paid by someone else
        {
            "consensus_timestamp": ts(20),
            "payerAccountId": "0.0.9",
            "charged_tx_fee": 0,
            "type": 14,
            "token_transfer_list": [
                {"token_id": "0.0.5000", "account": "0.0.9", "amount": -5, "is_approval": True},
                {"token_id": "0.0.5000", "account": "0.0.8", "amount": 5},
            ],
        },
        # the account is the entity (entity_transaction), NFTs moved
        {
            "consensus_timestamp": ts(25),
            "payerAccountId": "0.0.9",
            "charged_tx_fee": 0,
            "type": 36,
            "result": 167,
            "entity_id": "0.0.8",
            "scheduled": True,
            "nft_transfer": [
                {
                    "receiver_account_id": "0.0.8",
                    "sender_account_id": "0.0.9",
                    "token_id": "0.0.5000",
                    "serial_number": 3,
                    "is_approval": None,
                }
            ],
            "batch_key": "1220" + KEY,
            "max_custom_fees": [
                {
                    "accountId": {"accountNum": 8},
                    "fees": [{"amount": 100, "denominatingTokenId": {"tokenNum": 5000}}, {"amount": 7}],
                }
            ],
        },
        # unrelated
        {"consensus_timestamp": ts(30), "payerAccountId": "0.0.9", "charged_tx_fee": 0},
    ],
    "entityTransactions": [
        {
            "consensus_timestamp": ts(25),
            "entity_id": "0.0.8",
            "payer_account_id": "0.0.9",
            "result": 167,
            "type": 36,
        },
    ],
    "stakingRewardTransfers": [
        {"account_id": "0.0.8", "amount": 900, "consensus_timestamp": ts(16), "payer_account_id": "0.0.8"},
        {"account_id": "0.0.123", "amount": 15000, "consensus_timestamp": ts(17), "payer_account_id": "0.0.123"},
        # without a transfer from 0.0.800 in its transaction: not shown
        {"account_id": "0.0.8", "amount": 1, "consensus_timestamp": ts(5), "payer_account_id": "0.0.8"},
    ],
}
ALL = [25, 20, 16, 11, 6, 5, 1]


@pytest.fixture
def account(client: TestClient, ledger: Ledger) -> Iterator[TestClient]:
    ledger.load(SETUP)
    ledger.execute("update transaction set memo = $1 where consensus_timestamp = $2", b"hi", T + 25)
    yield client
    set_clock(client, SystemClock())


def set_clock(client: TestClient, clock: Clock) -> None:
    client.app.state.ctx.clock = clock  # type: ignore[attr-defined]


class Fixed:
    def __init__(self, now: int) -> None:
        self.now = now

    def now_ns(self) -> int:
        return self.now


def reconfigure(client: TestClient, settings: Settings, **changes: Any) -> None:
    support.reconfigure(client, dataclasses.replace(settings, **changes))


def get(client: TestClient, url: str) -> dict[str, Any]:
    response = client.get(url)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def stamps(body: dict[str, Any]) -> list[int]:
    return [int(item["consensus_timestamp"].split(".")[1]) for item in body["transactions"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_current_state(account: TestClient) -> None:
    response = account.get("/api/v1/accounts/0.0.8")
    assert response.headers["cache-control"] == "public, max-age=2"
    body = response.json()
    assert list(body)[-2:] == ["transactions", "links"]
    assert {key: value for key, value in body.items() if key != "transactions"} == {
        "account": "0.0.8",
        "alias": ALIAS,
        "auto_renew_period": None,
        "balance": {
            "balance": 80,
            "timestamp": "0.000002345",
            "tokens": [{"token_id": "0.0.99998", "balance": 8}, {"token_id": "0.0.99999", "balance": 88}],
        },
        "created_timestamp": "9999.123456789",
        "decline_reward": False,
        "delegation_address": "0x",
        "deleted": False,
        "ethereum_nonce": None,
        "evm_address": "0xac384c53f03855fa1b3616052f8ba32c6c2a2fec",
        "expiry_timestamp": None,
        "key": None,
        "max_automatic_token_associations": 0,
        "memo": "entity memo",
        "pending_reward": 123,
        "receiver_sig_required": False,
        "staked_account_id": None,
        "staked_node_id": 8,
        "stake_period_start": "69120000.000000000",
        "links": {"next": None},
    }
    assert stamps(body) == ALL


def test_embedded_transactions(account: TestClient) -> None:
    found = {item["consensus_timestamp"]: item for item in get(account, "/api/v1/accounts/8")["transactions"]}
    assert found[text(1)] == {
        "batch_key": None,
        "bytes": "Ynl0ZXM=",
        "charged_tx_fee": 7,
        "consensus_timestamp": text(1),
        "entity_id": None,
        "high_volume": False,
        "high_volume_pricing_multiplier": 1,
        "max_custom_fees": [],
        "max_fee": "33",
        "memo_base64": None,
        "name": "CRYPTOTRANSFER",
        "nft_transfers": [],
        "node": "0.0.3",
        "nonce": 0,
        "parent_consensus_timestamp": None,
        "result": "SUCCESS",
        "scheduled": False,
        "staking_reward_transfers": [],
        "token_transfers": [],
        "transaction_hash": "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyAhIiMkJSYnKCkqKywtLi8w",
        "transaction_id": "0.0.7-1234567890-000000000",
        "transfers": [
            {"account": "0.0.7", "amount": -26, "is_approval": False},
            {"account": "0.0.8", "amount": 25, "is_approval": False},
            {"account": "0.0.98", "amount": 1, "is_approval": False},
        ],
        "valid_duration_seconds": "11",
        "valid_start_timestamp": text(0),
    }
    assert found[text(16)]["staking_reward_transfers"] == [{"account": "0.0.8", "amount": 900}]
    assert found[text(5)]["staking_reward_transfers"] == []
    assert found[text(6)]["parent_consensus_timestamp"] == text(5)
    assert found[text(6)]["transfers"] == []
    assert found[text(11)]["name"] == "CRYPTOCREATEACCOUNT"
    assert found[text(20)]["token_transfers"] == [
        {"token_id": "0.0.5000", "account": "0.0.8", "amount": 5, "is_approval": False},
        {"token_id": "0.0.5000", "account": "0.0.9", "amount": -5, "is_approval": True},
    ]
    entity = found[text(25)]
    assert (entity["name"], entity["result"], entity["entity_id"], entity["scheduled"]) == (
        "TOKENUPDATE",
        "INVALID_TOKEN_ID",
        "0.0.8",
        True,
    )
    assert entity["memo_base64"] == base64.b64encode(b"hi").decode()
    assert entity["batch_key"] == {"_type": "ED25519", "key": KEY}
    assert entity["nft_transfers"] == [
        {
            "is_approval": False,
            "receiver_account_id": "0.0.8",
            "sender_account_id": "0.0.9",
            "serial_number": 3,
            "token_id": "0.0.5000",
        }
    ]
    assert entity["max_custom_fees"] == [
        {"account_id": "0.0.8", "amount": 100, "denominating_token_id": "0.0.5000"},
        {"account_id": "0.0.8", "amount": 7, "denominating_token_id": None},
    ]


def test_other_accounts_see_their_own_transactions(account: TestClient) -> None:
    assert stamps(get(account, "/api/v1/accounts/9")) == [30, 25, 20, 5]
    assert stamps(get(account, "/api/v1/accounts/98?order=asc")) == [1, 5, 16, 17]


def test_order_limit_and_next_links(account: TestClient) -> None:
    body = get(account, "/api/v1/accounts/8?limit=2")
    assert stamps(body) == [25, 20]
    assert body["links"]["next"] == f"/api/v1/accounts/8?limit=2&timestamp=lt:{text(20)}"
    body = get(account, body["links"]["next"])
    assert stamps(body) == [16, 11]
    assert body["balance"]["balance"] == 80  # the state is "now"
    body = get(account, f"/api/v1/accounts/{ALIAS}?order=asc&limit=3")
    assert stamps(body) == [1, 5, 6]
    assert body["links"]["next"] == f"/api/v1/accounts/{ALIAS}?order=asc&limit=3&timestamp=gt:{text(6)}"
    assert body["balance"]["tokens"][0]["token_id"] == "0.0.99998"  # tokens stay in ascending order
    body = get(account, "/api/v1/accounts/8?limit=7")
    assert stamps(body) == ALL
    assert body["links"]["next"] is None


def test_reference_next_link_mode_and_limits(account: TestClient, api_settings: Settings) -> None:
    reconfigure(account, api_settings, pagination_probe=False, limit_default=3, limit_max=4)
    assert stamps(get(account, "/api/v1/accounts/8")) == [25, 20, 16]
    body = get(account, "/api/v1/accounts/8?limit=7&order=asc&timestamp=gte:1234567890.000000011")
    assert stamps(body) == [11, 16, 20, 25]
    assert body["links"]["next"] == f"/api/v1/accounts/8?limit=7&order=asc&timestamp=gt:{text(25)}"


def test_token_balance_limit(account: TestClient, api_settings: Settings) -> None:
    reconfigure(account, api_settings, token_balance_limit_single_account=1)
    assert get(account, "/api/v1/accounts/8")["balance"]["tokens"] == [{"token_id": "0.0.99998", "balance": 8}]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("transactiontype=cryptotransfer", [20, 16, 5, 1]),
        ("transactionType=CRYPTOTRANSFER&transactiontype=TokenUpdate", [25, 20, 16, 5, 1]),
        ("transactiontype=eq:cryptocreateaccount", [11]),
        ("transactiontype=registerednodecreate", []),
        ("transactions=false", []),
        ("transactions=FALSE&transactions=true", ALL),
        ("transactions=eq:false", []),
        ("timestamp=1234567890.000000016", [16]),
        ("timestamp=eq:1234567890.000000016&timestamp=1234567890.000000020", []),
        ("timestamp=ne:1234567890.000000016&timestamp=ne:1234567890.000000005", [25, 20, 11, 6, 1]),
        ("timestamp=ne:1234567890.000000016&timestamp=lt:1234567890.000000020", [11, 6, 5, 1]),
        ("timestamp=gt:1234567890.000000005&timestamp=lte:1234567890.000000020", [20, 16, 11, 6]),
        ("timestamp=gte:1234567890.000000005&timestamp=lt:1234567890.00000002", [16, 11, 6, 5]),
    ],
)
def test_transaction_filters(account: TestClient, query: str, expected: list[int]) -> None:
    body = get(account, f"/api/v1/accounts/8?{query}")
    assert stamps(body) == expected
    if not expected:
        assert body["links"]["next"] is None


def test_transactions_false_has_no_link(account: TestClient) -> None:
    assert get(account, "/api/v1/accounts/8?transactions=false&limit=1")["links"] == {"next": None}


HISTORY: dict[str, Any] = {
    "accounts": [
        {"num": 2, "timestamp_range": "[0,)"},
        {"num": 9},
        {
            "num": 8,
            "balance": 80,
            "balance_timestamp": "3000",
            "staked_node_id": 1,
            "staked_account_id": 1,
            "timestamp_range": "[3000,)",
        },
        {
            "num": 8,
            "balance": 30,
            "balance_timestamp": "1500",
            "staked_node_id": 2,
            "staked_account_id": 2,
            "stake_period_start": 5,
            "timestamp_range": "[1000,3000)",
        },
    ],
    "entityStakes": [
        {"id": 8, "end_stake_period": 10, "pending_reward": 1, "timestamp_range": "[3000,)"},
        {"id": 8, "end_stake_period": 10, "pending_reward": 2, "timestamp_range": "[1000,3000)"},
    ],
    "balances": [
        {"timestamp": 2000, "id": 2, "balance": 1},
        {
            "timestamp": 2000,
            "id": 8,
            "balance": 555,
            "tokens": [{"token_num": 99999, "balance": 9}, {"token_num": 99998, "balance": 8}],
        },
        {"timestamp": 2500, "id": 2, "balance": 1},
        {"timestamp": 2500, "id": 8, "balance": 556, "tokens": [{"token_num": 99999, "balance": 10}]},
        {"timestamp": 2700, "id": 2, "balance": 1},
    ],
    "tokenaccounts": [{"account_id": "0.0.8", "token_id": "0.0.99999", "balance": 99}],
    "cryptotransfers": [
        {
            "consensus_timestamp": "2600",
            "payerAccountId": "0.0.8",
            "recipientAccountId": "0.0.9",
            "treasuryAccountId": "0.0.98",
        },
    ],
}


@pytest.fixture
def history(client: TestClient, ledger: Ledger) -> Iterator[TestClient]:
    ledger.load(HISTORY)
    set_clock(client, Fixed(86_400 * 10**9))  # 1970-01-02
    yield client
    set_clock(client, SystemClock())


def balance(body: dict[str, Any]) -> tuple[Any, Any, list[tuple[str, int]]]:
    found = body["balance"]
    return found["balance"], found["timestamp"], [(item["token_id"], item["balance"]) for item in found["tokens"]]


def test_historical_state(history: TestClient) -> None:
    now = get(history, "/api/v1/accounts/8")
    assert (now["staked_node_id"], now["pending_reward"], balance(now)) == (
        1,
        1,
        (80, "0.000003000", [("0.0.99999", 99)]),
    )
    then = get(history, "/api/v1/accounts/8?timestamp=lte:0.000002")
    assert (then["staked_node_id"], then["staked_account_id"], then["pending_reward"]) == (2, "0.0.2", 2)
    assert balance(then) == (555, "0.000002000", [("0.0.99998", 8), ("0.0.99999", 9)])
    assert then["transactions"] == []
    # the newest snapshot in range; the account's newest rows up to it, from the snapshot's month
    assert balance(get(history, "/api/v1/accounts/8?timestamp=lt:0.0000027")) == (
        556,
        "0.000002500",
        [("0.0.99998", 8), ("0.0.99999", 10)],
    )
    # a newer snapshot without rows for the account: its newest rows of the month
    later = get(history, "/api/v1/accounts/8?timestamp=gt:0.0000026")
    assert balance(later) == (556, "0.000002700", [("0.0.99998", 8), ("0.0.99999", 10)])
    assert later["staked_node_id"] == 1
    assert stamps(later) == []
    assert stamps(get(history, "/api/v1/accounts/8?timestamp=gt:0.0000025")) == [2600]
    # a snapshot without any row for the account: balance 0
    assert balance(get(history, "/api/v1/accounts/9?timestamp=gt:0.0000026")) == (0, "0.000002700", [])


def test_historical_state_without_snapshot_uses_the_version_balance(history: TestClient) -> None:
    body = get(history, "/api/v1/accounts/8?timestamp=lt:0.000002")
    assert balance(body) == (30, "0.000001500", [])
    assert body["stake_period_start"] == "432000.000000000"
    assert balance(get(history, "/api/v1/accounts/8?timestamp=0.0000015&timestamp=0.0000025")) == (
        30,
        "0.000001500",
        [],
    )
    # ne leaves out the snapshots at that instant, not the versions that contain it
    body = get(history, "/api/v1/accounts/8?timestamp=ne:0.000003")
    assert (body["staked_node_id"], balance(body)) == (
        1,
        (556, "0.000002700", [("0.0.99998", 8), ("0.0.99999", 10)]),
    )
    body = get(history, "/api/v1/accounts/8?timestamp=ne:0.0000027")
    assert (body["staked_node_id"], balance(body)) == (
        1,
        (556, "0.000002500", [("0.0.99998", 8), ("0.0.99999", 10)]),
    )


def test_snapshots_more_than_a_month_before_are_not_used(history: TestClient) -> None:
    set_clock(history, Fixed(90 * 86_400 * 10**9))  # 1970-04-01: the window starts 1970-03-01
    assert balance(get(history, "/api/v1/accounts/8?timestamp=gt:0.000002")) == (80, "0.000003000", [])
    assert balance(get(history, "/api/v1/accounts/8?timestamp=lte:0.000002")) == (
        555,
        "0.000002000",
        [("0.0.99998", 8), ("0.0.99999", 9)],
    )


def test_historical_not_found(history: TestClient) -> None:
    for url in ("/api/v1/accounts/8?timestamp=lt:0.000001", "/api/v1/accounts/7?timestamp=lt:0.000001"):
        response = history.get(url)
        assert response.status_code == 404
        assert messages(response) == ["Not found"]


def test_bind_timestamp_range(account: TestClient, api_settings: Settings) -> None:
    reconfigure(account, api_settings, bind_timestamp_range=True, max_transactions_timestamp_range_ns=10)
    set_clock(account, Fixed(T + 100))
    body = get(account, "/api/v1/accounts/8?timestamp=gt:1234567890.000000001")
    assert stamps(body) == []  # (1.000000001, now] is cut to its last 10 ns, (90, 100]
    assert body["links"]["next"] == f"/api/v1/accounts/8?timestamp=gt:{text(1)}&timestamp=lt:{text(91)}"
    body = get(account, f"/api/v1/accounts/8?timestamp=lt:{text(26)}")
    assert stamps(body) == [25, 20, 16]
    assert body["links"]["next"] == f"/api/v1/accounts/8?timestamp=lt:{text(16)}"
    body = get(account, "/api/v1/accounts/8?order=asc")  # from the first transaction: [1, 10]
    assert stamps(body) == [1, 5, 6]
    assert body["links"]["next"] == f"/api/v1/accounts/8?order=asc&timestamp=gt:{text(10)}"
    reconfigure(account, api_settings, bind_timestamp_range=True)
    body = get(account, "/api/v1/accounts/8")
    assert stamps(body) == ALL
    assert body["links"]["next"] is None


def test_bind_timestamp_range_without_transactions(
    client: TestClient, ledger: Ledger, api_settings: Settings
) -> None:
    ledger.load({"accounts": [{"num": 8}]})
    reconfigure(client, api_settings, bind_timestamp_range=True)
    assert get(client, "/api/v1/accounts/8")["links"] == {"next": None}


@pytest.mark.parametrize(
    ("url", "status", "expected"),
    [
        ("/api/v1/accounts/0.0.9999", 404, ["Not found"]),
        ("/api/v1/accounts/2", 404, ["Not found"]),
        ("/api/v1/accounts/5000", 404, ["Not found"]),
        (
            "/api/v1/accounts/8?timestamp=gt:1234567890.000000005&timestamp=lte:1234567890.000000005",
            404,
            ["Timestamp range is empty"],
        ),
        ("/api/v1/accounts/8?timestamp=gt:9223372036.854775807", 404, ["Timestamp range is empty"]),
        (
            "/api/v1/accounts/8?timestamp=gt:1&timestamp=gte:2",
            400,
            ["Multiple gt or gte operators not permitted for timestamp param"],
        ),
        (
            "/api/v1/accounts/8?timestamp=lt:1&timestamp=lte:2",
            400,
            ["Multiple lt or lte operators not permitted for timestamp param"],
        ),
        (
            "/api/v1/accounts/8?timestamp=1&timestamp=ne:2",
            400,
            ["Cannot combine eq with ne, gt, gte, lt, or lte for timestamp param"],
        ),
        (
            "/api/v1/accounts/8?timestamp=eq:1&timestamp=lt:2",
            400,
            ["Cannot combine eq with ne, gt, gte, lt, or lte for timestamp param"],
        ),
        (
            "/api/v1/accounts/0.5.6.7?timestamp=gt:1&timestamp=gt:2",
            400,
            ["Invalid parameter: idOrAliasOrEvmAddress"],
        ),
        ("/api/v1/accounts/0.5.6.7?limit=0", 400, ["Invalid parameter: limit"]),
        ("/api/v1/accounts/8?limit=0", 400, ["Invalid parameter: limit"]),
        ("/api/v1/accounts/8?limit=gt:5", 400, ["Invalid parameter: limit"]),
        ("/api/v1/accounts/8?order=eq:asc", 400, ["Invalid parameter: order"]),
        ("/api/v1/accounts/8?timestamp=abc", 400, ["Invalid parameter: timestamp"]),
        ("/api/v1/accounts/8?timestamp=gt:1.0000000001", 400, ["Invalid parameter: timestamp"]),
        ("/api/v1/accounts/8?transactiontype=invalid", 400, ["Invalid parameter: transactiontype"]),
        ("/api/v1/accounts/8?transactiontype=ne:cryptotransfer", 400, ["Invalid parameter: transactiontype"]),
        ("/api/v1/accounts/8?transactions=no", 400, ["Invalid parameter: transactions"]),
        ("/api/v1/accounts/8?transactions=gt:true", 400, ["Invalid parameter: transactions"]),
        ("/api/v1/accounts/8?account.id=8", 400, ["Unknown query parameter: account.id"]),
        (
            "/api/v1/accounts/8?foo=1&limit=-1&order=x",
            400,
            ["Invalid parameter: limit", "Invalid parameter: order", "Unknown query parameter: foo"],
        ),
    ],
)
def test_errors(account: TestClient, url: str, status: int, expected: list[str]) -> None:
    response = account.get(url)
    assert response.status_code == status
    assert messages(response) == expected
    assert "cache-control" not in response.headers


@pytest.mark.parametrize(
    "url", ["/api/v1/accounts/8", "/api/v1/accounts/8?order=asc&limit=2", "/api/v1/accounts/9"]
)
def test_answers_match_the_reference_schema(account: TestClient, url: str) -> None:
    assert reference_errors("/api/v1/accounts/{idOrAliasOrEvmAddress}", get(account, url)) == []


def test_custom_fee_limits_never_fail_on_odd_bytes() -> None:
    assert custom_fee_limits(None) == []
    assert custom_fee_limits([b""]) == []
    # Garbage, and a fee (field 2) whose 5 bytes are cut to 1: neither decodes, so neither gives an entry.
    assert custom_fee_limits([b"\xff\xff", b"\x12\x05\x08"]) == []
    assert custom_fee_limits([b"\x12\x00"]) == [{"account_id": None, "amount": 0, "denominating_token_id": None}]
    account = b"\x0a\x06\x08\x01\x10\x02\x18\x03"  # 1.2.3
    fee = b"\x12\x0d\x08" + bytes.fromhex("ffffffffffffffffff01") + b"\x12\x00"  # amount -1, token 0.0.0
    assert custom_fee_limits([account + fee]) == [
        {"account_id": "1.2.3", "amount": -1, "denominating_token_id": None}
    ]
    assert custom_fee_limits([b"\x0a\x02\x08\xff"]) == []  # truncated
    # A damaged message does not hide the good ones beside it.
    assert custom_fee_limits([b"\xff\xff", account + fee]) == [
        {"account_id": "1.2.3", "amount": -1, "denominating_token_id": None}
    ]
