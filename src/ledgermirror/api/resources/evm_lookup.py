"""The one home of EVM-address lookups: which live entity an opaque EVM address names.

"Live" is the reference's ``deleted <> true`` (a NULL ``deleted`` does not match, unlike the alias lookup). Two
rules, one per kind of input:

* a path segment (``{idOrAliasOrEvmAddress}``, :func:`path_id`): exactly one live entity, ``404 Not found``
  when none, ``500`` when two (a broken database, as the reference answers);
* a query filter (``account.id``, ``spender.id``, :func:`filter_ids`): the lowest id among the live entities
  with the address; an address no entity has maps to nothing (the route decides what that means).
"""

from __future__ import annotations

from collections.abc import Sequence

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import InternalError, NotFound
from ledgermirror.api.listing import NothingMatches
from ledgermirror.db.sql import Column, Op, Select
from ledgermirror.ledger.entity_id import EntityId, EvmAddress

_EVM_ADDRESS = Column("evm_address")
_DELETED = Column("deleted")


def live_by_address(addresses: Sequence[bytes], *, limit: int | None = None) -> Select:
    select = Select("select evm_address, id from entity")
    if len(addresses) == 1:
        select.compare(_EVM_ADDRESS, Op.EQ, addresses[0])
    else:
        select.any_of(_EVM_ADDRESS, list(addresses))
    select.is_not_true(_DELETED)
    return select if limit is None else select.limit(limit)


async def filter_ids(ctx: AppContext, addresses: Sequence[bytes]) -> dict[bytes, int]:
    """The lowest live entity id of each address that has one."""
    if not addresses:
        return {}
    found: dict[bytes, int] = {}
    for row in await ctx.database.fetch(live_by_address(addresses).build()):
        address, encoded = bytes(row["evm_address"]), int(row["id"])
        found[address] = min(encoded, found.get(address, encoded))
    return found


async def filter_id(ctx: AppContext, value: EntityId | EvmAddress) -> int:
    """One filter value as an encoded id; :class:`NothingMatches` for an address no live entity has."""
    if isinstance(value, EntityId):
        return value.encoded
    found = (await filter_ids(ctx, [value.address])).get(value.address)
    if found is None:
        raise NothingMatches
    return found


async def filter_values(ctx: AppContext, values: Sequence[EntityId | EvmAddress]) -> list[int | None]:
    """Each value's encoded id, addresses looked up in one statement (``None``: no live entity has it)."""
    if not values:
        return []
    known = await filter_ids(ctx, [value.address for value in values if isinstance(value, EvmAddress)])
    return [value.encoded if isinstance(value, EntityId) else known.get(value.address) for value in values]


async def path_id(ctx: AppContext, address: bytes) -> int:
    """The one live entity with this address: ``404 Not found`` when none, ``500`` when several."""
    rows = await ctx.database.fetch(live_by_address([address], limit=2).build())
    if not rows:
        raise NotFound("Not found")
    if len(rows) > 1:
        raise InternalError()
    return int(rows[0]["id"])
