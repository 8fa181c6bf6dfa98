"""Historical balances after an import of a simulated stream of 35 minutes (two snapshots: a full one at 17
minutes, a deduplicated one at 32): ``/api/v1/balances?timestamp=``, ``/api/v1/accounts/{id}?timestamp=``,
``/api/v1/network/supply?timestamp=`` and ``/api/v1/tokens/{id}/balances?timestamp=`` answer the balances at the
snapshot in effect, compared with running sums the test computes itself: the simulator's genesis balances plus
the imported ``crypto_transfer`` (``token_transfer``) rows up to that snapshot."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.importer.importing import fetch, run
from tests.support import Ledger, reconfigure

from ledgermirror.ledger.supply import TOTAL_SUPPLY, unreleased_accounts
from ledgermirror.ledger.timestamps import format_ns
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings
from ledgermirror.simulator.run import INITIAL_BALANCES

MINUTE = 60 * 1_000_000_000


@pytest.fixture(scope="module")
def stream(stream_of_35_minutes: Path) -> Path:
    """The session's 35-minute stream (tests/conftest.py)."""
    return stream_of_35_minutes


@pytest.fixture(scope="module")
def imported(database: Prepared, owner_ledger: Ledger, stream: Path) -> str:
    """The stream imported once on emptied tables for the module's tests, which only read them."""
    owner_ledger.reset()
    url = database.owner_url
    run(url, stream, book=stream / "addressbook.bin", initial_balances=stream / INITIAL_BALANCES)
    return url


@pytest.fixture
def client(session_client: TestClient, imported: str, api_settings: Settings) -> TestClient:
    """The session's client on the imported tables (not emptied, unlike the suite's ``client``), with a fresh
    response cache."""
    reconfigure(session_client, api_settings)
    return session_client


def _num(account: str) -> int:
    return int(account.rsplit(".", 1)[1])


def _hbar_at(url: str, stream: Path, timestamp: int) -> dict[int, int]:
    """Genesis balances plus every imported transfer up to ``timestamp``."""
    truth_balances = json.loads((stream / "truth.json").read_text())["initial_balances"]
    sums: dict[int, int] = defaultdict(int)
    for account, balance in truth_balances.items():
        sums[_num(account)] += balance
    rows = fetch(
        url,
        "select entity_id, sum(amount)::bigint as amount from crypto_transfer where consensus_timestamp <= $1 "
        "group by entity_id",
        timestamp,
    )
    for row in rows:
        sums[row["entity_id"]] += row["amount"]
    return dict(sums)


def _tokens_at(url: str, token: int, timestamp: int) -> dict[int, int]:
    rows = fetch(
        url,
        "select account_id, sum(amount)::bigint as amount from token_transfer "
        "where token_id = $1 and consensus_timestamp <= $2 group by account_id",
        token,
        timestamp,
    )
    return {row["account_id"]: row["amount"] for row in rows}


def _snapshot_in_effect(url: str, timestamp: int) -> int:
    """The newest record file end at or before ``timestamp`` that is at least 15 minutes of consensus time after
    the previous snapshot (17 after the first file): computed from ``record_file`` alone."""
    ends = [row[0] for row in fetch(url, "select consensus_end from record_file order by consensus_end")]
    due = ends[0] + 17 * MINUTE
    taken = []
    for end in ends:
        if end >= due:
            taken.append(end)
            due = end + 15 * MINUTE
    return max(end for end in taken if end <= timestamp)


def _pages(client: TestClient, path: str) -> list[dict[str, Any]]:
    bodies = []
    while path:
        response = client.get(path)
        assert response.status_code == 200, response.text
        body = response.json()
        bodies.append(body)
        path = body["links"]["next"]
    return bodies


def _query_times(url: str) -> list[int]:
    first = fetch(url, "select min(consensus_end) from record_file")[0][0]
    return [first + 20 * MINUTE, first + 33 * MINUTE, first + 34 * MINUTE + 59_000_000_000]


def test_balances_at_a_timestamp_are_the_running_sums(client: TestClient, imported: str, stream: Path) -> None:
    url = imported
    files = fetch(url, "select consensus_timestamp, synthetic from account_balance_file order by 1")
    assert len(files) == 2 and all(row["synthetic"] for row in files)
    for at in _query_times(url):
        snapshot = _snapshot_in_effect(url, at)
        expected = _hbar_at(url, stream, snapshot)
        shown: dict[int, int] = {}
        for body in _pages(client, f"/api/v1/balances?timestamp={format_ns(at)}&limit=100"):
            assert body["timestamp"] == format_ns(snapshot)
            for entry in body["balances"]:
                shown[_num(entry["account"])] = entry["balance"]
        assert shown
        assert {account: expected.get(account, 0) for account in shown} == shown
        assert {account for account, balance in expected.items() if balance} <= set(shown)


def test_an_account_at_a_timestamp(client: TestClient, imported: str, stream: Path) -> None:
    url = imported
    for at in _query_times(url):
        snapshot = _snapshot_in_effect(url, at)
        expected = _hbar_at(url, stream, snapshot)
        busiest = sorted((account for account in expected if account > 1000), key=lambda a: -abs(expected[a]))[:5]
        for account in [2, 3, *busiest]:
            response = client.get(f"/api/v1/accounts/0.0.{account}?timestamp={format_ns(at)}&transactions=false")
            assert response.status_code == 200, response.text
            balance = response.json()["balance"]
            assert (balance["balance"], balance["timestamp"]) == (expected[account], format_ns(snapshot)), account


def test_network_supply_at_a_timestamp(client: TestClient, imported: str, stream: Path) -> None:
    url = imported
    for at in _query_times(url):
        snapshot = _snapshot_in_effect(url, at)
        expected = _hbar_at(url, stream, snapshot)
        unreleased = sum(expected.get(account, 0) for account in unreleased_accounts(0, 0))
        response = client.get(f"/api/v1/network/supply?timestamp={format_ns(at)}")
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["released_supply"] == str(TOTAL_SUPPLY - unreleased)
        assert body["timestamp"] == format_ns(snapshot)


def test_token_balances_at_a_timestamp(client: TestClient, imported: str) -> None:
    url = imported
    tokens = [row[0] for row in fetch(url, "select token_id from token where type = 'FUNGIBLE_COMMON' order by 1")]
    assert tokens, "the simulated stream creates fungible tokens"
    checked = 0
    for at in _query_times(url):
        snapshot = _snapshot_in_effect(url, at)
        for token in tokens:
            expected = _tokens_at(url, token, snapshot)
            shown: dict[int, int] = {}
            for body in _pages(client, f"/api/v1/tokens/0.0.{token}/balances?timestamp={format_ns(at)}&limit=100"):
                for entry in body["balances"]:
                    shown[_num(entry["account"])] = entry["balance"]
            assert {account: expected.get(account, 0) for account in shown} == shown, token
            assert {account for account, balance in expected.items() if balance} <= set(shown), token
            checked += len(shown)
    assert checked
