"""GET /api/v1/network/registered-nodes against a real PostgreSQL: the node and endpoint objects, id bounds, the
role filter, next links followed to the end, and every bad input."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests import reference_openapi
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings

BASE = "/api/v1/network/registered-nodes"
ENDPOINTS = {
    1: [{"domain_name": "block.example", "port": 40840, "requires_tls": True,
         "block_node": {"endpoint_apis": ["STATUS"]}}],
    2: [{"ip_address": "10.0.0.7", "port": 8080, "requires_tls": False, "general_service": {"description": "x"}}],
    3: [{"domain_name": "mirror.example", "port": 443, "requires_tls": True, "mirror_node": {}},
        {"domain_name": "relay.example", "port": 7546, "requires_tls": True, "rpc_relay": {}}],
    4: [],
}  # fmt: skip
TYPES = {1: [1], 2: [2], 3: [3, 4], 4: []}


@pytest.fixture
def nodes(client: TestClient, ledger: Ledger) -> TestClient:
    for number, endpoints in ENDPOINTS.items():
        ledger.execute(
            "insert into registered_node (registered_node_id, admin_key, created_timestamp, description, "
            "service_endpoints, type, deleted, timestamp_range) "
            "values ($1, $2, $3, $4, $5::jsonb, $6, $7, int8range($3, null))",
            number,
            b"\x32\x00",
            1000 + number,
            f"node {number}",
            json.dumps(endpoints),
            TYPES[number],
            number == 4,
        )
    return client


def ids(response: Any) -> list[int]:
    assert response.status_code == 200, response.text
    return [item["registered_node_id"] for item in response.json()["registered_nodes"]]


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def test_node_object(nodes: TestClient) -> None:
    response = nodes.get(f"{BASE}?registerednode.id=3")
    assert response.headers["cache-control"] == "public, max-age=60"
    node = response.json()["registered_nodes"][0]
    assert node["admin_key"] is None and node["created_timestamp"] == "0.000001003"
    assert node["description"] == "node 3" and node["timestamp"] == {"from": "0.000001003", "to": None}
    assert node["service_endpoints"] == [
        {"block_node": None, "domain_name": "mirror.example", "general_service": None, "ip_address": None,
         "mirror_node": {}, "port": 443, "requires_tls": True, "rpc_relay": None, "type": "MIRROR_NODE"},
        {"block_node": None, "domain_name": "relay.example", "general_service": None, "ip_address": None,
         "mirror_node": None, "port": 7546, "requires_tls": True, "rpc_relay": {}, "type": "RPC_RELAY"},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", [1, 2, 3]),
        ("order=desc", [3, 2, 1]),
        ("registerednode.id=gte:2", [2, 3]),
        ("registerednode.id=gt:1&registerednode.id=lt:3", [2]),
        ("registerednode.id=4", []),
        ("type=block_node", [1]),
        ("type=RPC_RELAY", [3]),
        ("type=MIRROR_NODE&registerednode.id=lte:2", []),
    ],
)
def test_filters(nodes: TestClient, query: str, expected: list[int]) -> None:
    assert ids(nodes.get(f"{BASE}?{query}")) == expected


@pytest.mark.parametrize("probe", [True, False])
def test_following_next_links(nodes: TestClient, api_settings: Settings, probe: bool) -> None:
    reconfigure(nodes, dataclasses.replace(api_settings, pagination_probe=probe))
    seen: list[int] = []
    url: str | None = f"{BASE}?limit=1"
    while url:
        response = nodes.get(url)
        seen += ids(response)
        url = response.json()["links"]["next"]
        assert url is None or "registerednode.id=gt:" in url
        assert len(seen) < 10
    assert seen == [1, 2, 3]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("registerednode.id=1&registerednode.id=gt:0",
         ["The 'eq' operator cannot be combined with other operators"]),
        ("registerednode.id=gt:5&registerednode.id=lt:3", ["Invalid range: lower bound exceeds upper bound"]),
        ("registerednode.id=1&registerednode.id=2&registerednode.id=3",
         ["Parameter values count exceeds maximum number allowed: registerednode.id count: 3 max: 2"]),
        ("registerednode.id=-1", ["Invalid parameter: registerednode.id"]),
        ("registerednode.id=ne:1", ["Invalid parameter: registerednode.id"]),
        ("type=SWITCH", ["Invalid parameter: type"]),
        ("type=%00", ["Invalid parameter: type"]),
        ("limit=0&order=sideways", ["Invalid parameter: limit", "Invalid parameter: order"]),
        ("node.id=1", ["Unknown query parameter: node.id"]),
    ],
)  # fmt: skip
def test_bad_input(nodes: TestClient, query: str, expected: list[str]) -> None:
    response = nodes.get(f"{BASE}?{query}")
    assert response.status_code == 400
    assert messages(response) == expected


def _null_role(error: Any) -> bool:
    """The reference's document types the four role objects as objects, yet its Java service writes the three
    roles an endpoint does not have as null (Jackson includes nulls): we answer as the service does."""
    roles = {"block_node", "general_service", "mirror_node", "rpc_relay"}
    return error.instance is None and bool(error.absolute_path) and error.absolute_path[-1] in roles


def test_answers_match_the_reference_schema(nodes: TestClient) -> None:
    body = nodes.get(BASE).json()
    assert reference_openapi.schema_errors("/api/v1/network/registered-nodes", body, ignore=_null_role) == []
