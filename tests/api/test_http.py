"""HTTP behaviour shared by every endpoint: errors, caching, compression, HEAD, CORS, health, outages."""

from __future__ import annotations

import gzip
import time
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger, start_server, stop_server

from ledgermirror.api.resources.tokens import tokens as tokens_resource
from ledgermirror.runtime import Prepared

MANY_TOKENS: dict[str, Any] = {
    "entities": [{"num": n, "type": "TOKEN"} for n in range(100, 130)],
    "tokens": [{"token_id": f"0.0.{n}", "name": f"Token number {n}"} for n in range(100, 130)],
}


def test_unknown_route_is_json_404(client: TestClient) -> None:
    for path in ("/api/v1/hedera/0.0.7", "/api/v1/topicsx/0.0.7/messages", "/nothing"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.json() == {"_status": {"messages": [{"message": "Not found"}]}}
        assert response.headers["content-type"] == "application/json; charset=utf-8"


def test_other_methods_on_a_known_path_are_405(client: TestClient) -> None:
    for path in ("/api/v1/tokens", "/api/v1/accounts/0.0.2", "/api/v1/transactions", "/api/v1/network/fees"):
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            if (path, method) == ("/api/v1/network/fees", "POST"):
                continue  # the fee estimate
            response = client.request(method, path)
            assert response.status_code == 405, (method, path)
            message = f"Request method '{method}' is not supported"
            assert response.json() == {"_status": {"messages": [{"message": message}]}}
            assert response.headers["content-type"] == "application/json; charset=utf-8"
            assert "GET" in response.headers["allow"]


def test_other_methods_on_an_unknown_path_are_404(client: TestClient) -> None:
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        response = client.request(method, "/api/v1/tokensx")
        assert response.status_code == 404
        assert response.json() == {"_status": {"messages": [{"message": "Not found"}]}}


def test_cors(client: TestClient) -> None:
    assert client.get("/api/v1/tokens").headers["access-control-allow-origin"] == "*"
    assert client.get("/api/v1/tokens?limit=0").headers["access-control-allow-origin"] == "*"
    preflight = client.options(
        "/api/v1/tokens", headers={"origin": "https://x.example", "access-control-request-method": "GET"}
    )
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == "*"
    assert preflight.headers["access-control-allow-methods"] == "GET,HEAD,POST"


def test_trailing_slash_is_the_same_route(client: TestClient, ledger: Ledger) -> None:
    ledger.load(MANY_TOKENS)
    response = client.get("/api/v1/tokens/?limit=1")
    assert response.status_code == 200
    assert response.json()["links"]["next"] == "/api/v1/tokens?limit=1&token.id=gt:0.0.100"


def test_head_has_headers_and_no_body(client: TestClient, ledger: Ledger) -> None:
    ledger.load(MANY_TOKENS)
    get = client.get("/api/v1/tokens", headers={"accept-encoding": "identity"})
    head = client.head("/api/v1/tokens", headers={"accept-encoding": "identity"})
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == str(len(get.content))
    assert head.headers["etag"] == get.headers["etag"]
    assert head.headers["cache-control"] == "public, max-age=10"


def test_gzip_when_asked_and_large_enough(client: TestClient, ledger: Ledger) -> None:
    ledger.load(MANY_TOKENS)
    plain = client.get("/api/v1/tokens", headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers
    zipped = client.get("/api/v1/tokens", headers={"accept-encoding": "gzip, deflate"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.headers["vary"] == "Accept-Encoding"
    assert zipped.json() == plain.json()
    small = client.get("/api/v1/tokens?limit=1", headers={"accept-encoding": "gzip"})
    assert "content-encoding" not in small.headers
    assert gzip.decompress(gzip.compress(plain.content)) == plain.content


def test_etag_and_304(client: TestClient, ledger: Ledger) -> None:
    ledger.load(MANY_TOKENS)
    first = client.get("/api/v1/tokens?limit=3")
    etag = first.headers["etag"]
    assert etag.startswith('"') and etag.endswith('"')
    again = client.get("/api/v1/tokens?limit=3", headers={"if-none-match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    assert client.get("/api/v1/tokens?limit=3", headers={"if-none-match": f'"x", W/{etag}'}).status_code == 304
    assert client.get("/api/v1/tokens?limit=3", headers={"if-none-match": '"other"'}).status_code == 200
    assert client.get("/api/v1/tokens?limit=4").headers["etag"] != etag


def test_responses_are_cached_for_their_max_age(client: TestClient, ledger: Ledger) -> None:
    ledger.load(MANY_TOKENS)
    before = client.get("/api/v1/tokens?limit=2").json()
    ledger.reset()  # the data is gone, but the answer was promised for 10 s
    assert client.get("/api/v1/tokens?limit=2").json() == before
    assert client.head("/api/v1/tokens?limit=2").status_code == 200
    assert client.get("/api/v1/tokens?limit=3").json()["tokens"] == []


def test_errors_are_not_cached(client: TestClient, ledger: Ledger) -> None:
    assert client.get("/api/v1/tokens?limit=0").status_code == 400
    assert len(client.app.state.ctx.cache) == 0  # type: ignore[attr-defined]


def test_internal_error_never_leaks(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret connection string postgres://admin:hunter2@db")

    monkeypatch.setattr(tokens_resource, "Select", explode)  # the plan builds its statement with it
    response = client.get("/api/v1/tokens")
    assert response.status_code == 500
    assert response.json() == {"_status": {"messages": [{"message": "Internal error"}]}}
    assert "hunter2" not in response.text


def test_health(client: TestClient) -> None:
    assert client.get("/health/liveness").json() == {"status": "UP"}
    ready = client.get("/health/readiness")
    assert ready.status_code == 200
    assert ready.json()["status"] == "UP"


def test_openapi_document_lists_every_parameter(client: TestClient) -> None:
    document = client.get("/api/v1/docs/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    operation = document["paths"]["/api/v1/tokens"]["get"]
    names = [parameter["name"] for parameter in operation["parameters"]]
    assert names == ["account.id", "limit", "name", "order", "publickey", "token.id", "type"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"]["required"] == [
        "tokens",
        "links",
    ]
    page = client.get("/api/v1/docs")
    assert page.status_code == 200
    assert "text/html" in page.headers["content-type"]
    assert "/api/v1/tokens" in page.text and "publickey" in page.text


def test_database_outage_gives_503_and_recovers(client: TestClient, database: Prepared, ledger: Ledger) -> None:
    ledger.load(MANY_TOKENS)
    assert database.embedded is not None
    try:
        stop_server(database)
        down = client.get("/api/v1/tokens?limit=7")
        assert down.status_code == 503
        assert down.json() == {"_status": {"messages": [{"message": "Service unavailable"}]}}
        assert client.get("/health/readiness").status_code == 503
        assert client.get("/health/liveness").status_code == 200
    finally:
        start_server(database)  # returns once the server accepts connections
    deadline = time.monotonic() + 30  # the pool reconnects on its own; a loaded machine may take a while
    status = 0
    while time.monotonic() < deadline:
        status = client.get("/api/v1/tokens?limit=8").status_code
        if status == 200:
            break
        time.sleep(0.1)
    assert status == 200
    assert len(client.get("/api/v1/tokens?limit=9").json()["tokens"]) == 9
    assert client.get("/health/readiness").status_code == 200


def test_openapi_document_lists_the_fee_estimate(client: TestClient) -> None:
    path = client.get("/api/v1/docs/openapi.json").json()["paths"]["/api/v1/network/fees"]
    assert set(path) == {"get", "post"}
    assert [parameter["name"] for parameter in path["post"]["parameters"]] == ["high_volume_throttle", "mode"]
    assert set(path["post"]["requestBody"]["content"]) == {"application/protobuf", "application/x-protobuf"}


def test_readiness_reports_what_the_importer_last_accepted(client: TestClient, ledger: Ledger) -> None:
    assert client.get("/health/readiness").json()["ingest"] is None  # nothing imported
    ledger.execute(
        "insert into import_status (stream, last_index, last_name, last_consensus_end, last_proof,"
        " last_proof_verified, chain_only_blocks, first_chain_only_index)"
        " values ('blocks', 8, '000000000000000000008.blk.zstd', 1657701971304284004, 'tss', false, 2, 7)"
    )
    ready = client.get("/health/readiness")
    assert ready.status_code == 200
    assert ready.headers["cache-control"] == "no-store"
    ingest = ready.json()["ingest"]
    assert ingest["verified"] == "chain only" and ingest["chain_only_blocks"] == 2
    assert (ingest["stream"], ingest["last_index"], ingest["first_chain_only_index"]) == ("blocks", 8, 7)
    assert ingest["last_consensus_timestamp"] == "1657701971.304284004"
    assert ingest["lag_seconds"] > 100_000_000
