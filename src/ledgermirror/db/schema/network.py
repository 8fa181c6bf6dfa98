"""The network: address books, nodes, node and network stakes, file data (system files), registered
nodes and freezes (``0023_network_freeze_prng.sql``)."""

from __future__ import annotations

from ledgermirror.db.schema.model import TIMESTAMP_RANGE, Table, not_null, nullable

ADDRESS_BOOK = Table(
    "address_book",
    (
        not_null("start_consensus_timestamp", "nanos_timestamp"),
        nullable("end_consensus_timestamp", "nanos_timestamp"),
        not_null("file_id", "entity_id"),
        nullable("node_count", "integer"),
        not_null("file_data", "bytea"),
    ),
    key=("start_consensus_timestamp",),
)

ADDRESS_BOOK_ENTRY = Table(
    "address_book_entry",
    (
        not_null("consensus_timestamp", "nanos_timestamp"),
        nullable("memo", "character varying(128)"),
        nullable("public_key", "character varying(1024)"),
        not_null("node_id", "bigint"),
        not_null("node_account_id", "entity_id"),
        nullable("node_cert_hash", "bytea"),
        nullable("description", "character varying(100)"),
        nullable("stake", "bigint"),
    ),
    key=("consensus_timestamp", "node_id"),
)

ADDRESS_BOOK_SERVICE_ENDPOINT = Table(
    "address_book_service_endpoint",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("ip_address_v4", "character varying(15)", ""),
        not_null("node_id", "bigint"),
        not_null("port", "integer"),
        not_null("domain_name", "character varying(253)", ""),
    ),
)

NODE = Table(
    "node",
    (
        nullable("admin_key", "bytea"),
        nullable("created_timestamp", "bigint"),
        not_null("deleted", "boolean", False),
        not_null("node_id", "bigint"),
        TIMESTAMP_RANGE,
        not_null("decline_reward", "boolean", False),
        nullable("grpc_proxy_endpoint", "jsonb"),
        nullable("account_id", "bigint"),
        nullable("associated_registered_nodes", "bigint[]"),
    ),
    key=("node_id",),
    history=True,
    keep_existing=frozenset({"created_timestamp"}),
)

NODE_STAKE = Table(
    "node_stake",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("epoch_day", "bigint"),
        not_null("node_id", "bigint"),
        not_null("reward_rate", "bigint"),
        not_null("stake", "bigint"),
        not_null("stake_rewarded", "bigint"),
        not_null("staking_period", "bigint"),
        not_null("max_stake", "bigint"),
        not_null("min_stake", "bigint"),
        not_null("stake_not_rewarded", "bigint"),
    ),
    key=("consensus_timestamp", "node_id"),
)

NETWORK_STAKE = Table(
    "network_stake",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("epoch_day", "bigint"),
        not_null("max_staking_reward_rate_per_hbar", "bigint"),
        not_null("node_reward_fee_denominator", "bigint"),
        not_null("node_reward_fee_numerator", "bigint"),
        not_null("stake_total", "bigint"),
        not_null("staking_period", "bigint"),
        not_null("staking_period_duration", "bigint"),
        not_null("staking_periods_stored", "bigint"),
        not_null("staking_reward_fee_denominator", "bigint"),
        not_null("staking_reward_fee_numerator", "bigint"),
        not_null("staking_reward_rate", "bigint"),
        not_null("staking_start_threshold", "bigint"),
        not_null("max_stake_rewarded", "bigint", 0),
        not_null("max_total_reward", "bigint", 0),
        not_null("reserved_staking_rewards", "bigint", 0),
        not_null("reward_balance_threshold", "bigint", 0),
        not_null("unreserved_staking_reward_balance", "bigint", 0),
    ),
    key=("consensus_timestamp",),
)

FILE_DATA = Table(
    "file_data",
    (
        nullable("file_data", "bytea"),
        not_null("consensus_timestamp", "nanos_timestamp"),
        not_null("entity_id", "entity_id"),
        not_null("transaction_type", "smallint"),
    ),
    key=("consensus_timestamp",),
)

REGISTERED_NODE = Table(
    "registered_node",
    (
        nullable("admin_key", "bytea"),
        nullable("created_timestamp", "bigint"),
        not_null("deleted", "boolean", False),
        nullable("description", "character varying(100)"),
        not_null("registered_node_id", "bigint"),
        nullable("service_endpoints", "jsonb"),
        TIMESTAMP_RANGE,
        not_null("type", "smallint[]", ()),
    ),
    key=("registered_node_id",),
    history=True,
    keep_existing=frozenset({"created_timestamp"}),
)

NETWORK_FREEZE = Table(
    "network_freeze",
    (
        not_null("consensus_timestamp", "bigint"),
        nullable("end_time", "bigint"),
        not_null("file_hash", "bytea"),
        nullable("file_id", "bigint"),
        not_null("payer_account_id", "bigint"),
        not_null("start_time", "bigint"),
        not_null("type", "smallint"),
    ),
    key=("consensus_timestamp",),
)

LEDGER = Table(
    "ledger",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("history_proof_verification_key", "bytea"),
        not_null("ledger_id", "bytea"),
        not_null("node_contributions", "jsonb"),
    ),
    key=("ledger_id",),
)
