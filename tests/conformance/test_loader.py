"""The spec-fixture loader against a real PostgreSQL: every in-scope spec file loads, and the reference
harness's defaults and value conversions come out exactly."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pgserver
import pytest

from ledgermirror.conformance.ids import Context, encoded_id, spec_id, string_id
from ledgermirror.conformance.loader import LoaderError, load_setup
from ledgermirror.conformance.values import node_base64, pg_text, value_to_buffer
from ledgermirror.db.migrate import migrate
from ledgermirror.db.reset import reset

SPECS = Path(__file__).resolve().parents[3] / "shared" / "upstream" / "specs"
FOLDERS = ("accounts", "tokens", "blocks", "balances", "network", "route", "topics", "schedules")
DEFAULT_PUBLIC_KEY = "4a5ad514f0957fa170a676210c9bdbddf3bc9519702cf915fa6767a40463b96f"
ALIAS = "KGNABD5L3ZGSRVUCSPDR7TONZSRY3D5OMEBKQMVTD2AC6JL72HMQ"


@pytest.fixture(scope="module")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = pgserver.get_server(tmp_path_factory.mktemp("pg"), cleanup_mode="delete")
    url: str = server.get_uri()

    async def prepare() -> None:
        conn = await asyncpg.connect(url)
        try:
            await migrate(conn)
        finally:
            await conn.close()

    asyncio.run(prepare())
    try:
        yield url
    finally:
        server.cleanup()


def load(url: str, setup: dict[str, Any], *queries: str, spec: str = "test.json") -> list[list[dict[str, Any]]]:
    """Reset, load the setup, then run the queries; rows come back as dicts."""

    async def run() -> list[list[dict[str, Any]]]:
        conn = await asyncpg.connect(url)
        try:
            await reset(conn)
            await load_setup(conn, setup, spec=spec)
            return [[dict(row) for row in await conn.fetch(query)] for query in queries]
        finally:
            await conn.close()

    return asyncio.run(run())


def one(url: str, setup: dict[str, Any], query: str) -> dict[str, Any]:
    rows = load(url, setup, query)[0]
    assert len(rows) == 1, rows
    return rows[0]


# Every spec file ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_spec_file_loads(pg_url: str, folder: str) -> None:
    root = SPECS / folder
    if not root.is_dir():
        pytest.skip(f"{root} does not exist")
    files = sorted(path for path in root.rglob("*.json") if path.name != "responseHeaders.json")

    async def run() -> int:
        conn = await asyncpg.connect(pg_url)
        try:
            for path in files:
                spec = json.loads(path.read_text(encoding="utf-8"))
                await reset(conn)
                await load_setup(conn, spec.get("setup", {}), spec=str(path.relative_to(SPECS)))
            return len(files)
        finally:
            await conn.close()

    assert asyncio.run(run()) == len(files) > 0


# Tokens and NFTs ---------------------------------------------------------------------------------------------


def test_token_defaults(pg_url: str) -> None:
    setup = {
        "tokens": [
            {"token_id": "0.0.1", "symbol": "F", "created_timestamp": "5"},
            {
                "token_id": "0.0.2",
                "symbol": "N",
                "created_timestamp": 6,
                "type": "NON_FUNGIBLE_UNIQUE",
                "decimals": 7,
            },
        ]
    }
    tokens, fees = load(
        pg_url,
        setup,
        "select * from token order by token_id",
        "select * from custom_fee order by entity_id",
    )
    fungible, nft = tokens
    assert (fungible["decimals"], fungible["initial_supply"], fungible["total_supply"]) == (1000, 1000000, 1000000)
    assert (nft["decimals"], nft["initial_supply"], nft["total_supply"]) == (0, 0, 1000000)
    assert fungible["metadata"] == b""
    assert fungible["treasury_account_id"] == 98
    assert fungible["max_supply"] == 9223372036854775807
    assert (fungible["name"], fungible["pause_status"], fungible["supply_type"]) == (
        "Token name",
        "NOT_APPLICABLE",
        "INFINITE",
    )
    assert fungible["supply_key"] is None
    assert str(fungible["timestamp_range"].lower) == "5"
    assert [(fee["entity_id"], fee["fixed_fees"], fee["timestamp_range"].lower) for fee in fees] == [
        (1, None, 5),
        (2, None, 6),
    ]


def test_token_raw_bytea_keys(pg_url: str) -> None:
    setup = {
        "tokens": [
            {
                "token_id": "0.0.3",
                "supply_key": "2\\000",
                "fee_schedule_key": [1, 2, 3],
                "kyc_key": "\\x0102",
                "pause_key": "4a5a",
                "metadata": None,
            }
        ]
    }
    token = one(pg_url, setup, "select * from token")
    assert token["supply_key"] == b"2\x00"
    assert token["fee_schedule_key"] == b'{"1","2","3"}'
    assert token["fee_schedule_key"].hex() == "7b2231222c2232222c2233227d"
    assert token["kyc_key"] == b"\x01\x02"
    assert token["pause_key"] == b"4a5a"
    assert token["metadata"] is None


def test_inline_custom_fees(pg_url: str) -> None:
    setup = {
        "tokens": [
            {
                "token_id": "0.0.1135",
                "created_timestamp": 10,
                "custom_fees": [
                    {
                        "entity_id": "0.0.1135",
                        "fixed_fees": [{"amount": 5, "denominating_token_id": "0.0.7"}],
                        "royalty_fees": [{"numerator": 1, "fallback_fee": {"denominating_token_id": 9}}],
                        "timestamp_range": "[1,10)",
                    },
                    {"entity_id": "0.0.1135", "fractional_fees": [], "timestamp_range": "[10,)"},
                ],
            }
        ]
    }
    history, current = load(pg_url, setup, "select * from custom_fee_history", "select * from custom_fee")
    assert json.loads(history[0]["fixed_fees"]) == [
        {"amount": 5, "denominating_token_id": 7, "all_collectors_are_exempt": False, "collector_account_id": 300}
    ]
    royalty = json.loads(history[0]["royalty_fees"])
    assert royalty[0]["fallback_fee"] == {"denominating_token_id": 9}
    assert history[0]["fractional_fees"] is None
    assert json.loads(current[0]["fractional_fees"]) == []
    assert current[0]["fixed_fees"] is None


def test_nft_defaults_and_metadata(pg_url: str) -> None:
    setup = {
        "nfts": [
            {"token_id": "0.0.100", "serial_number": 1, "metadata": "m1"},
            {"token_id": "0.0.100", "serial_number": 2},
            {"token_id": "0.0.100", "serial_number": 3, "account_id": None, "spender": "0.0.8"},
        ]
    }
    first, second, third = load(pg_url, setup, "select * from nft order by serial_number")[0]
    assert first["metadata"] == b"m1"
    assert first["metadata"].hex() == "6d31"
    assert base64.b64encode(first["metadata"]) == b"bTE="
    assert second["metadata"] == b""
    assert (first["account_id"], second["account_id"], third["account_id"]) == (0, 0, None)
    assert third["spender"] == 8
    assert first["deleted"] is False
    assert (first["timestamp_range"].lower, first["timestamp_range"].upper) == (0, None)


# Entities ----------------------------------------------------------------------------------------------------


def test_entity_defaults_per_key(pg_url: str) -> None:
    setup = {
        "accounts": [{"num": 6}],
        "entities": [{"num": 5}, {"num": 9, "type": "TOKEN", "realm": 1}],
        "contracts": [{"num": 7}],
    }
    entities, contracts = load(
        pg_url, setup, "select * from entity order by num", "select * from contract order by id"
    )
    plain, account, contract, token = entities
    assert (plain["memo"], plain["type"], plain["public_key"]) == ("entity memo", "ACCOUNT", None)
    assert plain["max_automatic_token_associations"] is None
    assert plain["receiver_sig_required"] is False
    assert plain["ethereum_nonce"] is None
    assert (plain["staked_node_id"], plain["stake_period_start"], plain["decline_reward"]) == (-1, -1, False)
    assert (account["public_key"], account["max_automatic_token_associations"]) == (DEFAULT_PUBLIC_KEY, 0)
    assert account["memo"] == "entity memo"
    assert (contract["memo"], contract["type"], contract["receiver_sig_required"]) == (
        "contract memo",
        "CONTRACT",
        None,
    )
    assert contract["max_automatic_token_associations"] == 0
    assert token["id"] == (1 << 38) + 9
    assert (token["realm"], token["num"]) == (1, 9)
    assert contracts == [{"id": 7, "file_id": None, "initcode": None, "runtime_bytecode": None}]


def test_entity_bytes_and_alias(pg_url: str) -> None:
    setup = {
        "accounts": [
            {
                "num": 1,
                "alias": ALIAS,
                "key": "1220bf",
                "evm_address": "ac384c53f03855fa1b3616052f8ba32c6c2a2fec",
                "delegation_address": "0xdeadbeef",
            },
            {"num": 2, "alias": ALIAS.lower().replace("o", "0"), "key": [1, 2, 300]},
        ]
    }
    first, second = load(pg_url, setup, "select * from entity order by num")[0]
    expected = base64.b32decode(ALIAS + "=" * (-len(ALIAS) % 8))
    assert first["alias"] == expected
    assert second["alias"] == expected
    assert first["key"] == bytes.fromhex("1220bf")
    assert second["key"] == bytes([1, 2, 44])
    assert first["evm_address"] == bytes.fromhex("ac384c53f03855fa1b3616052f8ba32c6c2a2fec")
    assert first["delegation_address"] == bytes.fromhex("deadbeef")


def test_history_routing(pg_url: str) -> None:
    setup = {
        "entities": [
            {"num": 1, "timestamp_range": "[1,)"},
            {"num": 1, "timestamp_range": "[0,1)"},
            {"num": 2, "timestamp_range": "[1, 3]"},
        ],
        "nfts": [{"token_id": 100, "serial_number": 1, "timestamp_range": "[1, 5]"}],
        "tokens": [{"token_id": 300, "created_timestamp": 2, "timestamp_range": "[2,4)", "custom_fees": []}],
        "tokenaccounts": [{"account_id": 5, "token_id": 300, "created_timestamp": 3}],
    }
    current, history, nft_history, token_history, token_account = load(
        pg_url,
        setup,
        "select id from entity",
        "select id, timestamp_range from entity_history order by id",
        "select timestamp_range from nft_history",
        "select token_id from token_history",
        "select timestamp_range from token_account",
    )
    assert current == [{"id": 1}]
    assert [(row["id"], str(row["timestamp_range"].upper)) for row in history] == [(1, "1"), (2, "4")]
    assert (nft_history[0]["timestamp_range"].lower, nft_history[0]["timestamp_range"].upper) == (1, 6)
    assert token_history == [{"token_id": 300}]
    assert token_account[0]["timestamp_range"].lower == 3


def test_allowances_rewards_and_stakes(pg_url: str) -> None:
    setup = {
        "cryptoAllowances": [{"amount": 5}],
        "tokenAllowances": [{"owner": "0.0.9"}],
        "stakingRewardTransfers": [{"consensus_timestamp": 11, "account_id": "0.0.8", "payer_account_id": None}],
        "entityStakes": [{"id": "0.0.5", "end_stake_period": 19000}, {"id": 6, "timestamp_range": "[7,)"}],
    }
    crypto, token, reward, stakes = load(
        pg_url,
        setup,
        "select * from crypto_allowance",
        "select * from token_allowance",
        "select * from staking_reward_transfer",
        "select id, timestamp_range from entity_stake order by id",
    )
    assert (crypto[0]["owner"], crypto[0]["spender"], crypto[0]["payer_account_id"]) == (1000, 2000, 101)
    assert (token[0]["owner"], token[0]["token_id"], token[0]["payer_account_id"]) == (9, 3000, 1000)
    assert (reward[0]["account_id"], reward[0]["payer_account_id"], reward[0]["amount"]) == (8, 950, 100)
    assert stakes[0]["timestamp_range"].lower == 19001 * 86_400 * 10**9 + 1
    assert stakes[0]["timestamp_range"].upper is None
    assert stakes[1]["timestamp_range"].lower == 7


def test_balances_and_snapshots(pg_url: str) -> None:
    setup = {
        "balances": [
            {"timestamp": "1000", "id": 2, "balance": 10, "tokens": [{"token_num": 90, "balance": 3}]},
            {"timestamp": 1000, "id": "0.0.7", "realm_num": 0},
        ]
    }
    balances, token_balances = load(
        pg_url,
        setup,
        "select account_id, balance, consensus_timestamp from account_balance order by account_id",
        "select * from token_balance",
    )
    assert balances == [
        {"account_id": 2, "balance": 10, "consensus_timestamp": 1000},
        {"account_id": 7, "balance": 0, "consensus_timestamp": 1000},
    ]
    assert token_balances == [{"consensus_timestamp": 1000, "account_id": 2, "balance": 3, "token_id": 90}]


# Transactions and blocks -------------------------------------------------------------------------------------


def test_transaction_expansion_with_fee_transfers(pg_url: str) -> None:
    setup = {
        "transactions": [
            {
                "consensus_timestamp": "1234567890000000004",
                "payerAccountId": "0.0.8",
                "nodeAccountId": "0.0.4",
                "payer_account_id": "0.0.999",
                "valid_start_ns": 1,
                "name": "CRYPTOTRANSFER",
            },
            {
                "consensus_timestamp": 2 * 10**18,
                "payerAccountId": "0.0.9",
                "valid_start_timestamp": "15",
                "type": "37",
            },
            {"consensus_timestamp": 3 * 10**18, "payerAccountId": "0.0.9", "charged_tx_fee": 0},
        ]
    }
    transactions, hashes, transfers = load(
        pg_url,
        setup,
        "select * from transaction order by consensus_timestamp",
        "select * from transaction_hash order by consensus_timestamp",
        "select consensus_timestamp, entity_id, amount, payer_account_id, is_approval from crypto_transfer",
    )
    first, second, _ = transactions
    assert first["payer_account_id"] == 8
    assert first["node_account_id"] == 4
    assert first["valid_start_ns"] == 1234567890000000003
    assert (first["type"], first["result"], first["charged_tx_fee"], first["max_fee"]) == (14, 22, 7, 33)
    assert (first["valid_duration_seconds"], first["nonce"], first["index"], first["scheduled"]) == (
        11,
        0,
        1,
        False,
    )
    assert first["transaction_bytes"] == b"bytes"
    assert first["transaction_hash"] == bytes(range(1, 49))
    assert first["max_custom_fees"] == []
    assert (first["high_volume"], first["high_volume_pricing_multiplier"]) == (False, 1)
    assert (second["valid_start_ns"], second["type"], second["node_account_id"]) == (15, 37, None)
    assert hashes[0]["hash"] == bytes(range(1, 33))
    assert hashes[0]["hash_suffix"] == bytes(range(33, 49))
    assert hashes[0]["payer_account_id"] == 8
    fee_legs = [
        (row["entity_id"], row["amount"], row["payer_account_id"], row["is_approval"]) for row in transfers
    ]
    assert fee_legs == [
        (4, 2, 8, False),
        (98, 1, 8, False),
        (8, -3, 8, False),
        (3, 2, 9, False),
        (98, 1, 9, False),
        (9, -3, 9, False),
    ]


def test_transaction_transfers_and_nft_transfer(pg_url: str) -> None:
    setup = {
        "transactions": [
            {
                "consensus_timestamp": 5,
                "payerAccountId": "0.0.8",
                "transfers": [
                    {"account": 8, "amount": -4},
                    {"account": "0.0.9", "amount": 4, "is_approval": True},
                ],
                "nft_transfer": [{"receiver_account_id": "0.0.1001", "sender_account_id": None, "token_id": 1500}],
                "token_transfer_list": [{"token_id": "0.0.90", "account": "0.0.8", "amount": 1}],
                "max_custom_fees": [
                    {
                        "accountId": {"accountNum": 1000},
                        "fees": [{"amount": 100, "denominatingTokenId": {"tokenNum": 2000}}],
                    }
                ],
                "inner_transactions": ["0.0.8", 123],
                "batch_key": "0a0bzz",
            }
        ]
    }
    transactions, transfers, token_transfers = load(
        pg_url,
        setup,
        "select nft_transfer, max_custom_fees, inner_transactions, batch_key from transaction",
        "select entity_id, amount, is_approval from crypto_transfer",
        "select token_id, account_id, amount, payer_account_id, is_approval from token_transfer",
    )
    assert transactions[0]["max_custom_fees"] == [bytes.fromhex("0a0318e80712070864120318d00f")]
    assert (transactions[0]["inner_transactions"], transactions[0]["batch_key"]) == ([8, 123], b"\n\x0b")
    assert json.loads(transactions[0]["nft_transfer"]) == [
        {"receiver_account_id": 1001, "sender_account_id": None, "token_id": 1500}
    ]
    assert transfers == [
        {"entity_id": 8, "amount": -4, "is_approval": None},
        {"entity_id": 9, "amount": 4, "is_approval": True},
    ]
    assert token_transfers == [
        {"token_id": 90, "account_id": 8, "amount": 1, "payer_account_id": 8, "is_approval": None}
    ]


def test_cryptotransfers_fill_in(pg_url: str) -> None:
    setup = {
        "cryptotransfers": [
            {
                "consensus_timestamp": "100",
                "payerAccountId": "0.0.8",
                "recipientAccountId": "0.0.9",
                "amount": 10,
                "nodeAccountId": "0.0.3",
                "treasuryAccountId": "0.0.98",
            },
            {
                "consensus_timestamp": 200,
                "senderAccountId": "0.0.800",
                "nodeAccountId": "0.0.3",
                "treasuryAccountId": 98,
            },
        ]
    }
    transactions, transfers = load(
        pg_url,
        setup,
        "select consensus_timestamp, payer_account_id from transaction order by consensus_timestamp",
        "select consensus_timestamp, entity_id, amount, is_approval from crypto_transfer",
    )
    assert transactions == [
        {"consensus_timestamp": 100, "payer_account_id": 8},
        {"consensus_timestamp": 200, "payer_account_id": 800},
    ]
    assert [(row["consensus_timestamp"], row["entity_id"], row["amount"]) for row in transfers] == [
        (100, 8, -11),
        (100, 9, 10),
        (100, 98, 1),
        (200, 800, -3),
        (200, 3, 2),
        (200, 98, 1),
    ]
    assert {row["is_approval"] for row in transfers} == {False}


def test_record_file_size_from_bytes(pg_url: str) -> None:
    setup = {
        "recordFiles": [
            {"consensus_end": 1, "index": 1},
            {"consensus_end": 2, "index": 2, "bytes": [1, 2, 3, 4], "size": 99},
            {"consensus_end": 3, "index": 3, "bytes": None, "size": 9, "logs_bloom": "0x0102"},
        ]
    }
    rows = load(pg_url, setup, "select * from record_file order by consensus_end")[0]
    assert [(row["bytes"], row["size"]) for row in rows] == [
        (bytes.fromhex("010102020303"), 6),
        (bytes([1, 2, 3, 4]), 4),
        (None, 9),
    ]
    assert rows[0]["logs_bloom"] == b""
    assert rows[2]["logs_bloom"] == b"\x01\x02"
    assert rows[0]["hash"].startswith("ed55d98d") and len(rows[0]["hash"]) == 96
    assert rows[0]["consensus_start"] == 1628751572000852000
    assert (rows[0]["hapi_version_minor"], rows[0]["version"], rows[0]["count"]) == (11, 5, 1200)


def test_network_tables(pg_url: str) -> None:
    setup = {
        "addressbooks": [{"start_consensus_timestamp": 1}],
        "addressbookentries": [{"consensus_timestamp": 1, "node_cert_hash": "0a0b"}],
        "addressbookserviceendpoints": [{"consensus_timestamp": 1}],
        "nodes": [{"node_id": 1}],
        "nodestakes": [{"node_id": 1, "_description": "ignored"}],
        "networkstakes": [{}],
        "filedata": [
            {"consensus_timestamp": 1, "entity_id": 112, "file_data": "0a10"},
            {"consensus_timestamp": 2, "entity_id": "0.0.112", "file_data": "0a10"},
        ],
    }
    books, entries, endpoints, nodes, stakes, network, files = load(
        pg_url,
        setup,
        "select * from address_book",
        "select * from address_book_entry",
        "select * from address_book_service_endpoint",
        "select * from node",
        "select * from node_stake",
        "select * from network_stake",
        "select file_data, entity_id, transaction_type from file_data order by consensus_timestamp",
    )
    assert books[0]["file_data"] == b"\\x97c1fc0a6ed5551bc831571325e9bdb365d06803100dc20648640ba24ce69750"
    assert (books[0]["file_id"], books[0]["node_count"]) == (102, 20)
    assert (entries[0]["node_cert_hash"], entries[0]["memo"], entries[0]["node_account_id"]) == (
        b"\n\x0b",
        "0.0.3",
        3,
    )
    assert (endpoints[0]["ip_address_v4"], endpoints[0]["port"]) == ("127.0.0.1", 50211)
    assert nodes[0]["admin_key"] == base64.b64decode("OiG1sc5qQaLDwUfqfBg8urypfFGcwlesArZzBDsEgvyr0MQ=")
    assert json.loads(nodes[0]["grpc_proxy_endpoint"]) == {
        "domain_name": "localhost",
        "ip_address_v4": "",
        "port": 80,
    }
    assert (stakes[0]["staking_period"], stakes[0]["max_stake"]) == (86_399_999_999_999, 2000)
    assert network[0]["staking_reward_rate"] == 100000000000
    assert files == [
        {"file_data": b"\n\x10", "entity_id": 112, "transaction_type": 17},
        {"file_data": b"0a10", "entity_id": 112, "transaction_type": 17},
    ]


# Errors and reset --------------------------------------------------------------------------------------------


def test_bad_row_names_spec_key_and_index(pg_url: str) -> None:
    setup = {"accounts": [{"num": 1}], "tokens": [{"token_id": "0.0.1"}, {"token_id": "not-an-id"}]}

    async def run() -> int:
        conn = await asyncpg.connect(pg_url)
        try:
            await reset(conn)
            with pytest.raises(LoaderError, match=r"^tokens/name\.json: tokens\[1\]: .*not-an-id"):
                await load_setup(conn, setup, spec="tokens/name.json")
            count: int = await conn.fetchval("select count(*) from entity")
            return count
        finally:
            await conn.close()

    assert asyncio.run(run()) == 0  # the failed load left nothing behind


def test_database_error_names_row(pg_url: str) -> None:
    setup = {"nfts": [{"token_id": 1, "serial_number": 1}, {"token_id": 1, "serial_number": 1}]}
    with pytest.raises(LoaderError, match=r"^x\.json: nfts\[1\]: UniqueViolationError"):
        load(pg_url, setup, spec="x.json")


def test_unknown_and_unsupported_keys(pg_url: str) -> None:
    with pytest.raises(LoaderError, match=r"^x\.json: bogus: unknown setup key"):
        load(pg_url, {"bogus": []}, spec="x.json")
    with pytest.raises(LoaderError, match=r"^x\.json: contractlogs\[0\]: .*evmAddress"):
        load(pg_url, {"contractlogs": [{"evmAddress": "0x01"}]}, spec="x.json")  # every log key is a column
    with pytest.raises(LoaderError, match=r"^x\.json: accounts\[0\]: .*base32"):
        load(pg_url, {"accounts": [{"alias": "A"}]}, spec="x.json")
    load(pg_url, {"config": {"response": {}}, "features": {"fakeTime": 1}, "sql": {}, "contractlogs": []})


def test_reset_keeps_migration_history(pg_url: str) -> None:
    counts = load(
        pg_url,
        {"accounts": [{"num": 1}]},
        "select count(*) as n from entity",
        "select count(*) as n from ledgermirror_schema_history",
    )
    assert counts[0] == [{"n": 1}]
    assert counts[1][0]["n"] > 0

    async def after_reset() -> int:
        conn = await asyncpg.connect(pg_url)
        try:
            await reset(conn)
            count: int = await conn.fetchval("select count(*) from entity")
            return count
        finally:
            await conn.close()

    assert asyncio.run(after_reset()) == 0


# Pure conversions --------------------------------------------------------------------------------------------


def test_id_parsers() -> None:
    ctx = Context()
    assert spec_id(None, ctx) is None
    assert spec_id(1001, ctx) == spec_id("1001", ctx) == spec_id("0.0.1001", ctx) == 1001
    assert spec_id("0.0.00000000000000000000000000000000000003e9", ctx) == 1001
    assert spec_id("ac384c53f03855fa1b3616052f8ba32c6c2a2fec", ctx) is None
    assert spec_id("7.25301", ctx) == 1924145373909
    assert encoded_id(274877906949, ctx) == 274877906949
    assert encoded_id("1023.1.18", ctx) == -18014123631575022
    assert encoded_id(None, ctx, nullable=True) is None
    shifted = Context(shard=113, realm=127)
    assert spec_id(1001, shifted) == 2035661941065647081
    assert encoded_id(1001, shifted) == 1001
    for bad in ("abc", "0.0.-1", "1.2.3.4"):
        with pytest.raises(ValueError):
            spec_id(bad, ctx)
    with pytest.raises(ValueError):
        string_id(None, ctx)


def test_byte_conversions() -> None:
    assert value_to_buffer("0x0a1") == b"\x00\xa1"
    assert value_to_buffer("") == b""
    assert value_to_buffer("bTE=") == b"m1"
    assert value_to_buffer(["0x0102"]) == b"\x01\x02"
    assert value_to_buffer([1, 2, 256]) == b"\x01\x02\x00"
    assert node_base64("a-b_c=d") == bytes.fromhex("6be6ff")
    assert pg_text([1, 'a"b', None, [2]]) == '{"1","a\\"b",NULL,{"2"}}'
    assert pg_text(b"\x01") == "\\x01"
    assert pg_text(True) == "true"
