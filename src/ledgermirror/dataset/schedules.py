"""Scheduled transactions: ``entity`` (SCHEDULE), ``schedule`` and ``transaction_signature`` rows.

Schedules get the nums after the topics and are created in the second half of the gaps between the blocks of
the last 40 % of the timeline. They come in four states, in turn: executed (ten seconds after creation, having
collected its signatures), pending (expiring after the end of the timeline, some waiting for expiry),
deleted, and expired (a day after creation, never executed); some executed ones have no expiration
time. Each has one to three signatures.
"""

from __future__ import annotations

import random

from hiero_sdk_python.hapi.services import schedulable_transaction_body_pb2

from ledgermirror.dataset.accounts import entity_row
from ledgermirror.dataset.consensus import first_topic_num
from ledgermirror.dataset.world import DAY, HBAR, SECOND, Emit, World, entity_id

EXECUTED, PENDING, DELETED, EXPIRED = range(4)
_MEMOS = ("", "treasury payout", "multisig transfer", "council decision", "vesting release")
_ED25519, _ECDSA_SECP256K1 = 3, 6


def first_schedule_num(world: World) -> int:
    return first_topic_num(world) + world.profile.topics


def state_of(schedule: int) -> int:
    return schedule % 4


def schedule_created(world: World, schedule: int) -> int:
    first = world.blocks * 60 // 100
    span = max(1, world.blocks - first)
    block = min(world.blocks - 1, first + schedule * span // max(1, world.profile.schedules))
    gap = world.block_interval - world.block_window - SECOND
    return world.block_start(block) + world.block_window + SECOND + gap // 2 + schedule


def _body(schedule: int) -> bytes:
    body = schedulable_transaction_body_pb2.SchedulableTransactionBody(
        transactionFee=2 * HBAR, memo=f"scheduled payment {schedule}"
    )
    return body.SerializeToString()


def schedules(world: World) -> Emit:
    for schedule in range(world.profile.schedules):
        num = first_schedule_num(world) + schedule
        created = schedule_created(world, schedule)
        rng = random.Random(world.digest("schedule", schedule))
        state = state_of(schedule)
        creator = entity_id(world.account_num(world.pick_account(rng, world.accounts) or 0))
        key = world.key_pair("schedule-admin", schedule, ecdsa=False).key if schedule % 3 else None
        yield "entity", entity_row(
            num, "SCHEDULE", created, memo=_MEMOS[schedule % len(_MEMOS)], key=key, deleted=state == DELETED,
        )  # fmt: skip
        expiration = created + DAY if state == EXPIRED else world.end + 30 * DAY
        yield "schedule", {
            "consensus_timestamp": created, "creator_account_id": creator,
            "executed_timestamp": created + 10 * SECOND if state == EXECUTED else None,
            "payer_account_id": creator, "schedule_id": entity_id(num), "transaction_body": _body(schedule),
            "expiration_time": None if schedule % 8 == 4 else expiration,
            "wait_for_expiry": state == PENDING and schedule % 8 == 5,
        }  # fmt: skip
        for signer in range(1 + schedule % 3):
            ecdsa = signer % 2 == 1
            public = world.key_pair("schedule-signer", schedule * 3 + signer, ecdsa=ecdsa).key[2:]
            yield "transaction_signature", {
                "consensus_timestamp": created + signer * 3 * SECOND, "public_key_prefix": public[:6],
                "entity_id": entity_id(num), "signature": world.digest("signature", schedule * 3 + signer, 64),
                "type": _ECDSA_SECP256K1 if ecdsa else _ED25519,
            }  # fmt: skip
