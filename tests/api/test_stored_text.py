"""Values PostgreSQL text cannot store (a NUL byte) never reach the database: 400 naming the parameter."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger

from ledgermirror.api.app import ENDPOINTS

QUERY_CASES = [
    (endpoint.path, spec.name)
    for endpoint in ENDPOINTS
    if endpoint.method == "GET"
    for spec in endpoint.params.specs
]


_PATH_VALUES = {
    "hashOrNumber": "1",
    "sequenceNumber": "1",
    "serialNumber": "1",
    "hookId": "1",
    "timestamp": "1.000000001",
    "transactionIdOrHash": "0.0.1001-1-1",
}


def _concrete(path: str) -> str:
    """A valid value for every path parameter (an entity id unless named here), so the query is what fails."""
    return re.sub(r"\{(\w+)\}", lambda match: _PATH_VALUES.get(match.group(1), "0.0.1001"), path)


@pytest.mark.parametrize(("path", "name"), QUERY_CASES)
def test_nul_in_a_query_parameter_is_400_naming_it(
    client: TestClient, ledger: Ledger, path: str, name: str
) -> None:
    ledger.load({"entities": [{"num": 1001}]})
    response = client.get(f"{_concrete(path)}?{name}=cof%00fee")
    assert response.status_code == 400, response.text
    assert response.json() == {"_status": {"messages": [{"message": f"Invalid parameter: {name}"}]}}


PATH_CASES = [
    ("/api/v1/accounts/0.0.10%0001", "idOrAliasOrEvmAddress"),
    ("/api/v1/accounts/AAAA%00AAAA", "idOrAliasOrEvmAddress"),
    ("/api/v1/accounts/%00/nfts", "idOrAliasOrEvmAddress"),
    ("/api/v1/accounts/0x%00/rewards", "idOrAliasOrEvmAddress"),
    ("/api/v1/blocks/1%00", "hashOrNumber"),
    ("/api/v1/blocks/0x%00", "hashOrNumber"),
]


@pytest.mark.parametrize(("path", "name"), PATH_CASES)
def test_nul_in_a_path_segment_is_400_naming_it(client: TestClient, path: str, name: str) -> None:
    response = client.get(path)
    assert response.status_code == 400, response.text
    assert response.json() == {"_status": {"messages": [{"message": f"Invalid parameter: {name}"}]}}
