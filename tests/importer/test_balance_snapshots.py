"""Balance snapshots written by the import, with the cases and expected values of the reference's
``HistoricalBalanceServiceIntegrationTest`` (and the snapshot name of ``HistoricalBalanceService``): the database
holds the test's entities and token accounts, and record files at the test's consensus times go through the real
import (``run_import``), whose driver takes the snapshots."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from tests.importer import signed_streams, stream_writer
from tests.importer.importing import fetch, run

from ledgermirror.db import write
from ledgermirror.importer.balance_snapshots import SnapshotRules, instant_text, snapshot_name
from ledgermirror.importer.options import parse_date
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

MINUTE = 60 * 1_000_000_000
SECOND = 1_000_000_000
MIN_FREQUENCY = 15 * MINUTE
INITIAL_DELAY = 2 * MINUTE
PARTITION_LOWER = parse_date("2024-05-01")
"""The reference takes the lower bound of the current monthly partition; any month start serves."""
PREV = PARTITION_LOWER - (MIN_FREQUENCY - MINUTE)
"""``prevPartitionBalanceTimestamp``: 14 minutes before the month starts."""
BALANCE_TIMESTAMP = PARTITION_LOWER + MINUTE
TREASURY = 2


class Stream:
    """Signed record files of one FileUpdate each, written when the test 'parses' a file at a time."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.keys = signed_streams.node_keys(1)
        self.book = root / "book.bin"
        self.book.write_bytes(stream_writer.address_book(self.keys))
        self.running = signed_streams.GENESIS_HASH
        self.number = 0

    def parse(self, url: str, consensus_end: int, rules: SnapshotRules) -> None:
        """Write a record file ending at ``consensus_end`` and import it."""
        self.number += 1
        item = signed_streams.file_update(consensus_end, 1000, str(self.number).encode())
        self.running = signed_streams.write_file(
            self.root / "streams", consensus_end, [item], self.running, self.number, keys=self.keys
        )
        run(url, self.root / "streams", book=self.book, balance_snapshots=rules)


def _execute(url: str, action: Any) -> None:
    async def go() -> None:
        conn = await asyncpg.connect(url)
        try:
            await action(conn)
        finally:
            await conn.close()

    asyncio.run(go())


def _entity(num: int, balance: int | None, balance_timestamp: int | None, **columns: Any) -> dict[str, Any]:
    return {
        "id": num,
        "num": num,
        "realm": 0,
        "shard": 0,
        "balance": balance,
        "balance_timestamp": balance_timestamp,
        "deleted": False,
        "type": "ACCOUNT",
        "timestamp_range": asyncpg.Range(1, None),
        **columns,
    }


def _token_account(
    account: int, token: int, balance: int, balance_timestamp: int, associated: bool = True
) -> dict:
    return {
        "account_id": account,
        "token_id": token,
        "balance": balance,
        "balance_timestamp": balance_timestamp,
        "associated": associated,
        "timestamp_range": asyncpg.Range(1, None),
    }


def _setup(url: str, *, treasury: bool = True) -> tuple[dict[int, dict[str, Any]], list[dict[str, Any]]]:
    """``HistoricalBalanceServiceIntegrationTest.setup``: the treasury, an account, a contract (deleted null), a
    file and an unknown entity with balances, an account deleted after ``PREV`` and one deleted before it, a
    topic (no balance), an associated and a dissociated token account."""
    entities = {
        TREASURY: _entity(TREASURY, 5_000_000, PREV - 200),
        1001: _entity(1001, 100, BALANCE_TIMESTAMP),
        1002: _entity(1002, 200, BALANCE_TIMESTAMP, deleted=None, type="CONTRACT"),
        1003: _entity(1003, 300, BALANCE_TIMESTAMP, type="FILE"),
        1004: _entity(1004, 400, BALANCE_TIMESTAMP, type="UNKNOWN"),
        1005: _entity(1005, 0, PREV + 100, deleted=True),
        1006: _entity(1006, 0, PREV - 100, deleted=True),
        1007: _entity(1007, None, None, type="TOPIC"),
    }
    tokens = [
        _token_account(1001, 2001, 50, BALANCE_TIMESTAMP),
        _token_account(1008, 2002, 0, BALANCE_TIMESTAMP, False),
    ]
    rows = [entity for num, entity in entities.items() if treasury or num != TREASURY]

    async def load(conn: asyncpg.Connection) -> None:
        await write.copy_rows(conn, "entity", rows)
        await write.copy_rows(conn, "token_account", tokens)

    _execute(url, load)
    return entities, tokens


def _previous_snapshot(url: str) -> None:
    """An ``account_balance_file`` and the treasury's ``account_balance`` at ``PREV`` (previous month)."""

    async def load(conn: asyncpg.Connection) -> None:
        await write.copy_rows(
            conn,
            "account_balance_file",
            [{"consensus_timestamp": PREV, "count": 1, "load_start": 1, "load_end": 2, "name": "prev"}],
        )
        await write.copy_rows(
            conn, "account_balance", [{"consensus_timestamp": PREV, "account_id": TREASURY, "balance": 1}]
        )

    _execute(url, load)


def _files(url: str) -> list[tuple[int, int, bool]]:
    return [
        (row["consensus_timestamp"], row["count"], row["synthetic"])
        for row in fetch(url, "select * from account_balance_file order by consensus_timestamp")
    ]


def _accounts_at(url: str, timestamp: int) -> dict[int, int]:
    rows = fetch(url, "select account_id, balance from account_balance where consensus_timestamp = $1", timestamp)
    return {row["account_id"]: row["balance"] for row in rows}


def _tokens_at(url: str, timestamp: int) -> dict[tuple[int, int], int]:
    rows = fetch(url, "select * from token_balance where consensus_timestamp = $1", timestamp)
    return {(row["account_id"], row["token_id"]): row["balance"] for row in rows}


def _verify(url: str, timestamp: int, accounts: dict[int, int], tokens: dict[tuple[int, int], int]) -> None:
    """``verifyGeneratedBalances``: a synthetic file at ``timestamp`` counting the accounts, and exactly these
    account and token balances at it."""
    files = _files(url)
    assert files[-1] == (timestamp, len(accounts), True)
    name = fetch(url, "select name from account_balance_file where consensus_timestamp = $1", timestamp)[0][0]
    assert name == snapshot_name(timestamp)
    assert _accounts_at(url, timestamp) == accounts
    assert _tokens_at(url, timestamp) == tokens


def _change_balances(url: str, timestamp: int) -> None:
    """The test's changes after the first snapshot: the account +5 and its token account +5 at
    ``timestamp``, a new account and a new token account of the account, both at ``timestamp``."""

    async def change(conn: asyncpg.Connection) -> None:
        await conn.execute(
            "update entity set balance = balance + 5, balance_timestamp = $1 where id = 1001", timestamp
        )
        await conn.execute(
            "update token_account set balance = balance + 5, balance_timestamp = $1 "
            "where account_id = 1001 and token_id = 2001",
            timestamp,
        )
        await write.copy_rows(conn, "entity", [_entity(1009, 900, timestamp)])
        await write.copy_rows(conn, "token_account", [_token_account(1001, 2003, 70, timestamp)])

    _execute(url, change)


def _generate(url: str, tmp_path: Path, *, token_balances: bool, treasury: bool) -> None:
    rules = SnapshotRules(token_balances=token_balances)
    entities, tokens = _setup(url, treasury=treasury)
    _previous_snapshot(url)
    stream = Stream(tmp_path)
    # a record file at the month's start: before PREV + minFrequency, no snapshot
    stream.parse(url, PARTITION_LOWER, rules)
    assert _files(url) == [(PREV, 1, False)]
    # the first snapshot in the month is full: every entity with a balance but those deleted before PREV
    first = PREV + MIN_FREQUENCY
    stream.parse(url, first, rules)
    expected = {
        num: entity["balance"]
        for num, entity in entities.items()
        if entity["balance"] is not None and (entity["deleted"] is not True or entity["balance_timestamp"] > PREV)
    }
    if not treasury:  # generateWhenTreasuryAccountDoesntExist: created with balance 0
        expected[TREASURY] = 0
        created = fetch(url, "select memo, balance, decline_reward, type from entity where id = $1", TREASURY)[0]
        assert tuple(created) == ("Mirror node created synthetic treasury account", 0, True, "ACCOUNT")
    assert set(expected) == {TREASURY, 1001, 1002, 1003, 1004, 1005}
    all_tokens = {(row["account_id"], row["token_id"]): row["balance"] for row in tokens}
    _verify(url, first, expected, all_tokens if token_balances else {})
    _change_balances(url, first + 1)
    # a file 2 s short of the next interval: nothing
    stream.parse(url, first + MIN_FREQUENCY - 2 * SECOND, rules)
    assert len(_files(url)) == 2
    # one second past it: a deduplicated snapshot of the treasury, the changed account and the new one
    second = first + MIN_FREQUENCY + SECOND
    stream.parse(url, second, rules)
    deduped = {TREASURY: expected[TREASURY], 1001: 105, 1009: 900}
    _verify(url, second, deduped, {(1001, 2001): 55, (1001, 2003): 70} if token_balances else {})


@pytest.mark.parametrize("token_balances", [True, False])
def test_generate(database: Prepared, tmp_path: Path, token_balances: bool) -> None:
    """``HistoricalBalanceServiceIntegrationTest.generate(tokenBalances)``."""
    _generate(database.owner_url, tmp_path, token_balances=token_balances, treasury=True)


def test_generate_when_treasury_account_doesnt_exist(database: Prepared, tmp_path: Path) -> None:
    """``HistoricalBalanceServiceIntegrationTest.generateWhenTreasuryAccountDoesntExist``: the treasury is
    created with balance 0 (memo 'Mirror node created synthetic treasury account') and included."""
    _generate(database.owner_url, tmp_path, token_balances=True, treasury=False)


def test_generate_when_no_account_balance_files(database: Prepared, tmp_path: Path) -> None:
    """``HistoricalBalanceServiceIntegrationTest.generateWhenNoAccountBalanceFiles``: the first snapshot comes
    ``minFrequency + initialDelay`` after the first record file's end; 3 s before that, nothing."""
    url = database.owner_url
    rules = SnapshotRules()
    entities, tokens = _setup(url)
    stream = Stream(tmp_path)
    first_end = PARTITION_LOWER + 10 * MINUTE
    stream.parse(url, first_end, rules)
    stream.parse(url, first_end + MIN_FREQUENCY + INITIAL_DELAY - 3 * SECOND, rules)
    assert _files(url) == []
    at = first_end + MIN_FREQUENCY + INITIAL_DELAY
    stream.parse(url, at, rules)
    # the first snapshot with no treasury snapshot in the last 30 days keeps every deleted entity too
    expected = {num: entity["balance"] for num, entity in entities.items() if entity["balance"] is not None}
    _verify(url, at, expected, {(row["account_id"], row["token_id"]): row["balance"] for row in tokens})


def test_generate_when_disabled(database: Prepared, tmp_path: Path) -> None:
    """``historicalBalance.enabled = false``: no snapshot however long the stream."""
    url = database.owner_url
    _setup(url)
    stream = Stream(tmp_path)
    for minute in (0, 20, 40):
        stream.parse(url, PARTITION_LOWER + minute * MINUTE, SnapshotRules(enabled=False))
    assert _files(url) == []


def test_a_new_month_starts_with_a_full_snapshot(database: Prepared, tmp_path: Path) -> None:
    """Every month's first snapshot is full (the reference's first snapshot in a monthly partition), so the REST
    window ``[first day of the snapshot's month, snapshot]`` always holds every balance."""
    url = database.owner_url
    rules = SnapshotRules()
    _setup(url)
    stream = Stream(tmp_path)
    start = parse_date("2024-06-01") - 40 * MINUTE  # the setup's balances are of May
    stream.parse(url, start, rules)
    stream.parse(url, start + 17 * MINUTE, rules)  # full (first)
    stream.parse(url, start + 32 * MINUTE, rules)  # deduplicated: the treasury alone
    stream.parse(url, start + 47 * MINUTE, rules)  # in June: full again
    counts = [count for _, count, _ in _files(url)]
    # the first full one keeps both deleted accounts (no treasury snapshot in the last 30 days); June's drops
    # them (deleted before May's snapshots)
    assert counts == [7, 1, 5]


@pytest.mark.parametrize(
    ("nanos", "text"),
    [
        (1_714_522_502_123_456_789, "2024-05-01T00:15:02.123456789Z"),
        (1_714_522_502_396_440_000, "2024-05-01T00:15:02.396440Z"),
        (1_714_522_502_210_000_000, "2024-05-01T00:15:02.210Z"),
        (1_714_522_500_000_000_000, "2024-05-01T00:15:00Z"),
    ],
)
def test_snapshot_names_follow_java_instant_text(nanos: int, text: str) -> None:
    """The file name is ``Instant.toString()`` with ``:`` as ``_`` and ``_Balances.csv`` (the reference's
    ``StreamFilename.getFilename(BALANCE, DATA, instant)``)."""
    assert instant_text(nanos) == text
    assert snapshot_name(nanos) == text.replace(":", "_") + "_Balances.csv"


def test_generate_when_account_balance_file_table_not_empty(database: Prepared, tmp_path: Path) -> None:
    """``HistoricalBalanceServiceIntegrationTest.generateWhenAccountBalanceFileTableNotEmpty``: two balance files
    (no balance rows) exist; a record file before the latest + ``minFrequency`` adds nothing, one at it makes a
    full snapshot of every entity with a balance (both deleted ones too: no treasury snapshot) and both token
    accounts."""
    url = database.owner_url
    entities, tokens = _setup(url)
    first, latest = PARTITION_LOWER + 5 * MINUTE, PARTITION_LOWER + 6 * MINUTE

    async def load(conn: asyncpg.Connection) -> None:
        files = [
            {"consensus_timestamp": at, "count": 0, "load_start": 1, "load_end": 2, "name": str(at)}
            for at in (first, latest)
        ]
        await write.copy_rows(conn, "account_balance_file", files)

    _execute(url, load)
    stream = Stream(tmp_path)
    stream.parse(url, latest + MINUTE, SnapshotRules())
    assert [at for at, _, _ in _files(url)] == [first, latest]
    at = latest + MIN_FREQUENCY
    stream.parse(url, at, SnapshotRules())
    expected = {num: entity["balance"] for num, entity in entities.items() if entity["balance"] is not None}
    _verify(url, at, expected, {(row["account_id"], row["token_id"]): row["balance"] for row in tokens})


def test_a_failed_snapshot_leaves_nothing_and_the_next_run_takes_it(database: Prepared, tmp_path: Path) -> None:
    """``HistoricalBalanceServiceTest.shouldResetTreasuryExistsOnFailureAndSucceedOnNextCall``: the reference logs
    the failure, forgets that it created the treasury and succeeds at the next event. Here the snapshot is part
    of its file's transaction: the failure rolls back the file, the treasury and every snapshot row, and the next
    run writes them all (the treasury created then)."""
    url = database.owner_url
    rules = SnapshotRules()
    _setup(url, treasury=False)
    _previous_snapshot(url)
    at = PREV + MIN_FREQUENCY

    async def conflict(conn: asyncpg.Connection) -> None:  # a row the snapshot will collide with
        await write.copy_rows(
            conn, "account_balance", [{"consensus_timestamp": at, "account_id": 1001, "balance": 1}]
        )

    _execute(url, conflict)
    stream = Stream(tmp_path)
    with pytest.raises(asyncpg.UniqueViolationError):
        stream.parse(url, at, rules)
    assert fetch(url, "select count(*) from record_file")[0][0] == 0
    assert fetch(url, "select count(*) from entity where id = $1", TREASURY)[0][0] == 0
    assert _files(url) == [(PREV, 1, False)]
    assert _accounts_at(url, at) == {1001: 1}

    async def resolve(conn: asyncpg.Connection) -> None:
        await conn.execute("delete from account_balance where consensus_timestamp = $1", at)

    _execute(url, resolve)
    run(url, tmp_path / "streams", book=stream.book, balance_snapshots=rules)
    assert fetch(url, "select count(*) from record_file")[0][0] == 1
    assert _files(url)[-1] == (at, 6, True)
    assert _accounts_at(url, at)[TREASURY] == 0
