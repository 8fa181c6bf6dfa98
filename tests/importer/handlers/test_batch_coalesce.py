"""Which segments of a batch are written as one (``batch_writer.coalesce``): a deferred step that says what it
touches lets later rows that touch none of it be written before it; anything else keeps the segment order."""

from __future__ import annotations

import copy

import pytest

from ledgermirror.db import write
from ledgermirror.importer.handlers.batch import RECORD_COLUMNS, RECORDS, Batch
from ledgermirror.importer.handlers.batch_writer import coalesce, hoisted_tables, plan_batch


async def _step(conn: object) -> dict[str, int]:
    return {}


def _association(account: int, token: int, stamp: int) -> dict[str, object]:
    return {"account_id": account, "token_id": token, "associated": True, "timestamp_range": stamp}


def test_a_step_without_touches_keeps_the_segments_apart() -> None:
    batch = Batch()
    batch.insert("prng", {"consensus_timestamp": 1, "payer_account_id": 2, "range": 0})
    batch.defer(_step)
    batch.insert("prng", {"consensus_timestamp": 2, "payer_account_id": 2, "range": 0})
    written = coalesce(batch.segments)
    assert [len(part.rows.inserts["prng"]) for part in written] == [1, 1]
    assert [len(part.steps) for part in written] == [1, 0]


def test_rows_touching_other_keys_join_the_rows_before_the_step() -> None:
    batch = Batch()
    batch.upsert("token_account", _association(10, 20, 1))
    batch.defer(_step, touches={"token_account": [(10, 20)]})
    batch.upsert("token_account", _association(11, 20, 2))  # another key
    batch.insert("prng", {"consensus_timestamp": 2, "payer_account_id": 2, "range": 0})  # another table
    batch.add_token_balance(12, 20, 5, 2)
    written = coalesce(batch.segments)
    assert len(written) == 1
    assert [(row["account_id"], row["token_id"]) for row in written[0].rows.upserts["token_account"]] == [
        (10, 20),
        (11, 20),
    ]
    assert written[0].rows.token_balances == {(12, 20): [5, 2]}
    assert [segment.step for segment in written[0].steps] == [_step]


def test_rows_touching_the_steps_keys_come_after_it() -> None:
    batch = Batch()
    batch.defer(_step, touches={"token_account": [(10, 20)]})
    batch.upsert("token_account", _association(10, 20, 2))
    assert len(coalesce(batch.segments)) == 2


def test_a_token_balance_of_a_key_a_step_touches_waits_for_the_steps() -> None:
    """An airdrop claim: its association step, then its own transfer of the token to the receiver."""
    batch = Batch()
    batch.add_token_balance(10, 20, 1, 1)  # before the step: applied before it
    batch.defer(_step, touches={"token_account": [(10, 20)]})
    batch.add_token_balance(10, 20, 5, 2)  # after it
    batch.add_token_balance(11, 20, 7, 2)  # another key: with the rows
    (part,) = coalesce(batch.segments)
    assert part.rows.token_balances == {(10, 20): [1, 1], (11, 20): [7, 2]}
    assert part.late_token_balances == {(10, 20): [5, 2]}
    # when the segment's own step touches the key, its balance must come before that step: it stays apart
    batch.defer(_step, touches={"token_account": [(10, 20)]})
    batch.add_token_balance(12, 20, 1, 3)
    first, second = coalesce(batch.segments)
    assert first.late_token_balances == {} and len(first.steps) == 1
    assert second.rows.token_balances == {(10, 20): [5, 2], (11, 20): [7, 2], (12, 20): [1, 3]}
    assert len(second.steps) == 1


def test_a_key_prefix_touches_every_row_under_it() -> None:
    batch = Batch()
    batch.defer(_step, touches={"nft": [(7,)]})
    batch.upsert("nft", {"token_id": 7, "serial_number": 3, "deleted": True, "timestamp_range": 2})
    assert len(coalesce(batch.segments)) == 2
    other = Batch()
    other.defer(_step, touches={"nft": [(7,)]})
    other.upsert("nft", {"token_id": 8, "serial_number": 3, "deleted": True, "timestamp_range": 2})
    assert len(coalesce(other.segments)) == 1


def test_a_balance_before_a_later_upsert_of_its_entity_starts_a_phase() -> None:
    """The segments join; the balance gathered before the upsert is applied between the upserts."""
    batch = Batch()
    batch.upsert("entity", {"id": 1003, "memo": "y", "timestamp_range": 1})
    batch.add_balance(1001, 5, 1)
    batch.add_balance(1002, 3, 1)
    batch.defer(_step, touches={"hook_storage": None})
    batch.upsert("entity", {"id": 1001, "memo": "x", "timestamp_range": 2})
    batch.add_balance(1001, 7, 3)
    (part,) = coalesce(batch.segments)
    assert part.rows.entity_phases == [(1, {1001: [5, 1]})]  # before the second upsert row; 1002 is not upserted
    assert part.rows.entity_balances == {1002: [3, 1], 1001: [7, 3]}
    other = Batch()
    other.add_balance(1001, 5, 1)
    other.defer(_step, touches={"hook_storage": None})
    other.upsert("entity", {"id": 1002, "memo": "x", "timestamp_range": 2})
    other.add_balance(1001, 7, 2)
    (part,) = coalesce(other.segments)
    assert part.rows.entity_balances == {1001: [12, 2]}
    assert part.rows.entity_phases == []


def test_a_partial_update_that_leaves_the_balance_alone_starts_no_phase() -> None:
    """An EVM nonce (no range, no balance) commutes with the deltas: no history row closes the balance."""
    batch = Batch()
    batch.add_balance(1001, 5, 1)
    batch.defer(_step, touches={"hook_storage": None})
    batch.upsert("entity", {"id": 1001, "ethereum_nonce": 3})
    (part,) = coalesce(batch.segments)
    assert part.rows.entity_phases == [] and part.rows.entity_balances == {1001: [5, 1]}


def test_a_cleared_public_key_keeps_a_later_upsert_of_its_entity_apart() -> None:
    batch = Batch()
    batch.upsert("entity", {"id": 1001, "public_key": "", "timestamp_range": 1})
    batch.defer(_step, touches={"hook_storage": None})
    batch.upsert("entity", {"id": 1001, "memo": "x", "timestamp_range": 2})
    assert len(coalesce(batch.segments)) == 2


def test_append_only_rows_nothing_reads_are_written_first() -> None:
    batch = Batch()
    batch.insert("prng", {"consensus_timestamp": 1, "payer_account_id": 2, "range": 0})
    batch.insert("file_data", {"consensus_timestamp": 1, "entity_id": 150, "transaction_type": 19})
    batch.upsert("token_account", _association(10, 20, 1))
    batch.defer(_step, touches={"file_data": None})
    batch.insert("prng", {"consensus_timestamp": 2, "payer_account_id": 2, "range": 0})
    assert hoisted_tables(batch.segments) == {"prng"}  # file_data a step reads; token_account is merged
    batch.defer(_step)  # may touch anything
    assert hoisted_tables(batch.segments) == set()


def test_a_batch_is_planned_without_changing_its_segments() -> None:
    """The overlapped import plans a batch in the row builder's thread while it still reads the batch
    (``overlap.InFlight``): the plan holds its own rows."""
    batch = Batch()
    batch.insert("prng", {"consensus_timestamp": 1, "payer_account_id": 2, "range": 0})
    batch.add_balance(1001, 5, 1)
    batch.upsert("token_account", _association(10, 20, 1))
    batch.defer(_step, touches={"hook_storage": None})
    batch.upsert("entity", {"id": 1001, "memo": "x", "timestamp_range": 2})
    batch.insert("prng", {"consensus_timestamp": 2, "payer_account_id": 2, "range": 0})
    before = copy.deepcopy(batch.segments)
    plan = plan_batch(batch)
    assert batch.segments == before
    assert [(chunk.table, len(chunk.records)) for chunk in plan.copies] == [("prng", 2)]  # one COPY for the batch
    (part,) = plan.written
    assert "prng" not in part.rows.inserts and part.rows.entity_phases == [(0, {1001: [5, 1]})]
    assert plan.upserted == ["entity", "token_account"]
    assert plan.balances_now == [{}] and plan.carried == []  # the deltas go with the phase
    # the merges planned too, in the order they are written: the phase's deltas, then the entity's new version
    assert part.planned is not None and list(part.planned) == ["entity", "token_account"]
    deltas, merge = part.planned["entity"]
    assert deltas == {1001: [5, 1]} and isinstance(merge, write.Merge) and merge.taken == 1


def test_hoisted_rows_are_copied_in_consensus_order() -> None:
    """The rows of every segment go to one COPY per table in the order the segments gathered them (the lookup
    by hash is a hash index, which gains nothing from rows sorted by hash: migration 0051)."""
    batch = Batch()
    hashes = [bytes([7]) * 48, bytes([2]) * 48, bytes([9]) * 48, bytes([2]) * 48]
    for stamp, digest in enumerate(hashes, start=1):
        batch.insert(
            "transaction_hash",
            {"consensus_timestamp": stamp, "hash": digest, "payer_account_id": 1001, "hash_suffix": None},
        )
        batch.defer(_step, touches={"hook_storage": None})  # every segment's rows are hoisted into one COPY
    # encoded while planning: one COPY for the batch, the records as the writer sends them
    (chunk,) = plan_batch(batch).copies
    assert chunk.table == "transaction_hash" and chunk.columns == RECORD_COLUMNS["transaction_hash"]
    assert [(record[0], record[1][0]) for record in chunk.records] == [(1, 7), (2, 2), (3, 9), (4, 2)]


def test_the_plan_encodes_every_hoisted_table_and_refuses_a_bad_row() -> None:
    """Value tuples (a ``transaction`` row still a list) and dicts by column name are encoded for COPY while the
    batch is planned, many rows in one COPY per table; a row the COPY cannot take is refused then, in the row
    builder's thread, not by the writer."""
    batch = Batch()
    for stamp in range(1, 30_002):
        batch.insert("prng", {"consensus_timestamp": stamp, "payer_account_id": 2, "range": 0})
    transaction = list(
        RECORDS["transaction"](consensus_timestamp=1, type=14, result=22, payer_account_id=2, valid_start_ns=1)
    )
    batch.records("transaction").append(transaction)
    copies = {chunk.table: chunk for chunk in plan_batch(batch).copies}
    assert sorted(copies) == ["prng", "transaction"]
    assert len(copies["prng"].records) == 30_001 and copies["prng"].records[0][0] == 1
    assert copies["transaction"].records == [tuple(transaction)]
    batch.insert("prng", {"consensus_timestamp": 30_002, "range": 0})  # payer_account_id is required
    with pytest.raises(write.WriteError, match="payer_account_id"):
        plan_batch(batch)


def test_every_held_step_counts_however_many_the_write_holds() -> None:
    """What the held steps touch is gathered as they join: a key touched by the first of many steps, a prefix
    touched by one in the middle and a table touched anywhere by the last all still decide."""
    batch = Batch()
    for account in range(50):
        batch.defer(_step, touches={"token_account": [(account, 20)], "nft": [(7,)] if account == 25 else []})
        batch.insert("prng", {"consensus_timestamp": account, "payer_account_id": 2, "range": 0})
    batch.add_token_balance(0, 20, 5, 60)  # the first step's key: after the steps
    batch.add_token_balance(99, 20, 7, 60)  # no step's key: with the rows
    batch.upsert("nft", {"token_id": 8, "serial_number": 1, "deleted": True, "timestamp_range": 60})
    (part,) = coalesce(batch.segments)
    assert len(part.steps) == 50
    assert part.late_token_balances == {(0, 20): [5, 60]}
    assert part.rows.token_balances == {(99, 20): [7, 60]}
    batch.upsert("nft", {"token_id": 7, "serial_number": 3, "deleted": True, "timestamp_range": 61})  # 26th's
    first, second = coalesce(batch.segments)
    assert len(first.steps) == 50 and "nft" in second.rows.upserts
    batch.defer(_step, touches={"token_account": None})  # any row of the table
    batch.add_token_balance(98, 20, 1, 62)
    *_, last = coalesce(batch.segments)
    assert last.late_token_balances == {(98, 20): [1, 62]}
