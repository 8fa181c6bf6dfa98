"""A mirror that starts mid-stream from the network's own account balance file (``--balance-files``): the
simulator writes a balance file every 15 minutes (protobuf, then CSV v2) signed by every node; an import with
``--start-date`` 20 minutes in takes the 15-minute file, verified, starts at the record file holding its
timestamp, and ends with the simulator's final HBAR and token balances; the REST API answers the balances at the
file's timestamp. From a folder and from a real S3 server (``weed mini``); tampered files are refused with
nothing written."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from bench._s3server import S3Server, upload
from starlette.testclient import TestClient
from tests.importer.importing import fetch, flip, run, table_counts
from tests.support import Ledger

from ledgermirror.importer.errors import ImporterError
from ledgermirror.ledger.protobuf import hapi_module
from ledgermirror.ledger.timestamps import format_ns
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

MINUTE = 60 * 1_000_000_000


@pytest.fixture(scope="module")
def stream(stream_of_35_minutes: Path) -> Path:
    """The session's 35-minute stream (tests/conftest.py), read only here: the tampering tests copy it."""
    return stream_of_35_minutes


def _truth(stream: Path) -> dict[str, Any]:
    return dict(json.loads((stream / "truth.json").read_text()))


def _start(stream: Path) -> int:
    return int(_truth(stream)["network"]["start"])


def _num(text: str) -> int:
    return int(text.rsplit(".", 1)[1])


def _first_file(stream: Path) -> tuple[int, dict[int, int], dict[tuple[int, int], int]]:
    """The simulator's first balance file, read here with the protobuf classes: (timestamp, HBAR, tokens)."""
    name = _truth(stream)["network"]["balance_files"][0]
    data = gzip.decompress((stream / "accountBalances" / "balance0.0.3" / name).read_bytes())
    message = hapi_module("streams.account_balance_file_pb2").AllAccountBalances.FromString(data)
    stamp = message.consensusTimestamp
    hbar = {entry.accountID.accountNum: entry.hbarBalance for entry in message.allAccounts}
    tokens = {
        (entry.accountID.accountNum, token.tokenId.tokenNum): token.balance
        for entry in message.allAccounts
        for token in entry.tokenUnitBalances
    }
    return stamp.seconds * 1_000_000_000 + stamp.nanos, hbar, tokens


def _final_balances_match(url: str, stream: Path) -> None:
    truth = _truth(stream)
    balances = {row["id"]: row["balance"] for row in fetch(url, "select id, balance from entity")}
    expected = {_num(account): balance for account, balance in truth["balances"].items()}
    assert {account: balances.get(account) for account in expected} == expected
    held = {
        (row["account_id"], row["token_id"]): row["balance"]
        for row in fetch(url, "select account_id, token_id, balance from token_account where associated")
    }
    fungible = {row[0] for row in fetch(url, "select token_id from token where type = 'FUNGIBLE_COMMON'")}
    for token, accounts in truth["token_balances"].items():
        for account, balance in accounts.items():
            key = (_num(account), _num(token))
            if key[1] in fungible or key in held:
                assert held.get(key, 0) == balance, key


def _import_mid_stream(url: str, source: str | Path, stream: Path) -> None:
    run(url, source, book=stream / "addressbook.bin", balance_files=True, start=_start(stream) + 20 * MINUTE)


def test_a_mid_stream_start_takes_the_nearest_balance_file(database: Prepared, stream: Path) -> None:
    url = database.owner_url
    _import_mid_stream(url, stream, stream)
    at, hbar, tokens = _first_file(stream)
    files = fetch(url, "select * from account_balance_file order by consensus_timestamp")
    assert [(row["consensus_timestamp"], row["synthetic"]) for row in files][:2] == [
        (at, False),
        (files[1]["consensus_timestamp"], True),
    ]
    assert files[1]["consensus_timestamp"] - at >= 15 * MINUTE  # snapshots count from the balance file
    assert files[0]["name"] == _truth(stream)["network"]["balance_files"][0]
    assert files[0]["count"] == len(hbar)
    assert all(row["synthetic"] for row in files[1:])
    # the first record file imported holds the balance file's timestamp
    first = fetch(url, "select consensus_start, consensus_end from record_file order by consensus_end limit 1")[0]
    assert first["consensus_start"] <= at <= first["consensus_end"]
    rows = fetch(url, "select account_id, balance from account_balance where consensus_timestamp = $1", at)
    assert {row["account_id"]: row["balance"] for row in rows} == hbar
    rows = fetch(url, "select * from token_balance where consensus_timestamp = $1", at)
    assert {(row["account_id"], row["token_id"]): row["balance"] for row in rows} == tokens
    _final_balances_match(url, stream)


def test_the_api_answers_the_balance_file_at_its_timestamp(
    client: TestClient, database: Prepared, stream: Path
) -> None:
    _import_mid_stream(database.owner_url, stream, stream)
    at, hbar, tokens = _first_file(stream)
    shown: dict[int, int] = {}
    path: str | None = f"/api/v1/balances?timestamp={format_ns(at + 60_000_000_000)}&limit=100"
    while path:
        body = client.get(path).json()
        assert body["timestamp"] == format_ns(at)
        shown.update({_num(entry["account"]): entry["balance"] for entry in body["balances"]})
        path = body["links"]["next"]
    assert shown == hbar
    treasury = client.get(f"/api/v1/accounts/0.0.2?timestamp={format_ns(at)}&transactions=false").json()
    assert treasury["balance"]["balance"] == hbar[2]
    token = next(iter(sorted({token for _, token in tokens})))
    body = client.get(f"/api/v1/tokens/0.0.{token}/balances?timestamp={format_ns(at)}&limit=100").json()
    expected = {account: balance for (account, held), balance in tokens.items() if held == token}
    assert {_num(entry["account"]): entry["balance"] for entry in body["balances"]} == expected


def test_a_tampered_balance_file_is_refused_with_nothing_written(
    database: Prepared, stream: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(stream, copy)
    name = _truth(stream)["network"]["balance_files"][0]
    for node in (3, 4):
        path = copy / "accountBalances" / f"balance0.0.{node}" / name
        path.write_bytes(gzip.compress(flip(gzip.decompress(path.read_bytes()), 200)))
    with pytest.raises(ImporterError, match="File hash mismatch"):
        _import_mid_stream(database.owner_url, copy, stream)
    assert table_counts(database.owner_url) == {}


def test_a_balance_file_signed_with_another_key_is_refused(
    database: Prepared, stream: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(stream, copy)
    name = _truth(stream)["network"]["balance_files"][0]
    signature = copy / "accountBalances" / "balance0.0.3" / f"{name.removesuffix('.gz')}_sig"
    other = copy / "accountBalances" / "balance0.0.4" / f"{name.removesuffix('.gz')}_sig"
    signature.write_bytes(other.read_bytes())  # node 0's folder holds node 1's signature
    (copy / "accountBalances" / "balance0.0.4" / f"{name.removesuffix('.gz')}_sig").unlink()
    with pytest.raises(ImporterError, match="Consensus not reached"):
        _import_mid_stream(database.owner_url, copy, stream)
    assert table_counts(database.owner_url) == {}


@pytest.fixture(scope="module")
def s3(s3_server: S3Server, stream: Path) -> S3Server:
    upload(s3_server, stream / "recordstreams", "net/recordstreams")
    upload(s3_server, stream / "accountBalances", "net/accountBalances")
    return s3_server


def test_a_mid_stream_start_from_a_bucket(
    database: Prepared, ledger: Ledger, stream: Path, s3: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in s3.environment().items():
        monkeypatch.setenv(name, value)
    url = database.owner_url
    _import_mid_stream(url, f"s3://{s3.bucket}/net", stream)
    at, hbar, _ = _first_file(stream)
    rows = fetch(url, "select account_id, balance from account_balance where consensus_timestamp = $1", at)
    assert {row["account_id"]: row["balance"] for row in rows} == hbar
    _final_balances_match(url, stream)
