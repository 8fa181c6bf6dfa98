"""Tokens, NFTs, token associations, token and NFT allowances, airdrops and custom fees."""

from __future__ import annotations

from ledgermirror.db.schema.model import TIMESTAMP_RANGE, Table, not_null, nullable
from ledgermirror.ledger.int64 import INT64_MAX

TOKEN = Table(
    "token",
    (
        not_null("token_id", "entity_id"),
        not_null("created_timestamp", "bigint"),
        not_null("decimals", "bigint"),
        not_null("freeze_default", "boolean", False),
        nullable("freeze_key", "bytea"),
        not_null("initial_supply", "bigint"),
        nullable("kyc_key", "bytea"),
        not_null("name", "character varying(100)"),
        nullable("supply_key", "bytea"),
        not_null("symbol", "character varying(100)"),
        not_null("total_supply", "bigint", 0),
        not_null("treasury_account_id", "entity_id"),
        nullable("wipe_key", "bytea"),
        not_null("max_supply", "bigint", INT64_MAX),
        not_null("supply_type", "token_supply_type", "INFINITE"),
        not_null("type", "token_type", "FUNGIBLE_COMMON"),
        nullable("fee_schedule_key", "bytea"),
        nullable("pause_key", "bytea"),
        not_null("pause_status", "token_pause_status", "NOT_APPLICABLE"),
        TIMESTAMP_RANGE,
        not_null("freeze_status", "smallint"),
        not_null("kyc_status", "smallint"),
        nullable("metadata", "bytea"),
        nullable("metadata_key", "bytea"),
    ),
    key=("token_id",),
    history=True,
    keep_existing=frozenset(
        {"created_timestamp", "decimals", "freeze_default", "initial_supply", "max_supply", "supply_type", "type"}
    ),
    inserted_with="created_timestamp",  # an update of a token never seen created is dropped
)

TOKEN_ACCOUNT = Table(
    "token_account",
    (
        not_null("account_id", "bigint"),
        not_null("associated", "boolean", False),
        nullable("automatic_association", "boolean"),
        nullable("created_timestamp", "bigint"),
        nullable("freeze_status", "smallint"),
        nullable("kyc_status", "smallint"),
        TIMESTAMP_RANGE,
        not_null("token_id", "bigint"),
        not_null("balance", "bigint", 0),
        nullable("balance_timestamp", "bigint"),
    ),
    key=("account_id", "token_id"),
    history=True,
)

TOKEN_ALLOWANCE = Table(
    "token_allowance",
    (
        not_null("amount_granted", "bigint"),
        not_null("owner", "bigint"),
        not_null("payer_account_id", "bigint"),
        not_null("spender", "bigint"),
        TIMESTAMP_RANGE,
        not_null("token_id", "bigint"),
        not_null("amount", "bigint", 0),
    ),
    key=("owner", "spender", "token_id"),
    history=True,
)

NFT_ALLOWANCE = Table(
    "nft_allowance",
    (
        not_null("approved_for_all", "boolean"),
        not_null("owner", "bigint"),
        not_null("payer_account_id", "bigint"),
        not_null("spender", "bigint"),
        TIMESTAMP_RANGE,
        not_null("token_id", "bigint"),
    ),
    key=("owner", "spender", "token_id"),
    history=True,
)

NFT = Table(
    "nft",
    (
        nullable("account_id", "bigint"),
        nullable("created_timestamp", "bigint"),
        nullable("deleted", "boolean", False),
        nullable("metadata", "bytea"),
        not_null("serial_number", "bigint"),
        not_null("token_id", "bigint"),
        nullable("delegating_spender", "bigint"),
        nullable("spender", "bigint"),
        TIMESTAMP_RANGE,
    ),
    key=("token_id", "serial_number"),
    history=True,
    replace_nulls=frozenset({"spender", "delegating_spender"}),  # any later change clears them
)

TOKEN_AIRDROP = Table(
    "token_airdrop",
    (
        nullable("amount", "bigint"),
        not_null("receiver_account_id", "bigint"),
        not_null("sender_account_id", "bigint"),
        not_null("serial_number", "bigint"),
        not_null("state", "airdrop_state", "PENDING"),
        TIMESTAMP_RANGE,
        not_null("token_id", "bigint"),
    ),
    key=("sender_account_id", "receiver_account_id", "token_id", "serial_number"),
    key_is_primary=False,
    history=True,
)

CUSTOM_FEE = Table(
    "custom_fee",
    (
        nullable("fixed_fees", "jsonb"),
        nullable("fractional_fees", "jsonb"),
        nullable("royalty_fees", "jsonb"),
        TIMESTAMP_RANGE,
        not_null("entity_id", "bigint"),
    ),
    key=("entity_id",),
    history=True,
    replace_nulls=frozenset({"fixed_fees", "fractional_fees", "royalty_fees"}),  # a schedule replaces all lists
)
