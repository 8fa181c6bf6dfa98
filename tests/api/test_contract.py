"""Our answers against the reference's OpenAPI document, and our docs against our parameter registry."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient
from tests import reference_openapi
from tests.api.test_tokens import SETUP
from tests.support import Ledger

from ledgermirror.api.app import ENDPOINTS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/tokens",
        "/api/v1/tokens?limit=2",
        "/api/v1/tokens?limit=1&order=desc",
        "/api/v1/tokens?account.id=4000",
        "/api/v1/tokens?name=coffee",
        "/api/v1/tokens?type=NON_FUNGIBLE_UNIQUE",
    ],
)
def test_tokens_answers_match_the_reference_schema(
    client: TestClient,
    ledger: Ledger,
    url: str,
) -> None:
    ledger.load(SETUP)
    response = client.get(url)
    assert response.status_code == 200
    assert reference_openapi.schema_errors("/api/v1/tokens", response.json()) == []


def test_error_answers_match_the_reference_schema(client: TestClient) -> None:
    validator = reference_openapi.component("Error")
    for url in ("/api/v1/tokens?limit=0&foo=1", "/api/v1/nothing"):
        response = client.get(url)
        assert response.status_code in (400, 404)
        assert list(validator.iter_errors(response.json())) == []


def test_every_error_body_has_one_shape(client: TestClient) -> None:
    for url in ("/api/v1/tokens?limit=0", "/api/v1/tokens?x=1", "/api/v1/x", "/api/v1/tokens?name=a&token.id=1"):
        body = client.get(url).json()
        assert list(body) == ["_status"]
        assert list(body["_status"]) == ["messages"]
        assert body["_status"]["messages"]
        assert all(list(message) == ["message"] for message in body["_status"]["messages"])


def test_every_public_parameter_is_documented() -> None:
    text = "\n".join(path.read_text() for path in sorted((ROOT / "docs" / "api").glob("*.md")))
    for endpoint in ENDPOINTS:
        assert f"`{endpoint.method} {endpoint.path}`" in text
        for name in endpoint.params.names():
            assert f"`{name}`" in text, f"{name} of {endpoint.path} is not in docs/api/"
