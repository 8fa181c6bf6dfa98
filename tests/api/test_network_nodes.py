"""GET /api/v1/network/nodes against a real PostgreSQL: every field, every parameter, pagination, bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

OLD, LATEST_101, LATEST = 2, 187654000123456, 187654000123457
CERT = "01d173753810c0aae794ba72d5443c292e9ff962b01046220dd99f5816422696e0569c977e2f169e1e5688afc8f4aa16"
PUBLIC_KEY = "4a5ad514f0957fa170a676210c9bdbddf3bc9519702cf915fa6767a40463b96f"
STAKE_TS = 1655164800000000005


def _entry(node: int, **extra: Any) -> dict[str, Any]:
    return {
        "consensus_timestamp": LATEST,
        "node_id": node,
        "node_account_id": node + 3,
        "memo": f"0.0.{node + 3}",
    } | extra


SETUP: dict[str, Any] = {
    "addressbooks": [
        {"start_consensus_timestamp": 1, "file_id": 101, "end_consensus_timestamp": LATEST_101 - 1},
        {"start_consensus_timestamp": OLD, "file_id": 102, "end_consensus_timestamp": LATEST - 1},
        {"start_consensus_timestamp": LATEST_101, "file_id": 101, "end_consensus_timestamp": LATEST_101 + 99},
        {"start_consensus_timestamp": LATEST, "file_id": 102},
    ],
    "addressbookentries": [
        {"consensus_timestamp": 1, "node_id": 0, "node_account_id": 3, "memo": "old 101"},
        {"consensus_timestamp": OLD, "node_id": 0, "node_account_id": 3, "memo": "old 102"},
        {"consensus_timestamp": OLD, "node_id": 9, "node_account_id": 12},
        {"consensus_timestamp": LATEST_101, "node_id": 0, "node_account_id": 3, "memo": None},
        {"consensus_timestamp": LATEST_101, "node_id": 1, "node_account_id": 4, "description": "in 101"},
        _entry(0),
        _entry(1),
        _entry(2, public_key="", node_cert_hash="", description=None),
        _entry(3, public_key="0xabc", node_cert_hash=b"0xdeadbeef".hex()),
        _entry(4),
        _entry(5),
    ],
    "addressbookserviceendpoints": [
        {"consensus_timestamp": OLD, "ip_address_v4": "127.0.0.1", "node_id": 0, "port": 50211},
        {"consensus_timestamp": LATEST_101, "ip_address_v4": "127.0.0.3", "node_id": 0, "port": 50213},
        {"consensus_timestamp": LATEST, "ip_address_v4": "128.0.0.9", "node_id": 0, "port": 50211},
        {"consensus_timestamp": LATEST, "ip_address_v4": "128.0.0.10", "node_id": 0, "port": 50212},
        {"consensus_timestamp": LATEST, "ip_address_v4": "128.0.0.10", "node_id": 0, "port": 443},
        {"consensus_timestamp": LATEST, "ip_address_v4": "", "domain_name": "node0.example.com", "node_id": 0},
        {"consensus_timestamp": LATEST, "ip_address_v4": "128.0.0.1", "node_id": 1, "port": 50211},
        {"consensus_timestamp": LATEST, "ip_address_v4": "128.0.0.3", "node_id": 3, "port": 50211},
        {"consensus_timestamp": LATEST, "ip_address_v4": "128.0.0.4", "node_id": 4, "port": 50211},
        {"consensus_timestamp": LATEST, "ip_address_v4": "128.0.0.5", "node_id": 5, "port": 50211},
    ],
    "nodestakes": [
        {"consensus_timestamp": LATEST, "epoch_day": 3, "node_id": 0, "stake": 12, "reward_rate": 1},
        {"consensus_timestamp": LATEST, "epoch_day": 3, "node_id": 2, "stake": 99, "reward_rate": 1},
        {
            "consensus_timestamp": STAKE_TS,
            "epoch_day": 4,
            "max_stake": 5000,
            "min_stake": 10,
            "node_id": 0,
            "reward_rate": 6,
            "stake": 13,
            "stake_not_rewarded": 8,
            "stake_rewarded": 5,
            "staking_period": 1655164799999999999,
        },
        {
            "consensus_timestamp": STAKE_TS,
            "epoch_day": 4,
            "max_stake": -1,
            "min_stake": -1,
            "node_id": 1,
            "reward_rate": 7,
            "stake": 14,
            "stake_not_rewarded": -1,
            "stake_rewarded": 6,
        },
        *({"consensus_timestamp": STAKE_TS, "epoch_day": 4, "node_id": node, "stake": node} for node in (3, 4, 5)),
    ],
    "nodes": [
        {
            "admin_key": "3200",
            "node_id": 0,
            "grpc_proxy_endpoint": {"domain_name": "node0.hedera.com", "ip_address_v4": "", "port": 80},
        },
        {
            "admin_key": "122049cddef8b8e974b8c8862cb48bf80ffcb565b0edad096f78ba8a9ca39c43f7bc",
            "account_id": 5,
            "node_id": 1,
            "decline_reward": True,
            "grpc_proxy_endpoint": None,
        },
        {"node_id": 3, "grpc_proxy_endpoint": {"port": 8080}},
    ],
}

NODE_0: dict[str, Any] = {
    "admin_key": None,
    "associated_registered_nodes": [7, 9],
    "decline_reward": False,
    "description": "description",
    "file_id": "0.0.102",
    "grpc_proxy_endpoint": {"domain_name": "node0.hedera.com", "ip_address_v4": "", "port": 80},
    "max_stake": 5000,
    "memo": "0.0.3",
    "min_stake": 10,
    "node_account_id": "0.0.3",
    "node_id": 0,
    "node_cert_hash": "0x" + CERT,
    "public_key": "0x" + PUBLIC_KEY,
    "reward_rate_start": 6,
    "service_endpoints": [
        {"domain_name": "node0.example.com", "ip_address_v4": "", "port": 50211},
        {"domain_name": "", "ip_address_v4": "128.0.0.10", "port": 443},
        {"domain_name": "", "ip_address_v4": "128.0.0.10", "port": 50212},
        {"domain_name": "", "ip_address_v4": "128.0.0.9", "port": 50211},
    ],
    "stake": 13,
    "stake_not_rewarded": 8,
    "stake_rewarded": 5,
    "staking_period": {"from": "1655164800.000000000", "to": "1655251200.000000000"},
    "timestamp": {"from": "187654.000123457", "to": None},
}


@pytest.fixture
def nodes(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(SETUP)
    ledger.execute("update node set associated_registered_nodes = $1 where node_id = 0", [7, 9])
    return client


def node_ids(response: Any) -> list[int]:
    assert response.status_code == 200, response.text
    return [node["node_id"] for node in response.json()["nodes"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_full_node(nodes: TestClient) -> None:
    response = nodes.get("/api/v1/network/nodes")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.headers["cache-control"] == "public, max-age=60"
    body = response.json()
    assert [node["node_id"] for node in body["nodes"]] == [0, 1, 2, 3, 4, 5]
    assert body["links"] == {"next": None}
    assert body["nodes"][0] == NODE_0
    assert list(body["nodes"][0]) == list(NODE_0)


def test_node_row_and_unknown_stake_values(nodes: TestClient) -> None:
    node = nodes.get("/api/v1/network/nodes?node.id=1").json()["nodes"][0]
    assert node["admin_key"] == {
        "_type": "ED25519",
        "key": "49cddef8b8e974b8c8862cb48bf80ffcb565b0edad096f78ba8a9ca39c43f7bc",
    }
    assert node["node_account_id"] == "0.0.5"  # node.account_id wins over the entry's account
    assert node["decline_reward"] is True
    assert node["grpc_proxy_endpoint"] is None
    assert node["associated_registered_nodes"] == []
    assert (node["max_stake"], node["min_stake"], node["stake_not_rewarded"]) == (None, None, None)
    assert (node["stake"], node["stake_rewarded"], node["reward_rate_start"]) == (14, 6, 7)
    assert node["staking_period"] == {"from": "86400.000000000", "to": "172800.000000000"}
    assert node["service_endpoints"] == [{"domain_name": "", "ip_address_v4": "128.0.0.1", "port": 50211}]


def test_node_without_node_row_stake_or_endpoints(nodes: TestClient) -> None:
    node = nodes.get("/api/v1/network/nodes?node.id=2").json()["nodes"][0]
    assert node == {
        "admin_key": None,
        "associated_registered_nodes": [],
        "decline_reward": None,
        "description": None,
        "file_id": "0.0.102",
        "grpc_proxy_endpoint": None,
        "max_stake": None,  # node 2 only has stake in an older staking period
        "memo": "0.0.5",
        "min_stake": None,
        "node_account_id": "0.0.5",
        "node_id": 2,
        "node_cert_hash": "0x",
        "public_key": "0x",
        "reward_rate_start": None,
        "service_endpoints": [],
        "stake": None,
        "stake_not_rewarded": None,
        "stake_rewarded": None,
        "staking_period": None,
        "timestamp": {"from": "187654.000123457", "to": None},
    }


def test_hex_fields_and_partial_proxy(nodes: TestClient, ledger: Ledger) -> None:
    node = nodes.get("/api/v1/network/nodes?node.id=3").json()["nodes"][0]
    assert (node["public_key"], node["node_cert_hash"]) == ("0xabc", "0xdeadbeef")  # no second prefix
    assert node["grpc_proxy_endpoint"] == {"domain_name": "", "ip_address_v4": "", "port": 8080}
    ledger.execute("update address_book_entry set public_key = null, node_cert_hash = null where node_id = 4")
    node = nodes.get("/api/v1/network/nodes?node.id=4").json()["nodes"][0]
    assert (node["public_key"], node["node_cert_hash"]) == ("0x", "0x")


@pytest.mark.parametrize("value", ["101", "0.101", "0.0.101", "eq:0.0.101", "eq:101"])
def test_file_101(nodes: TestClient, value: str) -> None:
    body = nodes.get(f"/api/v1/network/nodes?file.id={value}").json()
    assert [node["node_id"] for node in body["nodes"]] == [0, 1]
    first, second = body["nodes"]
    assert first["file_id"] == "0.0.101"
    assert first["memo"] is None
    assert first["timestamp"] == {"from": "187654.000123456", "to": "187654.000123555"}
    assert first["service_endpoints"] == [{"domain_name": "", "ip_address_v4": "127.0.0.3", "port": 50213}]
    assert first["stake"] == 13  # the latest staking period, whichever book
    assert second["description"] == "in 101"


def test_empty_tables(client: TestClient) -> None:
    assert client.get("/api/v1/network/nodes").json() == {"nodes": [], "links": {"next": None}}


def test_book_without_entries(client: TestClient, ledger: Ledger) -> None:
    ledger.load({"addressbooks": [{"start_consensus_timestamp": 5}]})
    assert client.get("/api/v1/network/nodes").json() == {"nodes": [], "links": {"next": None}}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("file.id=102", [0, 1, 2, 3, 4, 5]),
        ("file.id=0.0.102", [0, 1, 2, 3, 4, 5]),
        ("file.id=eq:102", [0, 1, 2, 3, 4, 5]),
        ("file.id=0.0.99999", []),
        ("file.id=0.1.102", []),
        ("file.id=1.0.102", []),
        ("file.id=0", []),
        ("node.id=1", [1]),
        ("node.id=eq:1", [1]),
        ("node.id=gt:3", [4, 5]),
        ("node.id=gte:3", [3, 4, 5]),
        ("node.id=lt:2", [0, 1]),
        ("node.id=lte:2", [0, 1, 2]),
        ("node.id=gt:1&node.id=lt:4", [2, 3]),
        ("node.id=gte:1&node.id=lte:1", [1]),
        ("node.id=1&node.id=3&node.id=5", [1, 3, 5]),
        ("node.id=1&node.id=3&node.id=5&node.id=gt:1", [3, 5]),
        ("node.id=1&node.id=gt:1", []),
        ("node.id=9", []),
        ("node.id=99999", []),
        ("node.id=9223372036854775807", []),
        ("node.id=gt:2&node.id=gt:3", [4, 5]),
        ("NODE.ID=2", [2]),
        ("node.id=2&order=desc", [2]),
        ("node.id=lte:3&order=desc", [3, 2, 1, 0]),
        ("order=DESC", [5, 4, 3, 2, 1, 0]),
        ("order=asc", [0, 1, 2, 3, 4, 5]),
        ("limit=3", [0, 1, 2]),
        ("limit=3&order=desc", [5, 4, 3]),
        ("limit=1&limit=2", [0, 1]),
    ],
)
def test_filters(nodes: TestClient, query: str, expected: list[int]) -> None:
    assert node_ids(nodes.get(f"/api/v1/network/nodes?{query}")) == expected


@pytest.mark.parametrize(
    ("start", "pages", "links"),
    [
        (
            "/api/v1/network/nodes?limit=2",
            [[0, 1], [2, 3], [4, 5]],
            ["/api/v1/network/nodes?limit=2&node.id=gt:1", "/api/v1/network/nodes?limit=2&node.id=gt:3"],
        ),
        (
            "/api/v1/network/nodes?limit=4&order=desc",
            [[5, 4, 3, 2], [1, 0]],
            ["/api/v1/network/nodes?limit=4&order=desc&node.id=lt:2"],
        ),
        (
            "/api/v1/network/nodes?node.id=gt:0&node.id=lt:5&limit=2",
            [[1, 2], [3, 4]],
            ["/api/v1/network/nodes?node.id=lt:5&node.id=gt:2&limit=2"],
        ),
        (
            "/api/v1/network/nodes?node.id=1&node.id=4&limit=1",
            [[1], [4]],
            ["/api/v1/network/nodes?node.id=1&node.id=4&node.id=gt:1&limit=1"],
        ),
        (
            "/api/v1/network/nodes/?file.id=101&limit=1",
            [[0], [1]],
            ["/api/v1/network/nodes?file.id=101&limit=1&node.id=gt:0"],
        ),
    ],
)
def test_pagination(nodes: TestClient, start: str, pages: list[list[int]], links: list[str]) -> None:
    seen_pages: list[list[int]] = []
    seen_links: list[str] = []
    url: str | None = start
    while url:
        response = nodes.get(url)
        seen_pages.append(node_ids(response))
        url = response.json()["links"]["next"]
        if url:
            seen_links.append(url)
            assert response.headers["link"] == f'<{url}>; rel="next"'
    assert seen_pages == pages
    assert seen_links == links


def test_reference_next_link_mode(nodes: TestClient, api_settings: Settings) -> None:
    reconfigure(nodes, dataclasses.replace(api_settings, pagination_probe=False))
    response = nodes.get("/api/v1/network/nodes?limit=3&order=desc&node.id=gte:3")
    assert node_ids(response) == [5, 4, 3]
    assert response.json()["links"]["next"] is None  # the range gte:3 & lt:3 is empty
    response = nodes.get("/api/v1/network/nodes?limit=6")
    assert response.json()["links"]["next"] == "/api/v1/network/nodes?limit=6&node.id=gt:5"


def test_default_limit_is_the_setting(nodes: TestClient, api_settings: Settings) -> None:
    reconfigure(nodes, dataclasses.replace(api_settings, limit_default=4))
    response = nodes.get("/api/v1/network/nodes")
    assert node_ids(response) == [0, 1, 2, 3]
    assert response.json()["links"]["next"] == "/api/v1/network/nodes?node.id=gt:3"


def test_limit_above_max_is_capped(nodes: TestClient, api_settings: Settings) -> None:
    reconfigure(nodes, dataclasses.replace(api_settings, limit_max=2))
    response = nodes.get("/api/v1/network/nodes?limit=100")
    assert node_ids(response) == [0, 1]
    assert response.json()["links"]["next"] == "/api/v1/network/nodes?limit=100&node.id=gt:1"


def test_default_limit_25_and_max_100(client: TestClient, ledger: Ledger) -> None:
    ledger.load(
        {
            "addressbooks": [{"start_consensus_timestamp": 7}],
            "addressbookentries": [
                {"consensus_timestamp": 7, "node_id": node, "node_account_id": node + 3} for node in range(120)
            ],
        }
    )
    assert node_ids(client.get("/api/v1/network/nodes")) == list(range(25))
    assert node_ids(client.get("/api/v1/network/nodes?limit=100&order=desc")) == list(range(119, 19, -1))
    assert node_ids(client.get("/api/v1/network/nodes?limit=101")) == list(range(100))


def test_only_the_latest_staking_period(client: TestClient, ledger: Ledger) -> None:
    ledger.load(
        {
            "addressbooks": [{"start_consensus_timestamp": 7}],
            "addressbookentries": [
                {"consensus_timestamp": 7, "node_id": 0},
                {"consensus_timestamp": 7, "node_id": 1},
            ],
            "nodestakes": [
                {"consensus_timestamp": 10, "node_id": 0, "stake": 1},
                {"consensus_timestamp": 10, "node_id": 1, "stake": 2},
                {"consensus_timestamp": 20, "node_id": 1, "stake": 3},
            ],
        }
    )
    stakes = [node["stake"] for node in client.get("/api/v1/network/nodes").json()["nodes"]]
    assert stakes == [None, 3]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("limit=cof%00fee", ["Invalid parameter: limit"]),
        ("file.id=a", ["Invalid parameter: file.id"]),
        ("file.id=", ["Invalid parameter: file.id"]),
        ("file.id=0.0.0.102", ["Invalid parameter: file.id"]),
        ("file.id=0x0000000000000000000000000000000000000066", ["Invalid parameter: file.id"]),
        ("file.id=foo:102", ["Invalid parameter: file.id"]),
        ("file.id=gt:101", ["Only equality operator is supported for file.id"]),
        ("file.id=ne:101", ["Only equality operator is supported for file.id"]),
        ("file.id=lte:0.0.101", ["Only equality operator is supported for file.id"]),
        ("file.id=101&file.id=102", ["Only a single instance is supported for file.id"]),
        ("file.id=101&File.Id=101", ["Only a single instance is supported for file.id"]),
        ("node.id=b", ["Invalid parameter: node.id"]),
        ("node.id=", ["Invalid parameter: node.id"]),
        ("node.id=-1", ["Invalid parameter: node.id"]),
        ("node.id=1.5", ["Invalid parameter: node.id"]),
        ("node.id=0.0.3", ["Invalid parameter: node.id"]),
        ("node.id=a:1", ["Invalid parameter: node.id"]),
        ("node.id=eq:1:2", ["Invalid parameter: node.id"]),
        ("node.id=ne:1", ["Invalid parameter: node.id"]),
        ("node.id=GT:1", ["Invalid parameter: node.id"]),
        ("node.id=9223372036854775808", ["Invalid parameter: node.id"]),
        ("node.id=12345678901234567890", ["Invalid parameter: node.id"]),
        ("node.id=gt:5&node.id=lt:3", ["Invalid range provided for node.id"]),
        ("node.id=gt:3&node.id=lte:3", ["Invalid range provided for node.id"]),
        ("node.id=lt:0", ["Invalid range provided for node.id"]),
        ("node.id=gt:9223372036854775807", ["Invalid range provided for node.id"]),
        ("limit=0", ["Invalid parameter: limit"]),
        ("limit=-1", ["Invalid parameter: limit"]),
        ("limit=c", ["Invalid parameter: limit"]),
        ("limit=gt:2", ["Invalid parameter: limit"]),
        ("order=d", ["Invalid parameter: order"]),
        ("order=", ["Invalid parameter: order"]),
        ("token.id=2", ["Unknown query parameter: token.id"]),
        (
            "file.id=a&node.id=b&limit=c&order=d&token.id=2",
            [
                "Invalid parameter: file.id",
                "Invalid parameter: node.id",
                "Invalid parameter: limit",
                "Invalid parameter: order",
                "Unknown query parameter: token.id",
            ],
        ),
        (
            "node.id=1&node.id=2&node.id=3&node.id=4&node.id=5&node.id=6&node.id=7&node.id=8&node.id=9",
            ["Array limit exceeded. Only 8 elements allowed in an array."],
        ),
    ],
)
def test_bad_input(nodes: TestClient, query: str, expected: list[str]) -> None:
    response = nodes.get(f"/api/v1/network/nodes?{query}")
    assert response.status_code == 400
    assert messages(response) == expected
    assert "cache-control" not in response.headers


def test_range_error_without_address_book(client: TestClient) -> None:
    response = client.get("/api/v1/network/nodes?node.id=gt:5&node.id=lt:3")
    assert response.status_code == 400
    assert messages(response) == ["Invalid range provided for node.id"]
