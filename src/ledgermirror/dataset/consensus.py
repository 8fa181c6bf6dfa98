"""Consensus topics and their messages: ``entity`` (TOPIC), ``topic``, ``custom_fee`` and ``topic_message``
rows, and a ``transaction`` (CONSENSUSSUBMITMESSAGE) per message.

Topics get the nums after the tokens and are created between the blocks of the 60 %-65 % stretch of the
timeline, after every other entity; their messages follow in the gaps between later blocks, so they never
share a timestamp with a block's transactions (and no block counts them). One topic in four messages goes to
the first topic (a deep topic for benchmarks); the rest spread over the others. Every fifth topic sends its
messages in chunks of three, each chunk carrying the first chunk's transaction id. One topic in twenty is
deleted; one in three has fixed custom fees; one in four a fee-exempt key list.
"""

from __future__ import annotations

import random

from asyncpg import Range
from hiero_sdk_python.hapi.services import basic_types_pb2, timestamp_pb2

from ledgermirror.dataset.accounts import entity_row
from ledgermirror.dataset.world import HBAR, NODE_ACCOUNTS, SECOND, Emit, Row, World, entity_id
from ledgermirror.ledger.transaction_codes import SUCCESS, type_number

CONSENSUS_SUBMIT_MESSAGE = type_number("CONSENSUSSUBMITMESSAGE")
CHUNKS = 3
RUNNING_HASH_VERSION = 3
_MEMOS = ("", "sensor feed", "audit log", "price oracle", "chat room", "supply chain events", "HCS-10 inbox")
_TEXTS = (
    b'{"temperature": 21.4, "unit": "C"}',
    b"order 4411 shipped",
    b"hello from the mirror demo",
    b'{"price": "0.0712", "pair": "HBAR/USD"}',
    b"checkpoint reached",
)
_FEE = 100_000


def first_topic_num(world: World) -> int:
    return world.token_num(world.tokens)


def _gap_start(world: World, block: int) -> int:
    """The first instant after block ``block``'s window (plus a second), where nothing else happens."""
    return world.block_start(block) + world.block_window + SECOND


def _gap_step(world: World, events: int) -> int:
    """Spacing of ``events`` events in the first half of a gap between blocks."""
    gap = world.block_interval - world.block_window - SECOND
    return max(1, gap // 2 // max(1, events))


def topic_created(world: World, topic: int) -> int:
    first = world.blocks * 60 // 100
    span = max(1, world.blocks * 5 // 100)
    block = min(world.blocks - 1, first + topic * span // max(1, world.profile.topics))
    return _gap_start(world, block) + topic


def _key(world: World, label: str, topic: int) -> bytes:
    return world.key_pair(label, topic, ecdsa=topic % 2 == 1).key


def _fee_exempt_keys(world: World, topic: int) -> bytes:
    keys = basic_types_pb2.KeyList()
    for index in range(2):
        keys.keys.add().ParseFromString(_key(world, "topic-exempt", topic * 2 + index))
    return keys.SerializeToString()


def _payer(world: World, rng: random.Random) -> int:
    return entity_id(world.account_num(world.pick_account(rng, world.accounts) or 0))


def topics(world: World) -> Emit:
    for topic in range(world.profile.topics):
        num = first_topic_num(world) + topic
        created = topic_created(world, topic)
        rng = random.Random(world.digest("topic", topic))
        yield "entity", entity_row(
            num, "TOPIC", created, memo=_MEMOS[topic % len(_MEMOS)], deleted=is_deleted(topic),
            auto_renew_account_id=_payer(world, rng), key=_key(world, "topic-admin", topic),
        )  # fmt: skip
        yield "topic", {
            "admin_key": _key(world, "topic-admin", topic), "created_timestamp": created, "id": entity_id(num),
            "fee_exempt_key_list": _fee_exempt_keys(world, topic) if topic % 4 == 2 else None,
            "fee_schedule_key": _key(world, "topic-fees", topic) if topic % 3 == 0 else None,
            "submit_key": _key(world, "topic-submit", topic) if topic % 2 == 0 else None,
            "timestamp_range": Range(created, None),
        }  # fmt: skip
        fees = None
        if topic % 3 == 0:
            fees = [{"amount": (topic % 7 + 1) * HBAR // 100, "collector_account_id": _payer(world, rng)}]
        yield (
            "custom_fee",
            {"entity_id": entity_id(num), "fixed_fees": fees, "timestamp_range": Range(created, None)},
        )


def _topic_of(world: World, message: int) -> int:
    count = world.profile.topics
    pick = int.from_bytes(world.digest("topic-of", message, 8), "big")
    if count == 1 or pick % 4 == 0:
        return 0
    topic = 1 + pick // 4 % (count - 1)
    return 0 if is_deleted(topic) else topic


def is_deleted(topic: int) -> bool:
    """Deleted topics (their messages go to the first topic instead)."""
    return topic % 20 == 19


def _transaction_id(payer: int, valid_start: int) -> bytes:
    seconds, nanos = divmod(valid_start, SECOND)
    transaction_id = basic_types_pb2.TransactionID(
        accountID=basic_types_pb2.AccountID(shardNum=0, realmNum=0, accountNum=payer & ((1 << 38) - 1)),
        transactionValidStart=timestamp_pb2.Timestamp(seconds=seconds, nanos=nanos),
    )
    return transaction_id.SerializeToString()


def messages(world: World) -> Emit:
    """The messages in consensus order, each with its submit transaction."""
    total = world.profile.topic_messages
    if not world.profile.topics or not total:
        return
    first_block = world.blocks * 65 // 100
    blocks = max(1, world.blocks - first_block)
    sequences = [0] * world.profile.topics
    chunk_starts: dict[int, tuple[int, int]] = {}
    for offset in range(blocks):
        block = first_block + offset
        start, end = total * offset // blocks, total * (offset + 1) // blocks
        step = _gap_step(world, end - start)
        for index, message in enumerate(range(start, end)):
            at = _gap_start(world, block) + index * step
            yield from _message(world, message, at, sequences, chunk_starts)


def _message(
    world: World, message: int, at: int, sequences: list[int], chunk_starts: dict[int, tuple[int, int]]
) -> Emit:
    topic = _topic_of(world, message)
    sequences[topic] += 1
    sequence = sequences[topic]
    rng = random.Random(world.digest("message", message))
    payer = _payer(world, rng)
    valid_start = at - rng.randrange(SECOND, 5 * SECOND)
    row: Row = {
        "consensus_timestamp": at, "message": _TEXTS[message % len(_TEXTS)] + b" #" + str(sequence).encode(),
        "running_hash": world.digest("running-hash", message, 48), "sequence_number": sequence,
        "running_hash_version": RUNNING_HASH_VERSION, "payer_account_id": payer,
        "valid_start_timestamp": valid_start, "topic_id": entity_id(first_topic_num(world) + topic),
    }  # fmt: skip
    if topic % 5 == 1:
        chunk = (sequence - 1) % CHUNKS + 1
        if chunk == 1:
            chunk_starts[topic] = (payer, valid_start)
        first_payer, first_start = chunk_starts.get(topic, (payer, valid_start))
        row |= {
            "chunk_num": chunk, "chunk_total": CHUNKS, "payer_account_id": first_payer,
            "initial_transaction_id": _transaction_id(first_payer, first_start),
        }  # fmt: skip
    yield "topic_message", row
    yield "transaction", {
        "consensus_timestamp": at, "type": CONSENSUS_SUBMIT_MESSAGE, "result": SUCCESS,
        "payer_account_id": row["payer_account_id"], "valid_start_ns": valid_start, "valid_duration_seconds": 120,
        "node_account_id": entity_id(NODE_ACCOUNTS[message % len(NODE_ACCOUNTS)]), "entity_id": row["topic_id"],
        "max_fee": 2 * _FEE, "charged_tx_fee": _FEE, "transaction_hash": world.digest("submit", message, 48),
        "index": 0,
    }  # fmt: skip
