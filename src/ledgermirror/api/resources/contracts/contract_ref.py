"""The ``{contractIdOrAddress}`` path segment of the ``/api/v1/contracts/...`` routes (``upstream-contracts.md``
§1.1): its grammar, its resolution to an encoded id, and its OpenAPI parameter.

Grammar: an entity id (``shard.realm.num``, ``realm.num``, ``num``) or an EVM address (40 hex digits, with
``0x`` or with a ``shard.realm.`` / ``realm.`` prefix, not both). Anything else is ``400 Invalid parameter:
contractid``.

Resolution (:func:`resolve_contract`): an entity id names itself (no existence check); a long-zero address
(twelve zero bytes, then a num below 2^38) names that num; any other ("create2") address is looked up among the
live contracts, ``404 No contract with the given evm address 0x<the hex as written> has been found.`` when none
has it and ``500`` when several do (a broken database). The prefix of an address is parsed, but the lookup uses
only the 20 bytes, as in the reference.

``GET /contracts/{contractIdOrAddress}`` does not resolve: it matches the address inside its own query
(:func:`parse_contract` gives it the parsed form).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest, InternalError, NotFound
from ledgermirror.api.resources import schemas
from ledgermirror.db.sql import Column, Op, Select
from ledgermirror.ledger.entity_id import EntityId, InvalidEntityId, long_zero_num

PATH_PARAMETER = "contractIdOrAddress"
_EVM = re.compile(r"(?:(\d{1,4})\.)?(?:(\d{1,5})\.)?(0x)?([0-9a-fA-F]{40})", re.ASCII)
_CONTRACT_BY_ADDRESS = "select id from entity"
_EVM_ADDRESS = Column("evm_address")
_DELETED = Column("deleted")
_CONTRACT_TYPE = "type = 'CONTRACT'"

OPENAPI_PATH_PARAMETER: dict[str, Any] = {
    "name": PATH_PARAMETER,
    "in": "path",
    "required": True,
    "description": "Contract id (shard.realm.num, realm.num or num) or EVM address (40 hex digits, with 0x or a "
    "shard.realm. prefix)",
    "schema": {
        "type": "string",
        "pattern": rf"^({schemas.ENTITY_ID_VALUE}|{schemas.EVM_ADDRESS_VALUE})$",
    },
    "example": "0.0.1001",
}


@dataclass(frozen=True, slots=True)
class ContractAddress:
    """An opaque ("create2") EVM address: ``address`` is its 20 bytes, ``text`` the 40 hex digits as written
    (case kept, for the 404 message)."""

    address: bytes
    text: str


def invalid() -> BadRequest:
    return BadRequest("Invalid parameter: contractid")


def is_evm_address(text: str) -> bool:
    """Whether the text is written as an EVM address (long-zero or not, any prefix) rather than an entity id."""
    return _EVM.fullmatch(text) is not None


ContractRef = EntityId | ContractAddress
"""A parsed ``{contractIdOrAddress}``: an id (or long-zero address), or an EVM address to look up."""


async def path_contract(request: Request, ctx: AppContext) -> ContractRef:
    """The contract the request's path names, parsed (not yet looked up): the contract lists' ``locate``."""
    text = str(request.path_params[PATH_PARAMETER])
    return parse_contract(text, shard=ctx.settings.shard, realm=ctx.settings.realm)


def parse_contract(text: str, *, shard: int, realm: int) -> ContractRef:
    """The parsed path segment (``shard``/``realm``: the configured ones, for the short forms): an
    :class:`EntityId` (entity ids and long-zero addresses) or a :class:`ContractAddress`; ``400 Invalid
    parameter: contractid`` for anything else."""
    match = _EVM.fullmatch(text)
    if match is None:
        try:
            return EntityId.parse(text, shard=shard, realm=realm)
        except InvalidEntityId:
            raise invalid() from None
    first, second, has_0x, digits = match.groups()
    if first is not None and has_0x:
        raise invalid()
    if first is not None and second is None:  # "realm.<address>"
        first, second = str(shard), first
    num = long_zero_num(digits.lower())
    if num is None:
        return ContractAddress(bytes.fromhex(digits), digits)
    try:
        return EntityId(shard if first is None else int(first), realm if second is None else int(second), num)
    except InvalidEntityId:
        raise invalid() from None


def by_address(address: bytes) -> Select:
    """The live contracts with this EVM address (at most two: one is the answer, two a broken database)."""
    select = Select(_CONTRACT_BY_ADDRESS).where(_CONTRACT_TYPE).compare(_EVM_ADDRESS, Op.EQ, address)
    return select.compare(_DELETED, Op.NE, True).limit(2)  # the reference's ``deleted <> true``: NULL excluded


async def resolve_address(ctx: AppContext, address: ContractAddress) -> int:
    """The one live contract with this address, or the reference's 404 text (500 when several)."""
    rows = await ctx.database.fetch(by_address(address.address).build())
    if not rows:
        raise NotFound(f"No contract with the given evm address 0x{address.text} has been found.")
    if len(rows) > 1:
        raise InternalError()
    return int(rows[0]["id"])


async def resolve_contract(text: str, ctx: AppContext) -> int:
    """The encoded id the path segment names (see the module docstring for the rules and errors)."""
    ref = parse_contract(text, shard=ctx.settings.shard, realm=ctx.settings.realm)
    if isinstance(ref, EntityId):
        return ref.encoded
    return await resolve_address(ctx, ref)


async def contract_of(path_params: dict[str, Any], ctx: AppContext) -> int:
    """The resolved ``{contractIdOrAddress}`` of a route's path parameters."""
    return await resolve_contract(str(path_params[PATH_PARAMETER]), ctx)
