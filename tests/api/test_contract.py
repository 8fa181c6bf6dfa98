"""Our answers against the reference's OpenAPI document, and our docs against our parameter registry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from starlette.testclient import TestClient
from tests.api.test_tokens import SETUP
from tests.support import Ledger

from ledgermirror.api.app import ENDPOINTS

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_OPENAPI = ROOT.parent / "shared" / "upstream" / "openapi.yml"


@pytest.fixture(scope="module")
def reference() -> tuple[dict[str, Any], Registry]:  # type: ignore[type-arg]
    if not REFERENCE_OPENAPI.exists():
        pytest.skip("the reference OpenAPI document is not beside this checkout")
    document = _string_keys(yaml.safe_load(REFERENCE_OPENAPI.read_text()))
    resource = Resource.from_contents(document, default_specification=DRAFT202012)
    return document, Registry().with_resource("urn:reference", resource)


def _string_keys(node: Any) -> Any:
    """YAML reads response codes as integers; JSON pointers need them as text."""
    if isinstance(node, dict):
        return {str(key): _string_keys(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_string_keys(value) for value in node]
    return node


def response_validator(registry: Registry, path: str, status: str) -> Draft202012Validator:  # type: ignore[type-arg]
    pointer = path.replace("~", "~0").replace("/", "~1")
    ref = f"urn:reference#/paths/{pointer}/get/responses/{status}/content/application~1json/schema"
    return Draft202012Validator({"$ref": ref}, registry=registry)


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
    reference: tuple[dict[str, Any], Registry],
    url: str,  # type: ignore[type-arg]
) -> None:
    ledger.load(SETUP)
    response = client.get(url)
    assert response.status_code == 200
    errors = list(response_validator(reference[1], "/api/v1/tokens", "200").iter_errors(response.json()))
    assert errors == [], [error.message for error in errors]


def test_error_answers_match_the_reference_schema(
    client: TestClient,
    reference: tuple[dict[str, Any], Registry],  # type: ignore[type-arg]
) -> None:
    validator = Draft202012Validator({"$ref": "urn:reference#/components/schemas/Error"}, registry=reference[1])
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
        assert f"`GET {endpoint.path}`" in text
        for name in endpoint.params.names():
            assert f"`{name}`" in text, f"{name} of {endpoint.path} is not in docs/api/"
