"""System files 0.0.111 (fee schedule) and 0.0.112 (exchange rate): the ``timestamp`` window, loading one file
version with its appends (falling back to earlier versions), and decoding its protobuf contents.

A version of a file starts at its *anchor*: the latest create, or update with data, inside the window
``[lower, upper]``. Its contents are the anchor's data followed by every later chunk up to ``upper`` (appends;
updates without data are skipped), and its timestamp is that of the last chunk. When the contents do not decode,
the window's upper bound moves to just before that last chunk and the load is tried again: first the same
anchor with fewer appends, then older versions, up to :data:`MAX_FILE_ATTEMPTS` loads in all.

Decoding uses the HAPI protobuf messages generated in the ``hiero-sdk-python`` package. Importing that package
takes about half a second, so it happens on a worker thread at the first load, not when the app is imported.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Generic, TypeVar

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.grammar import RANGE_OPS, Op, RawQuery
from ledgermirror.api.querystring.params import Check, ParamSpec, ParsedQuery
from ledgermirror.ledger.entity_id import EntityId

T = TypeVar("T")

FEE_SCHEDULE_FILE = 111
EXCHANGE_RATE_FILE = 112
MAX_FILE_ATTEMPTS = 12
"""Loads of one file per request before giving up (the reference's ``maxFileAttempts`` default)."""
MAX_TIMESTAMPS = 2
_INT64_MAX = (1 << 63) - 1

TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The file version in effect at this consensus timestamp (`seconds[.nanos]`): `eq` (or no operator) and "
    "`lte`/`lt` bound the version from above, `gte`/`gt` from below; at most two values.",
    ops=RANGE_OPS,
    schema={"type": "string", "pattern": r"^((eq|gt|gte|lt|lte):)?\d{1,17}(\.\d{1,9})?$"},
    example="lte:1700000000.000000000",
)


def at_most_two_timestamps(raw: RawQuery) -> None:
    """A ``ParamSet`` check: the reference accepts at most two ``timestamp`` values."""
    count = len(raw.items.get(TIMESTAMP.name, ()))
    if count > MAX_TIMESTAMPS:
        raise BadRequest(
            f"Parameter values count exceeds maximum number allowed: {TIMESTAMP.name} "
            f"count: {count} max: {MAX_TIMESTAMPS}"
        )


NE_NOT_SUPPORTED = "Not equals (ne) operator is not supported for timestamp"


def no_ne_timestamp(message: str = NE_NOT_SUPPORTED) -> Check:
    """A ``ParamSet`` check: ``timestamp=ne:`` selects no file version, and says so."""

    def check(raw: RawQuery) -> None:
        if any(text.startswith("ne:") for text in raw.items.get(TIMESTAMP.name, ())):
            raise BadRequest(message)

    return check


@dataclass(frozen=True, slots=True)
class Window:
    """Inclusive consensus-timestamp bounds of a file version; ``bounded`` when the client gave an upper bound."""

    lower: int = 0
    upper: int = _INT64_MAX
    bounded: bool = False


def window(query: ParsedQuery) -> Window:
    """The last lower bound and the last upper bound win; ``eq`` means ``lte``; ``gt``/``lt`` become inclusive."""
    lower: int | None = None
    upper: int | None = None
    for item in query.filters(TIMESTAMP):
        if item.op is Op.GT:
            lower = item.value + 1
        elif item.op is Op.GTE:
            lower = item.value
        elif item.op is Op.LT:
            upper = item.value - 1
        else:  # eq, lte
            upper = item.value
    return Window(
        lower=0 if lower is None else lower,
        upper=_INT64_MAX if upper is None else upper,
        bounded=upper is not None,
    )


@dataclass(frozen=True, slots=True)
class Loaded(Generic[T]):
    """A decoded file version and the consensus timestamp of its last chunk."""

    content: T
    timestamp: int


class Undecodable(ValueError):
    """The contents are not a complete message of the expected type."""


# The anchor is found through file_data's (entity_id, consensus_timestamp) index, scanning back from the upper
# bound; the chunks from the anchor to the upper bound come through the same index.
_LOAD = """select string_agg(f.file_data, ''::bytea order by f.consensus_timestamp) as contents,
       max(f.consensus_timestamp) as last_timestamp
from file_data f
where f.entity_id = $1
  and f.consensus_timestamp <= $3
  and f.consensus_timestamp >= (
      select a.consensus_timestamp
      from file_data a
      where a.entity_id = $1
        and a.consensus_timestamp >= $2
        and a.consensus_timestamp <= $3
        and (a.transaction_type = 17 or (a.transaction_type = 19 and length(a.file_data) <> 0))
      order by a.consensus_timestamp desc
      limit 1)
  and not (f.transaction_type = 19 and coalesce(length(f.file_data), 0) = 0)"""


def file_entity(ctx: AppContext, num: int) -> EntityId:
    """System file ``num`` in the configured shard and realm."""
    return EntityId(ctx.settings.shard, ctx.settings.realm, num)


async def load_or_404(ctx: AppContext, num: int, bounds: Window, decode: Callable[[bytes], T]) -> Loaded[T]:
    """:func:`load`, or ``404 File <shard.realm.num> not found``."""
    loaded = await load(ctx, num, bounds, decode)
    if loaded is None:
        raise NotFound()
    return loaded


async def load(ctx: AppContext, num: int, bounds: Window, decode: Callable[[bytes], T]) -> Loaded[T] | None:
    """The newest version of file ``num`` inside ``bounds`` that decodes, or None."""
    await _import_protobuf()
    entity = file_entity(ctx, num).encoded
    upper = bounds.upper
    for _ in range(MAX_FILE_ATTEMPTS):
        if upper < bounds.lower:
            return None
        rows = await ctx.database.fetch_raw(_LOAD, entity, bounds.lower, upper)
        last = rows[0]["last_timestamp"] if rows else None
        if last is None:
            return None
        try:
            return Loaded(decode(bytes(rows[0]["contents"] or b"")), int(last))
        except Undecodable:
            upper = int(last) - 1
    return None


# --- decoding -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rate:
    hbar_equivalent: int
    cent_equivalent: int
    expiration_time: int | None
    """Seconds since the epoch; None when the message has no expiration time."""


@dataclass(frozen=True, slots=True)
class RateSet:
    current: Rate | None
    next: Rate | None


@dataclass(frozen=True, slots=True)
class FeeEntry:
    functionality: int
    """The ``HederaFunctionality`` number."""
    gas: int | None
    """``fees[0].servicedata.gas``; None when there is no fee or the first has no service data."""


@dataclass(frozen=True, slots=True)
class Schedule:
    entries: tuple[FeeEntry, ...]
    expiry: int | None
    """Seconds since the epoch; None when the schedule has no expiry time."""


@dataclass(frozen=True, slots=True)
class Schedules:
    current: Schedule | None
    next: Schedule | None


@functools.cache
def _protobuf(name: str) -> ModuleType:
    """A generated HAPI module of hiero-sdk-python, imported on first use."""
    return importlib.import_module(f"hiero_sdk_python.hapi.services.{name}")


_MODULES = ("exchange_rate_pb2", "basic_types_pb2")


async def _import_protobuf() -> None:
    """The first import takes a while: run it on a worker thread so the event loop keeps serving."""
    if _protobuf.cache_info().currsize < len(_MODULES):
        await asyncio.to_thread(lambda: [_protobuf(name) for name in _MODULES])


def _parse(module: str, message: str, data: bytes) -> Any:
    decode_error = importlib.import_module("google.protobuf.message").DecodeError
    try:
        return getattr(_protobuf(module), message).FromString(data)
    except decode_error as error:
        raise Undecodable(str(error)) from None


def _seconds(message: Any, field: str) -> int | None:
    return int(getattr(message, field).seconds) if message.HasField(field) else None


def _rate(message: Any, field: str) -> Rate | None:
    if not message.HasField(field):
        return None
    rate = getattr(message, field)
    return Rate(int(rate.hbarEquiv), int(rate.centEquiv), _seconds(rate, "expirationTime"))


def decode_exchange_rates(data: bytes) -> RateSet:
    """``proto.ExchangeRateSet`` -> :class:`RateSet`; raises :class:`Undecodable`."""
    message = _parse("exchange_rate_pb2", "ExchangeRateSet", data)
    return RateSet(_rate(message, "currentRate"), _rate(message, "nextRate"))


def _schedule(message: Any, field: str) -> Schedule | None:
    if not message.HasField(field):
        return None
    schedule = getattr(message, field)
    entries = []
    for item in schedule.transactionFeeSchedule:
        first = item.fees[0] if len(item.fees) else None
        gas = int(first.servicedata.gas) if first is not None and first.HasField("servicedata") else None
        entries.append(FeeEntry(int(item.hederaFunctionality), gas))
    return Schedule(tuple(entries), _seconds(schedule, "expiryTime"))


def decode_fee_schedules(data: bytes) -> Schedules:
    """``proto.CurrentAndNextFeeSchedule`` -> :class:`Schedules`; raises :class:`Undecodable`."""
    message = _parse("basic_types_pb2", "CurrentAndNextFeeSchedule", data)
    return Schedules(_schedule(message, "currentFeeSchedule"), _schedule(message, "nextFeeSchedule"))
