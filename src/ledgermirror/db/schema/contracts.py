"""Contract results, logs, actions, storage state and its changes, Ethereum transactions
(``0031_contracts.sql``); the contract transaction links and hashes (``0035_importer_rows.sql``)."""

from __future__ import annotations

from ledgermirror.db.schema.model import Table, not_null, nullable

CONTRACT_RESULT = Table(
    "contract_result",
    (
        not_null("function_parameters", "bytea"),
        not_null("gas_limit", "bigint"),
        nullable("function_result", "bytea"),
        nullable("gas_used", "bigint"),
        not_null("consensus_timestamp", "bigint"),
        nullable("amount", "bigint"),
        nullable("bloom", "bytea"),
        nullable("call_result", "bytea"),
        not_null("contract_id", "bigint"),
        nullable("created_contract_ids", "bigint[]"),
        nullable("error_message", "text"),
        not_null("payer_account_id", "bigint"),
        nullable("sender_id", "bigint"),
        nullable("failed_initcode", "bytea"),
        nullable("transaction_hash", "bytea"),
        nullable("transaction_index", "integer"),
        not_null("transaction_result", "smallint"),
        not_null("transaction_nonce", "integer", 0),
        nullable("gas_consumed", "bigint"),
    ),
    key=("consensus_timestamp",),
)

CONTRACT_LOG = Table(
    "contract_log",
    (
        not_null("bloom", "bytea"),
        not_null("consensus_timestamp", "bigint"),
        not_null("contract_id", "bigint"),
        not_null("data", "bytea"),
        not_null("index", "integer"),
        nullable("topic0", "bytea"),
        nullable("topic1", "bytea"),
        nullable("topic2", "bytea"),
        nullable("topic3", "bytea"),
        not_null("payer_account_id", "bigint"),
        nullable("root_contract_id", "bigint"),
        nullable("transaction_hash", "bytea"),
        nullable("transaction_index", "integer"),
        nullable("synthetic", "boolean"),
    ),
    key=("consensus_timestamp", "index"),
)

CONTRACT_ACTION = Table(
    "contract_action",
    (
        not_null("call_depth", "integer"),
        nullable("call_type", "integer"),
        nullable("caller", "bigint"),
        nullable("caller_type", "entity_type", "CONTRACT"),
        not_null("consensus_timestamp", "bigint"),
        not_null("gas", "bigint"),
        not_null("gas_used", "bigint"),
        not_null("index", "integer"),
        nullable("input", "bytea"),
        nullable("recipient_account", "bigint"),
        nullable("recipient_address", "bytea"),
        nullable("recipient_contract", "bigint"),
        nullable("result_data", "bytea"),
        not_null("result_data_type", "integer"),
        not_null("value", "bigint"),
        nullable("call_operation_type", "integer"),
        not_null("payer_account_id", "bigint"),
    ),
    key=("consensus_timestamp", "index"),
)

CONTRACT_STATE = Table(
    "contract_state",
    (
        not_null("contract_id", "bigint"),
        not_null("created_timestamp", "bigint"),
        not_null("modified_timestamp", "bigint"),
        not_null("slot", "bytea"),
        nullable("value", "bytea"),
    ),
    key=("contract_id", "slot"),
    keep_existing=frozenset({"created_timestamp"}),
)

CONTRACT_STATE_CHANGE = Table(
    "contract_state_change",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("contract_id", "bigint"),
        not_null("payer_account_id", "bigint"),
        not_null("slot", "bytea"),
        not_null("value_read", "bytea"),
        nullable("value_written", "bytea"),
        not_null("migration", "boolean", False),
    ),
    key=("consensus_timestamp", "contract_id", "slot"),
)

ETHEREUM_TRANSACTION = Table(
    "ethereum_transaction",
    (
        nullable("access_list", "bytea"),
        nullable("call_data_id", "bigint"),
        nullable("call_data", "bytea"),
        nullable("chain_id", "bytea"),
        not_null("consensus_timestamp", "bigint"),
        not_null("data", "bytea"),
        not_null("gas_limit", "bigint"),
        nullable("gas_price", "bytea"),
        not_null("hash", "bytea"),
        nullable("max_fee_per_gas", "bytea"),
        not_null("max_gas_allowance", "bigint"),
        nullable("max_priority_fee_per_gas", "bytea"),
        not_null("nonce", "bigint"),
        not_null("payer_account_id", "bigint"),
        nullable("recovery_id", "smallint"),
        not_null("signature_r", "bytea"),
        not_null("signature_s", "bytea"),
        nullable("signature_v", "bytea"),
        nullable("to_address", "bytea"),
        not_null("type", "smallint"),
        nullable("value", "bytea"),
        nullable("authorization_list", "jsonb"),
    ),
    key=("consensus_timestamp",),
)

CONTRACT_TRANSACTION = Table(
    "contract_transaction",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("contract_ids", "bigint[]"),
        not_null("entity_id", "bigint"),
        not_null("payer_account_id", "bigint"),
    ),
    key=("consensus_timestamp", "entity_id"),
)

CONTRACT_TRANSACTION_HASH = Table(
    "contract_transaction_hash",
    (
        not_null("consensus_timestamp", "bigint"),
        not_null("entity_id", "bigint"),
        not_null("hash", "bytea"),
        not_null("payer_account_id", "bigint"),
        not_null("transaction_result", "smallint"),
    ),
)
