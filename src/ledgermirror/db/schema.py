"""The declarative model of the mirror schema: every table the migrations create in schema ``public``.

One declaration per table gives its columns in table order, each with its PostgreSQL type (as
``format_type`` prints it), nullability and default (as the Python value the default expression yields), the
table's key (primary key, or the unique index the reference uses as conflict key) and whether it has a
``<table>_history`` twin (same columns, no key). ``tests/db/test_schema_model.py`` checks this model against a
freshly migrated database in both directions, so the model and ``migrations/*.sql`` cannot drift.

The status service's tables (schema ``status``) are not modelled: ``status/`` owns and writes them itself.
The migration runner's own ``ledgermirror_schema_history`` table is not part of the mirror schema either.

The writer (``db/write.py``) takes rows by table and column name and types their values from this model; the
merge rules of an upsert are declared per table here too (``keep_existing``, ``replace_nulls``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ledgermirror.ledger.int64 import INT64_MAX as _MAX_INT64

HISTORY_SUFFIX = "_history"
RANGE_COLUMN = "timestamp_range"


class _NoDefault(enum.Enum):
    NO_DEFAULT = "no default"


NO_DEFAULT = _NoDefault.NO_DEFAULT
"""A column without a ``DEFAULT`` clause (its default is NULL)."""


class SchemaError(ValueError):
    """A table or column name the model does not know."""


class Kind(enum.Enum):
    """How a column's values are encoded for a binary COPY."""

    SCALAR = "scalar"  # integers, booleans, text, bytea, enums (labels as str): passed as they are
    RANGE = "range"  # int8range: asyncpg.Range, a (lower, upper) pair meaning [lower, upper), or a lower bound
    JSON = "json"  # jsonb: JSON text, or a dict/list serialised on the way
    ARRAY = "array"  # arrays: any sequence


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str  # format_type(atttypid, atttypmod): "bigint", "character varying(100)", "entity_id", "bigint[]"
    nullable: bool = True
    default: object = NO_DEFAULT

    @property
    def cast_type(self) -> str:
        """The type without its modifier (``character varying(100)`` -> ``character varying``): a cast to it
        converts without truncating, so the column's own length check still applies on insert."""
        head, _, rest = self.type.partition("(")
        return head + rest.partition(")")[2] if rest else self.type

    @property
    def kind(self) -> Kind:
        if self.type.endswith("[]"):
            return Kind.ARRAY
        if self.type == "int8range":
            return Kind.RANGE
        if self.type == "jsonb":
            return Kind.JSON
        return Kind.SCALAR

    @property
    def required(self) -> bool:
        """NOT NULL without a default: every inserted row must give a value."""
        return not self.nullable and self.default is NO_DEFAULT

    @property
    def default_value(self) -> Any:
        """The value an omitted column gets (None when it has no default)."""
        return None if self.default is NO_DEFAULT else self.default


@dataclass(frozen=True)
class Table:
    """One table. ``key`` is the conflict key of an upsert (empty for append-only tables without one)."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()
    key_is_primary: bool = True  # False: the key is a unique index (token_airdrop), as in the reference
    history: bool = False  # has a <name>_history twin
    keep_existing: frozenset[str] = frozenset()  # an update never changes these once they are set
    replace_nulls: frozenset[str] = frozenset()  # a NULL in an update replaces the value (no coalescing)
    is_history_twin: bool = False
    by_name: Mapping[str, Column] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", MappingProxyType({column.name: column for column in self.columns}))
        if len(self.by_name) != len(self.columns):
            raise SchemaError(f"{self.name}: duplicate column")
        for name in (*self.key, *self.keep_existing, *self.replace_nulls):
            if name not in self.by_name:
                raise SchemaError(f"{self.name}: no column {name}")
        if self.history and RANGE_COLUMN not in self.by_name:
            raise SchemaError(f"{self.name}: a versioned table needs {RANGE_COLUMN}")

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    @property
    def history_name(self) -> str:
        if not self.history:
            raise SchemaError(f"table {self.name} has no history twin")
        return self.name + HISTORY_SUFFIX

    def column(self, name: str) -> Column:
        try:
            return self.by_name[name]
        except KeyError:
            raise SchemaError(f"table {self.name} has no column {name}") from None

    def check_columns(self, names: Iterable[str]) -> tuple[str, ...]:
        """The names, each checked against the model."""
        checked = tuple(names)
        unknown = [name for name in checked if name not in self.by_name]
        if unknown:
            raise SchemaError(f"table {self.name} has no column {', '.join(unknown)}")
        return checked

    def twin(self) -> Table:
        """The ``<name>_history`` table: the same columns, no key."""
        return Table(self.history_name, self.columns, is_history_twin=True)


def _c(name: str, type_: str, default: object = NO_DEFAULT) -> Column:
    return Column(name, type_, True, default)


def _n(name: str, type_: str, default: object = NO_DEFAULT) -> Column:
    """A NOT NULL column."""
    return Column(name, type_, False, default)


_RANGE = _n(RANGE_COLUMN, "int8range")

# Accounts, balances, tokens, NFTs, allowances, rewards, airdrops ---------------------------------------------

ENTITY = Table(
    "entity",
    (
        _c("auto_renew_account_id", "bigint"),
        _c("auto_renew_period", "bigint"),
        _c("created_timestamp", "bigint"),
        _c("deleted", "boolean"),
        _c("expiration_timestamp", "bigint"),
        _n("id", "bigint"),
        _c("key", "bytea"),
        _n("memo", "text", ""),
        _n("num", "bigint"),
        _c("public_key", "character varying"),
        _c("proxy_account_id", "bigint"),
        _n("realm", "bigint"),
        _n("shard", "bigint"),
        _c("receiver_sig_required", "boolean"),
        _c("max_automatic_token_associations", "integer"),
        _RANGE,
        _n("type", "entity_type", "UNKNOWN"),
        _c("alias", "bytea"),
        _c("ethereum_nonce", "bigint", 0),
        _c("evm_address", "bytea"),
        _n("decline_reward", "boolean", False),
        _c("staked_account_id", "bigint"),
        _c("staked_node_id", "bigint", -1),
        _c("stake_period_start", "bigint", -1),
        _c("obtainer_id", "bigint"),
        _c("permanent_removal", "boolean"),
        _c("balance", "bigint"),
        _c("balance_timestamp", "bigint"),
        _c("delegation_address", "bytea"),
    ),
    key=("id",),
    history=True,
    keep_existing=frozenset({"created_timestamp", "alias", "evm_address", "num", "realm", "shard"}),
)

ACCOUNT_BALANCE = Table(
    "account_balance",
    (
        _n("consensus_timestamp", "nanos_timestamp"),
        _n("balance", "hbar_tinybars"),
        _n("account_id", "entity_id"),
    ),
    key=("account_id", "consensus_timestamp"),
)

TOKEN_BALANCE = Table(
    "token_balance",
    (
        _n("consensus_timestamp", "bigint"),
        _n("account_id", "entity_id"),
        _n("balance", "bigint"),
        _n("token_id", "entity_id"),
    ),
    key=("account_id", "token_id", "consensus_timestamp"),
)

ACCOUNT_BALANCE_FILE = Table(
    "account_balance_file",
    (
        _n("consensus_timestamp", "bigint"),
        _n("count", "bigint"),
        _n("load_start", "bigint"),
        _n("load_end", "bigint"),
        _c("file_hash", "character varying(96)"),
        _n("name", "character varying(250)"),
        _c("bytes", "bytea"),
        _n("time_offset", "integer", 0),
        _n("synthetic", "boolean", False),
    ),
    key=("consensus_timestamp",),
)

TOKEN = Table(
    "token",
    (
        _n("token_id", "entity_id"),
        _n("created_timestamp", "bigint"),
        _n("decimals", "bigint"),
        _n("freeze_default", "boolean", False),
        _c("freeze_key", "bytea"),
        _n("initial_supply", "bigint"),
        _c("kyc_key", "bytea"),
        _n("name", "character varying(100)"),
        _c("supply_key", "bytea"),
        _n("symbol", "character varying(100)"),
        _n("total_supply", "bigint", 0),
        _n("treasury_account_id", "entity_id"),
        _c("wipe_key", "bytea"),
        _n("max_supply", "bigint", _MAX_INT64),
        _n("supply_type", "token_supply_type", "INFINITE"),
        _n("type", "token_type", "FUNGIBLE_COMMON"),
        _c("fee_schedule_key", "bytea"),
        _c("pause_key", "bytea"),
        _n("pause_status", "token_pause_status", "NOT_APPLICABLE"),
        _RANGE,
        _n("freeze_status", "smallint"),
        _n("kyc_status", "smallint"),
        _c("metadata", "bytea"),
        _c("metadata_key", "bytea"),
    ),
    key=("token_id",),
    history=True,
    keep_existing=frozenset(
        {"created_timestamp", "decimals", "freeze_default", "initial_supply", "max_supply", "supply_type", "type"}
    ),
)

TOKEN_ACCOUNT = Table(
    "token_account",
    (
        _n("account_id", "bigint"),
        _n("associated", "boolean", False),
        _c("automatic_association", "boolean"),
        _c("created_timestamp", "bigint"),
        _c("freeze_status", "smallint"),
        _c("kyc_status", "smallint"),
        _RANGE,
        _n("token_id", "bigint"),
        _n("balance", "bigint", 0),
        _c("balance_timestamp", "bigint"),
    ),
    key=("account_id", "token_id"),
    history=True,
)

CRYPTO_ALLOWANCE = Table(
    "crypto_allowance",
    (
        _n("amount_granted", "bigint"),
        _n("owner", "bigint"),
        _n("payer_account_id", "bigint"),
        _n("spender", "bigint"),
        _RANGE,
        _n("amount", "bigint", 0),
    ),
    key=("owner", "spender"),
    history=True,
)

TOKEN_ALLOWANCE = Table(
    "token_allowance",
    (
        _n("amount_granted", "bigint"),
        _n("owner", "bigint"),
        _n("payer_account_id", "bigint"),
        _n("spender", "bigint"),
        _RANGE,
        _n("token_id", "bigint"),
        _n("amount", "bigint", 0),
    ),
    key=("owner", "spender", "token_id"),
    history=True,
)

NFT_ALLOWANCE = Table(
    "nft_allowance",
    (
        _n("approved_for_all", "boolean"),
        _n("owner", "bigint"),
        _n("payer_account_id", "bigint"),
        _n("spender", "bigint"),
        _RANGE,
        _n("token_id", "bigint"),
    ),
    key=("owner", "spender", "token_id"),
    history=True,
)

NFT = Table(
    "nft",
    (
        _c("account_id", "bigint"),
        _c("created_timestamp", "bigint"),
        _c("deleted", "boolean", False),
        _c("metadata", "bytea"),
        _n("serial_number", "bigint"),
        _n("token_id", "bigint"),
        _c("delegating_spender", "bigint"),
        _c("spender", "bigint"),
        _RANGE,
    ),
    key=("token_id", "serial_number"),
    history=True,
    replace_nulls=frozenset({"spender", "delegating_spender"}),  # any later change clears them
)

TOKEN_AIRDROP = Table(
    "token_airdrop",
    (
        _c("amount", "bigint"),
        _n("receiver_account_id", "bigint"),
        _n("sender_account_id", "bigint"),
        _n("serial_number", "bigint"),
        _n("state", "airdrop_state", "PENDING"),
        _RANGE,
        _n("token_id", "bigint"),
    ),
    key=("sender_account_id", "receiver_account_id", "token_id", "serial_number"),
    key_is_primary=False,
    history=True,
)

STAKING_REWARD_TRANSFER = Table(
    "staking_reward_transfer",
    (
        _n("account_id", "bigint"),
        _n("amount", "bigint"),
        _n("consensus_timestamp", "bigint"),
        _n("payer_account_id", "bigint"),
    ),
    key=("consensus_timestamp", "account_id"),
)

ENTITY_STAKE = Table(
    "entity_stake",
    (
        _n("end_stake_period", "bigint"),
        _n("id", "bigint"),
        _n("pending_reward", "bigint"),
        _n("staked_node_id_start", "bigint"),
        _n("staked_to_me", "bigint"),
        _n("stake_total_start", "bigint"),
        _RANGE,
    ),
    key=("id",),
    history=True,
)

CUSTOM_FEE = Table(
    "custom_fee",
    (
        _c("fixed_fees", "jsonb"),
        _c("fractional_fees", "jsonb"),
        _c("royalty_fees", "jsonb"),
        _RANGE,
        _n("entity_id", "bigint"),
    ),
    key=("entity_id",),
    history=True,
    replace_nulls=frozenset({"fixed_fees", "fractional_fees", "royalty_fees"}),  # a schedule replaces all lists
)

# Blocks --------------------------------------------------------------------------------------------------------

RECORD_FILE = Table(
    "record_file",
    (
        _n("name", "character varying(250)"),
        _n("load_start", "bigint"),
        _n("load_end", "bigint"),
        _n("hash", "character varying(96)"),
        _n("prev_hash", "character varying(96)"),
        _n("consensus_start", "bigint"),
        _n("consensus_end", "bigint"),
        _n("count", "bigint"),
        _n("digest_algorithm", "integer"),
        _c("hapi_version_major", "integer"),
        _c("hapi_version_minor", "integer"),
        _c("hapi_version_patch", "integer"),
        _n("version", "integer"),
        _n("file_hash", "character varying(96)"),
        _c("bytes", "bytea"),
        _n("index", "bigint"),
        _c("gas_used", "bigint", -1),
        _c("logs_bloom", "bytea"),
        _c("size", "integer"),
        _n("sidecar_count", "integer", 0),
        _c("software_version_major", "integer"),
        _c("software_version_minor", "integer"),
        _c("software_version_patch", "integer"),
        _c("round_start", "bigint"),
        _c("round_end", "bigint"),
        _c("previous_wrapped_record_block_hash", "bytea"),
        _c("wrapped_record_block_hash", "bytea"),
        _c("receipts_root", "bytea"),
    ),
    key=("consensus_end",),
)

# Network -------------------------------------------------------------------------------------------------------

ADDRESS_BOOK = Table(
    "address_book",
    (
        _n("start_consensus_timestamp", "nanos_timestamp"),
        _c("end_consensus_timestamp", "nanos_timestamp"),
        _n("file_id", "entity_id"),
        _c("node_count", "integer"),
        _n("file_data", "bytea"),
    ),
    key=("start_consensus_timestamp",),
)

ADDRESS_BOOK_ENTRY = Table(
    "address_book_entry",
    (
        _n("consensus_timestamp", "nanos_timestamp"),
        _c("memo", "character varying(128)"),
        _c("public_key", "character varying(1024)"),
        _n("node_id", "bigint"),
        _n("node_account_id", "entity_id"),
        _c("node_cert_hash", "bytea"),
        _c("description", "character varying(100)"),
        _c("stake", "bigint"),
    ),
    key=("consensus_timestamp", "node_id"),
)

ADDRESS_BOOK_SERVICE_ENDPOINT = Table(
    "address_book_service_endpoint",
    (
        _n("consensus_timestamp", "bigint"),
        _n("ip_address_v4", "character varying(15)", ""),
        _n("node_id", "bigint"),
        _n("port", "integer"),
        _n("domain_name", "character varying(253)", ""),
    ),
)

NODE = Table(
    "node",
    (
        _c("admin_key", "bytea"),
        _c("created_timestamp", "bigint"),
        _n("deleted", "boolean", False),
        _n("node_id", "bigint"),
        _RANGE,
        _n("decline_reward", "boolean", False),
        _c("grpc_proxy_endpoint", "jsonb"),
        _c("account_id", "bigint"),
        _c("associated_registered_nodes", "bigint[]"),
    ),
    key=("node_id",),
    history=True,
    keep_existing=frozenset({"created_timestamp"}),
)

NODE_STAKE = Table(
    "node_stake",
    (
        _n("consensus_timestamp", "bigint"),
        _n("epoch_day", "bigint"),
        _n("node_id", "bigint"),
        _n("reward_rate", "bigint"),
        _n("stake", "bigint"),
        _n("stake_rewarded", "bigint"),
        _n("staking_period", "bigint"),
        _n("max_stake", "bigint"),
        _n("min_stake", "bigint"),
        _n("stake_not_rewarded", "bigint"),
    ),
    key=("consensus_timestamp", "node_id"),
)

NETWORK_STAKE = Table(
    "network_stake",
    (
        _n("consensus_timestamp", "bigint"),
        _n("epoch_day", "bigint"),
        _n("max_staking_reward_rate_per_hbar", "bigint"),
        _n("node_reward_fee_denominator", "bigint"),
        _n("node_reward_fee_numerator", "bigint"),
        _n("stake_total", "bigint"),
        _n("staking_period", "bigint"),
        _n("staking_period_duration", "bigint"),
        _n("staking_periods_stored", "bigint"),
        _n("staking_reward_fee_denominator", "bigint"),
        _n("staking_reward_fee_numerator", "bigint"),
        _n("staking_reward_rate", "bigint"),
        _n("staking_start_threshold", "bigint"),
        _n("max_stake_rewarded", "bigint", 0),
        _n("max_total_reward", "bigint", 0),
        _n("reserved_staking_rewards", "bigint", 0),
        _n("reward_balance_threshold", "bigint", 0),
        _n("unreserved_staking_reward_balance", "bigint", 0),
    ),
    key=("consensus_timestamp",),
)

FILE_DATA = Table(
    "file_data",
    (
        _c("file_data", "bytea"),
        _n("consensus_timestamp", "nanos_timestamp"),
        _n("entity_id", "entity_id"),
        _n("transaction_type", "smallint"),
    ),
    key=("consensus_timestamp",),
)

REGISTERED_NODE = Table(
    "registered_node",
    (
        _c("admin_key", "bytea"),
        _c("created_timestamp", "bigint"),
        _n("deleted", "boolean", False),
        _c("description", "character varying(100)"),
        _n("registered_node_id", "bigint"),
        _c("service_endpoints", "jsonb"),
        _RANGE,
        _n("type", "smallint[]", ()),
    ),
    key=("registered_node_id",),
)

# Transactions --------------------------------------------------------------------------------------------------

TRANSACTION = Table(
    "transaction",
    (
        _n("consensus_timestamp", "bigint"),
        _n("type", "smallint"),
        _n("result", "smallint"),
        _n("payer_account_id", "entity_id"),
        _n("valid_start_ns", "bigint"),
        _c("valid_duration_seconds", "bigint"),
        _c("node_account_id", "entity_id"),
        _c("entity_id", "entity_id"),
        _c("initial_balance", "bigint", 0),
        _c("max_fee", "hbar_tinybars"),
        _c("charged_tx_fee", "bigint"),
        _c("memo", "bytea"),
        _c("transaction_hash", "bytea"),
        _c("transaction_bytes", "bytea"),
        _n("scheduled", "boolean", False),
        _n("nonce", "integer", 0),
        _c("parent_consensus_timestamp", "bigint"),
        _c("errata", "errata_type"),
        _c("index", "integer"),
        _c("nft_transfer", "jsonb"),
        _c("itemized_transfer", "jsonb"),
        _c("transaction_record_bytes", "bytea"),
        _c("max_custom_fees", "bytea[]"),
        _c("batch_key", "bytea"),
        _c("inner_transactions", "bigint[]"),
        _n("high_volume", "boolean", False),
        _c("congestion_pricing_multiplier", "bigint"),
        _c("high_volume_pricing_multiplier", "bigint"),
    ),
    key=("consensus_timestamp",),
)

CRYPTO_TRANSFER = Table(
    "crypto_transfer",
    (
        _n("entity_id", "entity_id"),
        _n("consensus_timestamp", "nanos_timestamp"),
        _n("amount", "hbar_tinybars"),
        _n("payer_account_id", "bigint"),
        _c("is_approval", "boolean"),
        _c("errata", "errata_type"),
    ),
)

TOKEN_TRANSFER = Table(
    "token_transfer",
    (
        _n("token_id", "entity_id"),
        _n("account_id", "entity_id"),
        _n("consensus_timestamp", "bigint"),
        _n("amount", "hbar_tinybars"),
        _n("payer_account_id", "bigint"),
        _c("is_approval", "boolean"),
    ),
)

TRANSACTION_HASH = Table(
    "transaction_hash",
    (
        _n("consensus_timestamp", "bigint"),
        _n("hash", "bytea"),
        _c("payer_account_id", "bigint"),
        _c("hash_suffix", "bytea"),
    ),
)

ENTITY_TRANSACTION = Table(
    "entity_transaction",
    (
        _n("consensus_timestamp", "bigint"),
        _n("entity_id", "bigint"),
        _n("payer_account_id", "bigint"),
        _n("result", "smallint"),
        _n("type", "smallint"),
    ),
    key=("entity_id", "consensus_timestamp"),
)

ASSESSED_CUSTOM_FEE = Table(
    "assessed_custom_fee",
    (
        _n("amount", "bigint"),
        _n("collector_account_id", "bigint"),
        _n("consensus_timestamp", "bigint"),
        _c("token_id", "bigint"),
        _n("effective_payer_account_ids", "bigint[]"),
        _n("payer_account_id", "bigint"),
    ),
)

# Contracts -----------------------------------------------------------------------------------------------------

CONTRACT = Table(
    "contract",
    (
        _n("id", "bigint"),
        _c("file_id", "bigint"),
        _c("initcode", "bytea"),
        _c("runtime_bytecode", "bytea"),
    ),
    key=("id",),
)

# Freeze and PRNG (0023) -----------------------------------------------------------------------------------------

NETWORK_FREEZE = Table(
    "network_freeze",
    (
        _n("consensus_timestamp", "bigint"),
        _c("end_time", "bigint"),
        _n("file_hash", "bytea"),
        _c("file_id", "bigint"),
        _n("payer_account_id", "bigint"),
        _n("start_time", "bigint"),
        _n("type", "smallint"),
    ),
    key=("consensus_timestamp",),
)

PRNG = Table(
    "prng",
    (
        _n("consensus_timestamp", "bigint"),
        _n("payer_account_id", "bigint"),
        _n("range", "integer"),
        _c("prng_bytes", "bytea"),
        _c("prng_number", "integer"),
    ),
    key=("consensus_timestamp",),
)

# Hooks (0024) ----------------------------------------------------------------------------------------------------

HOOK = Table(
    "hook",
    (
        _c("contract_id", "bigint"),
        _c("created_timestamp", "bigint"),
        _n("hook_id", "bigint"),
        _n("owner_id", "bigint"),
        _c(RANGE_COLUMN, "int8range"),
        _n("extension_point", "hook_extension_point", "ACCOUNT_ALLOWANCE_HOOK"),
        _n("deleted", "boolean", False),
        _c("admin_key", "bytea"),
        _n("type", "hook_type", "EVM"),
    ),
    key=("owner_id", "hook_id"),
    history=True,
)

HOOK_STORAGE = Table(
    "hook_storage",
    (
        _n("created_timestamp", "bigint"),
        _n("hook_id", "bigint"),
        _n("modified_timestamp", "bigint"),
        _n("owner_id", "bigint"),
        _n("key", "bytea"),
        _n("value", "bytea"),
        _n("deleted", "boolean", False),
    ),
    key=("owner_id", "hook_id", "key"),
)

HOOK_STORAGE_CHANGE = Table(
    "hook_storage_change",
    (
        _n("consensus_timestamp", "bigint"),
        _n("hook_id", "bigint"),
        _n("owner_id", "bigint"),
        _n("key", "bytea"),
        _n("value_read", "bytea"),
        _c("value_written", "bytea"),
        _n("deleted", "boolean", False),
    ),
    key=("owner_id", "hook_id", "key", "consensus_timestamp"),
)

# Topics, topic messages, schedules, signatures (0030_topics_schedules.sql) ---------------------------------------

TOPIC = Table(
    "topic",
    (
        _c("admin_key", "bytea"),
        _c("created_timestamp", "bigint"),
        _n("id", "bigint"),
        _c("fee_exempt_key_list", "bytea"),
        _c("fee_schedule_key", "bytea"),
        _c("submit_key", "bytea"),
        _RANGE,
    ),
    key=("id",),
    history=True,
    keep_existing=frozenset({"created_timestamp"}),
)

TOPIC_MESSAGE = Table(
    "topic_message",
    (
        _n("consensus_timestamp", "nanos_timestamp"),
        _n("message", "bytea"),
        _n("running_hash", "bytea"),
        _n("sequence_number", "bigint"),
        _c("running_hash_version", "smallint"),
        _c("chunk_num", "integer"),
        _c("chunk_total", "integer"),
        _c("payer_account_id", "entity_id"),
        _c("valid_start_timestamp", "nanos_timestamp"),
        _n("topic_id", "bigint"),
        _c("initial_transaction_id", "bytea"),
    ),
)

TOPIC_MESSAGE_LOOKUP = Table(
    "topic_message_lookup",
    (
        _n("partition", "text"),
        _n("sequence_number_range", "int8range"),
        _n("timestamp_range", "int8range"),
        _n("topic_id", "bigint"),
    ),
    key=("topic_id", "partition"),
)

SCHEDULE = Table(
    "schedule",
    (
        _n("consensus_timestamp", "bigint"),
        _n("creator_account_id", "bigint"),
        _c("executed_timestamp", "bigint"),
        _n("payer_account_id", "bigint"),
        _n("schedule_id", "bigint"),
        _n("transaction_body", "bytea"),
        _c("expiration_time", "bigint"),
        _n("wait_for_expiry", "boolean", False),
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
        _n("consensus_timestamp", "bigint"),
        _n("public_key_prefix", "bytea"),
        _c("entity_id", "bigint"),
        _n("signature", "bytea"),
        _c("type", "smallint"),
    ),
)

BASE_TABLES: tuple[Table, ...] = (
    ENTITY, ACCOUNT_BALANCE, TOKEN_BALANCE, ACCOUNT_BALANCE_FILE, TOKEN, TOKEN_ACCOUNT, CRYPTO_ALLOWANCE,
    TOKEN_ALLOWANCE, NFT_ALLOWANCE, NFT, TOKEN_AIRDROP, STAKING_REWARD_TRANSFER, ENTITY_STAKE, CUSTOM_FEE,
    RECORD_FILE, ADDRESS_BOOK, ADDRESS_BOOK_ENTRY, ADDRESS_BOOK_SERVICE_ENDPOINT, NODE, NODE_STAKE, NETWORK_STAKE,
    FILE_DATA, REGISTERED_NODE, TRANSACTION, CRYPTO_TRANSFER, TOKEN_TRANSFER, TRANSACTION_HASH, ENTITY_TRANSACTION,
    ASSESSED_CUSTOM_FEE, CONTRACT, NETWORK_FREEZE, PRNG, HOOK, HOOK_STORAGE, HOOK_STORAGE_CHANGE, TOPIC,
    TOPIC_MESSAGE, TOPIC_MESSAGE_LOOKUP, SCHEDULE, TRANSACTION_SIGNATURE,
)  # fmt: skip
"""Every declared table, in migration order (history twins are derived, see :data:`TABLES`)."""


def _all_tables() -> Mapping[str, Table]:
    found: dict[str, Table] = {}
    for table in BASE_TABLES:
        found[table.name] = table
        if table.history:
            twin = table.twin()
            found[twin.name] = twin
    return MappingProxyType(found)


TABLES: Mapping[str, Table] = _all_tables()
"""Every table of schema ``public`` by name, ``_history`` twins included (read-only)."""


def table(name: str) -> Table:
    """The model of a table (``entity``, ``entity_history``, ...)."""
    try:
        return TABLES[name]
    except KeyError:
        raise SchemaError(f"table {name} does not exist") from None


def routed(name: str, closed: bool) -> Table:
    """Where a row of a versioned table goes: the table itself while its range is open, else its twin.

    A table without a twin takes every row."""
    base = table(name)
    return TABLES[base.history_name] if closed and base.history else base
