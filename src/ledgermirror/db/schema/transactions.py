"""Transactions and what each one records: hbar and token transfers, hashes, the entities it touched,
assessed custom fees and PRNG outcomes (``0023_network_freeze_prng.sql``)."""

from __future__ import annotations

from ledgermirror.db.schema.model import Table, not_null, nullable

TRANSACTION = Table(
    "transaction",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("type", "smallint"),
        not_null("result", "smallint"),
        not_null("payer_account_id", "entity_id"),
        not_null("valid_start_ns", "bigint"),
        nullable("valid_duration_seconds", "bigint"),
        nullable("node_account_id", "entity_id"),
        nullable("entity_id", "entity_id"),
        nullable("initial_balance", "bigint", 0),
        nullable("max_fee", "hbar_tinybars"),
        nullable("charged_tx_fee", "bigint"),
        nullable("memo", "bytea"),
        nullable("transaction_hash", "bytea"),
        nullable("transaction_bytes", "bytea"),
        not_null("scheduled", "boolean", False),
        not_null("nonce", "integer", 0),
        nullable("parent_consensus_timestamp", "bigint"),
        nullable("errata", "errata_type"),
        nullable("index", "integer"),
        nullable("nft_transfer", "jsonb"),
        nullable("itemized_transfer", "jsonb"),
        nullable("transaction_record_bytes", "bytea"),
        nullable("max_custom_fees", "bytea[]"),
        nullable("batch_key", "bytea"),
        nullable("inner_transactions", "bigint[]"),
        not_null("high_volume", "boolean", False),
        nullable("congestion_pricing_multiplier", "bigint"),
        nullable("high_volume_pricing_multiplier", "bigint"),
    ),
    key=("consensus_timestamp",),
)

CRYPTO_TRANSFER = Table(
    "crypto_transfer",
    (
        not_null("entity_id", "entity_id"),
        not_null("consensus_timestamp", "nanos_timestamp"),
        not_null("amount", "hbar_tinybars"),
        not_null("payer_account_id", "bigint"),
        nullable("is_approval", "boolean"),
        nullable("errata", "errata_type"),
    ),
)

TOKEN_TRANSFER = Table(
    "token_transfer",
    (
        not_null("token_id", "entity_id"),
        not_null("account_id", "entity_id"),
        not_null("consensus_timestamp", "bigint"),
        not_null("amount", "hbar_tinybars"),
        not_null("payer_account_id", "bigint"),
        nullable("is_approval", "boolean"),
    ),
)

TRANSACTION_HASH = Table(
    "transaction_hash",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("hash", "bytea"),
        nullable("payer_account_id", "bigint"),
        nullable("hash_suffix", "bytea"),
    ),
)

ENTITY_TRANSACTION = Table(
    "entity_transaction",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("entity_id", "bigint"),
        not_null("payer_account_id", "bigint"),
        not_null("result", "smallint"),
        not_null("type", "smallint"),
    ),
    key=("entity_id", "consensus_timestamp"),
)

ASSESSED_CUSTOM_FEE = Table(
    "assessed_custom_fee",
    (
        not_null("amount", "bigint"),
        not_null("collector_account_id", "bigint"),
        not_null("consensus_timestamp", "bigint"),
        nullable("token_id", "bigint"),
        not_null("effective_payer_account_ids", "bigint[]"),
        not_null("payer_account_id", "bigint"),
    ),
)

PRNG = Table(
    "prng",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("payer_account_id", "bigint"),
        not_null("range", "integer"),
        nullable("prng_bytes", "bytea"),
        nullable("prng_number", "integer"),
    ),
    key=("consensus_timestamp",),
)
