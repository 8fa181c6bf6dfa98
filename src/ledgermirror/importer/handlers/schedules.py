"""The schedule service (reference §3.5, §1.12): schedules, their signatures and their execution.

ScheduleCreate writes the SCHEDULE entity and the ``schedule`` row (its creator the payer, or the sender of
the EthereumTransaction whose contract created it); ScheduleCreate and ScheduleSign write one
``transaction_signature`` row per signature pair of the transaction (the reference's default
``persist.transactionSignatures``); ScheduleDelete sets ``entity.deleted``. All only on success.
A scheduled child (a record with ``scheduleRef``) sets ``schedule.executed_timestamp``, even when it failed
(:data:`COMMON`): on the row of a schedule created in the same batch directly, else by one deferred update of
the stored schedules per batch (a schedule created before the mirror's start gets no row).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import asyncpg

from ledgermirror.db import token_state
from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import Handler, ItemContext
from ledgermirror.importer.handlers.entities import Operation, key_or_none, sanitize, upsert_entity
from ledgermirror.importer.handlers.item import Item

SCHEDULE = "SCHEDULE"


def signature_rows(item: Item, batch: Batch, entity_id: int) -> None:
    """One ``transaction_signature`` per signature pair; ``type`` is the signature's field number; only the
    first pair with a given public key prefix is kept."""
    if item.signature_map is None:
        return
    seen: set[bytes] = set()
    for pair in item.signature_map.sigPair:
        case = pair.WhichOneof("signature")
        if case is None:
            continue
        prefix = bytes(pair.pubKeyPrefix)
        if prefix in seen:
            continue
        seen.add(prefix)
        batch.insert(
            "transaction_signature",
            {
                "consensus_timestamp": item.consensus_timestamp,
                "entity_id": ids.nullable(entity_id),
                "public_key_prefix": prefix,
                "signature": bytes(getattr(pair, case)),
                "type": pair.DESCRIPTOR.fields_by_name[case].number,
            },
        )


def schedule_create(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.scheduleCreate
    schedule = ids.schedule_id(item.record.receipt.scheduleID)
    context.set_transaction(entity_id=ids.nullable(schedule))
    if not item.successful or not schedule:
        return
    upsert_entity(
        item,
        batch,
        schedule,
        Operation.CREATE,
        SCHEDULE,
        key=key_or_none(body, "adminKey"),
        memo=sanitize(body.memo),
    )
    creator = _ethereum_sender(item, context) or item.payer_account_id
    payer = ids.account_id(body.payerAccountID) if body.HasField("payerAccountID") else ids.EMPTY
    row: dict[str, Any] = {
        "schedule_id": schedule,
        "consensus_timestamp": item.consensus_timestamp,
        "creator_account_id": creator,
        "payer_account_id": payer or creator,
        "expiration_time": ids.nanos(body.expiration_time) if body.HasField("expiration_time") else None,
        "transaction_body": bytes(body.scheduledTransactionBody.SerializeToString()),
        "wait_for_expiry": body.wait_for_expiry,
    }
    batch.upsert("schedule", row)
    context.touch(payer)
    signature_rows(item, batch, schedule)


def _ethereum_sender(item: Item, context: ItemContext) -> int:
    """The sender of the EthereumTransaction parent (decoded) that created the schedule through a contract: the
    reference takes it as the creator when its function result names one; 0.0.0 otherwise."""
    parent_stamp = item.parent_consensus_timestamp
    if parent_stamp is None or parent_stamp not in context.file.ethereum:
        return ids.EMPTY
    parent = context.file.items.get(parent_stamp)
    if parent is None:
        return ids.EMPTY
    record = parent.record
    result = record.contractCreateResult if record.HasField("contractCreateResult") else record.contractCallResult
    if not result.sender_id.SerializeToString():  # the default AccountID: no sender
        return ids.EMPTY
    return ids.account_id(result.sender_id)


def schedule_sign(item: Item, batch: Batch, context: ItemContext) -> None:
    schedule = ids.schedule_id(item.body.scheduleSign.scheduleID)
    context.set_transaction(entity_id=ids.nullable(schedule))
    if item.successful:
        signature_rows(item, batch, schedule)


def schedule_delete(item: Item, batch: Batch, context: ItemContext) -> None:
    schedule = ids.schedule_id(item.body.scheduleDelete.scheduleID)
    context.set_transaction(entity_id=ids.nullable(schedule))
    upsert_entity(item, batch, schedule, Operation.DELETE, SCHEDULE)


class _StoredExecutions:
    """The executions of stored schedules in one batch, applied by one deferred step: nothing else in the
    batch changes a schedule created before it, so the step may run anywhere (it is deferred at the first)."""

    def __init__(self) -> None:
        self.executed: list[tuple[int, int]] = []

    async def __call__(self, conn: asyncpg.Connection) -> dict[str, int]:
        return await token_state.set_schedules_executed(conn, self.executed)


def _stored_executions(batch: Batch) -> _StoredExecutions:
    for segment in batch.segments:
        if isinstance(segment.step, _StoredExecutions):
            return segment.step
    step = _StoredExecutions()
    batch.defer(step, touches={"schedule": None})  # its list grows after
    return step


def executed(item: Item, batch: Batch, context: ItemContext) -> None:
    """A scheduled child (success or not) marks its schedule executed at its consensus timestamp."""
    if not item.record.HasField("scheduleRef"):
        return
    schedule = ids.schedule_id(item.record.scheduleRef)
    stamp = item.consensus_timestamp
    if batch.latest("schedule", schedule) is not None:
        batch.upsert("schedule", {"schedule_id": schedule, "executed_timestamp": stamp})
    else:
        _stored_executions(batch).executed.append((schedule, stamp))


HANDLERS: Mapping[str, Handler] = MappingProxyType(
    {
        "scheduleCreate": schedule_create,
        "scheduleSign": schedule_sign,
        "scheduleDelete": schedule_delete,
    }
)
"""Schedule service transactions by ``TransactionBody`` oneof name."""

COMMON: tuple[Handler, ...] = (executed,)
"""Run for every item after its handler: the scheduled child's execution."""
