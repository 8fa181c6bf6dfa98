"""The ``{idOrAliasOrEvmAddress}`` resolver (api/resources/accounts/account_ref.py) through
GET /api/v1/accounts/{id}: every path form and every error."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient
from tests.support import Ledger

ALIAS = "KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72HMQ"
OTHER_ALIAS = "AEBAGBAFAYDQQCIQCEJBGFAVCYLRQGJA"
EVM = "ac384c53f03855fa1b3616052f8ba32c6c2a2fec"


@pytest.fixture
def accounts(client: TestClient, ledger: Ledger) -> TestClient:
    ledger.load(
        {
            "accounts": [
                {"num": 8, "alias": ALIAS, "evm_address": EVM},
                # the same alias on a deleted account is ignored
                {"num": 9, "alias": ALIAS, "deleted": True},
                {"num": 10, "alias": OTHER_ALIAS, "deleted": True, "evm_address": "11" * 20},
                {"num": 11, "realm": 1, "alias": "32W353Y"},
                {"num": 12, "alias": "AAAA", "evm_address": "22" * 20},
                {"num": 13, "alias": "AAAA", "evm_address": "22" * 20},
                {"num": 14, "evm_address": "33" * 20, "deleted": None},
            ]
        }
    )
    return client


def account_of(client: TestClient, segment: str) -> str:
    response = client.get(f"/api/v1/accounts/{segment}?transactions=false")
    assert response.status_code == 200, response.text
    account: str = response.json()["account"]
    return account


@pytest.mark.parametrize(
    "segment",
    [
        "8",
        "0.8",
        "0.0.8",
        "0000000000000000000000000000000000000008",
        "0x0000000000000000000000000000000000000008",
        "0.0.0000000000000000000000000000000000000008",
        EVM,
        "0x" + EVM,
        "0x" + EVM.upper(),
        "0.0." + EVM,
        ALIAS,
        "0." + ALIAS,
        "0.0." + ALIAS,
    ],
)
def test_path_forms(accounts: TestClient, segment: str) -> None:
    assert account_of(accounts, segment) == "0.0.8"


def test_other_realms_and_live_entities_with_unset_deleted(accounts: TestClient) -> None:
    assert account_of(accounts, "0.1.11") == "0.1.11"
    assert account_of(accounts, "1.11") == "0.1.11"
    assert account_of(accounts, "32W353Y") == "0.1.11"  # aliases are looked up in every realm
    assert account_of(accounts, "0x" + "33" * 20) == "0.0.14"


def test_next_link_keeps_the_path_as_sent(client: TestClient, ledger: Ledger) -> None:
    ledger.load(
        {
            "accounts": [{"num": 8, "alias": ALIAS, "evm_address": EVM}],
            "cryptotransfers": [
                {
                    "consensus_timestamp": str(1_000_000_000 + n),
                    "payerAccountId": "0.0.8",
                    "recipientAccountId": "0.0.9",
                    "treasuryAccountId": "0.0.98",
                }
                for n in (1, 2)
            ],
        }
    )
    for segment in ("0.0.8", "0x" + EVM, "0.0." + ALIAS):
        body = client.get(f"/api/v1/accounts/{segment}?limit=1").json()
        assert body["links"]["next"] == f"/api/v1/accounts/{segment}?limit=1&timestamp=lt:1.000000002"


@pytest.mark.parametrize(
    "segment",
    [
        "0.0.8%00",
        "%00",
        "0.5.6.7",
        "KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72000",
        "0.KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72000",
        "0.0.KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72000",
        "9.2.0000000000000000000000000000000000000013",
        "0.0.0x0000000000000000000000000000000000000008",
        "1." + ALIAS,
        "0.1." + ALIAS,
        ALIAS.lower(),
        "A",
        "abc",
        "-1",
        "274877906944",
        "1024.0.1",
        "0.65536.1",
        "0x" + EVM + "00",
        "%20",
    ],
)
def test_invalid_segments(accounts: TestClient, segment: str) -> None:
    response = accounts.get(f"/api/v1/accounts/{segment}")
    assert response.status_code == 400
    assert response.json() == {"_status": {"messages": [{"message": "Invalid parameter: idOrAliasOrEvmAddress"}]}}


@pytest.mark.parametrize(
    ("segment", "message"),
    [
        ("0.0.404", "Not found"),
        ("0x0000000000000000000000000000000000000194", "Not found"),
        ("0x" + "44" * 20, "Not found"),
        ("0.0." + "44" * 20, "Not found"),
        ("0x" + "11" * 20, "Not found"),  # only a deleted entity has it
        ("AAAQEAYEAUDAOCAJCAIREEYUCULBOGAZ", "No account with a matching alias found"),
        ("0.0.AAAQEAYEAUDAOCAJCAIREEYUCULBOGAZ", "No account with a matching alias found"),
        (OTHER_ALIAS, "No account with a matching alias found"),  # only a deleted entity has it
    ],
)
def test_not_found(accounts: TestClient, segment: str, message: str) -> None:
    response = accounts.get(f"/api/v1/accounts/{segment}")
    assert response.status_code == 404
    assert response.json() == {"_status": {"messages": [{"message": message}]}}


@pytest.mark.parametrize("segment", ["AAAA", "0.AAAA", "0.0.AAAA", "0x" + "22" * 20])
def test_two_live_entities_with_one_alias_or_address(accounts: TestClient, segment: str) -> None:
    response = accounts.get(f"/api/v1/accounts/{segment}")
    assert response.status_code == 500
    assert response.json() == {"_status": {"messages": [{"message": "Internal error"}]}}


def test_query_errors_come_before_path_errors(accounts: TestClient) -> None:
    response = accounts.get("/api/v1/accounts/0.5.6.7?limit=0&foo=1")
    assert response.status_code == 400
    assert [item["message"] for item in response.json()["_status"]["messages"]] == [
        "Invalid parameter: limit",
        "Unknown query parameter: foo",
    ]
    response = accounts.get("/api/v1/accounts/0x" + "44" * 20 + "?transactions=maybe")
    assert response.status_code == 400


ACCOUNT_ROUTES = [
    "",
    "/rewards",
    "/allowances/crypto",
    "/allowances/tokens",
    "/allowances/nfts",
    "/nfts",
    "/airdrops/outstanding",
    "/airdrops/pending",
]
NO_ALIAS_CAN_BE = [
    "AAA",  # 3, 6 or 1 characters modulo 8: no whole number of bytes
    "AAAAAA",
    "AAAAAAAAA",
    "0.0.AAA",
    "0.AAAAAA",
    "AB",  # the bits after the last whole byte are not zero
    "0.0.AAAB",
    "1.2.AAAA",  # another shard and realm
    "0.0.274877906944",  # out of range in a path: the path's own message, as in the reference
    "0.5.6.7",
]


@pytest.mark.parametrize("route", ACCOUNT_ROUTES)
@pytest.mark.parametrize("segment", NO_ALIAS_CAN_BE)
def test_no_valid_form_is_400_on_every_account_route(accounts: TestClient, route: str, segment: str) -> None:
    response = accounts.get(f"/api/v1/accounts/{segment}{route}")
    assert response.status_code == 400, response.text
    assert response.json() == {"_status": {"messages": [{"message": "Invalid parameter: idOrAliasOrEvmAddress"}]}}


@pytest.mark.parametrize("route", ACCOUNT_ROUTES)
def test_a_possible_alias_is_looked_up_on_every_account_route(accounts: TestClient, route: str) -> None:
    response = accounts.get(f"/api/v1/accounts/0.0.AA{route}")
    assert response.status_code == 404
    assert response.json() == {"_status": {"messages": [{"message": "No account with a matching alias found"}]}}


@pytest.mark.parametrize(
    ("url", "text"),
    [
        ("/api/v1/tokens?token.id=0.0.274877906944", "0.0.274877906944"),
        ("/api/v1/tokens?token.id=gt:0.65536.1", "0.65536.1"),
        ("/api/v1/tokens?account.id=1024.0.1", "1024.0.1"),
        ("/api/v1/accounts?account.id=lte:274877906944", "274877906944"),
        ("/api/v1/accounts/0.0.1001/allowances/crypto?spender.id=0.0.274877906944", "0.0.274877906944"),
        ("/api/v1/accounts/0.0.1001/allowances/tokens?spender.id=gte:0.0.274877906944", "0.0.274877906944"),
        ("/api/v1/accounts/0.0.1001/nfts?token.id=0.0.274877906944", "0.0.274877906944"),
    ],
)
def test_an_id_part_out_of_range_gets_the_reference_message(accounts: TestClient, url: str, text: str) -> None:
    response = accounts.get(url)
    assert response.status_code == 400
    assert response.json() == {"_status": {"messages": [{"message": f'Invalid entity ID "{text}"'}]}}


@pytest.mark.parametrize("url", ["/api/v1/tokens?token.id=0.0.0.1", "/api/v1/tokens?token.id=0.0.1234567890123"])
def test_an_id_of_no_valid_form_is_still_an_invalid_parameter(accounts: TestClient, url: str) -> None:
    assert accounts.get(url).json() == {"_status": {"messages": [{"message": "Invalid parameter: token.id"}]}}
