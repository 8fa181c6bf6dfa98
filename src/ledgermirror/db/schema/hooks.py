"""Hooks, their storage and its changes (``0024_hooks.sql``)."""

from __future__ import annotations

from ledgermirror.db.schema.model import RANGE_COLUMN, Table, not_null, nullable

HOOK = Table(
    "hook",
    (
        nullable("contract_id", "bigint"),
        nullable("created_timestamp", "bigint"),
        not_null("hook_id", "bigint"),
        not_null("owner_id", "bigint"),
        nullable(RANGE_COLUMN, "int8range"),
        not_null("extension_point", "hook_extension_point", "ACCOUNT_ALLOWANCE_HOOK"),
        not_null("deleted", "boolean", False),
        nullable("admin_key", "bytea"),
        not_null("type", "hook_type", "EVM"),
    ),
    key=("owner_id", "hook_id"),
    history=True,
)

HOOK_STORAGE = Table(
    "hook_storage",
    (
        not_null("created_timestamp", "bigint"),
        not_null("hook_id", "bigint"),
        not_null("modified_timestamp", "bigint"),
        not_null("owner_id", "bigint"),
        not_null("key", "bytea"),
        not_null("value", "bytea"),
        not_null("deleted", "boolean", False),
    ),
    key=("owner_id", "hook_id", "key"),
)

HOOK_STORAGE_CHANGE = Table(
    "hook_storage_change",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("hook_id", "bigint"),
        not_null("owner_id", "bigint"),
        not_null("key", "bytea"),
        not_null("value_read", "bytea"),
        nullable("value_written", "bytea"),
        not_null("deleted", "boolean", False),
    ),
    key=("owner_id", "hook_id", "key", "consensus_timestamp"),
)
