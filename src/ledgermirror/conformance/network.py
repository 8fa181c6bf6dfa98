"""Setup converters for blocks and network state: ``recordFiles``, ``addressbooks``, ``addressbookentries``,
``addressbookserviceendpoints``, ``nodes``, ``nodestakes``, ``networkstakes`` and ``filedata``.
"""

from __future__ import annotations

from typing import Any

from ledgermirror.conformance.entities import DEFAULT_PUBLIC_KEY
from ledgermirror.conformance.ids import Context, spec_id
from ledgermirror.conformance.rows import Row, pick
from ledgermirror.conformance.values import (
    buffer_from,
    js_truthy,
    json_text,
    node_hex,
    value_to_buffer,
)
from ledgermirror.ledger.system_files import EXCHANGE_RATE_FILE, FEE_SCHEDULE_FILE
from ledgermirror.ledger.transaction_codes import FILECREATE

_LAST_NANO_OF_DAY_0 = 86_400_000_000_000 - 1

# The text of the reference's default address book file_data, a backslash followed by 64 hex digits.
_DEFAULT_ADDRESS_BOOK_DATA = "\\x97c1fc0a6ed5551bc831571325e9bdb365d06803100dc20648640ba24ce69750"
_DEFAULT_NODE_CERT_HASH = (
    "01d173753810c0aae794ba72d5443c292e9ff962b01046220dd99f5816422696e0569c977e2f169e1e5688afc8f4aa16"
)
# The reference writes 1664365660048674966 as a JS number literal; node-postgres sends String() of that
# double, which is 1664365660048675000.
_DEFAULT_NODE_CREATED_TIMESTAMP = 1664365660048675000

_RECORD_FILE_DEFAULTS: dict[str, Any] = {
    "bytes": "0x010102020303",
    "consensus_end": 1628751573995691000,
    "consensus_start": 1628751572000852000,
    "count": 1200,
    "digest_algorithm": 0,
    "file_hash": (
        "dee34bdd8bbe32fdb53ce7e3cf764a0495fa5e93b15ca567208cfb384231301bedf821de07b0d8dc3fb55c5b3c90ac61"
    ),
    "gas_used": 0,
    "hapi_version_major": 0,
    "hapi_version_minor": 11,
    "hapi_version_patch": 0,
    "hash": ("ed55d98d53fd55c9caf5f61affe88cd2978d37128ec54af5dace29b6fd271cbd079ebe487bda5f227087e2638b1100cf"),
    "index": 123456789,
    "load_end": 1629298236,
    "load_start": 1629298233,
    "logs_bloom": b"",
    "name": "2021-08-12T06_59_32.000852000Z.rcd",
    "prev_hash": "0" * 96,
    "size": 6,
    "version": 5,
}

_NETWORK_STAKE_DEFAULTS: dict[str, Any] = {
    "consensus_timestamp": 0,
    "epoch_day": 0,
    "max_stake_rewarded": 10,
    "max_staking_reward_rate_per_hbar": 17808,
    "max_total_reward": 20,
    "node_reward_fee_denominator": 0,
    "node_reward_fee_numerator": 100,
    "reserved_staking_rewards": 30,
    "reward_balance_threshold": 40,
    "stake_total": 10000000,
    "staking_period": _LAST_NANO_OF_DAY_0,
    "staking_period_duration": 1440,
    "staking_periods_stored": 365,
    "staking_reward_fee_denominator": 100,
    "staking_reward_fee_numerator": 100,
    "staking_reward_rate": 100000000000,
    "staking_start_threshold": 25000000000000000,
    "unreserved_staking_reward_balance": 50,
}


def record_file_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``recordFiles``: ``size`` is the length of ``bytes`` whenever bytes is not null."""
    record = {**_RECORD_FILE_DEFAULTS, **item}
    record["bytes"] = value_to_buffer(record["bytes"])
    record["logs_bloom"] = value_to_buffer(record["logs_bloom"])
    content = record["bytes"]
    if isinstance(content, (bytes, bytearray)):
        record["size"] = len(content)
    elif content is not None:
        record["size"] = None  # ``bytes.length`` of a non-buffer value is undefined in the reference
    return [Row("record_file", pick(record, list(_RECORD_FILE_DEFAULTS)))]


def address_book_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``addressbooks``: a string file_data is stored as its UTF-8 bytes."""
    book = {
        "start_consensus_timestamp": 0,
        "end_consensus_timestamp": None,
        "file_id": 102,
        "node_count": 20,
        "file_data": _DEFAULT_ADDRESS_BOOK_DATA,
        **item,
    }
    given = item.get("file_data")
    book["file_data"] = given.encode() if isinstance(given, str) else buffer_from(book["file_data"])
    book["file_id"] = spec_id(book["file_id"], ctx)
    columns = ("start_consensus_timestamp", "end_consensus_timestamp", "file_id", "node_count", "file_data")
    return [Row("address_book", pick(book, columns))]


def address_book_entry_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``addressbookentries``: a string node_cert_hash is hex-decoded; the default is the UTF-8 of a hex text."""
    entry = {
        "consensus_timestamp": 0,
        "memo": ctx.id_text(3),
        "public_key": DEFAULT_PUBLIC_KEY,
        "node_id": 2000,
        "node_account_id": 3,
        "node_cert_hash": _DEFAULT_NODE_CERT_HASH,
        "description": "description",
        "stake": 0,
        **item,
    }
    given = item.get("node_cert_hash")
    entry["node_cert_hash"] = node_hex(given) if isinstance(given, str) else buffer_from(entry["node_cert_hash"])
    entry["node_account_id"] = spec_id(entry["node_account_id"], ctx)
    columns = (
        "consensus_timestamp",
        "memo",
        "public_key",
        "node_id",
        "node_account_id",
        "node_cert_hash",
        "description",
        "stake",
    )
    return [Row("address_book_entry", pick(entry, columns))]


def address_book_service_endpoint_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``addressbookserviceendpoints``: 127.0.0.1:50211 of node 0 by default."""
    endpoint = {
        "consensus_timestamp": 0,
        "domain_name": "",
        "ip_address_v4": "127.0.0.1",
        "node_id": 0,
        "port": 50211,
        **item,
    }
    columns = ("consensus_timestamp", "domain_name", "ip_address_v4", "node_id", "port")
    return [Row("address_book_service_endpoint", pick(endpoint, columns))]


def node_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``nodes``: always the current ``node`` table; admin_key by valueToBuffer (base64 default)."""
    node = {
        "account_id": None,
        "admin_key": "OiG1sc5qQaLDwUfqfBg8urypfFGcwlesArZzBDsEgvyr0MQ",
        "created_timestamp": _DEFAULT_NODE_CREATED_TIMESTAMP,
        "decline_reward": False,
        "deleted": False,
        "grpc_proxy_endpoint": {"domain_name": "localhost", "ip_address_v4": "", "port": 80},
        "node_id": 0,
        "timestamp_range": "[0,)",
        **item,
    }
    node["admin_key"] = value_to_buffer(node["admin_key"])
    endpoint = node["grpc_proxy_endpoint"]
    node["grpc_proxy_endpoint"] = json_text(endpoint) if js_truthy(endpoint) else None
    node["account_id"] = spec_id(node["account_id"], ctx)
    columns = (
        "account_id",
        "admin_key",
        "created_timestamp",
        "decline_reward",
        "deleted",
        "grpc_proxy_endpoint",
        "node_id",
        "timestamp_range",
    )
    return [Row("node", pick(node, columns))]


def _stake_row(table: str, defaults: dict[str, Any], item: dict[str, Any]) -> list[Row]:
    """Defaults merged with the item; every key not starting with ``_`` is a column."""
    stake = {**defaults, **item}
    return [Row(table, {key: stake[key] for key in sorted(stake) if not key.startswith("_")})]


def node_stake_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``nodestakes``: node 0, day 0, min 1 / max 2000 stake; staking_period the last ns of day 0."""
    defaults = {
        "consensus_timestamp": 0,
        "epoch_day": 0,
        "max_stake": 2000,
        "min_stake": 1,
        "node_id": 0,
        "reward_rate": 0,
        "stake": 0,
        "stake_not_rewarded": 0,
        "stake_rewarded": 0,
        "staking_period": _LAST_NANO_OF_DAY_0,
    }
    return _stake_row("node_stake", defaults, item)


def network_stake_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``networkstakes`` (a historical loader): the defaults of its last version."""
    return _stake_row("network_stake", _NETWORK_STAKE_DEFAULTS, item)


def file_data_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``filedata``: a string is hex for entity_id given as the number 111 or 112, else UTF-8."""
    entity = item.get("entity_id")
    hex_encoded = (
        isinstance(entity, (int, float))
        and not isinstance(entity, bool)
        and entity in (FEE_SCHEDULE_FILE, EXCHANGE_RATE_FILE)
    )
    data = {"transaction_type": FILECREATE, **item}
    given = item.get("file_data")
    if isinstance(given, str):
        data["file_data"] = node_hex(given) if hex_encoded else given.encode()
    else:
        data["file_data"] = buffer_from(data.get("file_data"))
    data["entity_id"] = spec_id(data.get("entity_id"), ctx)
    columns = ("file_data", "consensus_timestamp", "entity_id", "transaction_type")
    return [Row("file_data", pick(data, columns))]
