"""The synthetic ledger: loads into a freshly migrated PostgreSQL, deterministic per seed, consistent."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import pgserver
import pytest

from ledgermirror.dataset import PROFILES, DatasetError, Profile, ProfileError, hooks, is_loaded, load
from ledgermirror.dataset.world import World
from ledgermirror.db.migrate import migrate

MAIN_TABLES = (
    "entity", "contract", "token", "custom_fee", "token_account", "crypto_allowance", "token_allowance",
    "nft_allowance", "nft", "token_airdrop", "staking_reward_transfer", "entity_stake", "account_balance",
    "token_balance", "record_file", "transaction", "transaction_hash", "crypto_transfer", "token_transfer",
    "address_book", "address_book_entry", "address_book_service_endpoint", "node", "node_stake", "network_stake",
    "file_data", "topic", "topic_message", "schedule", "transaction_signature", "nft_history", "hook",
    "hook_storage", "hook_storage_change", "registered_node", "contract_result", "contract_log", "contract_action",
    "contract_state", "contract_state_change", "contract_transaction", "contract_transaction_hash",
    "ethereum_transaction",
)  # fmt: skip
CHECKSUMMED = (
    "entity", "entity_history", "token", "token_history", "token_account", "crypto_allowance", "token_allowance",
    "nft", "token_airdrop", "account_balance", "token_balance", "record_file", "transaction", "crypto_transfer",
    "address_book_entry", "node_stake", "topic_message", "schedule", "contract_result", "contract_log",
    "contract_state", "contract_action", "ethereum_transaction",
)  # fmt: skip


@dataclass(frozen=True)
class Loaded:
    uri: str
    counts: dict[str, int]
    loaded_before: bool
    loaded_after: bool


async def _fetchval(uri: str, sql: str) -> Any:
    conn = await asyncpg.connect(uri)
    try:
        return await conn.fetchval(sql)
    finally:
        await conn.close()


def fetchval(uri: str, sql: str) -> Any:
    return asyncio.run(_fetchval(uri, sql))


def create_database(admin_uri: str, name: str) -> str:
    fetchval(admin_uri, f"create database {name}")
    return urlsplit(admin_uri)._replace(path=f"/{name}").geturl()


async def _migrate_and_load(uri: str, seed: int) -> Loaded:
    conn = await asyncpg.connect(uri)
    try:
        await migrate(conn)
        before = await is_loaded(conn)
        counts = await load(conn, "small", seed=seed)
        return Loaded(uri, counts, before, await is_loaded(conn))
    finally:
        await conn.close()


def checksums(uri: str) -> dict[str, str]:
    return {
        table: fetchval(uri, f"select md5(string_agg(t::text, '|' order by t::text)) from {table} t")
        for table in CHECKSUMMED
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One private PostgreSQL for the module; yields its admin URL."""
    data = Path(tmp_path_factory.mktemp("pg"))
    postgres = pgserver.get_server(data, cleanup_mode="delete")
    try:
        yield str(postgres.get_uri())
    finally:
        postgres.cleanup()


@pytest.fixture(scope="module")
def first(server: str) -> Loaded:
    return asyncio.run(_migrate_and_load(create_database(server, "dataset_first"), seed=1))


def test_profiles_have_the_documented_sizes() -> None:
    assert {"small", "medium", "large"} <= PROFILES.keys()
    medium, large = PROFILES["medium"], PROFILES["large"]
    assert (medium.accounts, medium.tokens, medium.nfts) == (1_000_000, 100_000, 100_000)
    assert medium.transactions == 5_000_000
    assert medium.accounts * medium.associations_per_account == 2_000_000
    assert medium.crypto_allowances + medium.token_allowances + medium.nft_allowances == 500_000
    for field in ("accounts", "tokens", "transactions", "nfts"):
        assert getattr(large, field) == 10 * getattr(medium, field), field
    tiny = Profile("tiny", accounts=10, tokens=3, associations_per_account=1.0, transactions=30, record_files=5)
    assert tiny.days == 30
    with pytest.raises(ProfileError):
        replace(tiny, tokens=tiny.accounts + 1)
    with pytest.raises(ProfileError):
        replace(tiny, transactions=tiny.accounts + tiny.tokens + tiny.record_files - 1)
    with pytest.raises(ProfileError):
        asyncio.run(load(None, "huge"))  # type: ignore[arg-type]  # the profile is checked before the connection


def test_small_fills_every_main_table(first: Loaded) -> None:
    for table in MAIN_TABLES:
        assert first.counts[table] > 0, table
        assert fetchval(first.uri, f"select count(*) from {table}") == first.counts[table], table
    accounts = fetchval(first.uri, "select count(*) from entity where type = 'ACCOUNT' and num >= 1001")
    assert accounts == 1_000
    system = fetchval(first.uri, "select count(*) from entity where id in (2, 98, 800, 801) and type = 'ACCOUNT'")
    assert system == 4
    assert fetchval(first.uri, "select count(*) from token") == 60
    assert fetchval(first.uri, "select count(distinct type) from token") == 2
    assert fetchval(first.uri, "select count(*) from entity where deleted") > 0
    assert fetchval(first.uri, "select count(*) from entity where alias is not null and evm_address is not null")
    assert fetchval(first.uri, "select count(*) from token_account where not associated") > 0
    latest_book = "select max(start_consensus_timestamp) from address_book where file_id = 102"
    entries = f"select count(*) from address_book_entry where consensus_timestamp = ({latest_book})"
    assert fetchval(first.uri, entries) == 4


def test_topics_and_schedules_in_every_state(first: Loaded) -> None:
    assert fetchval(first.uri, "select count(*) from topic") == 20
    assert fetchval(first.uri, "select count(*) from topic_message") == 2_000
    assert fetchval(first.uri, "select count(*) from topic_message where chunk_num = 3") > 0
    assert fetchval(first.uri, "select count(*) from topic_message where initial_transaction_id is not null") > 0
    states = (
        "select count(*) filter (where executed_timestamp is not null), count(*) filter (where e.deleted), "
        "count(*) filter (where executed_timestamp is null and not e.deleted) from schedule s "
        "join entity e on e.id = s.schedule_id"
    )
    conn_rows = asyncio.run(_fetchrow(first.uri, states))
    assert all(count > 0 for count in conn_rows), conn_rows


async def _fetchrow(uri: str, sql: str) -> tuple[Any, ...]:
    conn = await asyncpg.connect(uri)
    try:
        row = await conn.fetchrow(sql)
        assert row is not None
        return tuple(row)
    finally:
        await conn.close()


def test_updated_entities_and_tokens_have_history(first: Loaded) -> None:
    """A realistic share of accounts and tokens changed after creation; their earlier versions are history."""
    accounts = fetchval(first.uri, "select count(*) from entity where type = 'ACCOUNT' and num >= 1001")
    updated = fetchval(first.uri, "select count(distinct id) from entity_history where type = 'ACCOUNT'")
    assert first.counts["entity_history"] == fetchval(first.uri, "select count(*) from entity_history")
    assert 0.05 * accounts < updated < 0.25 * accounts
    assert fetchval(first.uri, "select count(*) from entity_history where type = 'TOKEN'") > 0
    assert fetchval(first.uri, "select count(*) from entity_history h join entity e using (id) "
                               "where e.deleted and not h.deleted") > 0  # fmt: skip
    tokens = first.counts["token_history"]
    assert tokens == fetchval(first.uri, "select count(*) from token_history") and 0 < tokens < 60
    assert fetchval(first.uri, "select count(*) from token_history h join token t using (token_id) "
                               "where h.total_supply < t.total_supply") > 0  # fmt: skip


def test_is_loaded_flips_and_a_second_load_is_refused(first: Loaded) -> None:
    assert first.loaded_before is False
    assert first.loaded_after is True

    async def load_again() -> None:
        conn = await asyncpg.connect(first.uri)
        try:
            await load(conn, "small")
        finally:
            await conn.close()

    with pytest.raises(DatasetError):
        asyncio.run(load_again())


def test_same_seed_gives_identical_data_and_another_seed_does_not(server: str, first: Loaded) -> None:
    again = asyncio.run(_migrate_and_load(create_database(server, "dataset_again"), seed=1))
    other = asyncio.run(_migrate_and_load(create_database(server, "dataset_other"), seed=2))
    assert again.counts == first.counts
    assert checksums(again.uri) == checksums(first.uri)
    assert checksums(other.uri)["entity"] != checksums(first.uri)["entity"]


INVARIANTS = {
    "versions start no earlier than creation": (
        "select count(*) from entity where created_timestamp > lower(timestamp_range)"
    ),
    "record files chain their hashes": (
        "select count(*) from record_file r join record_file p on r.index = p.index + 1 "
        "where r.prev_hash <> p.hash"
    ),
    "block numbers are consecutive": "select max(index) - min(index) + 1 - count(*) from record_file",
    "every transaction lies in a block whose count it is part of": (
        "select count(*) from record_file r where r.count <> (select count(*) from transaction t "
        "where t.consensus_timestamp between r.consensus_start and r.consensus_end)"
    ),
    "hbar transfers of a transaction sum to zero": (
        "select count(*) from (select 1 from crypto_transfer group by consensus_timestamp "
        "having sum(amount) <> 0) x"
    ),
    "every snapshot has a row for 0.0.2": (
        "select count(distinct consensus_timestamp) - count(*) filter (where account_id = 2) from account_balance"
    ),
    "snapshots only hold accounts that existed": (
        "select count(*) from account_balance b join entity e on e.id = b.account_id "
        "where e.created_timestamp >= b.consensus_timestamp"
    ),
    "keys match public keys": (
        "select count(*) from entity where public_key is not null and key <> (case when length(public_key) = 64 "
        "then '\\x1220'::bytea else '\\x3a21'::bytea end) || decode(public_key, 'hex')"
    ),
    "payers existed before paying": (
        "select count(*) from transaction t left join entity e on e.id = t.payer_account_id "
        "where e.id is null or e.created_timestamp >= t.consensus_timestamp"
    ),
    "NFT owners are associated and counted": (
        "select count(*) from token_account a join token t using (token_id) "
        "where t.type = 'NON_FUNGIBLE_UNIQUE' and a.balance <> "
        "(select count(*) from nft n where n.token_id = a.token_id and n.account_id = a.account_id)"
    ),
    "pending airdrops go to unassociated accounts": (
        "select count(*) from token_airdrop d join token_account a "
        "on a.account_id = d.receiver_account_id and a.token_id = d.token_id"
    ),
    "entity history ends where the current version begins": (
        "select count(*) from entity_history h left join entity e using (id) "
        "where e.id is null or upper(h.timestamp_range) <> lower(e.timestamp_range) "
        "or lower(h.timestamp_range) <> h.created_timestamp or upper_inf(h.timestamp_range)"
    ),
    "token history ends where the current version begins": (
        "select count(*) from token_history h left join token t using (token_id) "
        "where t.token_id is null or upper(h.timestamp_range) <> lower(t.timestamp_range) "
        "or lower(h.timestamp_range) <> h.created_timestamp or upper_inf(h.timestamp_range)"
    ),
    "current versions are open": (
        "select (select count(*) from entity where not upper_inf(timestamp_range))"
        " + (select count(*) from token where not upper_inf(timestamp_range))"
    ),
    "every NFT has its mint transaction": (
        "select count(*) from nft n where not exists (select 1 from transaction t where t.type = 37 and "
        "t.nft_transfer @> jsonb_build_array(jsonb_build_object('token_id', n.token_id, "
        "'serial_number', n.serial_number, 'sender_account_id', null)))"
    ),
    "every NFT held outside its treasury was transferred to its owner": (
        "select count(*) from nft n join token k using (token_id) where n.account_id <> k.treasury_account_id "
        "and not exists (select 1 from transaction t where t.nft_transfer @> jsonb_build_array(jsonb_build_object("
        "'token_id', n.token_id, 'serial_number', n.serial_number, 'receiver_account_id', n.account_id)))"
    ),
    "topic messages are numbered 1, 2, 3, ... per topic in consensus order": (
        "select count(*) from (select sequence_number, row_number() over (partition by topic_id "
        "order by consensus_timestamp) as n from topic_message) m where sequence_number <> n"
    ),
    "every topic message has its successful submit transaction": (
        "select count(*) from topic_message m left join transaction t on t.consensus_timestamp = "
        "m.consensus_timestamp and t.type = 27 and t.result = 22 and t.entity_id = m.topic_id "
        "where t.consensus_timestamp is null"
    ),
    "every topic has its entity and fee schedule": (
        "select count(*) from topic t left join entity e on e.id = t.id and e.type = 'TOPIC' "
        "left join custom_fee f on f.entity_id = t.id where e.id is null or f.entity_id is null"
    ),
    "every schedule has its entity and a signature": (
        "select count(*) from schedule s left join entity e on e.id = s.schedule_id and e.type = 'SCHEDULE' "
        "where e.id is null "
        "or not exists (select 1 from transaction_signature g where g.entity_id = s.schedule_id)"
    ),
    "every NFT version begins with a transaction that moves it": (
        "select count(*) from (select token_id, serial_number, lower(timestamp_range) as ts from nft "
        "union all select token_id, serial_number, lower(timestamp_range) from nft_history) v "
        "where not exists (select 1 from transaction t where t.consensus_timestamp = v.ts and t.nft_transfer @> "
        "jsonb_build_array(jsonb_build_object('token_id', v.token_id, 'serial_number', v.serial_number)))"
    ),
    "NFT history ends where the current version begins": (
        "select count(*) from nft_history h join nft n using (token_id, serial_number) "
        "where upper(h.timestamp_range) <> lower(n.timestamp_range)"
    ),
    "hook storage is its latest change": (
        "select count(*) from hook_storage s where s.modified_timestamp <> (select max(c.consensus_timestamp) "
        "from hook_storage_change c where (c.owner_id, c.hook_id, c.key) = (s.owner_id, s.hook_id, s.key))"
    ),
    "every contract result has its transaction, a create, call or Ethereum transaction of its contract": (
        "select count(*) from contract_result r left join transaction t on t.consensus_timestamp = "
        "r.consensus_timestamp and t.type in (7, 8, 50) and t.entity_id = r.contract_id "
        "and t.result = r.transaction_result where t.consensus_timestamp is null"
    ),
    "every Ethereum transaction has its contract result, under its hash": (
        "select count(*) from ethereum_transaction e left join contract_transaction_hash h "
        "on h.consensus_timestamp = e.consensus_timestamp and h.hash = e.hash where h.hash is null"
    ),
    "contract log indexes run from 0 in each record file": (
        "select count(*) from (select r.index, count(l.index) as logs, max(l.index) as last from record_file r "
        "join contract_log l on l.consensus_timestamp between r.consensus_start and r.consensus_end "
        "group by r.index) b where b.last + 1 <> b.logs"
    ),
    "contract state is the latest write of each slot": (
        "select count(*) from contract_state s where s.modified_timestamp <> (select max(c.consensus_timestamp) "
        "from contract_state_change c where c.contract_id = s.contract_id and c.value_written is not null "
        "and lpad(encode(c.slot, 'hex'), 64, '0') = encode(s.slot, 'hex'))"
    ),
    "every contract transaction links its contract and payer": (
        "select count(*) from contract_result r where not exists (select 1 from contract_transaction c where "
        "c.consensus_timestamp = r.consensus_timestamp and c.entity_id = r.contract_id) or not exists (select 1 "
        "from contract_transaction c where c.consensus_timestamp = r.consensus_timestamp "
        "and c.entity_id = r.payer_account_id)"
    ),
    "every token has its default custom fee": (
        "select count(*) from token t left join custom_fee f on f.entity_id = t.token_id "
        "where f.entity_id is null or f.fixed_fees is not null or lower(f.timestamp_range) <> t.created_timestamp"
    ),
}


@pytest.mark.parametrize("invariant", sorted(INVARIANTS))
def test_invariants(first: Loaded, invariant: str) -> None:
    assert fetchval(first.uri, INVARIANTS[invariant]) == 0, invariant


def test_transactions_include_failures_nft_and_token_transfers(first: Loaded) -> None:
    """The transaction list has every kind of row the reference renders: hbar, token and NFT transfers, staking
    rewards and failed transactions."""
    assert fetchval(first.uri, "select count(*) from transaction where nft_transfer is not null") > 100
    assert fetchval(first.uri, "select count(*) from transaction where type = 38") > 0  # burns
    assert fetchval(first.uri, "select count(*) from transaction where result <> 22") > 0
    assert fetchval(first.uri, "select count(distinct consensus_timestamp) from token_transfer") > 0
    assert fetchval(first.uri, "select count(*) from staking_reward_transfer") > 0


def test_hook_storage_of_the_largest_profiles_fits_its_32_byte_keys() -> None:
    """``medium`` and ``large`` give hook slot indexes past 65,535 (the load once overflowed a 2-byte key)."""
    for name in ("medium", "large"):
        rows = list(islice(hooks.hooks(World(PROFILES[name], 1)), 30_000))
        keys = [row["key"] for table, row in rows if table == "hook_storage_change"]
        assert keys and all(len(key) == hooks.KEY_BYTES for key in keys), name
        assert any(int.from_bytes(key, "big") > 65_535 for key in keys if key[:4] == bytes(4)), name
