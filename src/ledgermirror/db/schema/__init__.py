"""The declarative model of the mirror schema: every table the migrations create in schema ``public``.

One declaration per table gives its columns in table order, each with its PostgreSQL type (as
``format_type`` prints it), nullability and default (as the Python value the default expression yields), the
table's key (primary key, or the unique index the reference uses as conflict key) and whether it has a
``<table>_history`` twin (same columns, no key). ``tests/db/test_schema_model.py`` checks this model against a
freshly migrated database in both directions, so the model and ``migrations/*.sql`` cannot drift.

The package is laid out as: ``model.py`` (:class:`Column`, :class:`Table`, the column constructors), then one
module of declarations per domain: ``entities.py``, ``balances.py``, ``tokens.py``, ``blocks.py``,
``network.py``, ``transactions.py``, ``hooks.py``, ``topics_schedules.py``, ``contracts.py``. This module
collects them into :data:`BASE_TABLES` and :data:`TABLES`; import every name from here
(``from ledgermirror.db.schema import ...``).

The status service's tables (schema ``status``) are not modelled: ``status/`` owns and writes them itself.
The migration runner's own ``ledgermirror_schema_history`` table is not part of the mirror schema either.

The writer (``db/write.py``) takes rows by table and column name and types their values from this model; the
merge rules of an upsert are declared per table too (``keep_existing``, ``replace_nulls``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ledgermirror.db.schema.balances import ACCOUNT_BALANCE, ACCOUNT_BALANCE_FILE, TOKEN_BALANCE
from ledgermirror.db.schema.blocks import IMPORT_STATUS, RECORD_FILE, SIDECAR_FILE, SIGNATURE_EVIDENCE
from ledgermirror.db.schema.contracts import (
    CONTRACT_ACTION,
    CONTRACT_LOG,
    CONTRACT_RESULT,
    CONTRACT_STATE,
    CONTRACT_STATE_CHANGE,
    CONTRACT_TRANSACTION,
    CONTRACT_TRANSACTION_HASH,
    ETHEREUM_TRANSACTION,
)
from ledgermirror.db.schema.entities import (
    CONTRACT,
    CRYPTO_ALLOWANCE,
    ENTITY,
    ENTITY_STAKE,
    STAKING_REWARD_TRANSFER,
)
from ledgermirror.db.schema.hooks import HOOK, HOOK_STORAGE, HOOK_STORAGE_CHANGE
from ledgermirror.db.schema.model import (
    HISTORY_SUFFIX,
    NO_DEFAULT,
    RANGE_COLUMN,
    Column,
    Kind,
    SchemaError,
    Table,
    record_maker,
)
from ledgermirror.db.schema.network import (
    ADDRESS_BOOK,
    ADDRESS_BOOK_ENTRY,
    ADDRESS_BOOK_SERVICE_ENDPOINT,
    FILE_DATA,
    LEDGER,
    NETWORK_FREEZE,
    NETWORK_STAKE,
    NODE,
    NODE_STAKE,
    REGISTERED_NODE,
)
from ledgermirror.db.schema.tokens import (
    CUSTOM_FEE,
    NFT,
    NFT_ALLOWANCE,
    TOKEN,
    TOKEN_ACCOUNT,
    TOKEN_AIRDROP,
    TOKEN_ALLOWANCE,
)
from ledgermirror.db.schema.topics_schedules import (
    SCHEDULE,
    TOPIC,
    TOPIC_MESSAGE,
    TOPIC_MESSAGE_LOOKUP,
    TRANSACTION_SIGNATURE,
)
from ledgermirror.db.schema.transactions import (
    ASSESSED_CUSTOM_FEE,
    CRYPTO_TRANSFER,
    ENTITY_TRANSACTION,
    PRNG,
    TOKEN_TRANSFER,
    TRANSACTION,
    TRANSACTION_HASH,
)

__all__ = [
    "ACCOUNT_BALANCE",
    "ACCOUNT_BALANCE_FILE",
    "ADDRESS_BOOK",
    "ADDRESS_BOOK_ENTRY",
    "ADDRESS_BOOK_SERVICE_ENDPOINT",
    "ASSESSED_CUSTOM_FEE",
    "BASE_TABLES",
    "CONTRACT",
    "CONTRACT_ACTION",
    "CONTRACT_LOG",
    "CONTRACT_RESULT",
    "CONTRACT_STATE",
    "CONTRACT_STATE_CHANGE",
    "CONTRACT_TRANSACTION",
    "CONTRACT_TRANSACTION_HASH",
    "CRYPTO_ALLOWANCE",
    "CRYPTO_TRANSFER",
    "CUSTOM_FEE",
    "ENTITY",
    "ENTITY_STAKE",
    "ENTITY_TRANSACTION",
    "ETHEREUM_TRANSACTION",
    "FILE_DATA",
    "HISTORY_SUFFIX",
    "HOOK",
    "HOOK_STORAGE",
    "HOOK_STORAGE_CHANGE",
    "IMPORT_STATUS",
    "LEDGER",
    "NETWORK_FREEZE",
    "NETWORK_STAKE",
    "NFT",
    "NFT_ALLOWANCE",
    "NODE",
    "NODE_STAKE",
    "NO_DEFAULT",
    "PRNG",
    "RANGE_COLUMN",
    "RECORD_FILE",
    "REGISTERED_NODE",
    "SCHEDULE",
    "SIDECAR_FILE",
    "SIGNATURE_EVIDENCE",
    "STAKING_REWARD_TRANSFER",
    "TABLES",
    "TOKEN",
    "TOKEN_ACCOUNT",
    "TOKEN_AIRDROP",
    "TOKEN_ALLOWANCE",
    "TOKEN_BALANCE",
    "TOKEN_TRANSFER",
    "TOPIC",
    "TOPIC_MESSAGE",
    "TOPIC_MESSAGE_LOOKUP",
    "TRANSACTION",
    "TRANSACTION_HASH",
    "TRANSACTION_SIGNATURE",
    "Column",
    "Kind",
    "SchemaError",
    "Table",
    "record_maker",
    "routed",
    "table",
]

BASE_TABLES: tuple[Table, ...] = (
    ENTITY, ACCOUNT_BALANCE, TOKEN_BALANCE, ACCOUNT_BALANCE_FILE, TOKEN, TOKEN_ACCOUNT, CRYPTO_ALLOWANCE,
    TOKEN_ALLOWANCE, NFT_ALLOWANCE, NFT, TOKEN_AIRDROP, STAKING_REWARD_TRANSFER, ENTITY_STAKE, CUSTOM_FEE,
    RECORD_FILE, ADDRESS_BOOK, ADDRESS_BOOK_ENTRY, ADDRESS_BOOK_SERVICE_ENDPOINT, NODE, NODE_STAKE, NETWORK_STAKE,
    FILE_DATA, REGISTERED_NODE, TRANSACTION, CRYPTO_TRANSFER, TOKEN_TRANSFER, TRANSACTION_HASH, ENTITY_TRANSACTION,
    ASSESSED_CUSTOM_FEE, CONTRACT, NETWORK_FREEZE, PRNG, HOOK, HOOK_STORAGE, HOOK_STORAGE_CHANGE, TOPIC,
    TOPIC_MESSAGE, TOPIC_MESSAGE_LOOKUP, SCHEDULE, TRANSACTION_SIGNATURE, CONTRACT_RESULT, CONTRACT_LOG,
    CONTRACT_ACTION, CONTRACT_STATE, CONTRACT_STATE_CHANGE, ETHEREUM_TRANSACTION, CONTRACT_TRANSACTION,
    CONTRACT_TRANSACTION_HASH, SIDECAR_FILE, LEDGER, IMPORT_STATUS, SIGNATURE_EVIDENCE,
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
