"""GET /api/v1/network/stake against a real PostgreSQL: the latest row, the fractions' printing, 404 and 400.

Also checks the answers of all three network endpoints against the reference's OpenAPI schemas.
"""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient
from tests import reference_openapi
from tests.api.test_network_nodes import SETUP as NODES
from tests.api.test_network_supply import CURRENT, HISTORY
from tests.support import Ledger

from ledgermirror.api.resources.network.network_stake import fee_fraction, staking_period

OLDER: dict[str, Any] = {
    "consensus_timestamp": 1,
    "epoch_day": 1,
    "max_stake_rewarded": 10,
    "max_staking_reward_rate_per_hbar": 17807,
    "max_total_reward": 20,
    "node_reward_fee_denominator": 0,
    "node_reward_fee_numerator": 100,
    "reserved_staking_rewards": 30,
    "reward_balance_threshold": 40,
    "stake_total": 35000000000000000,
    "staking_period": 1654991999999999999,
    "staking_period_duration": 1440,
    "staking_periods_stored": 365,
    "staking_reward_fee_denominator": 0,
    "staking_reward_fee_numerator": 100,
    "staking_reward_rate": 100000000000,
    "staking_start_threshold": 25000000000000000,
    "unreserved_staking_reward_balance": 50,
}
LATEST: dict[str, Any] = {
    "consensus_timestamp": 2,
    "epoch_day": 2,
    "max_stake_rewarded": 11,
    "max_staking_reward_rate_per_hbar": 17808,
    "max_total_reward": 21,
    "node_reward_fee_denominator": 1000,
    "node_reward_fee_numerator": 3,
    "reserved_staking_rewards": 31,
    "reward_balance_threshold": 41,
    "stake_total": 35000000000000003,
    "staking_period": 1654992999999999999,
    "staking_period_duration": 1440,
    "staking_periods_stored": 365,
    "staking_reward_fee_denominator": 10,
    "staking_reward_fee_numerator": 1,
    "staking_reward_rate": 100000000000,
    "staking_start_threshold": 25000000000000001,
    "unreserved_staking_reward_balance": 51,
}


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_latest_row(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"networkstakes": [LATEST, OLDER]})
    response = client.get("/api/v1/network/stake")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=60"
    body = response.json()
    assert body == {
        "max_stake_rewarded": 11,
        "max_staking_reward_rate_per_hbar": 17808,
        "max_total_reward": 21,
        "node_reward_fee_fraction": 0.003,
        "reserved_staking_rewards": 31,
        "reward_balance_threshold": 41,
        "stake_total": 35000000000000003,
        "staking_period": {"from": "1654993000.000000000", "to": "1655079400.000000000"},
        "staking_period_duration": 1440,
        "staking_periods_stored": 365,
        "staking_reward_fee_fraction": 0.1,
        "staking_reward_rate": 100000000000,
        "staking_start_threshold": 25000000000000001,
        "unreserved_staking_reward_balance": 51,
    }
    assert list(body) == [
        "max_stake_rewarded",
        "max_staking_reward_rate_per_hbar",
        "max_total_reward",
        "node_reward_fee_fraction",
        "reserved_staking_rewards",
        "reward_balance_threshold",
        "stake_total",
        "staking_period",
        "staking_period_duration",
        "staking_periods_stored",
        "staking_reward_fee_fraction",
        "staking_reward_rate",
        "staking_start_threshold",
        "unreserved_staking_reward_balance",
    ]
    assert b'"node_reward_fee_fraction":0.003,' in response.content


@pytest.mark.parametrize(
    ("numerator", "denominator", "text"),
    [
        (0, 100, b"0.0"),
        (100, 0, b"0.0"),
        (100, 100, b"1.0"),
        (1, 3, b"0.33333334"),
        (2, 3, b"0.6666667"),
        (1, 7, b"0.14285715"),
        (1, 10, b"0.1"),
        (1, 10_000, b"0.0001"),
        (1, 2_000_000_000, b"1e-9"),  # 5e-10 rounds half-up to 1e-9
        (1, 3_000_000_000, b"0.0"),  # below half a nanounit
    ],
)
def test_fraction_printing(
    client: TestClient, ledger: Ledger, numerator: int, denominator: int, text: bytes
) -> None:
    ledger.load(
        {
            "networkstakes": [
                {**LATEST, "node_reward_fee_numerator": numerator, "node_reward_fee_denominator": denominator}
            ]
        }
    )
    response = client.get("/api/v1/network/stake")
    assert b'"node_reward_fee_fraction":' + text + b"," in response.content


def test_loader_defaults(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"networkstakes": [{}]})
    body = client.get("/api/v1/network/stake").json()
    assert body["node_reward_fee_fraction"] == 0.0
    assert body["staking_reward_fee_fraction"] == 1.0
    assert body["staking_period"] == {"from": "86400.000000000", "to": "172800.000000000"}


def test_not_found(client: TestClient) -> None:
    response = client.get("/api/v1/network/stake")
    assert response.status_code == 404
    assert messages(response) == ["No network stake data found"]
    assert "cache-control" not in response.headers


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("node.id=0", ["Unknown query parameter: node.id"]),
        ("limit=1&order=asc", ["Unknown query parameter: limit", "Unknown query parameter: order"]),
        ("timestamp=1", ["Unknown query parameter: timestamp"]),
    ],
)
def test_parameters_are_rejected(client: TestClient, ledger: Ledger, query: str, expected: list[str]) -> None:
    ledger.load({"networkstakes": [LATEST]})
    response = client.get(f"/api/v1/network/stake?{query}")
    assert response.status_code == 400
    assert messages(response) == expected


def test_fee_fraction_rounds_half_up_then_to_float32() -> None:
    assert fee_fraction(3, 1000) == 0.003
    assert fee_fraction(1, 3) == 0.33333334
    assert fee_fraction(-1, 3) == -0.33333334
    assert fee_fraction(123456789, 1_000_000_000) == 0.12345679
    assert fee_fraction(10**18, 3) == 3.3333334e17
    assert fee_fraction(5, 0) == 0.0


def test_staking_period() -> None:
    assert staking_period(86_399_999_999_999) == {"from": "86400.000000000", "to": "172800.000000000"}


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/network/nodes",
        "/api/v1/network/nodes?file.id=101&limit=1",
        "/api/v1/network/nodes?node.id=2",
        "/api/v1/network/stake",
        "/api/v1/network/supply",
        "/api/v1/network/supply?timestamp=1700000000",
    ],
)
def test_answers_match_the_reference_schema(
    client: TestClient,
    ledger: Ledger,
    url: str,
) -> None:
    ledger.load({"networkstakes": [LATEST], **NODES, **CURRENT, **HISTORY})
    response = client.get(url)
    assert response.status_code == 200
    validator = reference_openapi.validator(url.split("?", maxsplit=1)[0])
    errors = [(list(error.absolute_path), error.message) for error in validator.iter_errors(response.json())]
    # The reference's OpenAPI has no null grpc_proxy_endpoint, yet the reference answers null without one.
    assert [error for error in errors if error[0][-1:] != ["grpc_proxy_endpoint"]] == []
