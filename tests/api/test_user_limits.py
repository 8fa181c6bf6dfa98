"""Per-user limits over HTTP Basic against a real PostgreSQL: a user's own maximum limit, anonymous requests
with the public one, 401 for credentials that match no user, and answers cached per limit."""

from __future__ import annotations

import base64
import dataclasses

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger, reconfigure

from ledgermirror.settings import Settings
from ledgermirror.users import ApiUser, hash_password

URL = "/api/v1/tokens?limit=10"


def basic(name: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()}


@pytest.fixture
def limited(client: TestClient, ledger: Ledger, api_settings: Settings) -> TestClient:
    numbers = range(10, 18)
    ledger.load({
        "tokens": [{"token_id": f"0.0.{num}", "symbol": "T", "created_timestamp": str(num)} for num in numbers],
        "entities": [{"num": num, "type": "TOKEN"} for num in numbers],
    })  # fmt: skip
    users = (
        ApiUser("power", hash_password("s3cret", iterations=1_000), limit=5),
        ApiUser("plain", hash_password("pass:word", iterations=1_000)),
    )
    reconfigure(client, dataclasses.replace(api_settings, limit_max=2, response_cache_entries=64, users=users))
    return client


def count(response: object) -> int:
    assert response.status_code == 200, response.text  # type: ignore[attr-defined]
    return len(response.json()["tokens"])  # type: ignore[attr-defined]


def test_a_user_gets_their_own_limit(limited: TestClient) -> None:
    assert count(limited.get(URL)) == 2
    assert count(limited.get(URL, headers=basic("power", "s3cret"))) == 5
    assert count(limited.get(URL)) == 2  # the cached user answer is not served to anonymous requests
    # as in the reference, a user's limit is a maximum: the default limit stays the configured one
    assert count(limited.get("/api/v1/tokens?limit=4", headers=basic("power", "s3cret"))) == 4
    assert count(limited.get(URL, headers=basic("plain", "pass:word"))) == 2  # no limit of their own


@pytest.mark.parametrize(
    "header",
    [basic("power", "wrong"), basic("nobody", "s3cret"), basic("power", ""), basic("", "s3cret")],
)
def test_wrong_credentials_are_401(limited: TestClient, header: dict[str, str]) -> None:
    for url in (URL, "/api/v1/no/such/route"):
        response = limited.get(url, headers=header)
        assert response.status_code == 401
        assert response.json() == {"_status": {"messages": [{"message": "Invalid credentials"}]}}
        assert "cache-control" not in response.headers


@pytest.mark.parametrize(
    "value",
    ["Bearer abc", "Basic", "Basic !!!", "Basic " + base64.b64encode(b"no colon").decode(), "Basic /w==", "x\x00"],
)
def test_malformed_credentials_are_anonymous(limited: TestClient, value: str) -> None:
    assert count(limited.get(URL, headers={"Authorization": value})) == 2


def test_a_browser_may_send_credentials(limited: TestClient) -> None:
    preflight = limited.options(
        URL, headers={"Origin": "http://example.test", "Access-Control-Request-Headers": "authorization"}
    )
    assert preflight.status_code == 204
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
