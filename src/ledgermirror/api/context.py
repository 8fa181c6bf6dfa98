"""What every request handler can reach: settings, clock, database, response cache and metrics (on app state)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from starlette.requests import Request

from ledgermirror.api.evm_workers import WorkerPool
from ledgermirror.api.querystring.params import ParseContext
from ledgermirror.api.responses import Rendered
from ledgermirror.clock import Clock, SystemClock
from ledgermirror.db.pool import Database
from ledgermirror.ledger.supply import unreleased_ranges
from ledgermirror.metrics.api import ApiMetrics
from ledgermirror.settings import Settings
from ledgermirror.ttl_cache import TtlCache
from ledgermirror.users import ApiUser

FEE_SCHEDULE_ENTRIES = 8
CREDENTIAL_ENTRIES = 1024
CREDENTIAL_TTL_SECONDS = 300.0


@dataclass(slots=True)
class AppContext:
    settings: Settings
    clock: Clock = field(default_factory=SystemClock)
    db: Database | None = None
    cache: TtlCache[Rendered] = field(init=False)
    parse_ctx: ParseContext = field(init=False)
    fee_schedules: TtlCache[object] = field(init=False)
    """Decoded fee schedules by file (``POST /api/v1/network/fees``)."""
    supply_ranges: Mapping[str, int] = field(init=False)
    """The encoded unreleased-supply id ranges in the configured shard and realm (``/network/supply``)."""
    supply_statements: dict[str, str] = field(init=False)
    """Supply statement texts with :attr:`supply_ranges` written in, by template (composed on first use, not
    on every request)."""
    metrics: ApiMetrics = field(default_factory=ApiMetrics)
    """This app's Prometheus metrics (its own registry; ``/metrics``)."""
    users: Mapping[str, ApiUser] = field(init=False)
    """The configured API users by name (``api/auth.py``)."""
    credentials: TtlCache[tuple[bool, int | None]] = field(init=False)
    """Checked Basic credentials (by their SHA-256): matched, and the user's limit; PBKDF2 runs once per TTL."""
    contract_workers: WorkerPool = field(init=False)
    """The worker processes of ``POST /api/v1/contracts/call`` (``contract_call_concurrency`` at once)."""

    def __post_init__(self) -> None:
        self.cache = TtlCache(self.settings.response_cache_entries)
        self.parse_ctx = _parse_context(self.settings)
        self.fee_schedules = TtlCache(FEE_SCHEDULE_ENTRIES)
        self.supply_ranges = unreleased_ranges(self.settings.shard, self.settings.realm)
        self.supply_statements = {}
        self.users = {user.username: user for user in self.settings.users}
        self.credentials = TtlCache(CREDENTIAL_ENTRIES, ttl_seconds=CREDENTIAL_TTL_SECONDS)
        self.contract_workers = WorkerPool(self.settings.contract_call_concurrency)

    def with_limit_max(self, limit_max: int) -> AppContext:
        """This context (same database and caches) for a user whose maximum ``limit`` is ``limit_max``."""
        other = copy.copy(self)
        other.parse_ctx = dataclasses.replace(self.parse_ctx, limit_max=limit_max)
        return other

    @property
    def database(self) -> Database:
        assert self.db is not None, "the database is opened by the application lifespan"
        return self.db


def _parse_context(settings: Settings) -> ParseContext:
    return ParseContext(
        shard=settings.shard,
        realm=settings.realm,
        limit_default=settings.limit_default,
        limit_max=settings.limit_max,
        max_repeats=settings.max_repeated_query_parameters,
    )


def context_of(request: Request) -> AppContext:
    ctx: AppContext = request.app.state.ctx
    return ctx
