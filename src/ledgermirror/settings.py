"""Typed settings, read once from ``LEDGERMIRROR_*`` environment variables (``environment.load``).

Nothing reads the environment after :func:`Settings.from_env`; tests and the conformance runner build their own
``Settings`` (``dataclasses.replace``) instead of mutating shared state.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

import platformdirs

from ledgermirror.environment import NonNegative, Port, PortOrOff, Positive, Range, SettingsError, load
from ledgermirror.users import ApiUser, UsersError, users_from_file, users_from_text

__all__ = ["PREFIX", "Settings", "SettingsError", "default_data_dir"]

PREFIX = "LEDGERMIRROR_"


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("ledgermirror", appauthor=False))


@dataclass(frozen=True, slots=True)
class Settings:
    """Every knob of the service. The docstring of each field is the configuration table in the README."""

    db_url: str | None = None
    """Owner connection (migrations, importer, demo data). Unset: an embedded PostgreSQL in ``data_dir``."""
    api_db_url: str | None = None
    """Read-only connection used by the API. Unset: ``db_url`` with the user replaced by ``api_role``. Several
    URLs, comma-separated (read replicas, optionally the primary last): queries spread over those that answer
    within ``replica_max_lag_seconds`` (docs/scaling.md)."""
    replica_max_lag_seconds: Annotated[float, Range(0)] = 30.0
    """A database of ``api_db_url`` whose replay lag passes this is left until it catches up; readiness fails
    when every one is past it."""
    replica_check_seconds: Annotated[float, Range(0.1)] = 1.0
    """How often the API probes each of its databases (answering, replay lag, newest consensus timestamp)."""
    ingest_max_lag_seconds: Annotated[float, Range(0)] = 0.0
    """Readiness fails when the newest consensus timestamp is older than this; 0: not checked."""
    data_dir: Path = field(default_factory=default_data_dir)
    embedded_shared_buffers_mb: NonNegative = 0
    """PostgreSQL's own page cache (``shared_buffers``) of a durable embedded server, in MiB; 0: a quarter of
    the machine's memory (or of the container's cgroup limit when smaller), at least 128 MiB and at most 8 GiB.
    Read when the server starts."""
    embedded_max_wal_size_mb: Annotated[int, Range(64)] = 16384
    """How much WAL the embedded server lets build up between two checkpoints (``max_wal_size``), in MiB. A long
    import's WAL on the data folder's disk grows to about this much, and a crash replays up to it; closer
    checkpoints write far more (over ten million transactions: at 4 GiB, 40 GB of WAL and 41 GB of pages written
    by checkpoints; at 16 GiB, 24 and 8 GB). Read when the server starts."""
    api_role: str = "mirror_api"
    host: str = "127.0.0.1"
    port: Port = 5551
    workers: Positive = 1
    http_header_timeout_seconds: Positive = 10
    """Longest a client may take to send a request's headers (408 and closed after; both services)."""
    http_body_timeout_seconds: Positive = 30
    """Longest a client may take to send a request's body, in total (the connection is closed after)."""
    http_keep_alive_seconds: Positive = 5
    """How long an idle kept-alive connection stays open."""
    http_max_connections: Positive = 1000
    """Connections (and requests in progress) per worker process; requests beyond it are answered 503."""
    shard: NonNegative = 0
    realm: NonNegative = 0
    limit_default: Positive = 25
    limit_max: Positive = 100
    max_repeated_query_parameters: Positive = 100
    statement_timeout_ms: Positive = 5000
    pool_max_size: Positive = 4
    """PostgreSQL connections per API worker: two per core with two workers on two cores. More only moves the
    queue from the pool into PostgreSQL's scheduler (docs/performance.md, 4 against 10)."""
    plan_cache_mode: Literal["force_generic_plan", "auto", "force_custom_plan"] = "force_generic_plan"
    """PostgreSQL's ``plan_cache_mode`` for the API's sessions: ``force_generic_plan`` (plan each prepared
    statement once per connection), ``auto`` or ``force_custom_plan`` (``db/pool.session_settings``)."""
    parallel_workers_per_query: NonNegative = 0
    """PostgreSQL's ``max_parallel_workers_per_gather`` for the API's sessions."""
    max_in_flight: NonNegative = 0
    """Requests a worker works on at once (the rest wait in arrival order, ``503`` after
    ``admission_wait_seconds``); 0: the pool's size (``api/admission.py``)."""
    warm_up_seconds: Annotated[float, Range(0)] = 60.0
    """``serve`` reads the hot routes' indexes into the cache before its workers start, for at most this long
    (``db/warm_up.py``); 0: not at all."""
    admission_wait_seconds: Annotated[float, Range(0.1)] = 30.0
    """Longest a request waits for its turn (``max_in_flight``) before ``503``. Its own budget, apart from the
    statement timeout: a cold cache slows every request, and the line behind them grows with it
    (docs/performance.md, "A cold start")."""
    statement_cache_size: NonNegative = 256
    db_max_idle_seconds: Annotated[float, Range(1)] = 180.0
    """A database connection left unused longer than this is ended and a new one opened when next needed (both
    services): under the idle timeout of firewalls and load balancers that forget quiet connections silently."""
    response_cache_entries: NonNegative = 4096
    enable_delegation_address: bool = True
    """Include ``delegation_address`` in account objects (``"0x"`` when unset); ``False`` leaves it out."""
    contract_result_defaults: bool = True
    """Detailed contract results without an Ethereum value show ``type`` 0, the chain id and the fee schedule's gas
    price (the reference since 0.157); ``False`` keeps the older reference's nulls."""
    synthetic_contract_results: bool = True
    """Contract result routes also show results made from ``synthetic`` contract logs (HAPI token operations; the
    reference's ``query.syntheticContractResults``, on by default since 0.157); ``False`` shows ``contract_result``
    rows only."""
    token_balance_limit_multiple_accounts: NonNegative = 50
    """Token balances shown per account in ``/api/v1/accounts``."""
    token_balance_limit_single_account: NonNegative = 1000
    """Token balances shown in ``/api/v1/accounts/{id}``."""
    bind_timestamp_range: bool = False
    """Bound ``/api/v1/transactions``, ``/api/v1/contracts/results`` and the embedded transactions of
    ``/api/v1/accounts/{id}`` to ``max_transactions_timestamp_range_ns``."""
    max_transactions_timestamp_range_ns: Positive = 60 * 86_400 * 1_000_000_000
    topic_message_lookup: bool = False
    """Narrow topic message queries through ``topic_message_lookup`` (the reference's
    ``query.topicMessageLookup``; ``ne`` on ``sequencenumber``/``timestamp`` is then refused)."""
    import_synthetic_log_evm_lookup: bool = True
    """``ledgermirror import``: synthetic ``Transfer`` logs of HTS tokens get their parties' EVM addresses and a
    real bloom (the reference's ``persist.syntheticContractLogEvmAddressLookup``)."""
    pagination_probe: bool = True
    """Fetch ``limit + 1`` rows so a page that ends the data carries no ``next`` link."""
    schedule_signature_plain_base64: bool = False
    """``signatures[]`` of ``/api/v1/schedules`` in plain base64; by default as the reference writes them
    (PostgreSQL's ``encode(..., 'base64')``: a newline after every 76 characters)."""
    fee_estimate_described_form: bool = False
    """``POST /api/v1/network/fees`` in the seed's described form (amounts before the high-volume multiplier,
    the multiplier in thousandths, ``notes``) instead of the reference's."""
    contract_call_max_gas: Annotated[int, Range(21_000)] = 15_000_000
    """The most gas ``POST /api/v1/contracts/call`` accepts (the reference's ``evm.maxGasLimit``)."""
    contract_call_timeout_ms: Positive = 10_000
    """Longest one contract call may take, waiting for a turn included (``503`` after; the reference's
    ``requestTimeout``)."""
    contract_call_concurrency: Positive = 2
    """Contract calls a worker runs at once; the rest wait in order (``429`` after ``contract_call_timeout_ms``),
    so heavy calls cannot take every core from the other routes."""
    contract_call_chain_id: Positive = 296
    """``CHAINID`` in contract calls: 295 mainnet, 296 testnet (the reference's default), 297 previewnet."""
    users: tuple[ApiUser, ...] = ()
    """API users with their own maximum ``limit`` (HTTP Basic): a JSON array of ``{"username",
    "password_hash", "limit"}`` (``ledgermirror hash-password`` writes the hash). Never read from the database."""
    users_file: Path | None = None
    """A JSON file holding more users in the form of ``users`` (read once, at start)."""
    grpc_port: PortOrOff = 5600
    """The gRPC API (``subscribeTopic``, ``getNodes``; docs/grpc.md) of ``serve`` and ``demo``, on ``host``;
    0 turns it off."""
    grpc_max_subscriptions: Positive = 20000
    """Topic subscriptions at once, in total (more are refused ``RESOURCE_EXHAUSTED``)."""
    grpc_max_subscriptions_per_client: Positive = 5000
    """Topic subscriptions at once from one client address."""
    grpc_max_subscription_seconds: NonNegative = 0
    """A subscription's longest life, then ``UNAVAILABLE`` (the SDKs resubscribe where they were); 0: none."""
    grpc_idle_subscription_seconds: NonNegative = 0
    """Longest a subscription may go without a message, then ``UNAVAILABLE``; 0: none."""
    grpc_keep_alive_seconds: Positive = 300
    """Server pings after this much silence on a connection (clients may ping every 10 s)."""
    grpc_max_streams_per_connection: Positive = 100
    """Calls at once on one connection (HTTP/2 streams; the reference allows 5)."""
    grpc_poll_interval_ms: Positive = 1000
    """Live topic reads without a commit notification at least this often (missed notifications, another
    importer)."""
    grpc_end_time_interval_ms: Positive = 30000
    """A subscription with an end time ends at the latest this long after it."""
    grpc_subscriber_buffer: Positive = 16384
    """Live messages a subscriber may fall behind before its stream ends ``DEADLINE_EXCEEDED``."""
    grpc_db_connections: Positive = 8
    """PostgreSQL connections of the gRPC server (plus one that listens for commits)."""
    grpc_check_topic_exists: bool = True
    """Refuse a subscription to a topic with no ``entity`` row (``NOT_FOUND``), as the reference does."""
    import_balance_snapshot_enabled: bool = True
    """``ledgermirror import`` writes a balance snapshot (``account_balance``, ``token_balance`` and a synthetic
    ``account_balance_file`` row) in the transaction of the record file that makes one due (the reference's
    ``parser.record.historicalBalance.enabled``)."""
    import_balance_snapshot_min_frequency_seconds: Annotated[int, Range(900, 604_800)] = 900
    """Consensus seconds from one snapshot to the next (15 minutes to 7 days, as the reference allows)."""
    import_balance_snapshot_initial_delay_seconds: Annotated[int, Range(120)] = 120
    """With no snapshot yet, snapshots count from the first record file's end plus this (at least 2 minutes)."""
    import_balance_snapshot_token_balances: bool = True
    """Snapshots include ``token_balance`` rows."""
    import_balance_files: bool = False
    """``ledgermirror import`` into an empty database starts from the network's signed account balance file
    (``accountBalances/``, CSV v1/v2 or protobuf) nearest at or before the start, verified, as the reference's
    balance downloader (off by default there too); ``--balance-files`` for one run."""
    import_overlap: bool = True
    """``ledgermirror import`` builds the next transaction's rows while PostgreSQL writes this one (a writer
    thread with its own connection; ``importer/overlap.py``): 10 to 20 % faster on a machine whose cores the
    import has (docs/performance.md); off, one transaction after the other."""
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL", "WARN", "FATAL", "NOTSET"] = "INFO"
    """A level name of Python's ``logging`` (any case)."""
    log_format: Literal["auto", "json", "text"] = "auto"
    """``auto``: ``text`` when stderr is a terminal, ``json`` otherwise."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings of ``env`` (the process's environment when None), each variable converted by its field's
        type; a bad value is a one-line :class:`SettingsError` naming the variable."""
        settings = load(cls, PREFIX, os.environ if env is None else env, parsers={"users": _users})
        if settings.users_file is None:
            return settings
        try:
            from_file = users_from_file(settings.users_file)
        except UsersError as error:
            raise SettingsError(f"{PREFIX}USERS_FILE: {error}") from None
        try:
            return dataclasses.replace(settings, users=_unique(settings.users + from_file))
        except UsersError as error:
            raise SettingsError(f"{PREFIX}USERS and {PREFIX}USERS_FILE: {error}") from None


def _users(variable: str, text: str) -> tuple[ApiUser, ...]:
    return users_from_text(text, variable)


def _unique(users: tuple[ApiUser, ...]) -> tuple[ApiUser, ...]:
    names = [user.username for user in users]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise UsersError(f"Duplicate usernames in users configuration: {', '.join(duplicates)}")
    return users
