"""POST /api/v1/network/fees: modes, the high-volume throttle, the schedule source, state, errors, fuzzing."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests.fees.builders import body, key, legacy, schedule_bytes, signed
from tests.support import Ledger

URL = "/api/v1/network/fees"
PROTOBUF = {"content-type": "application/protobuf"}
SECOND = 1_000_000_000
T0 = 1_700_000_000 * SECOND
SCHEDULE_FILE = 113

TWO_SIGNATURES = {
    "high_volume_multiplier": 1,
    "network": {"multiplier": 9, "subtotal": 1_800_000},
    "node": {
        "base": 100_000,
        "extras": [
            {
                "charged": 1,
                "count": 2,
                "fee_per_unit": 100_000,
                "included": 1,
                "name": "SIGNATURES",
                "subtotal": 100_000,
            }
        ],
    },
    "service": {"base": 0, "extras": []},
    "total": 2_000_000,
}


def post(client: TestClient, data: bytes, query: str = "", headers: dict[str, str] | None = None) -> Any:
    return client.post(URL + query, content=data, headers=PROTOBUF if headers is None else headers)


def messages(response: Any) -> list[str]:
    return [item["message"] for item in response.json()["_status"]["messages"]]


def submit(size: int = 128, topic: int = 6001) -> bytes:
    message = body()
    message.consensusSubmitMessage.topicID.topicNum = topic
    message.consensusSubmitMessage.message = b"m" * size
    return signed(message, 1)


def file_row(ledger: Ledger, timestamp: int, data: bytes, transaction_type: int = 19) -> None:
    ledger.execute(
        "insert into file_data (file_data, consensus_timestamp, entity_id, transaction_type)"
        " values ($1, $2, $3, $4)",
        data,
        timestamp,
        SCHEDULE_FILE,
        transaction_type,
    )


def submit_base(factor: int) -> bytes:
    def edit(data: dict[str, Any]) -> None:
        for service in data["services"]:
            for entry in service["schedule"]:
                if entry["name"] == "ConsensusSubmitMessage":
                    entry["baseFee"] *= factor

    return schedule_bytes(edit)


@pytest.mark.parametrize(
    "content_type", ["application/protobuf", "application/x-protobuf", "Application/Protobuf; q=1"]
)
def test_two_signatures(client: TestClient, content_type: str) -> None:
    response = post(client, signed(body(cryptoTransfer=None), 2), headers={"content-type": content_type})
    assert response.status_code == 200
    assert response.json() == TWO_SIGNATURES
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-fee-schedule"] == "default"


@pytest.mark.parametrize("query", ["", "?mode=INTRINSIC", "?mode=state", "?mode=State&high_volume_throttle=10000"])
def test_modes_and_legacy_form(client: TestClient, query: str) -> None:
    assert post(client, legacy(body(cryptoTransfer=None), 2), query).json() == TWO_SIGNATURES


def test_get_head_and_other_methods_still_route(client: TestClient) -> None:
    get = client.get(URL + "?timestamp=ne:1")  # the GET endpoint's own validation answers
    assert (get.status_code, messages(get)) == (400, ["Not equals (ne) operator is not supported for timestamp"])
    assert client.head(URL + "?timestamp=ne:1").status_code == 400
    assert client.get(URL).status_code == 404  # no 0.0.111 yet
    for method in ("PUT", "DELETE", "PATCH"):
        response = client.request(method, URL, content=b"", headers=PROTOBUF)
        assert (response.status_code, messages(response)) == (405, [f"Request method '{method}' is not supported"])


def test_schedule_from_file_113_and_its_refresh(client: TestClient, ledger: Ledger) -> None:
    assert post(client, submit()).json()["service"]["base"] == 700_000
    ten = submit_base(10)
    file_row(ledger, T0, ten[:100], 17)
    file_row(ledger, T0 + 1, ten[100:], 16)
    response = post(client, submit(), "?mode=STATE")
    assert response.json()["service"]["base"] == 7_000_000
    assert response.headers["x-fee-schedule"] == "0.0.113@1700000000.000000001"
    assert post(client, submit()).json()["service"]["base"] == 7_000_000  # cached
    file_row(ledger, T0 + 2 * SECOND, submit_base(20))
    response = post(client, submit())
    assert (response.json()["service"]["base"], response.headers["x-fee-schedule"]) == (
        14_000_000,
        "0.0.113@1700000002.000000000",
    )
    file_row(ledger, T0 + 3 * SECOND, b"\xff\xff not a schedule")  # falls back to the previous version
    response = post(client, submit())
    assert (response.json()["service"]["base"], response.headers["x-fee-schedule"]) == (
        14_000_000,
        "0.0.113@1700000002.000000000",
    )


def test_undecodable_file_means_default(client: TestClient, ledger: Ledger) -> None:
    file_row(ledger, T0, b"\xff\xff", 17)
    response = post(client, submit())
    assert (response.status_code, response.headers["x-fee-schedule"]) == (200, "default")
    assert response.json()["total"] == 1_890_400


def custom_fee(ledger: Ledger, entity: int, column: str = "fixed_fees") -> None:
    ledger.execute(
        f"insert into custom_fee (entity_id, {column}, timestamp_range) values ($1, $2::jsonb, '[1,)')",
        entity,
        '[{"amount": 1, "collector_account_id": 98}]',
    )


def test_state_reads_topic_custom_fees(client: TestClient, ledger: Ledger) -> None:
    custom_fee(ledger, 6001)
    ledger.execute("insert into custom_fee (entity_id, fixed_fees, timestamp_range) values (6002, '[]', '[1,)')")
    assert post(client, submit()).json()["total"] == 1_890_400
    state = post(client, submit(), "?mode=STATE").json()
    assert state["total"] == 500_000_000
    assert [extra["name"] for extra in state["service"]["extras"]] == ["CONSENSUS_SUBMIT_MESSAGE_WITH_CUSTOM_FEE"]
    assert post(client, submit(topic=6002), "?mode=STATE").json()["total"] == 1_890_400  # no fees in the list


def token_transfer(token: int) -> bytes:
    message = body()
    tokens = message.cryptoTransfer.tokenTransfers.add()
    tokens.token.tokenNum = token
    for account, amount in ((1001, -1), (1002, 1)):
        tokens.transfers.add(amount=amount).accountID.accountNum = account
    return signed(message, 1)


def test_state_reads_token_custom_fees(client: TestClient, ledger: Ledger) -> None:
    custom_fee(ledger, 5001, "royalty_fees")
    plain = post(client, token_transfer(5002), "?mode=STATE").json()["total"]
    custom = post(client, token_transfer(5001), "?mode=STATE").json()["total"]
    intrinsic = post(client, token_transfer(5001)).json()["total"]
    # STATE adds the 9,000,000 transfer base; INTRINSIC charges TOKEN_TYPES for the list's 2nd transfer
    assert (custom - plain, plain - intrinsic) == (10_000_000, 8_000_000)


def nft_transfer(token: int, serials: int) -> bytes:
    message = body()
    tokens = message.cryptoTransfer.tokenTransfers.add()
    tokens.token.tokenNum = token
    for serial in range(1, serials + 1):
        nft = tokens.nftTransfers.add(serialNumber=serial)
        nft.senderAccountID.accountNum = 1001
        nft.receiverAccountID.accountNum = 1002
    return signed(message, 1)


def test_state_reads_token_types(client: TestClient, ledger: Ledger) -> None:
    def service(mode: str) -> list[tuple[str, int, int]]:
        extras = post(client, nft_transfer(5003, 3), mode).json()["service"]["extras"]
        return [(extra["name"], extra["count"], extra["charged"]) for extra in extras]

    # unknown to the database: priced as a fungible token, whose list has no fungible transfers
    assert service("?mode=STATE") == []
    ledger.execute(
        "insert into token (token_id, created_timestamp, decimals, initial_supply, name, symbol,"
        " treasury_account_id, timestamp_range, freeze_status, kyc_status, type)"
        " values (5003, 1, 0, 0, 'n', 'N', 98, '[1,)', 0, 0, 'NON_FUNGIBLE_UNIQUE')"
    )
    assert service("?mode=STATE") == [("TOKEN_TRANSFER_BASE", 1, 1), ("TOKEN_TYPES", 3, 2)]
    custom_fee(ledger, 5003, "royalty_fees")
    assert service("?mode=STATE") == [("TOKEN_TRANSFER_BASE_CUSTOM_FEES", 1, 1), ("TOKEN_TYPES", 3, 2)]
    assert service("") == [("TOKEN_TYPES", 3, 2)]


def test_high_volume_throttle(client: TestClient) -> None:
    message = body()
    message.cryptoCreateAccount.key.CopyFrom(key())
    message.high_volume = True
    data = signed(message, 1)
    assert post(client, data, "?high_volume_throttle=10000").json()["total"] == 500_000_000
    state = post(client, data, "?mode=STATE&high_volume_throttle=10000").json()
    assert (state["high_volume_multiplier"], state["total"]) == (200, 100_000_000_000)
    assert post(client, data, "?mode=STATE&high_volume_throttle=0").json()["high_volume_multiplier"] == 4


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("?mode=FAST", ["Invalid parameter: mode"]),
        ("?mode=", ["Invalid parameter: mode"]),
        ("?mode=STATE&mode=STATE", ["Invalid parameter: mode"]),
        ("?high_volume_throttle=-1", ["high_volume_throttle must be greater than or equal to 0"]),
        ("?high_volume_throttle=10001", ["high_volume_throttle must be less than or equal to 10000"]),
        ("?high_volume_throttle=1.5", ["Invalid parameter: high_volume_throttle"]),
        ("?high_volume_throttle=abc", ["Invalid parameter: high_volume_throttle"]),
        ("?high_volume_throttle=99999999999", ["Invalid parameter: high_volume_throttle"]),
        ("?high_volume_throttle=", ["Invalid parameter: high_volume_throttle"]),
        ("?foo=1&mode=x", ["Invalid parameter: mode", "Unknown query parameter: foo"]),
    ],
)
def test_bad_parameters(client: TestClient, query: str, expected: list[str]) -> None:
    response = post(client, signed(body(cryptoTransfer=None)), query)
    assert (response.status_code, messages(response)) == (400, expected)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", "Request body is empty: expected the bytes of a Transaction"),
        (b"\xff\xff\xff", "Unable to parse transaction"),
        (b"\x22\x00", "Transaction must contain body bytes or signed transaction bytes"),
        (signed(body()), "Unknown transaction type"),
        (signed(body(freeze=None)), "Unknown transaction type"),
    ],
)
def test_bad_bodies(client: TestClient, data: bytes, expected: str) -> None:
    response = post(client, data)
    assert (response.status_code, messages(response)) == (400, [expected])


@pytest.mark.parametrize(
    ("headers", "shown"),
    [
        ({"content-type": "application/json"}, "application/json"),
        ({}, ""),
        ({"content-type": "text/plain"}, "text/plain"),
    ],
)
def test_unsupported_content_type(client: TestClient, headers: dict[str, str], shown: str) -> None:
    response = post(client, signed(body(cryptoTransfer=None)), headers=headers)
    assert (response.status_code, messages(response)) == (415, [f"Content-Type '{shown}' is not supported"])


def test_too_large(client: TestClient) -> None:
    response = post(client, b"\x00" * 6145)
    assert (response.status_code, messages(response)) == (413, ["Request body exceeds 6144 bytes"])
    assert post(client, submit(5800)).status_code == 200  # just under the limit

    def chunks() -> Any:
        yield b"\x00" * 4000
        yield b"\x00" * 4000

    response = client.post(URL, content=chunks(), headers=PROTOBUF)  # no content-length: counted while read
    assert response.status_code == 413


VALID = [signed(body(cryptoTransfer=None), 2), submit(300), legacy(body(tokenMint=None), 1)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.one_of(
        st.binary(max_size=300),
        st.tuples(st.sampled_from(VALID), st.integers(0, 400), st.binary(max_size=8)).map(
            lambda item: item[0][: item[1]] + item[2] + item[0][item[1] + len(item[2]) :]
        ),
    ),
    query=st.sampled_from(["", "?mode=STATE", "?mode=STATE&high_volume_throttle=10000"]),
)
def test_fuzz_never_500(client: TestClient, data: bytes, query: str) -> None:
    response = post(client, data, query)
    assert response.status_code in (200, 400), response.text
    if response.status_code == 200:
        assert set(response.json()) == {"high_volume_multiplier", "network", "node", "service", "total"}
