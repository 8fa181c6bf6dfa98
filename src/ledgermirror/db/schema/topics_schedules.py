"""Topics, topic messages and their lookup, schedules and their signatures
(``0030_topics_schedules.sql``)."""

from __future__ import annotations

from ledgermirror.db.schema.model import TIMESTAMP_RANGE, Table, not_null, nullable

TOPIC = Table(
    "topic",
    (
        nullable("admin_key", "bytea"),
        nullable("created_timestamp", "bigint"),
        not_null("id", "bigint"),
        nullable("fee_exempt_key_list", "bytea"),
        nullable("fee_schedule_key", "bytea"),
        nullable("submit_key", "bytea"),
        TIMESTAMP_RANGE,
    ),
    key=("id",),
    history=True,
    keep_existing=frozenset({"created_timestamp"}),
)

TOPIC_MESSAGE = Table(
    "topic_message",
    (
        not_null("consensus_timestamp", "nanos_timestamp"),
        not_null("message", "bytea"),
        not_null("running_hash", "bytea"),
        not_null("sequence_number", "bigint"),
        nullable("running_hash_version", "smallint"),
        nullable("chunk_num", "integer"),
        nullable("chunk_total", "integer"),
        nullable("payer_account_id", "entity_id"),
        nullable("valid_start_timestamp", "nanos_timestamp"),
        not_null("topic_id", "bigint"),
        nullable("initial_transaction_id", "bytea"),
    ),
)

TOPIC_MESSAGE_LOOKUP = Table(
    "topic_message_lookup",
    (
        not_null("partition", "text"),
        not_null("sequence_number_range", "int8range"),
        not_null("timestamp_range", "int8range"),
        not_null("topic_id", "bigint"),
    ),
    key=("topic_id", "partition"),
)

SCHEDULE = Table(
    "schedule",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("creator_account_id", "bigint"),
        nullable("executed_timestamp", "bigint"),
        not_null("payer_account_id", "bigint"),
        not_null("schedule_id", "bigint"),
        not_null("transaction_body", "bytea"),
        nullable("expiration_time", "bigint"),
        not_null("wait_for_expiry", "boolean", False),
    ),
    key=("schedule_id",),
    # only executed_timestamp changes after the ScheduleCreate (the reference's schedule merge)
    keep_existing=frozenset(
        {
            "consensus_timestamp",
            "creator_account_id",
            "payer_account_id",
            "transaction_body",
            "expiration_time",
            "wait_for_expiry",
        }
    ),
)

TRANSACTION_SIGNATURE = Table(
    "transaction_signature",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("public_key_prefix", "bytea"),
        nullable("entity_id", "bigint"),
        not_null("signature", "bytea"),
        nullable("type", "smallint"),
    ),
)
