"""System files 0.0.111 (fee schedule) and 0.0.112 (exchange rate): the ``timestamp`` window, loading one file
version with its appends (falling back to earlier versions), and decoding its protobuf contents.

A version of a file starts at its *anchor*: the latest create, or update with data, inside the window
``[lower, upper]``. Its contents are the anchor's data followed by every later chunk up to ``upper`` (appends;
updates without data are skipped), and its timestamp is that of the last chunk. When the contents do not decode,
the window's upper bound moves to just before that last chunk and the load is tried again: first the same
anchor with fewer appends, then older versions, up to :data:`MAX_FILE_ATTEMPTS` loads in all.

Decoding is ``ledger/system_files.py``'s (pure bytes -> values); the HAPI protobuf classes it uses are imported
on a worker thread before the first load (:func:`ledgermirror.ledger.protobuf.preload`), not at app import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.grammar import RANGE_OPS, Op, RawQuery
from ledgermirror.api.querystring.params import Check, ParamSpec, ParsedQuery
from ledgermirror.api.querystring.window import closed
from ledgermirror.api.resources import schemas
from ledgermirror.db.sql import template
from ledgermirror.ledger import protobuf
from ledgermirror.ledger.entity_id import EntityId
from ledgermirror.ledger.int64 import INT64_MAX
from ledgermirror.ledger.system_files import Undecodable

T = TypeVar("T")

MAX_FILE_ATTEMPTS = 12
"""Loads of one file per request before giving up (the reference's ``maxFileAttempts`` default)."""
MAX_TIMESTAMPS = 2

TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The file version in effect at this consensus timestamp (`seconds[.nanos]`): `eq` (or no operator) and "
    "`lte`/`lt` bound the version from above, `gte`/`gt` from below; at most two values.",
    ops=RANGE_OPS,
    schema=schemas.TIMESTAMP_QUERY,
    example="lte:1700000000.000000000",
    max_count=MAX_TIMESTAMPS,
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
    upper: int = INT64_MAX
    bounded: bool = False


def window(query: ParsedQuery) -> Window:
    """The last lower bound and the last upper bound win (the reference's rule, not the tightest bounds of
    ``window.inclusive_range``); ``eq`` means ``lte``; ``gt``/``lt`` become inclusive (``window.closed``)."""
    lower: int | None = None
    upper: int | None = None
    for item in query.filters(TIMESTAMP):
        if item.op in (Op.GT, Op.GTE):
            lower = closed(item.op, item.value)
        else:  # eq, lte, lt (the parameter takes no ne)
            upper = closed(item.op, item.value)
    return Window(
        lower=0 if lower is None else lower,
        upper=INT64_MAX if upper is None else upper,
        bounded=upper is not None,
    )


@dataclass(frozen=True, slots=True)
class Loaded(Generic[T]):
    """A decoded file version and the consensus timestamp of its last chunk."""

    content: T
    timestamp: int


# The anchor is found through file_data's (entity_id, consensus_timestamp) index, scanning back from the upper
# bound; the chunks from the anchor to the upper bound come through the same index. A db.sql.template.
_LOAD = """select string_agg(f.file_data, ''::bytea order by f.consensus_timestamp) as contents,
       max(f.consensus_timestamp) as last_timestamp
from file_data f
where f.entity_id = {entity}
  and f.consensus_timestamp <= {upper}
  and f.consensus_timestamp >= (
      select a.consensus_timestamp
      from file_data a
      where a.entity_id = {entity}
        and a.consensus_timestamp >= {lower}
        and a.consensus_timestamp <= {upper}
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
    await protobuf.preload()
    entity = file_entity(ctx, num).encoded
    upper = bounds.upper
    for _ in range(MAX_FILE_ATTEMPTS):
        if upper < bounds.lower:
            return None
        rows = await ctx.database.fetch(template(_LOAD, entity=entity, lower=bounds.lower, upper=upper))
        last = rows[0]["last_timestamp"] if rows else None
        if last is None:
            return None
        try:
            return Loaded(decode(bytes(rows[0]["contents"] or b"")), int(last))
        except Undecodable:
            upper = int(last) - 1
    return None
