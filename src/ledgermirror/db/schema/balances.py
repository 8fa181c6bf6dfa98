"""Balance snapshots: the account balance files and the account and token balances they carry."""

from __future__ import annotations

from ledgermirror.db.schema.model import Table, not_null, nullable

ACCOUNT_BALANCE = Table(
    "account_balance",
    (
        not_null("consensus_timestamp", "nanos_timestamp"),
        not_null("balance", "hbar_tinybars"),
        not_null("account_id", "entity_id"),
    ),
    key=("account_id", "consensus_timestamp"),
)

TOKEN_BALANCE = Table(
    "token_balance",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("account_id", "entity_id"),
        not_null("balance", "bigint"),
        not_null("token_id", "entity_id"),
    ),
    key=("account_id", "token_id", "consensus_timestamp"),
)

ACCOUNT_BALANCE_FILE = Table(
    "account_balance_file",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("count", "bigint"),
        not_null("load_start", "bigint"),
        not_null("load_end", "bigint"),
        nullable("file_hash", "character varying(96)"),
        not_null("name", "character varying(250)"),
        nullable("bytes", "bytea"),
        not_null("time_offset", "integer", 0),
        not_null("synthetic", "boolean", False),
    ),
    key=("consensus_timestamp",),
)
