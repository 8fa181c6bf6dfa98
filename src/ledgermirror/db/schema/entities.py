"""The ``entity`` table (accounts, contracts, files, topics, tokens, schedules by id), contract bytecode, entity
stakes, staking reward transfers and hbar (crypto) allowances."""

from __future__ import annotations

from ledgermirror.db.schema.model import TIMESTAMP_RANGE, Table, not_null, nullable

ENTITY = Table(
    "entity",
    (
        nullable("auto_renew_account_id", "bigint"),
        nullable("auto_renew_period", "bigint"),
        nullable("created_timestamp", "bigint"),
        nullable("deleted", "boolean"),
        nullable("expiration_timestamp", "bigint"),
        not_null("id", "bigint"),
        nullable("key", "bytea"),
        not_null("memo", "text", ""),
        not_null("num", "bigint"),
        nullable("public_key", "character varying"),
        nullable("proxy_account_id", "bigint"),
        not_null("realm", "bigint"),
        not_null("shard", "bigint"),
        nullable("receiver_sig_required", "boolean"),
        nullable("max_automatic_token_associations", "integer"),
        TIMESTAMP_RANGE,
        not_null("type", "entity_type", "UNKNOWN"),
        nullable("alias", "bytea"),
        nullable("ethereum_nonce", "bigint", 0),
        nullable("evm_address", "bytea"),
        not_null("decline_reward", "boolean", False),
        nullable("staked_account_id", "bigint"),
        nullable("staked_node_id", "bigint", -1),
        nullable("stake_period_start", "bigint", -1),
        nullable("obtainer_id", "bigint"),
        nullable("permanent_removal", "boolean"),
        nullable("balance", "bigint"),
        nullable("balance_timestamp", "bigint"),
        nullable("delegation_address", "bytea"),
    ),
    key=("id",),
    history=True,
    keep_existing=frozenset({"created_timestamp", "alias", "evm_address", "num", "realm", "shard"}),
)

CRYPTO_ALLOWANCE = Table(
    "crypto_allowance",
    (
        not_null("amount_granted", "bigint"),
        not_null("owner", "bigint"),
        not_null("payer_account_id", "bigint"),
        not_null("spender", "bigint"),
        TIMESTAMP_RANGE,
        not_null("amount", "bigint", 0),
    ),
    key=("owner", "spender"),
    history=True,
)

STAKING_REWARD_TRANSFER = Table(
    "staking_reward_transfer",
    (
        not_null("account_id", "bigint"),
        not_null("amount", "bigint"),
        not_null("consensus_timestamp", "bigint"),
        not_null("payer_account_id", "bigint"),
    ),
    key=("consensus_timestamp", "account_id"),
)

ENTITY_STAKE = Table(
    "entity_stake",
    (
        not_null("end_stake_period", "bigint"),
        not_null("id", "bigint"),
        not_null("pending_reward", "bigint"),
        not_null("staked_node_id_start", "bigint"),
        not_null("staked_to_me", "bigint"),
        not_null("stake_total_start", "bigint"),
        TIMESTAMP_RANGE,
    ),
    key=("id",),
    history=True,
)

CONTRACT = Table(
    "contract",
    (
        not_null("id", "bigint"),
        nullable("file_id", "bigint"),
        nullable("initcode", "bytea"),
        nullable("runtime_bytecode", "bytea"),
    ),
    key=("id",),
)
