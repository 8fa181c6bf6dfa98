"""The contract routes as a whole: the opcodes route's bad input and unknown transactions (its traces and
``POST /contracts/call`` are tests/api/test_contract_call.py), the order of the route
table (``/contracts/results...`` before ``/contracts/{contractIdOrAddress}``), methods and odd paths."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from ledgermirror.api.app import ENDPOINTS

HASH = "4a563af33c4871b51a8b108aa2fe1dd5280a30dfb7236170ae5e5e7957eb6392"


@pytest.mark.parametrize(
    "path",
    [
        f"{HASH}/opcodes",
        f"0x{HASH}/opcodes",
        "0.0.1001-1700000000-000000001/opcodes",
        f"{HASH}/opcodes?stack=false&memory=true&storage=TRUE",
    ],
)
def test_opcodes_of_unknown_transactions(client: TestClient, path: str) -> None:
    response = client.get(f"/api/v1/contracts/results/{path}")
    assert response.status_code == 404
    (message,) = response.json()["_status"]["messages"]
    assert message["message"] == "Not Found"
    assert message["detail"].startswith(("Contract transaction hash not found: ", "Transaction not found: "))


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("1/opcodes", 404, "Not found"),  # the reference's gateway sends only ids and hashes to web3
        (f"{HASH[:-2]}/opcodes", 404, "Not found"),
        ("%00/opcodes", 404, "Not found"),
        (f"{HASH}/opcodes?stack=maybe", 400, "Invalid parameter: stack"),
        (f"{HASH}/opcodes?memory=%00", 400, "Invalid parameter: memory"),
        (f"{HASH}/opcodes?tracer=1", 400, "Unknown query parameter: tracer"),
    ],
)
def test_opcodes_bad_input(client: TestClient, path: str, status: int, message: str) -> None:
    response = client.get(f"/api/v1/contracts/results/{path}")
    assert response.status_code == status, response.text
    assert response.json()["_status"]["messages"][0]["message"] == message


def test_other_methods(client: TestClient) -> None:
    assert client.get("/api/v1/contracts/call").status_code == 400  # /contracts/{id} with an invalid id
    response = client.post("/api/v1/contracts/0.0.1001")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"
    assert client.delete("/api/v1/contracts/call").status_code == 405


def test_results_routes_come_before_the_one_contract_route() -> None:
    """Starlette answers with the first route whose template matches; ``/contracts/{contractIdOrAddress}``
    matches ``/contracts/results`` too, so every ``/contracts/results...`` route must be listed before it."""
    paths = [endpoint.path for endpoint in ENDPOINTS if endpoint.method == "GET"]
    one = paths.index("/api/v1/contracts/{contractIdOrAddress}")
    results = [index for index, path in enumerate(paths) if path.startswith("/api/v1/contracts/results")]
    assert results, "the opcodes route at least"
    assert max(results) < one, [paths[index] for index in results if index > one]
