"""GET /api/v1/transactions: every parameter, the transaction object, pagination, bind range and bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger, reconfigure

from ledgermirror.clock import FixedClock
from ledgermirror.settings import Settings

URL = "/api/v1/transactions"
SECOND = 1_000_000_000
T = 1_700_000_000 * SECOND
TOKEN = "0.0.2000"
NFT = "0.0.3000"


def ts(nanos: int) -> str:
    return f"{nanos // SECOND}.{nanos % SECOND:09d}"


LEDGER: dict[str, Any] = {
    "accounts": [
        {"num": 3},
        {"num": 98},
        {"num": 800},
        {"num": 1001},
        {"num": 1002},
        {"num": 1003, "evm_address": "ac384c53f03855fa1b3616052f8ba32c6c2a2fec"},
    ],
    "cryptotransfers": [
        # T+1: 1001 pays 100 to 1002
        {
            "consensus_timestamp": T + 1,
            "payerAccountId": "0.0.1001",
            "recipientAccountId": "0.0.1002",
            "amount": 100,
            "nodeAccountId": "0.0.3",
            "treasuryAccountId": "0.0.98",
        },
        # T+7: a staking reward of 50 to 1002
        {
            "consensus_timestamp": T + 7,
            "senderAccountId": "0.0.800",
            "payerAccountId": "0.0.1002",
            "recipientAccountId": "0.0.1002",
            "amount": 50,
            "nodeAccountId": "0.0.3",
            "treasuryAccountId": "0.0.98",
        },
    ],
    "transactions": [
        # T+2: 1002 pays for 10 tokens from 1001 to 1003
        {
            "consensus_timestamp": T + 2,
            "payerAccountId": "0.0.1002",
            "nodeAccountId": "0.0.3",
            "type": 14,
            "token_transfer_list": [
                {"token_id": TOKEN, "account": "0.0.1001", "amount": -10},
                {"token_id": TOKEN, "account": "0.0.1003", "amount": 10, "is_approval": True},
            ],
        },
        # T+3: a failed transfer paid by 1003 (fee transfers only)
        {"consensus_timestamp": T + 3, "payerAccountId": "0.0.1003", "nodeAccountId": "0.0.3", "result": 28},
        # T+4: 1002 updates account 1001 (entity_transaction below)
        {
            "consensus_timestamp": T + 4,
            "payerAccountId": "0.0.1002",
            "nodeAccountId": "0.0.3",
            "type": 15,
            "entity_id": "0.0.1001",
        },
        # T+5: an NFT moves from 1001 to 1002
        {
            "consensus_timestamp": T + 5,
            "payerAccountId": "0.0.1001",
            "nodeAccountId": "0.0.3",
            "type": 14,
            "nft_transfer": [
                {
                    "receiver_account_id": "0.0.1002",
                    "sender_account_id": "0.0.1001",
                    "serial_number": 1,
                    "token_id": NFT,
                    "is_approval": True,
                }
            ],
        },
        # T+6: a synthetic child record of 1001's with no transfers: not in 1001's list
        {
            "consensus_timestamp": T + 6,
            "payerAccountId": "0.0.1001",
            "nodeAccountId": "0.0.3",
            "nonce": 1,
            "charged_tx_fee": 0,
        },
    ],
    "entityTransactions": [
        {
            "consensus_timestamp": T + 4,
            "entity_id": "0.0.1001",
            "payer_account_id": "0.0.1002",
            "result": 22,
            "type": 15,
        }
    ],
    "stakingRewardTransfers": [
        {"account_id": "0.0.1002", "amount": 50, "consensus_timestamp": T + 7, "payer_account_id": "0.0.1002"}
    ],
}


@pytest.fixture
def loaded(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(LEDGER)
    ledger.execute("update transaction set memo = $1 where consensus_timestamp = $2", b"update", T + 4)
    return client


def stamps(response: Any) -> list[int]:
    """The consensus timestamps of the page, as offsets from T."""
    assert response.status_code == 200, response.text
    return [int(item["consensus_timestamp"].replace(".", "")) - T for item in response.json()["transactions"]]


def messages(response: Any) -> list[str]:
    assert response.status_code == 400, response.text
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_no_parameters_newest_first_with_cache_control(loaded: TestClient) -> None:
    response = loaded.get(URL)
    assert stamps(response) == [7, 6, 5, 4, 3, 2, 1]
    assert response.headers["cache-control"] == "public, max-age=2"
    assert response.json()["links"] == {"next": None}
    assert stamps(loaded.get(URL + "?order=asc")) == [1, 2, 3, 4, 5, 6, 7]
    assert stamps(loaded.get(URL + "?order=DESC")) == [7, 6, 5, 4, 3, 2, 1]


def test_the_transaction_object(loaded: TestClient) -> None:
    by_stamp = {item["consensus_timestamp"]: item for item in loaded.get(URL).json()["transactions"]}
    token = by_stamp[ts(T + 2)]
    assert list(token) == [
        "batch_key",
        "bytes",
        "charged_tx_fee",
        "consensus_timestamp",
        "entity_id",
        "high_volume",
        "high_volume_pricing_multiplier",
        "max_custom_fees",
        "max_fee",
        "memo_base64",
        "name",
        "nft_transfers",
        "node",
        "nonce",
        "parent_consensus_timestamp",
        "result",
        "scheduled",
        "staking_reward_transfers",
        "token_transfers",
        "transaction_hash",
        "transaction_id",
        "transfers",
        "valid_duration_seconds",
        "valid_start_timestamp",
    ]
    assert token["token_transfers"] == [
        {"token_id": TOKEN, "account": "0.0.1001", "amount": -10, "is_approval": False},
        {"token_id": TOKEN, "account": "0.0.1003", "amount": 10, "is_approval": True},
    ]
    assert token["transfers"] == [
        {"account": "0.0.3", "amount": 2, "is_approval": False},
        {"account": "0.0.98", "amount": 1, "is_approval": False},
        {"account": "0.0.1002", "amount": -3, "is_approval": False},
    ]
    assert token["transaction_id"] == f"0.0.1002-{(T + 1) // SECOND}-{(T + 1) % SECOND:09d}"
    assert token["max_fee"] == "33" and token["valid_duration_seconds"] == "11"
    assert token["name"] == "CRYPTOTRANSFER" and token["result"] == "SUCCESS" and token["node"] == "0.0.3"
    assert by_stamp[ts(T + 3)]["result"] == "INSUFFICIENT_ACCOUNT_BALANCE"
    assert by_stamp[ts(T + 4)]["name"] == "CRYPTOUPDATEACCOUNT"
    assert by_stamp[ts(T + 4)]["memo_base64"] == "dXBkYXRl"
    assert by_stamp[ts(T + 4)]["entity_id"] == "0.0.1001"
    assert by_stamp[ts(T + 5)]["nft_transfers"] == [
        {
            "is_approval": True,
            "receiver_account_id": "0.0.1002",
            "sender_account_id": "0.0.1001",
            "serial_number": 1,
            "token_id": NFT,
        }
    ]
    assert by_stamp[ts(T + 7)]["staking_reward_transfers"] == [{"account": "0.0.1002", "amount": 50}]
    assert by_stamp[ts(T + 1)]["staking_reward_transfers"] == []
    assert by_stamp[ts(T + 6)]["nonce"] == 1 and by_stamp[ts(T + 6)]["transfers"] == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("account.id=0.0.1001", [5, 4, 2, 1]),  # payer, entity, token and hbar transfers; not the child record
        ("account.id=1001", [5, 4, 2, 1]),
        ("account.id=0.1001", [5, 4, 2, 1]),
        ("account.id=0x00000000000000000000000000000000000003e9", [5, 4, 2, 1]),
        ("account.id=0.0.1002", [7, 4, 2, 1]),
        ("account.id=0.0.1003", [3, 2]),
        ("account.id=ac384c53f03855fa1b3616052f8ba32c6c2a2fec", [3, 2]),
        ("account.id=0x0000000000000000000000000000000000000bad", []),
        ("account.id=0.0.1001&account.id=0.0.1003", [5, 4, 3, 2, 1]),
        ("account.id=gte:0.0.1002&account.id=lt:0.0.1004", [7, 4, 3, 2, 1]),
        ("account.id=gt:0.0.1002", [3, 2]),
        ("account.id=0.0.1001&order=asc&limit=2", [1, 2]),
        ("account.id=0.0.98", [7, 5, 4, 3, 2, 1]),
        ("account.id=0.0.98&account.id=0.0.1003&limit=3", [7, 5, 4]),
        ("account.id=ne:0.0.1001", [7, 5, 4, 3, 2, 1]),
        ("account.id=ne:0.0.1001&account.id=0.0.1001", []),
        ("account.id=0.0.4242", []),
        ("type=credit", [7, 5, 4, 3, 2, 1]),
        ("type=CREDIT&account.id=0.0.1001", []),
        ("type=debit&account.id=0.0.1001", [5, 2, 1]),
        ("type=credit&account.id=0.0.1003", [2]),
        ("type=debit&account.id=0.0.1003", [3]),
        ("type=credit&type=debit", []),
        ("type=credit&type=credit&account.id=0.0.1003", [2]),
        ("result=fail", [3]),
        ("result=SUCCESS", [7, 6, 5, 4, 2, 1]),
        ("result=fail&result=success&account.id=0.0.1003", [2]),
        ("result=fail&account.id=0.0.1003&type=debit", [3]),
        ("transactiontype=cryptoupdateaccount", [4]),
        ("transactionType=CRYPTOUPDATEACCOUNT&transactiontype=tokenmint", [4]),
        ("transactiontype=cryptotransfer&account.id=0.0.1002", [7, 2, 1]),
        ("transactiontype=cryptotransfer&type=credit&account.id=0.0.1002", [7, 1]),
        ("transactiontype=tokenmint", []),
        (f"timestamp={ts(T + 3)}", [3]),
        (f"timestamp=eq:{ts(T + 3)}&timestamp={ts(T + 3)}", [3]),
        (f"timestamp={ts(T + 3)}&timestamp={ts(T + 4)}", []),
        (f"timestamp=gt:{ts(T + 2)}&timestamp=lte:{ts(T + 5)}", [5, 4, 3]),
        (f"timestamp=gt:{ts(T + 2)}&timestamp=lte:{ts(T + 5)}&timestamp=ne:{ts(T + 4)}", [5, 3]),
        (f"timestamp=gte:{ts(T + 2)}&timestamp=gte:{ts(T + 5)}", [7, 6, 5]),
        (f"timestamp=lt:{ts(T + 3)}", [2, 1]),
        (f"timestamp=gt:{ts(T + 5)}&timestamp=lt:{ts(T + 5)}", []),
        (f"timestamp=gte:{ts(T + 2)}&timestamp={ts(T + 1)}", []),
        (f"timestamp=lte:{ts(T + 4)}&account.id=0.0.1001", [4, 2, 1]),
        (f"timestamp={(T + 2) // SECOND}", []),
        ("timestamp=gt:9223372036.854775807", []),
        ("timestamp=9223372036.854775807", []),
        ("timestamp=lt:0", []),
        ("account.id=0.0.1&account.id=ne:0.0.1&account.id=gt:0.0.5", []),
    ],
)
def test_filters(loaded: TestClient, query: str, expected: list[int]) -> None:
    assert stamps(loaded.get(f"{URL}?{query}")) == expected


def test_next_links_are_followed_to_the_end(loaded: TestClient, api_settings: Settings) -> None:
    for probe in (True, False):
        reconfigure(loaded, dataclasses.replace(api_settings, pagination_probe=probe))
        for order, expected in (("desc", [7, 6, 5, 4, 3, 2, 1]), ("asc", [1, 2, 3, 4, 5, 6, 7])):
            seen: list[int] = []
            url: str | None = f"{URL}?limit=2&order={order}"
            links: list[str] = []
            while url is not None:
                response = loaded.get(url)
                seen += stamps(response)
                url = response.json()["links"]["next"]
                if url is not None:
                    links.append(url)
            assert seen == expected
            bound = "lt" if order == "desc" else "gt"
            assert (
                links[0]
                == f"{URL}?limit=2&order={order}&timestamp={bound}:{ts(T + (6 if order == 'desc' else 2))}"
            )
            assert len(links) == 3
        # a full last page: the reference's rule links to an empty page, the probe knows there is none
        response = loaded.get(URL + "?limit=7")
        assert len(stamps(response)) == 7
        if probe:
            assert response.json()["links"]["next"] is None
        else:
            following = loaded.get(response.json()["links"]["next"])
            assert following.json() == {"transactions": [], "links": {"next": None}}


def test_next_link_of_an_account_page_keeps_the_filters(loaded: TestClient) -> None:
    response = loaded.get(f"{URL}?account.id=0.0.1001&type=debit&limit=2")
    assert stamps(response) == [5, 2]
    assert (
        response.json()["links"]["next"]
        == f"{URL}?account.id=0.0.1001&type=debit&limit=2&timestamp=lt:{ts(T + 2)}"
    )
    assert stamps(loaded.get(response.json()["links"]["next"])) == [1]


def test_limit_is_capped(loaded: TestClient, api_settings: Settings) -> None:
    reconfigure(loaded, dataclasses.replace(api_settings, limit_max=3, limit_default=2))
    assert stamps(loaded.get(URL)) == [7, 6]
    assert stamps(loaded.get(URL + "?limit=100")) == [7, 6, 5]


def test_bind_timestamp_range_cuts_the_window_and_links_past_the_cut(
    loaded: TestClient, api_settings: Settings
) -> None:
    width = 3
    settings = dataclasses.replace(
        api_settings, bind_timestamp_range=True, max_transactions_timestamp_range_ns=width
    )
    reconfigure(loaded, settings, FixedClock(T + 10))
    # desc from now: [T+8, T+10] holds nothing, the link continues below the cut
    response = loaded.get(URL + "?limit=2")
    assert stamps(response) == []
    assert response.json()["links"]["next"] == f"{URL}?limit=2&timestamp=lt:{ts(T + 8)}"
    response = loaded.get(response.json()["links"]["next"])
    assert stamps(response) == [7, 6]
    # asc from the first transaction: [T+1, T+3]
    response = loaded.get(URL + "?order=asc&limit=5")
    assert stamps(response) == [1, 2, 3]
    assert response.json()["links"]["next"] == f"{URL}?order=asc&limit=5&timestamp=gt:{ts(T + 3)}"
    # a window that fits is not cut
    response = loaded.get(f"{URL}?timestamp=gte:{ts(T + 5)}&timestamp=lte:{ts(T + 6)}")
    assert stamps(response) == [6, 5]
    assert response.json()["links"]["next"] is None


def test_bind_timestamp_range_with_no_transactions_at_all(client: TestClient, api_settings: Settings) -> None:
    reconfigure(client, dataclasses.replace(api_settings, bind_timestamp_range=True))
    response = client.get(URL)
    assert response.json() == {"transactions": [], "links": {"next": None}}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "timestamp=-1&account.id=0.x&type=good&result=best&transactionType=invalid&account.publickey=ab",
            [
                "Invalid parameter: timestamp",
                "Invalid parameter: account.id",
                "Invalid parameter: type",
                "Invalid parameter: result",
                "Invalid parameter: transactiontype",
                "Unknown query parameter: account.publickey",
            ],
        ),
        ("limit=0", ["Invalid parameter: limit"]),
        ("limit=x", ["Invalid parameter: limit"]),
        ("limit=-1", ["Invalid parameter: limit"]),
        ("order=up", ["Invalid parameter: order"]),
        ("order=eq:asc", ["Invalid parameter: order"]),
        ("timestamp=1.0000000001", ["Invalid parameter: timestamp"]),
        ("timestamp=xx:1", ["Invalid parameter: timestamp"]),
        ("timestamp=99999999999", ["Invalid parameter: timestamp"]),
        ("account.id=0.0.-1", ["Invalid parameter: account.id"]),
        ("account.id=1.2.3.4", ["Invalid parameter: account.id"]),
        ("type=", ["Invalid parameter: type"]),
        ("result=", ["Invalid parameter: result"]),
        ("result=successful", ["Invalid parameter: result"]),
        ("transactiontype=", ["Invalid parameter: transactiontype"]),
        ("account.id=%00", ["Invalid parameter: account.id"]),
        ("timestamp=1%00", ["Invalid parameter: timestamp"]),
        ("transactiontype=cryptotransfer%00", ["Invalid parameter: transactiontype"]),
        ("type=credit%00", ["Invalid parameter: type"]),
        ("result=fail%00", ["Invalid parameter: result"]),
        ("nonce=1", ["Unknown query parameter: nonce"]),
        ("%00=1", ["Unknown query parameter: \x00"]),
        (
            "account.id=1&account.id=2&account.id=3&account.id=4&account.id=5&account.id=6&account.id=7"
            "&account.id=8&account.id=9",
            ["Array limit exceeded. Only 8 elements allowed in an array."],
        ),
    ],
)
def test_bad_input_is_400_with_the_reference_texts(client: TestClient, query: str, expected: list[str]) -> None:
    response = client.get(f"{URL}?{query}")
    assert messages(response) == expected
    assert "cache-control" not in response.headers
