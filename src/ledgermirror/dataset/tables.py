"""The tables the generator fills and, for each, the columns its records carry, in record order.

Columns left out get their database default (usually NULL). A generator yields ``(table, record)`` pairs; the
loader groups them per table and copies them in chunks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

Record = tuple[object, ...]


@dataclass(frozen=True, eq=False)
class Table:
    """A target table and the columns of its records (identity-hashed, so cheap as a dict key)."""

    name: str
    columns: tuple[str, ...]


Emit = Iterator[tuple[Table, Record]]

ENTITY = Table(
    "entity",
    (
        "id", "shard", "realm", "num", "type", "key", "public_key", "alias", "evm_address", "memo",
        "created_timestamp", "timestamp_range", "deleted", "expiration_timestamp", "auto_renew_period",
        "auto_renew_account_id", "receiver_sig_required", "max_automatic_token_associations", "ethereum_nonce",
        "decline_reward", "staked_account_id", "staked_node_id", "stake_period_start", "balance",
        "balance_timestamp",
    ),
)  # fmt: skip
CONTRACT = Table("contract", ("id", "file_id", "initcode", "runtime_bytecode"))
TOKEN = Table(
    "token",
    (
        "token_id", "created_timestamp", "decimals", "freeze_default", "freeze_key", "initial_supply", "kyc_key",
        "name", "supply_key", "symbol", "total_supply", "treasury_account_id", "wipe_key", "max_supply",
        "supply_type", "type", "fee_schedule_key", "pause_key", "pause_status", "timestamp_range", "freeze_status",
        "kyc_status", "metadata", "metadata_key",
    ),
)  # fmt: skip
CUSTOM_FEE = Table("custom_fee", ("entity_id", "timestamp_range", "fixed_fees", "fractional_fees", "royalty_fees"))
TOKEN_ACCOUNT = Table(
    "token_account",
    (
        "account_id", "token_id", "associated", "automatic_association", "created_timestamp", "freeze_status",
        "kyc_status", "timestamp_range", "balance", "balance_timestamp",
    ),
)  # fmt: skip
CRYPTO_ALLOWANCE = Table(
    "crypto_allowance", ("owner", "spender", "amount_granted", "amount", "payer_account_id", "timestamp_range")
)
TOKEN_ALLOWANCE = Table(
    "token_allowance",
    ("owner", "spender", "token_id", "amount_granted", "amount", "payer_account_id", "timestamp_range"),
)
NFT_ALLOWANCE = Table(
    "nft_allowance", ("owner", "spender", "token_id", "approved_for_all", "payer_account_id", "timestamp_range")
)
NFT = Table(
    "nft",
    (
        "token_id", "serial_number", "account_id", "created_timestamp", "deleted", "metadata", "spender",
        "delegating_spender", "timestamp_range",
    ),
)  # fmt: skip
TOKEN_AIRDROP = Table(
    "token_airdrop",
    (
        "sender_account_id",
        "receiver_account_id",
        "token_id",
        "serial_number",
        "amount",
        "state",
        "timestamp_range",
    ),
)
ENTITY_STAKE = Table(
    "entity_stake",
    (
        "id", "end_stake_period", "pending_reward", "staked_node_id_start", "staked_to_me", "stake_total_start",
        "timestamp_range",
    ),
)  # fmt: skip
ACCOUNT_BALANCE = Table("account_balance", ("consensus_timestamp", "account_id", "balance"))
TOKEN_BALANCE = Table("token_balance", ("consensus_timestamp", "account_id", "token_id", "balance"))
RECORD_FILE = Table(
    "record_file",
    (
        "name", "load_start", "load_end", "hash", "prev_hash", "consensus_start", "consensus_end", "count",
        "digest_algorithm", "hapi_version_major", "hapi_version_minor", "hapi_version_patch", "version",
        "file_hash", "index", "gas_used", "logs_bloom", "size", "sidecar_count", "software_version_major",
        "software_version_minor", "software_version_patch",
    ),
)  # fmt: skip
TRANSACTION = Table(
    "transaction",
    (
        "consensus_timestamp", "type", "result", "payer_account_id", "valid_start_ns", "valid_duration_seconds",
        "node_account_id", "entity_id", "initial_balance", "max_fee", "charged_tx_fee", "memo", "transaction_hash",
        "scheduled", "nonce", "index", "high_volume",
    ),
)  # fmt: skip
TRANSACTION_HASH = Table("transaction_hash", ("consensus_timestamp", "hash", "payer_account_id", "hash_suffix"))
CRYPTO_TRANSFER = Table(
    "crypto_transfer", ("entity_id", "consensus_timestamp", "amount", "payer_account_id", "is_approval")
)
TOKEN_TRANSFER = Table(
    "token_transfer",
    ("token_id", "account_id", "consensus_timestamp", "amount", "payer_account_id", "is_approval"),
)
STAKING_REWARD_TRANSFER = Table(
    "staking_reward_transfer", ("account_id", "amount", "consensus_timestamp", "payer_account_id")
)
ADDRESS_BOOK = Table(
    "address_book", ("start_consensus_timestamp", "end_consensus_timestamp", "file_id", "node_count", "file_data")
)
ADDRESS_BOOK_ENTRY = Table(
    "address_book_entry",
    ("consensus_timestamp", "memo", "public_key", "node_id", "node_account_id", "node_cert_hash", "description",
     "stake"),
)  # fmt: skip
ADDRESS_BOOK_SERVICE_ENDPOINT = Table(
    "address_book_service_endpoint", ("consensus_timestamp", "ip_address_v4", "node_id", "port", "domain_name")
)
NODE = Table(
    "node",
    ("node_id", "account_id", "admin_key", "created_timestamp", "deleted", "timestamp_range", "decline_reward",
     "grpc_proxy_endpoint"),
)  # fmt: skip
NODE_STAKE = Table(
    "node_stake",
    (
        "consensus_timestamp", "epoch_day", "node_id", "reward_rate", "stake", "stake_rewarded", "staking_period",
        "max_stake", "min_stake", "stake_not_rewarded",
    ),
)  # fmt: skip
NETWORK_STAKE = Table(
    "network_stake",
    (
        "consensus_timestamp", "epoch_day", "max_staking_reward_rate_per_hbar", "node_reward_fee_denominator",
        "node_reward_fee_numerator", "stake_total", "staking_period", "staking_period_duration",
        "staking_periods_stored", "staking_reward_fee_denominator", "staking_reward_fee_numerator",
        "staking_reward_rate", "staking_start_threshold", "max_stake_rewarded", "max_total_reward",
        "reserved_staking_rewards", "reward_balance_threshold", "unreserved_staking_reward_balance",
    ),
)  # fmt: skip
FILE_DATA = Table("file_data", ("consensus_timestamp", "entity_id", "file_data", "transaction_type"))

ALL_TABLES = (
    ENTITY, CONTRACT, TOKEN, CUSTOM_FEE, TOKEN_ACCOUNT, CRYPTO_ALLOWANCE, TOKEN_ALLOWANCE, NFT_ALLOWANCE, NFT,
    TOKEN_AIRDROP, ENTITY_STAKE, ACCOUNT_BALANCE, TOKEN_BALANCE, RECORD_FILE, TRANSACTION, TRANSACTION_HASH,
    CRYPTO_TRANSFER, TOKEN_TRANSFER, STAKING_REWARD_TRANSFER, ADDRESS_BOOK, ADDRESS_BOOK_ENTRY,
    ADDRESS_BOOK_SERVICE_ENDPOINT, NODE, NODE_STAKE, NETWORK_STAKE, FILE_DATA,
)  # fmt: skip
