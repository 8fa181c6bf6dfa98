"""The writer (db/write.py) on a real PostgreSQL: binary COPY of every column type, upsert with the reference's
merge rules, history routing, idempotence, and batches of more than one chunk."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import asyncpg
import pytest
from asyncpg import Range
from tests.support import Ledger, entity_analyzed_with_few_live_rows, generic_plan, with_connection

from ledgermirror.db import citus, schema, write


def fetch(url: str, sql: str) -> list[dict[str, Any]]:
    async def action(conn: asyncpg.Connection) -> list[dict[str, Any]]:
        return [dict(row) for row in await conn.fetch(sql)]

    return with_connection(url, action)


def entity(id_: int, lower: int, **values: Any) -> dict[str, Any]:
    return {"id": id_, "num": id_, "realm": 0, "shard": 0, "timestamp_range": Range(lower, None), **values}


# COPY --------------------------------------------------------------------------------------------------------


def test_copy_every_column_type(ledger: Ledger) -> None:
    """bigint, integer, smallint, boolean, text, varchar, bytea, enums, domains, int8range, jsonb and arrays."""
    transaction = {
        "consensus_timestamp": 10, "type": 14, "result": 22, "payer_account_id": 1001, "valid_start_ns": 9,
        "memo": b"\x00memo", "scheduled": True, "nonce": 3, "errata": "INSERT", "index": 7,
        "nft_transfer": [{"serial_number": 1, "token_id": 5}], "itemized_transfer": '[{"amount": 1}]',
        "max_custom_fees": [b"\x01", b"\x02\x03"], "inner_transactions": [1001, 9], "high_volume": True,
    }  # fmt: skip
    node = {
        "node_id": 3,
        "timestamp_range": (5, None),
        "admin_key": b"\x12\x20",
        "associated_registered_nodes": [],
    }
    token = {
        "token_id": 77, "created_timestamp": 1, "decimals": 2, "initial_supply": 3, "name": "Ünïcode name",
        "symbol": "U", "treasury_account_id": 98, "timestamp_range": 1, "freeze_status": 0, "kyc_status": 0,
        "supply_type": "FINITE", "type": "NON_FUNGIBLE_UNIQUE", "pause_status": "PAUSED",
    }  # fmt: skip

    async def action(conn: asyncpg.Connection) -> dict[str, int]:
        counts: dict[str, int] = {}
        for name, row in (("transaction", transaction), ("node", node), ("token", token)):
            counts.update(await write.copy_rows(conn, name, [row]))
        counts.update(await write.copy_records(conn, "entity", ("id", "num", "realm", "shard", "type",
                                                                "timestamp_range", "memo"),
                                               [(5, 5, 0, 0, "CONTRACT", (2, None), "m")]))  # fmt: skip
        return counts

    assert with_connection(ledger.url, action) == {"transaction": 1, "node": 1, "token": 1, "entity": 1}
    (row,) = fetch(ledger.url, "select *, nft_transfer::text as nft_text from transaction")
    assert row["memo"] == b"\x00memo" and row["errata"] == "INSERT" and row["scheduled"] is True
    assert row["nft_text"] == '[{"token_id": 5, "serial_number": 1}]'
    assert row["itemized_transfer"] == '[{"amount": 1}]'
    assert row["max_custom_fees"] == [b"\x01", b"\x02\x03"] and row["inner_transactions"] == [1001, 9]
    assert (row["initial_balance"], row["charged_tx_fee"]) == (0, None)  # a default and a NULL
    (row,) = fetch(ledger.url, "select * from node")
    assert row["timestamp_range"] == Range(5, None) and row["associated_registered_nodes"] == []
    assert row["deleted"] is False and row["grpc_proxy_endpoint"] is None
    (row,) = fetch(ledger.url, "select * from token")
    assert (row["name"], row["supply_type"], row["type"]) == ("Ünïcode name", "FINITE", "NON_FUNGIBLE_UNIQUE")
    assert row["max_supply"] == (1 << 63) - 1 and row["timestamp_range"] == Range(1, None)
    (row,) = fetch(ledger.url, "select * from entity")
    assert (row["type"], row["memo"], row["staked_node_id"], row["decline_reward"]) == ("CONTRACT", "m", -1, False)
    assert row["timestamp_range"] == Range(2, None)


def test_copy_routes_closed_ranges_to_history(ledger: Ledger) -> None:
    rows = [entity(1, 5, memo="now"), entity(1, 1, memo="before", timestamp_range=(1, 5)), entity(2, 3)]

    counts = with_connection(ledger.url, lambda conn: write.copy_rows(conn, "entity", rows))

    assert counts == {"entity": 2, "entity_history": 1}
    (old,) = fetch(ledger.url, "select * from entity_history")
    assert (old["memo"], old["timestamp_range"]) == ("before", Range(1, 5))


def test_copy_in_chunks(ledger: Ledger) -> None:
    rows = ({"entity_id": n, "consensus_timestamp": n, "amount": -n, "payer_account_id": 2} for n in range(2_503))

    counts = with_connection(
        ledger.url, lambda conn: write.copy_rows(conn, "crypto_transfer", rows, chunk_rows=500)
    )

    assert counts == {"crypto_transfer": 2_503}
    (row,) = fetch(ledger.url, "select count(*), sum(amount) from crypto_transfer")
    assert (row["count"], row["sum"]) == (2_503, -sum(range(2_503)))


def test_rows_are_checked_against_the_model() -> None:
    with pytest.raises(schema.SchemaError, match="table nope does not exist"):
        write.encode("nope", [{"a": 1}])
    with pytest.raises(schema.SchemaError, match="table entity has no column colour"):
        write.encode("entity", [{**entity(1, 1), "colour": "red"}])
    with pytest.raises(write.WriteError, match=r"rows need .*timestamp_range"):
        write.encode("entity", [{"id": 1, "num": 1, "realm": 0, "shard": 0}])
    with pytest.raises(write.WriteError, match="3 values for 2 columns"):
        write.encode_records("contract", ("id", "file_id"), [(1, 2, 3)])
    with pytest.raises(write.WriteError, match="no key to upsert on"):
        asyncio.run(write.upsert(None, "crypto_transfer", []))  # type: ignore[arg-type]


def test_values_are_typed_from_the_model() -> None:
    (chunk,) = write.encode("custom_fee", [{"entity_id": 1, "timestamp_range": (3, 9), "fixed_fees": [{"a": 1}]}],
                            route=False)  # fmt: skip
    assert chunk.records == [(1, Range(3, 9), '[{"a":1}]')]
    assert write.as_range(4) == Range(4, None)
    with pytest.raises(write.WriteError):
        write.as_range("[1,2)")


def test_records_of_lists_and_tuples_typed_from_the_model() -> None:
    """Value lists are taken as tuples; only the records holding a value to convert (JSON here) are remade."""
    columns = schema.table("transaction").column_names
    make = schema.record_maker(schema.table("transaction"))
    plain = make(consensus_timestamp=1, type=14, result=22, payer_account_id=2, valid_start_ns=0)
    listed = list(make(consensus_timestamp=2, type=14, result=22, payer_account_id=2, valid_start_ns=0))
    listed[columns.index("nft_transfer")] = [{"serial_number": 1}]
    (chunk,) = write.encode_records("transaction", columns, [plain, listed])
    assert chunk.records[0] is plain
    assert chunk.records[1] == (*listed[:19], '[{"serial_number":1}]', *listed[20:])
    assert columns[19] == "nft_transfer"


def test_record_maker_takes_the_columns_by_name_in_model_order() -> None:
    model = schema.table("crypto_transfer")
    make = schema.record_maker(model)
    assert make(payer_account_id=4, amount=-3, consensus_timestamp=2, entity_id=1, is_approval=True) == (
        1, 2, -3, 4, True, None,
    )  # fmt: skip
    assert model.column_names == ("entity_id", "consensus_timestamp", "amount", "payer_account_id", "is_approval",
                                  "errata")  # fmt: skip
    defaults = schema.record_maker(schema.table("transaction"))(
        consensus_timestamp=1, type=14, result=22, payer_account_id=2, valid_start_ns=0
    )
    by_name = dict(zip(schema.table("transaction").column_names, defaults, strict=True))
    assert (by_name["nonce"], by_name["scheduled"], by_name["initial_balance"], by_name["memo"]) == (
        0,
        False,
        0,
        None,
    )
    with pytest.raises(TypeError, match="colour"):
        make(entity_id=1, consensus_timestamp=2, amount=3, payer_account_id=4, colour="red")
    with pytest.raises(TypeError, match="amount"):
        make(entity_id=1, consensus_timestamp=2, payer_account_id=4)
    with pytest.raises(TypeError):
        make(1, 2, 3, 4)  # keywords only: the order is the model's, never the caller's


def test_copy_records_in_chunks_of_a_list(ledger: Ledger) -> None:
    columns = schema.table("crypto_transfer").column_names
    records = [(n, n, -n, 2, None, None) for n in range(1_203)]

    counts = with_connection(
        ledger.url, lambda conn: write.copy_records(conn, "crypto_transfer", columns, records, chunk_rows=500)
    )

    assert counts == {"crypto_transfer": 1_203}
    (row,) = fetch(ledger.url, "select count(*), sum(amount) from crypto_transfer")
    assert (row["count"], row["sum"]) == (1_203, -sum(range(1_203)))


# Upsert ------------------------------------------------------------------------------------------------------


def test_partial_update_leaves_other_columns_unchanged(ledger: Ledger) -> None:
    created = entity(7, 100, memo="first", key=b"\x01", created_timestamp=100, type="ACCOUNT", balance=5)

    async def action(conn: asyncpg.Connection) -> None:
        await write.upsert(conn, "entity", [created])
        await write.upsert(conn, "entity", [{"id": 7, "timestamp_range": Range(200, None), "memo": "second",
                                             "key": None, "created_timestamp": 999}])  # fmt: skip

    with_connection(ledger.url, action)
    (row,) = fetch(ledger.url, "select * from entity")
    assert row["memo"] == "second"  # given
    assert row["key"] == b"\x01" and row["balance"] == 5 and row["type"] == "ACCOUNT"  # NULL or omitted: kept
    assert row["created_timestamp"] == 100  # never changed once set
    assert row["timestamp_range"] == Range(200, None)


def test_history_routing(ledger: Ledger) -> None:
    async def action(conn: asyncpg.Connection) -> None:
        await write.upsert(conn, "entity", [entity(7, 100, memo="first", created_timestamp=100)])
        await write.upsert(conn, "entity", [{"id": 7, "timestamp_range": Range(200, None), "deleted": True}])
        await write.upsert(conn, "entity", [{"id": 7, "timestamp_range": Range(300, None), "memo": "third"}])

    with_connection(ledger.url, action)
    (current,) = fetch(ledger.url, "select * from entity")
    old = fetch(ledger.url, "select * from entity_history order by lower(timestamp_range)")
    assert (current["memo"], current["deleted"], current["timestamp_range"]) == ("third", True, Range(300, None))
    assert [(row["memo"], row["deleted"], row["timestamp_range"]) for row in old] == [
        ("first", None, Range(100, 200)),
        ("first", True, Range(200, 300)),
    ]
    assert {row["created_timestamp"] for row in old} == {100}


def test_several_versions_of_one_key_in_one_call(ledger: Ledger) -> None:
    rows: list[dict[str, Any]] = [
        {
            "owner": 1,
            "spender": 2,
            "amount_granted": 10,
            "amount": 10,
            "payer_account_id": 1,
            "timestamp_range": 5,
        },
        {"owner": 1, "spender": 2, "amount_granted": 20, "payer_account_id": 1, "timestamp_range": 8},
        {"owner": 1, "spender": 2, "amount": 7, "payer_account_id": 1, "amount_granted": 20, "timestamp_range": 8},
        {"owner": 3, "spender": 2, "amount_granted": 1, "payer_account_id": 3, "timestamp_range": (1, 4)},
    ]

    taken = with_connection(ledger.url, lambda conn: write.upsert(conn, "crypto_allowance", rows))

    assert taken == 4
    (current,) = fetch(ledger.url, "select * from crypto_allowance")
    assert (current["amount_granted"], current["amount"], current["timestamp_range"]) == (20, 7, Range(8, None))
    old = fetch(ledger.url, "select * from crypto_allowance_history order by owner")
    assert [(r["owner"], r["amount_granted"], r["amount"], r["timestamp_range"]) for r in old] == [
        (1, 10, 10, Range(5, 8)),
        (3, 1, 0, Range(1, 4)),  # a closed version goes straight to history
    ]


def test_an_upsert_planned_without_the_database_is_written_later(ledger: Ledger) -> None:
    """``plan_upsert`` needs no connection (the overlapped import runs it in another thread): the rows checked
    (a row without its key is refused there), typed, and split into rounds of statements; ``write_merge`` then
    writes what ``upsert`` would."""
    with pytest.raises(write.WriteError, match="needs its key"):
        write.plan_upsert("entity", [{"memo": "no id", "timestamp_range": 1}])
    rows = [
        entity(7, 10, memo="first"),
        {"id": 7, "memo": "second", "timestamp_range": 20},
        {"id": 7, "balance": 5},
    ]
    merge = write.plan_upsert("entity", rows)
    assert merge.taken == 3
    # one key changed three times: three rounds of one statement each (two versions, then a running value)
    assert [len(statements) for statements in merge.rounds] == [1, 1, 1]
    (columns, arrays), *_ = merge.rounds[0]
    assert len(arrays) == len(columns) + 1 and arrays[columns.index("memo")] == ["first"]  # an array per column

    assert with_connection(ledger.url, lambda conn: write.write_merge(conn, merge)) == 3
    assert fetch(ledger.url, "select id, memo, balance, timestamp_range from entity") == [
        {"id": 7, "memo": "second", "balance": 5, "timestamp_range": Range(20, None)}
    ]
    assert fetch(ledger.url, "select memo, timestamp_range from entity_history") == [
        {"memo": "first", "timestamp_range": Range(10, 20)}
    ]


def test_upsert_is_idempotent(ledger: Ledger) -> None:
    rows = [entity(n, 100 + n, memo=f"v{n}") for n in range(3)]
    update = [{"id": 1, "timestamp_range": Range(500, None), "memo": "changed"}]

    async def action(conn: asyncpg.Connection) -> None:
        for _ in range(2):
            await write.upsert(conn, "entity", rows[:1] + rows[1:])
            await write.upsert(conn, "entity", update)

    with_connection(ledger.url, action)
    assert [row["memo"] for row in fetch(ledger.url, "select memo from entity order by id")] == [
        "v0",
        "changed",
        "v2",
    ]
    assert fetch(ledger.url, "select id, timestamp_range from entity_history") == [
        {"id": 1, "timestamp_range": Range(101, 500)}
    ]


def test_merge_rules_of_the_model(ledger: Ledger) -> None:
    """custom_fee lists and NFT spenders are replaced, not coalesced; a row without a range is a partial
    update that never creates a row; an update older than the current row is ignored."""
    nft = {"token_id": 5, "serial_number": 1, "account_id": 9, "spender": 4, "timestamp_range": 10}

    async def action(conn: asyncpg.Connection) -> None:
        await write.upsert(conn, "custom_fee", [{"entity_id": 5, "timestamp_range": 1, "fixed_fees": [{"a": 1}]}])
        await write.upsert(conn, "custom_fee", [{"entity_id": 5, "timestamp_range": 2, "royalty_fees": []}])
        await write.upsert(conn, "nft", [nft])
        await write.upsert(
            conn, "nft", [{"token_id": 5, "serial_number": 1, "account_id": 8, "timestamp_range": 20}]
        )
        await write.upsert(conn, "entity", [entity(1, 50, balance=10)])
        await write.upsert(conn, "entity", [{"id": 1, "balance": 11}, {"id": 2, "balance": 3}])
        await write.upsert(conn, "entity", [{"id": 1, "timestamp_range": 40, "memo": "stale"}])

    with_connection(ledger.url, action)
    (fee,) = fetch(ledger.url, "select * from custom_fee")
    assert (fee["fixed_fees"], fee["royalty_fees"]) == (None, "[]")
    (row,) = fetch(ledger.url, "select * from nft")
    assert (row["account_id"], row["spender"], row["timestamp_range"]) == (8, None, Range(20, None))
    (old,) = fetch(ledger.url, "select * from nft_history")
    assert (old["account_id"], old["spender"], old["timestamp_range"]) == (9, 4, Range(10, 20))
    rows = fetch(ledger.url, "select id, balance, memo, timestamp_range from entity")
    assert rows == [{"id": 1, "balance": 11, "memo": "", "timestamp_range": Range(50, None)}]
    assert fetch(ledger.url, "select count(*) from entity_history") == [{"count": 0}]


def test_a_table_inserts_only_rows_that_give_its_inserted_with_column(ledger: Ledger) -> None:
    """``token`` (the reference's ``skipPartialUpdate``): an update of a token never created inserts nothing,
    alone or beside a creation in one statement; once created, updates merge as usual."""
    created = {
        "token_id": 7,
        "created_timestamp": 5,
        "decimals": 2,
        "initial_supply": 0,
        "name": "Seven",
        "symbol": "S",
        "treasury_account_id": 2,
        "freeze_status": 0,
        "kyc_status": 0,
        "timestamp_range": 5,
    }

    async def action(conn: asyncpg.Connection) -> None:
        await write.upsert(conn, "token", [{"token_id": 6, "name": "Ghost", "timestamp_range": 4}])
        await write.upsert(conn, "token", [{"token_id": 6, "name": "Ghost", "timestamp_range": 6}, created])
        await write.upsert(conn, "token", [{"token_id": 7, "name": "Renamed", "timestamp_range": 8}])

    with_connection(ledger.url, action)
    rows = fetch(ledger.url, "select token_id, name, created_timestamp, timestamp_range from token")
    assert rows == [{"token_id": 7, "name": "Renamed", "created_timestamp": 5, "timestamp_range": Range(8, None)}]
    history = fetch(ledger.url, "select token_id, name, timestamp_range from token_history")
    assert history == [{"token_id": 7, "name": "Seven", "timestamp_range": Range(5, 8)}]


def test_rows_giving_different_columns_merge_in_one_statement_as_given(ledger: Ledger) -> None:
    """Rows of one call stage together whatever columns each gives: an omitted column with a default is
    inserted with it, a NULL given for it stays NULL, an omitted column of an update keeps its value, and an
    NFT spender (``replace_nulls``) is kept by a partial update that omits it, cleared by a version that does."""
    nft = {"token_id": 5, "serial_number": 1, "account_id": 9, "spender": 4, "timestamp_range": 10}

    async def action(conn: asyncpg.Connection) -> None:
        await write.upsert(
            conn,
            "entity",
            [entity(1, 10, type="ACCOUNT"), entity(2, 10, memo="m", staked_node_id=None, decline_reward=True)],
        )
        await write.upsert(
            conn,
            "entity",
            [
                {"id": 1, "timestamp_range": Range(20, None), "memo": "x"},
                {"id": 2, "timestamp_range": Range(20, None), "staked_node_id": 5},
                {"id": 1, "ethereum_nonce": 7},  # a partial update in the same call: a later round
            ],
        )
        await write.upsert(
            conn, "nft", [nft, {"token_id": 5, "serial_number": 2, "account_id": 9, "timestamp_range": 10}]
        )
        await write.upsert(
            conn,
            "nft",
            [
                {"token_id": 5, "serial_number": 1, "account_id": 8},  # partial: keeps the spender
                {"token_id": 5, "serial_number": 2, "spender": 6},
            ],
        )

    with_connection(ledger.url, action)
    columns = "id, memo, type, staked_node_id, stake_period_start, ethereum_nonce, decline_reward"
    assert fetch(ledger.url, f"select {columns} from entity_history order by id") == [
        {"id": 1, "memo": "", "type": "ACCOUNT", "staked_node_id": -1, "stake_period_start": -1,
         "ethereum_nonce": 0, "decline_reward": False},
        {"id": 2, "memo": "m", "type": "UNKNOWN", "staked_node_id": None, "stake_period_start": -1,
         "ethereum_nonce": 0, "decline_reward": True},
    ]  # fmt: skip
    assert fetch(ledger.url, f"select {columns} from entity order by id") == [
        {"id": 1, "memo": "x", "type": "ACCOUNT", "staked_node_id": -1, "stake_period_start": -1,
         "ethereum_nonce": 7, "decline_reward": False},
        {"id": 2, "memo": "m", "type": "UNKNOWN", "staked_node_id": 5, "stake_period_start": -1,
         "ethereum_nonce": 0, "decline_reward": True},
    ]  # fmt: skip
    assert fetch(ledger.url, "select serial_number, account_id, spender from nft order by serial_number") == [
        {"serial_number": 1, "account_id": 8, "spender": 4},
        {"serial_number": 2, "account_id": 9, "spender": 6},
    ]


def test_a_table_with_an_array_column_merges_through_its_staging_table(ledger: Ledger) -> None:
    """``unnest`` would flatten an array column, so those merges stage their rows (``takes_arrays``), with the
    same rules: an omitted array with a default gets it, a given one is kept whole, an omitted one is kept."""
    model = schema.table("registered_node")
    assert not write.takes_arrays(model, model.column_names)
    assert write.takes_arrays(schema.table("entity"), schema.table("entity").column_names)
    assert "ledgermirror_stage_registered_node_" in write.merge_sql(model, model.column_names)

    async def action(conn: asyncpg.Connection) -> None:
        await write.upsert(
            conn,
            "registered_node",
            [
                {"registered_node_id": 1, "timestamp_range": 10, "description": "a"},
                {"registered_node_id": 2, "timestamp_range": 10, "type": [1, 2], "service_endpoints": [{"p": 1}]},
            ],
        )
        await write.upsert(
            conn,
            "registered_node",
            [
                {"registered_node_id": 1, "timestamp_range": 20, "type": [3]},
                {"registered_node_id": 2, "timestamp_range": 20, "description": "b"},
            ],
        )

    with_connection(ledger.url, action)
    current = "select registered_node_id as id, description, type, service_endpoints from registered_node"
    assert fetch(ledger.url, current + " order by 1") == [
        {"id": 1, "description": "a", "type": [3], "service_endpoints": None},
        {"id": 2, "description": "b", "type": [1, 2], "service_endpoints": '[{"p": 1}]'},
    ]
    old = "select registered_node_id as id, type, timestamp_range from registered_node_history order by 1"
    assert fetch(ledger.url, old) == [
        {"id": 1, "type": [], "timestamp_range": Range(10, 20)},
        {"id": 2, "type": [1, 2], "timestamp_range": Range(10, 20)},
    ]


def test_upsert_of_a_table_without_history(ledger: Ledger) -> None:
    async def action(conn: asyncpg.Connection) -> None:
        await write.upsert(conn, "contract", [{"id": 1, "file_id": 2, "initcode": b"\x01"}])
        await write.upsert(conn, "contract", [{"id": 1, "runtime_bytecode": b"\x02"}, {"id": 3}])

    with_connection(ledger.url, action)
    assert fetch(ledger.url, "select * from contract order by id") == [
        {"id": 1, "file_id": 2, "initcode": b"\x01", "runtime_bytecode": b"\x02"},
        {"id": 3, "file_id": None, "initcode": None, "runtime_bytecode": None},
    ]


def test_upsert_of_many_rows(ledger: Ledger) -> None:
    first = [entity(n, 10, memo="a") for n in range(1, 25_001)]
    second = [{"id": n, "timestamp_range": 20, "memo": "b"} for n in range(1, 25_001, 2)]

    async def action(conn: asyncpg.Connection) -> None:
        await write.upsert(conn, "entity", first)
        await write.upsert(conn, "entity", second)

    with_connection(ledger.url, action)
    assert fetch(ledger.url, "select memo, count(*) from entity group by memo order by memo") == [
        {"memo": "a", "count": 12_500},
        {"memo": "b", "count": 12_500},
    ]
    assert fetch(ledger.url, "select count(*) from entity_history where upper(timestamp_range) = 20") == [
        {"count": 12_500}
    ]


async def _entity_merge_plan(
    conn: asyncpg.Connection, columns: tuple[str, ...], arrays: list[Any] | None, settings: tuple[str, ...]
) -> str:
    """The plan of the ``entity`` merge of ``columns`` given ``arrays`` (its rows, a list per column, then the
    given bits), explained under ``settings`` in a transaction of its own; without ``arrays``, the plan of the
    statement prepared (:func:`generic_plan`)."""
    model = schema.table("entity")
    sql = write.merge_sql(model, columns)
    if arrays is None:
        return await generic_plan(conn, sql, settings)
    async with conn.transaction():
        if settings:
            await conn.execute(";\n".join(settings))
        values = [*arrays, *write._default_values(model, columns)]
        return "\n".join(row[0] for row in await conn.fetch("explain " + sql, *values))


def test_merges_probe_the_key_index_whatever_the_table_size(ledger: Ledger) -> None:
    """Given a few thousand rows, left to itself the planner hashes the whole target table for every merge (a
    cost that grows with the ledger); the merge statements run with joins by index lookup."""
    model = schema.table("entity")
    staged = [entity(n, 20, memo="b") for n in range(2_001, 5_001)]
    columns = model.column_names
    merge = write.merge_sql(model, columns)

    async def plans(conn: asyncpg.Connection, *, index_joins: bool) -> list[str]:
        arrays = [*([row.get(name) for row in staged] for name in columns), [0] * len(staged)]
        return [await _entity_merge_plan(conn, columns, arrays, write._WRITER_PLANS if index_joins else ())]

    async def action(conn: asyncpg.Connection) -> tuple[list[str], list[str]]:
        await write.copy_rows(conn, "entity", [entity(n, 10, memo="a") for n in range(1, 5_001)])
        await conn.execute("analyze entity")
        return await plans(conn, index_joins=False), await plans(conn, index_joins=True)

    left_alone, by_index = with_connection(ledger.url, action)
    # One statement: the rows given as arrays, each with its key's current row found, the history move, the
    # update, then the insert.
    assert merge.startswith("with ledgermirror_rows as (\nselect * from unnest($1::bigint[], ")
    assert merge.count(" as (\n") == 4 and '\nupdate "entity" t set' in merge
    assert "ledgermirror_stage_" not in merge
    assert any("Seq Scan on entity" in plan for plan in left_alone)  # what the settings are for
    for plan in by_index:
        assert "Seq Scan on entity" not in plan and "Hash" not in plan and "Merge Join" not in plan, plan
        assert plan.count("Index Cond: (id = ANY (ARRAY[u.id]))") == 1, plan  # one probe of the key a row
        assert plan.count("Tid Scan on entity") == 2, plan  # the move and the update reach the rows found


def test_a_merge_into_a_table_analyzed_while_empty_probes_the_key_index(ledger: Ledger) -> None:
    """After a ``vacuum analyze`` of the empty table, the planner takes it for empty whatever rows a merge meets:
    left to itself it scans the table again for each given row (a scan of no rows is still a call for the
    file's size: 3.3 s for 25,000 rows where the index took 0.23 s); the merges run without sequential scans."""
    given = [entity(n, 10, memo="a") for n in range(1, 2_001)]
    [[(columns, values)]] = write.plan_upsert("entity", given).rounds

    async def action(conn: asyncpg.Connection) -> tuple[str, list[str]]:
        await conn.execute("vacuum analyze entity")
        joins_only = await _entity_merge_plan(conn, columns, values, write._WRITER_PLANS[:2])
        by_index = await _entity_merge_plan(conn, columns, values, write._WRITER_PLANS)
        return joins_only, [by_index, await _entity_merge_plan(conn, columns, None, write._WRITER_PLANS)]

    joins_only, plans = with_connection(ledger.url, action)
    assert "Seq Scan on entity t" in joins_only  # the state this is about
    for by_index in plans:  # for the given values, and the generic plan the writer runs
        assert "Seq Scan on entity" not in by_index, by_index
        assert by_index.count("using entity_pkey on entity t") == 1, by_index  # the rows found, once


def test_a_merge_after_statistics_of_a_few_live_rows_probes_the_key_index(ledger: Ledger) -> None:
    """Statistics taken when the table held 5 live rows among many dead pages make the planner take the table for
    a few rows: joined to the given rows by key, it read the whole table once for each given row (an update of
    12,500 of 25,000 rows took 23.8 s where a probe a row takes 0.3 s). A merge finds each given row's current
    row by a probe of the key's index (a match the planner can neither hash nor merge), then reaches it by
    its row id, so the plan does not depend on the estimates."""
    given = [{"id": n, "timestamp_range": 20, "memo": "b"} for n in range(1, 2_001, 2)]
    [[(columns, values)]] = write.plan_upsert("entity", given).rounds
    nonces = [{"id": n, "ethereum_nonce": 7} for n in range(2, 2_001, 2)]  # a partial update: no range
    [[(partial, partial_values)]] = write.plan_upsert("entity", nonces).rounds

    async def action(conn: asyncpg.Connection) -> tuple[str, list[str], list[str]]:
        async with entity_analyzed_with_few_live_rows(conn):
            await write.upsert(conn, "entity", [entity(n, 10, memo="a") for n in range(1, 2_001)])
            async with conn.transaction():  # the join by key the merges made before
                await conn.execute(";\n".join(write._WRITER_PLANS))
                by_key = "\n".join(
                    row[0]
                    for row in await conn.fetch(
                        "explain select * from unnest($1::bigint[]) u (id) join entity t on t.id = u.id", values[5]
                    )
                )
            plans = [
                await _entity_merge_plan(conn, columns, values, write._WRITER_PLANS),
                await _entity_merge_plan(conn, columns, None, write._WRITER_PLANS),  # as the writer runs it
            ]
            partial_plans = [
                await _entity_merge_plan(conn, partial, partial_values, write._WRITER_PLANS),
                await _entity_merge_plan(conn, partial, None, write._WRITER_PLANS),
            ]
            await write.upsert(conn, "entity", given)
            await write.upsert(conn, "entity", nonces)
            return by_key, plans, partial_plans

    by_key, plans, partial_plans = with_connection(ledger.url, action)
    assert "Materialize" in by_key or "Seq Scan" in by_key, by_key  # the state this is about
    for merge in plans:
        assert "Materialize" not in merge and "Seq Scan" not in merge, merge
        assert merge.count("Index Cond: (id = ANY (ARRAY[u.id]))") == 1, merge
        assert merge.count("Tid Scan on entity") == 2, merge
    for merge in partial_plans:  # one update, each row probed by key and updated in place
        assert "Materialize" not in merge and "Seq Scan" not in merge and "Tid Scan" not in merge, merge
        assert merge.count("Index Cond: (id = ANY (ARRAY[u.id]))") == 1, merge
    assert fetch(ledger.url, "select memo, ethereum_nonce, count(*) from entity group by 1, 2 order by 1") == [
        {"memo": "a", "ethereum_nonce": 7, "count": 1_000},
        {"memo": "b", "ethereum_nonce": 0, "count": 1_000},
    ]
    assert fetch(ledger.url, "select count(*) from entity_history where upper(timestamp_range) = 20") == [
        {"count": 1_000}
    ]


def test_merges_into_a_partitioned_table_change_their_own_rows_only(ledger: Ledger) -> None:
    """A merge reaches a current row by its table and row id: partitions of one table repeat row ids (each
    partition's first row is (0,1)), so the row id alone would change a row of every partition."""
    month = 31 * 86_400 * 1_000_000_000
    first, second = 1_700_000_000_000_000_000, 1_700_000_000_000_000_000 + 2 * month

    def freeze(at: int, end: int) -> dict[str, Any]:
        return {
            "consensus_timestamp": at,
            "start_time": at,
            "end_time": end,
            "type": 1,
            "payer_account_id": 2,
            "file_hash": b"h",
        }

    async def action(conn: asyncpg.Connection) -> list[asyncpg.Record]:
        converted = conn.transaction()  # rolled back: the other tests share the database
        await converted.start()
        try:
            await citus.partition_by_time(conn, "network_freeze", now_ns=first)
            await write.upsert(conn, "network_freeze", [freeze(first, 5), freeze(second, 6)])
            await write.upsert(conn, "network_freeze", [{"consensus_timestamp": first, "end_time": 7}])
            return await conn.fetch(
                "select tableoid::regclass::text as part, ctid::text, end_time from network_freeze"
            )
        finally:
            await converted.rollback()

    rows = with_connection(ledger.url, action)
    assert sorted((row["ctid"], row["end_time"]) for row in rows) == [("(0,1)", 6), ("(0,2)", 7)]
    assert len({row["part"] for row in rows}) == 2


def test_bulk_block_merges_with_index_joins_set_once(ledger: Ledger) -> None:
    """Inside ``write.bulk`` the merges and running values give what they give outside it, with the index joins
    on for the whole block and the session's settings back after it; it needs the caller's transaction."""

    async def settings(conn: asyncpg.Connection) -> tuple[str, ...]:
        row = await conn.fetchrow(
            "select current_setting('enable_hashjoin'), current_setting('enable_mergejoin'),"
            " current_setting('enable_seqscan'), current_setting('plan_cache_mode')"
        )
        return tuple(row)

    async def action(conn: asyncpg.Connection) -> tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...]]:
        with pytest.raises(write.WriteError):
            async with write.bulk(conn, ["entity"]):
                pass
        async with conn.transaction():
            async with write.bulk(conn, ["entity", "token"]):
                inside = await settings(conn)
                await write.upsert(conn, "entity", [entity(7, 100, memo="first", created_timestamp=100)])
                await write.upsert(conn, "entity", [{"id": 7, "timestamp_range": Range(200, None), "memo": "b"}])
                await write.upsert(conn, "nft", [{"token_id": 5, "serial_number": 1, "timestamp_range": 10}])
                await write.execute_by_index(
                    conn, "update entity set balance = 3 where id = any($1::bigint[])", [7]
                )
                planned = await conn.fetchrow(
                    "select sum(custom_plans)::int as custom, sum(generic_plans)::int as generic"
                    " from pg_prepared_statements where statement like 'with ledgermirror_%'"
                )
            after = await settings(conn)
        return inside, after, tuple(planned)

    inside, after, planned = with_connection(ledger.url, action)
    assert inside == ("off", "off", "off", "force_generic_plan") and after == ("on", "on", "on", "auto")
    assert planned == (0, 3)  # the three merges planned once for any values, not for theirs
    (current,) = fetch(ledger.url, "select * from entity")
    (old,) = fetch(ledger.url, "select * from entity_history")
    assert (current["memo"], current["balance"], current["timestamp_range"]) == ("b", 3, Range(200, None))
    assert (old["memo"], old["timestamp_range"]) == ("first", Range(100, 200))
    assert [row["serial_number"] for row in fetch(ledger.url, "select * from nft")] == [1]  # staged on its own


# Text --------------------------------------------------------------------------------------------------------


def test_insert_text_uses_postgres_input_rules(ledger: Ledger) -> None:
    assert write.insert_text_sql("token", ["name", "timestamp_range"]) == (
        'insert into "token" ("name", "timestamp_range") values ($1::text::character varying, $2::text::int8range)'
    )
    values = {
        "consensus_timestamp": "1", "type": "14", "result": "22", "payer_account_id": "2", "valid_start_ns": "0",
        "memo": "\\x6869", "inner_transactions": '{"1","2"}', "errata": None,
    }  # fmt: skip

    async def action(conn: asyncpg.Connection) -> None:
        await write.insert_text(conn, "transaction", values)
        await write.insert_text(conn, "entity_history", {"id": "1", "num": "1", "realm": "0", "shard": "0",
                                                        "timestamp_range": "[1,3]"})  # fmt: skip
        with pytest.raises(asyncpg.StringDataRightTruncationError):
            await write.insert_text(conn, "address_book_service_endpoint",
                                    {"consensus_timestamp": "1", "node_id": "1", "port": "1",
                                     "ip_address_v4": "1234567890123456"})  # fmt: skip

    with_connection(ledger.url, action)
    (row,) = fetch(ledger.url, "select memo, inner_transactions, errata from transaction")
    assert row == {"memo": b"hi", "inner_transactions": [1, 2], "errata": None}
    assert fetch(ledger.url, "select timestamp_range from entity_history") == [{"timestamp_range": Range(1, 4)}]


def test_merge_arrays_of_numbers_booleans_and_ranges_arrive_exact(ledger: Ledger) -> None:
    """What a merge's arrays carry arrives as given: NULLs, the ``bigint`` extremes, negatives, a bool or a
    ``Decimal`` where an integer goes (a sum read from the database: ``entity_stakes``), and ranges of every bound
    kind, closed ones through ``topic_message_lookup`` (a table without history)."""
    extremes = (-(2**63), 2**63 - 1)
    rows = [
        entity(1, 10, balance=extremes[0], deleted=True, max_automatic_token_associations=-1),
        entity(2, 10, balance=extremes[1], deleted=False, max_automatic_token_associations=None),
        entity(3, 10, balance=None, deleted=None, auto_renew_period=True, expiration_timestamp=Decimal("7")),
        {**entity(4, 0), "timestamp_range": Range(5, None, lower_inc=False)},
        {**entity(5, 0), "timestamp_range": Range(None, None)},
    ]
    lookups = [
        {"topic_id": 7, "partition": "a", "sequence_number_range": Range(1, 9), "timestamp_range": Range(5, 9)},
        {
            "topic_id": 7,
            "partition": "b",
            "sequence_number_range": Range(1, 9, lower_inc=False, upper_inc=True),
            "timestamp_range": Range(empty=True),
        },
    ]

    async def action(conn: asyncpg.Connection) -> None:
        await write.upsert(conn, "entity", rows)
        await write.upsert(conn, "topic_message_lookup", lookups)

    with_connection(ledger.url, action)
    stored = fetch(
        ledger.url,
        "select id, balance, deleted, max_automatic_token_associations as max, auto_renew_period as period,"
        " expiration_timestamp as expiry, timestamp_range::text as range from entity order by id",
    )
    assert [(row["id"], row["balance"], row["deleted"], row["max"]) for row in stored[:3]] == [
        (1, extremes[0], True, -1),
        (2, extremes[1], False, None),
        (3, None, None, None),
    ]
    assert (stored[2]["period"], stored[2]["expiry"]) == (1, 7)
    assert [row["range"] for row in stored] == ["[10,)", "[10,)", "[10,)", "[6,)", "(,)"]
    assert fetch(
        ledger.url,
        "select partition, sequence_number_range::text as numbers, timestamp_range::text as times"
        " from topic_message_lookup order by partition",
    ) == [
        {"partition": "a", "numbers": "[1,9)", "times": "[5,9)"},
        {"partition": "b", "numbers": "[2,10)", "times": "empty"},
    ]
