"""Settings from the environment (``environment.load``, used by ``Settings`` and ``StatusSettings``): every
variable of both services read once and converted by its field's type, every field type's bad values refused
with one line naming the variable, and the variables the README documents are exactly the fields."""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from ledgermirror.environment import SettingsError, convert
from ledgermirror.settings import Settings
from ledgermirror.status.config import StatusSettings
from ledgermirror.users import ApiUser, hash_password

ROOT = Path(__file__).resolve().parents[2]
HASH = hash_password("p", iterations=1, salt=b"0" * 16)


def _every_api_variable(tmp_path: Path) -> dict[str, tuple[str, object]]:
    """Each field of ``Settings``: a value other than its default as text, and what it must become."""
    listed = tmp_path / "users.json"
    listed.write_text(json.dumps([{"username": "b", "password_hash": HASH, "limit": 7}]))
    return {
        "db_url": ("postgresql://owner@db/mirror", "postgresql://owner@db/mirror"),
        "api_db_url": ("postgresql://reader@db/mirror", "postgresql://reader@db/mirror"),
        "replica_max_lag_seconds": ("12.5", 12.5),
        "replica_check_seconds": ("0.5", 0.5),
        "ingest_max_lag_seconds": ("60", 60.0),
        "data_dir": ("~/mirror-data", Path.home() / "mirror-data"),
        "embedded_shared_buffers_mb": ("2048", 2048),
        "embedded_max_wal_size_mb": ("4096", 4096),
        "api_role": ("reader", "reader"),
        "host": ("0.0.0.0", "0.0.0.0"),
        "port": (" 6001 ", 6001),
        "workers": ("2", 2),
        "http_header_timeout_seconds": ("11", 11),
        "http_body_timeout_seconds": ("31", 31),
        "http_keep_alive_seconds": ("6", 6),
        "http_max_connections": ("1_001", 1001),
        "shard": ("1", 1),
        "realm": ("2", 2),
        "limit_default": ("26", 26),
        "limit_max": ("101", 101),
        "max_repeated_query_parameters": ("9", 9),
        "statement_timeout_ms": ("5001", 5001),
        "pool_max_size": ("5", 5),
        "plan_cache_mode": ("AUTO", "auto"),
        "parallel_workers_per_query": ("2", 2),
        "max_in_flight": ("3", 3),
        "admission_wait_seconds": ("12.5", 12.5),
        "warm_up_seconds": ("0", 0.0),
        "statement_cache_size": ("0", 0),
        "db_max_idle_seconds": ("90.5", 90.5),
        "response_cache_entries": ("0", 0),
        "enable_delegation_address": ("off", False),
        "contract_result_defaults": ("false", False),
        "synthetic_contract_results": ("no", False),
        "token_balance_limit_multiple_accounts": ("51", 51),
        "token_balance_limit_single_account": ("1001", 1001),
        "bind_timestamp_range": ("TRUE", True),
        "max_transactions_timestamp_range_ns": ("1000", 1000),
        "topic_message_lookup": ("yes", True),
        "import_synthetic_log_evm_lookup": ("false", False),
        "pagination_probe": ("0", False),
        "schedule_signature_plain_base64": ("true", True),
        "fee_estimate_described_form": ("1", True),
        "contract_call_max_gas": ("1_000_000", 1_000_000),
        "contract_call_timeout_ms": ("2500", 2500),
        "contract_call_concurrency": ("4", 4),
        "contract_call_chain_id": ("295", 295),
        "import_balance_snapshot_enabled": ("false", False),
        "import_balance_snapshot_min_frequency_seconds": ("1800", 1800),
        "import_balance_snapshot_initial_delay_seconds": ("300", 300),
        "import_balance_snapshot_token_balances": ("no", False),
        "import_balance_files": ("true", True),
        "import_overlap": ("false", False),
        "users": (
            json.dumps([{"username": "a", "password_hash": HASH}]),
            (ApiUser("a", HASH, None), ApiUser("b", HASH, 7)),  # and the file's, after the variable's
        ),
        "users_file": (str(listed), listed),
        "grpc_port": ("0", 0),
        "grpc_max_subscriptions": ("10", 10),
        "grpc_max_subscriptions_per_client": ("3", 3),
        "grpc_max_subscription_seconds": ("60", 60),
        "grpc_idle_subscription_seconds": ("30", 30),
        "grpc_keep_alive_seconds": ("20", 20),
        "grpc_max_streams_per_connection": ("5", 5),
        "grpc_poll_interval_ms": ("250", 250),
        "grpc_end_time_interval_ms": ("1000", 1000),
        "grpc_subscriber_buffer": ("64", 64),
        "grpc_db_connections": ("2", 2),
        "grpc_check_topic_exists": ("false", False),
        "log_level": ("debug", "DEBUG"),
        "log_format": ("Text", "text"),
    }


EVERY_STATUS_VARIABLE: dict[str, tuple[str, object]] = {
    "host": ("::1", "::1"),
    "port": ("6002", 6002),
    "page_name": ("Our mirror", "Our mirror"),
    "page_url": ("https://status.example.org", "https://status.example.org"),
    "time_zone": ("Europe/Zurich", "Europe/Zurich"),
    "cache_seconds": ("0", 0),
    "wire": ("subset", "subset"),
    "pool_max_size": ("2", 2),
    "max_body_bytes": ("1024", 1024),
    "automation": ("false", False),
    "evaluate_seconds": ("5", 5),
    "window": ("40", 40),
    "missed_degraded": ("2", 2),
    "missed_major": ("8", 8),
    "lag_degraded_seconds": ("30", 30),
    "stall_seconds": ("120", 120),
    "rest_readiness_url": ("http://127.0.0.1:5551/health/readiness", "http://127.0.0.1:5551/health/readiness"),
    "grpc_target": ("127.0.0.1:5600", "127.0.0.1:5600"),
    "auto_incidents": ("true", True),
    "maintenance_minutes": ("90", 90),
}


class CountingEnvironment(Mapping[str, str]):
    """An environment that notes every variable read."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values
        self.reads: list[str] = []

    def __getitem__(self, name: str) -> str:
        self.reads.append(name)
        return self.values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)


def _check_every_variable(cls: Any, prefix: str, table: Mapping[str, tuple[str, object]]) -> None:
    names = [item.name for item in dataclasses.fields(cls)]
    assert sorted(table) == sorted(names)  # a new field needs its line above
    env = CountingEnvironment({prefix + name.upper(): text for name, (text, _) in table.items()})
    settings = cls.from_env(env)
    for name, (_, expected) in table.items():
        assert getattr(settings, name) == expected, name
        assert getattr(settings, name) != getattr(cls(), name), name  # the variable, not the default
    assert sorted(env.reads) == sorted(prefix + name.upper() for name in names)  # each read once, nothing else


def test_every_variable_of_the_api_is_read_once_and_converted_by_its_type(tmp_path: Path) -> None:
    _check_every_variable(Settings, "LEDGERMIRROR_", _every_api_variable(tmp_path))


def test_every_variable_of_the_status_service_is_read_once_and_converted_by_its_type() -> None:
    _check_every_variable(StatusSettings, "LEDGERMIRROR_STATUS_", EVERY_STATUS_VARIABLE)


def test_an_unset_or_empty_variable_keeps_the_default() -> None:
    assert Settings.from_env({}) == Settings()
    assert Settings.from_env({"LEDGERMIRROR_PORT": "", "LEDGERMIRROR_PAGINATION_PROBE": ""}) == Settings()
    assert StatusSettings.from_env({"LEDGERMIRROR_STATUS_WIRE": ""}) == StatusSettings()


BAD_VALUES: dict[str, list[tuple[str, str, str]]] = {
    # field type: (variable, text, the one-line message)
    "int in 1..65535": [
        ("LEDGERMIRROR_PORT", "web", "LEDGERMIRROR_PORT must be an integer, not 'web'"),
        ("LEDGERMIRROR_PORT", "65536", "LEDGERMIRROR_PORT must be from 1 to 65535, not '65536'"),
        ("LEDGERMIRROR_STATUS_PORT", "0", "LEDGERMIRROR_STATUS_PORT must be from 1 to 65535, not '0'"),
    ],
    "int in 0..65535": [
        ("LEDGERMIRROR_GRPC_PORT", "-1", "LEDGERMIRROR_GRPC_PORT must be from 0 to 65535, not '-1'"),
        ("LEDGERMIRROR_GRPC_PORT", "70000", "LEDGERMIRROR_GRPC_PORT must be from 0 to 65535, not '70000'"),
    ],
    "int at least 1": [
        ("LEDGERMIRROR_POOL_MAX_SIZE", "0", "LEDGERMIRROR_POOL_MAX_SIZE must be at least 1, not '0'"),
        (
            "LEDGERMIRROR_CONTRACT_CALL_CONCURRENCY",
            "0",
            "LEDGERMIRROR_CONTRACT_CALL_CONCURRENCY must be at least 1, not '0'",
        ),
        (
            "LEDGERMIRROR_CONTRACT_CALL_TIMEOUT_MS",
            "fast",
            "LEDGERMIRROR_CONTRACT_CALL_TIMEOUT_MS must be an integer, not 'fast'",
        ),
        (
            "LEDGERMIRROR_CONTRACT_CALL_CHAIN_ID",
            "0",
            "LEDGERMIRROR_CONTRACT_CALL_CHAIN_ID must be at least 1, not '0'",
        ),
        ("LEDGERMIRROR_LIMIT_MAX", "1.5", "LEDGERMIRROR_LIMIT_MAX must be an integer, not '1.5'"),
        (
            "LEDGERMIRROR_STATUS_MAX_BODY_BYTES",
            "0",
            "LEDGERMIRROR_STATUS_MAX_BODY_BYTES must be at least 1, not '0'",
        ),
    ],
    "int at least 0": [
        ("LEDGERMIRROR_SHARD", "-1", "LEDGERMIRROR_SHARD must be at least 0, not '-1'"),
        (
            "LEDGERMIRROR_EMBEDDED_SHARED_BUFFERS_MB",
            "-8",
            "LEDGERMIRROR_EMBEDDED_SHARED_BUFFERS_MB must be at least 0, not '-8'",
        ),
        (
            "LEDGERMIRROR_STATUS_CACHE_SECONDS",
            "-5",
            "LEDGERMIRROR_STATUS_CACHE_SECONDS must be at least 0, not '-5'",
        ),
    ],
    "int at least 21000": [
        (
            "LEDGERMIRROR_CONTRACT_CALL_MAX_GAS",
            "20999",
            "LEDGERMIRROR_CONTRACT_CALL_MAX_GAS must be at least 21000, not '20999'",
        ),
    ],
    "int in 900..604800": [
        (
            "LEDGERMIRROR_IMPORT_BALANCE_SNAPSHOT_MIN_FREQUENCY_SECONDS",
            "60",
            "LEDGERMIRROR_IMPORT_BALANCE_SNAPSHOT_MIN_FREQUENCY_SECONDS must be from 900 to 604800, not '60'",
        ),
    ],
    "int at least 64": [
        (
            "LEDGERMIRROR_EMBEDDED_MAX_WAL_SIZE_MB",
            "32",
            "LEDGERMIRROR_EMBEDDED_MAX_WAL_SIZE_MB must be at least 64, not '32'",
        ),
    ],
    "int at least 120": [
        (
            "LEDGERMIRROR_IMPORT_BALANCE_SNAPSHOT_INITIAL_DELAY_SECONDS",
            "119",
            "LEDGERMIRROR_IMPORT_BALANCE_SNAPSHOT_INITIAL_DELAY_SECONDS must be at least 120, not '119'",
        ),
    ],
    "float at least 1": [
        (
            "LEDGERMIRROR_DB_MAX_IDLE_SECONDS",
            "soon",
            "LEDGERMIRROR_DB_MAX_IDLE_SECONDS must be a number, not 'soon'",
        ),
        (
            "LEDGERMIRROR_DB_MAX_IDLE_SECONDS",
            "inf",
            "LEDGERMIRROR_DB_MAX_IDLE_SECONDS must be a finite number, not 'inf'",
        ),
        (
            "LEDGERMIRROR_DB_MAX_IDLE_SECONDS",
            "0.5",
            "LEDGERMIRROR_DB_MAX_IDLE_SECONDS must be at least 1, not '0.5'",
        ),
    ],
    "float at least 0": [
        (
            "LEDGERMIRROR_REPLICA_MAX_LAG_SECONDS",
            "-1",
            "LEDGERMIRROR_REPLICA_MAX_LAG_SECONDS must be at least 0, not '-1'",
        ),
        (
            "LEDGERMIRROR_INGEST_MAX_LAG_SECONDS",
            "a minute",
            "LEDGERMIRROR_INGEST_MAX_LAG_SECONDS must be a number, not 'a minute'",
        ),
        (
            "LEDGERMIRROR_WARM_UP_SECONDS",
            "-5",
            "LEDGERMIRROR_WARM_UP_SECONDS must be at least 0, not '-5'",
        ),
    ],
    "float at least 0.1": [
        (
            "LEDGERMIRROR_REPLICA_CHECK_SECONDS",
            "0.01",
            "LEDGERMIRROR_REPLICA_CHECK_SECONDS must be at least 0.1, not '0.01'",
        ),
        (
            "LEDGERMIRROR_ADMISSION_WAIT_SECONDS",
            "0",
            "LEDGERMIRROR_ADMISSION_WAIT_SECONDS must be at least 0.1, not '0'",
        ),
    ],
    "bool": [
        (
            "LEDGERMIRROR_PAGINATION_PROBE",
            "maybe",
            "LEDGERMIRROR_PAGINATION_PROBE must be true or false, not 'maybe'",
        ),
        (
            "LEDGERMIRROR_IMPORT_OVERLAP",
            "sometimes",
            "LEDGERMIRROR_IMPORT_OVERLAP must be true or false, not 'sometimes'",
        ),
        (
            "LEDGERMIRROR_CONTRACT_RESULT_DEFAULTS",
            "nulls",
            "LEDGERMIRROR_CONTRACT_RESULT_DEFAULTS must be true or false, not 'nulls'",
        ),
        (
            "LEDGERMIRROR_SYNTHETIC_CONTRACT_RESULTS",
            "maybe",
            "LEDGERMIRROR_SYNTHETIC_CONTRACT_RESULTS must be true or false, not 'maybe'",
        ),
    ],
    "Literal": [
        (
            "LEDGERMIRROR_PLAN_CACHE_MODE",
            "generic",
            "LEDGERMIRROR_PLAN_CACHE_MODE must be one of force_generic_plan, auto, force_custom_plan,"
            " not 'generic'",
        ),
        ("LEDGERMIRROR_LOG_FORMAT", "xml", "LEDGERMIRROR_LOG_FORMAT must be one of auto, json, text, not 'xml'"),
        ("LEDGERMIRROR_STATUS_WIRE", "all", "LEDGERMIRROR_STATUS_WIRE must be one of superset, subset, not 'all'"),
    ],
    "users (JSON)": [
        ("LEDGERMIRROR_USERS", "[", "LEDGERMIRROR_USERS is not JSON: Expecting value: line 1 column 2 (char 1)"),
        ("LEDGERMIRROR_USERS", '{"a": 1}', "LEDGERMIRROR_USERS: users must be an array"),
    ],
    "Path | None": [
        (
            "LEDGERMIRROR_USERS_FILE",
            "/nonexistent/users.json",
            "LEDGERMIRROR_USERS_FILE: cannot read the users file /nonexistent/users.json: [Errno 2] No such file"
            " or directory: '/nonexistent/users.json'",
        ),
    ],
    "time zone": [
        (
            "LEDGERMIRROR_STATUS_TIME_ZONE",
            "Mars/Olympus",
            "LEDGERMIRROR_STATUS_TIME_ZONE is not a known zone: 'Mars/Olympus'",
        ),
    ],
}


@pytest.mark.parametrize(
    ("variable", "text", "message"),
    [case for cases in BAD_VALUES.values() for case in cases],
)
def test_a_bad_value_is_one_line_naming_the_variable(variable: str, text: str, message: str) -> None:
    cls = StatusSettings if variable.startswith("LEDGERMIRROR_STATUS_") else Settings
    with pytest.raises(SettingsError) as raised:
        cls.from_env({variable: text})
    assert str(raised.value) == message
    assert "\n" not in str(raised.value)


def _kind(annotation: Any) -> str:
    """The name under which :data:`BAD_VALUES` tests an annotation's bad values."""
    if isinstance(annotation, type):
        return annotation.__name__
    text = str(annotation)
    if "Literal" in text:
        return "Literal"
    match = re.search(r"Annotated\[(int|float), Range\(low=([\d.]+)(?:, high=([\d.]+))?", text)
    if match:
        kind, low, high = match.groups()
        return f"{kind} in {low}..{high}" if high else f"{kind} at least {low}"
    return {
        "tuple[ledgermirror.users.ApiUser, ...]": "users (JSON)",
        "pathlib.Path | None": "Path | None",
    }.get(text, text)


ACCEPT_ANY_TEXT = {"str", "str | None", "Path"}
"""Annotations whose every text is a value (a path, a name, a URL): no bad value to refuse."""


def test_every_field_type_of_both_services_has_its_bad_values_tested() -> None:
    kinds = {
        _kind(annotation)
        for cls in (Settings, StatusSettings)
        for annotation in typing.get_type_hints(cls, include_extras=True).values()
    }
    assert kinds - ACCEPT_ANY_TEXT <= set(BAD_VALUES), kinds - ACCEPT_ANY_TEXT - set(BAD_VALUES)
    assert {"bool", "Literal", "int in 1..65535", "float at least 1", "Path"} <= kinds  # the names are right


def test_a_field_of_a_type_with_no_conversion_is_a_mistake_of_the_settings_class() -> None:
    with pytest.raises(TypeError):
        convert("LEDGERMIRROR_X", list[int], "[1]")
    with pytest.raises(TypeError):
        convert("LEDGERMIRROR_X", int | str, "1")


def test_the_readme_documents_exactly_the_variables_of_both_services() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Configuration") :]
    table = table[: table.index("\n## ", 1)]
    documented = set(re.findall(r"`(LEDGERMIRROR_[A-Z0-9_]+)`", table))
    fields = {"LEDGERMIRROR_" + item.name.upper() for item in dataclasses.fields(Settings)} | {
        "LEDGERMIRROR_STATUS_" + item.name.upper() for item in dataclasses.fields(StatusSettings)
    }
    assert documented == fields
