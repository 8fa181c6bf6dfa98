"""Property-based requests generated from OUR OpenAPI document (schemathesis), sent to the in-process app.

Every request the document calls valid must be answered without a server error, in the documented status,
content type and shape, and accepted (a 2xx, or a 404 for a path account that does not exist). Two kinds of
rule no JSON Schema of a single parameter can say are the only 400s allowed: the documented rules that combine
values (ranges whose bounds cross, equalities mixed with ranges, a parameter that needs or excludes another),
each named by its message below (``Invalid parameter: x`` only when x was given twice or more). A ``name``
longer than 100 bytes in UTF-8 is not generated (JSON Schema counts characters). The POSTs are left out: the fee
estimate's body is the protobuf bytes of a transaction, which the generator cannot write, and a contract call's
runs an EVM (their own tests cover them); so are the opcodes trace (tests/api/test_contract_call.py and
tests/api/test_contract_routes.py cover it) and the prestate route (tests/api/test_contract_prestate.py).
Requests the generator makes invalid on purpose are only checked for server errors. Bounded: a fixed number of
examples per operation (``OPENAPI_EXAMPLES``, default 30), derandomized, so the test takes seconds."""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import hypothesis
import pytest
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    is_unexpected_http_status_case,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.testclient import TestClient
from tests.support import Ledger

from ledgermirror.api.app import create_app
from ledgermirror.api.resources.contracts import contract_evm, contract_prestate
from ledgermirror.settings import Settings

DOCUMENT = create_app(Settings(max_repeated_query_parameters=8), "postgresql://unused/db").state.openapi
SCHEMA = (
    schemathesis.openapi.from_dict(DOCUMENT)
    .exclude(method="POST")
    .exclude(path=contract_evm.OPCODES_PATH)
    .exclude(path=contract_prestate.PRESTATE_PATH)
)
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance, status_code_conformance]
COMBINATION_RULES = [
    re.compile(pattern)
    for pattern in (
        r"token\.id and name can not be used together\. Use a more specific name instead\.",
        r"account\.id and name cannot be used together",
        r"Lower timestamp cannot be higher than upper timestamp",
        r"Invalid range provided for [a-z.]+",
        r"[a-z.]+ without a [a-z.]+ parameter filter",
        r"[a-z.]+ parameter must have [a-z.]+ present",
        r"Cannot combine eq with ne, gt, gte, lt, or lte for [a-z.]+ param",
        r"Only one equal \(eq\) operator is allowed for [a-z.]+",
        r"Only one (gt/gte|lt/lte) operator is allowed for [a-z.]+",
        r"Only one range operator from \[[a-z, ]+\] is allowed for the given parameter for [a-z.]+",
        r"Multiple (gt or gte|lt or lte) operators not permitted for [a-z.]+ param",
        r"Multiple range params not allowed for [a-z.]+",
        r"Can't support both range and equal for [a-z.]+",
        r"Requires the presence of an (gte|lte) or eq [a-z.]+ parameter",
        r"[a-z.]+ must have (gte|lte) or eq operator",
        r"[a-z.]+ must have eq operator",
        r"Cannot search topics without a valid timestamp range: .+",
        r"Invalid parameter: [a-z.]+",
        r"The 'eq' operator cannot be combined with other operators",
        r"Invalid range: lower bound exceeds upper bound",
        r"Invalid parameter usage: block\.hash - cannot combine block\.number and block\.hash",
        r"Invalid parameter usage: transaction\.index - "
        r"transaction\.index requires block\.number or block\.hash filter to be specified",
    )
]
"""The 400 messages of rules over several values (for ``Invalid parameter: x``, x must be given twice or more)."""
DATA: dict[str, Any] = {
    "accounts": [
        {"num": 2, "balance": 1000},
        {"num": 1001, "balance": 100, "alias": "KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72HMQ"},
        {"num": 1002, "balance": 200, "evm_address": "ac384c53f03855fa1b3616052f8ba32c6c2a2fec"},
    ],
}


@pytest.fixture
def loaded(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(DATA)
    return client


def breaks_a_combination_rule(query: list[tuple[str, str]], messages: list[str]) -> bool:
    counts: dict[str, int] = {}
    for key, _ in query:
        counts[key.lower()] = counts.get(key.lower(), 0) + 1
    for message in messages:
        rule = next((rule for rule in COMBINATION_RULES if rule.fullmatch(message)), None)
        if rule is None:
            return False
        if message.startswith("Invalid parameter: ") and counts.get(message.split(": ", 1)[1], 0) < 2:
            return False
    return True


@SCHEMA.parametrize()
@hypothesis.settings(
    max_examples=int(os.environ.get("OPENAPI_EXAMPLES", "30")),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(hypothesis.HealthCheck),
)
def test_generated_requests_are_answered_as_documented(case: schemathesis.Case, loaded: TestClient) -> None:
    names = case.query.get("name") if case.query else None
    for name in names if isinstance(names, list) else [names] if names else []:
        hypothesis.assume(len(str(name).encode()) <= 100)
    kwargs = case.as_transport_kwargs(base_url="http://testserver")
    response = loaded.request(kwargs["method"], kwargs["url"], params=kwargs.get("params"))
    if case.meta is None or not case.meta.generation.mode.is_positive or is_unexpected_http_status_case(case):
        case.validate_response(response, checks=[not_a_server_error])  # invalid on purpose: only no 5xx
        return
    case.validate_response(response, checks=CHECKS)
    if response.status_code == 404:
        return  # documented: a path entity, or the network file or data the answer needs, does not exist
    if response.status_code == 400:
        query = parse_qsl(urlsplit(str(response.url)).query, keep_blank_values=True)
        messages = [item["message"] for item in response.json()["_status"]["messages"]]
        assert breaks_a_combination_rule(query, messages), f"valid request rejected: {response.url} {messages}"
        return
    assert response.status_code == 200, response.text


def parameter_schema(path: str, name: str) -> dict[str, Any]:
    operation = DOCUMENT["paths"][path]["get"]
    schema: dict[str, Any] = next(item for item in operation["parameters"] if item["name"] == name)["schema"]
    return schema


def allows(schema: dict[str, Any], value: str) -> bool:
    """Whether the document calls ``value`` valid (for an array parameter: as its one item)."""
    item = schema.get("items", schema)
    return re.search(item["pattern"], value) is not None


def test_supply_text_answer_is_documented() -> None:
    content = DOCUMENT["paths"]["/api/v1/network/supply"]["get"]["responses"]["200"]["content"]
    assert set(content) == {"application/json", "text/plain"}
    assert re.fullmatch(content["text/plain"]["schema"]["pattern"], "50000000000.00000000")


def test_tokens_account_id_is_documented_without_operators(loaded: TestClient) -> None:
    schema = parameter_schema("/api/v1/tokens", "account.id")
    for value in ("0.0.1001", "1001", "0xac384c53f03855fa1b3616052f8ba32c6c2a2fec"):
        assert allows(schema, value)
        assert loaded.get(f"/api/v1/tokens?account.id={value}").status_code == 200
    for value in ("gt:0.0.1001", "eq:1001", "ne:1001", "lte:1001"):
        assert not allows(schema, value)
        assert loaded.get(f"/api/v1/tokens?account.id={value}").status_code == 400


@pytest.mark.parametrize(
    ("path", "name", "value"),
    [
        ("/api/v1/accounts/{idOrAliasOrEvmAddress}/nfts", "serialnumber", "0"),
        ("/api/v1/accounts/{idOrAliasOrEvmAddress}/nfts", "serialnumber", "gt:0"),
        ("/api/v1/tokens", "name", ""),
        ("/api/v1/tokens", "name", "ab"),
        ("/api/v1/tokens", "publickey", ""),
        ("/api/v1/accounts", "account.publickey", "abc"),
        ("/api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/crypto", "spender.id", ""),
        ("/api/v1/accounts/{idOrAliasOrEvmAddress}/rewards", "timestamp", "ne:1"),
        ("/api/v1/network/supply", "timestamp", "99999999999999999"),
    ],
)
def test_refused_values_are_documented_as_invalid(loaded: TestClient, path: str, name: str, value: str) -> None:
    assert not allows(parameter_schema(path, name), value)
    url = path.replace("{idOrAliasOrEvmAddress}", "0.0.1001")
    extra = "&token.id=0.0.5" if name == "serialnumber" else ""
    response = loaded.get(url, params={name: value}) if not extra else loaded.get(f"{url}?{name}={value}{extra}")
    assert response.status_code == 400, response.text


def test_limit_above_the_maximum_is_documented_as_capped(loaded: TestClient) -> None:
    schema = parameter_schema("/api/v1/accounts", "limit")
    assert "maximum" not in schema
    assert "capped" in next(
        item["description"]
        for item in DOCUMENT["paths"]["/api/v1/accounts"]["get"]["parameters"]
        if item["name"] == "limit"
    )
    assert loaded.get("/api/v1/accounts?limit=1000").status_code == 200


def test_repeat_counts_are_documented() -> None:
    assert parameter_schema("/api/v1/network/supply", "timestamp")["maxItems"] == 2
    assert (
        parameter_schema("/api/v1/accounts/{idOrAliasOrEvmAddress}/airdrops/pending", "token.id")["maxItems"] == 2
    )
    assert parameter_schema("/api/v1/tokens", "token.id")["maxItems"] == 8  # the configured repeat limit
