"""Resolving the ``{idOrAliasOrEvmAddress}`` path segment of the account routes to an encoded entity id.

Tried in order, as the reference does:

1. an entity id (``shard.realm.num``, ``realm.num``, ``num``) or a long-zero EVM address: the id it names,
   with no existence check;
2. an opaque EVM address (40 hex, optional ``0x`` or ``shard.realm.`` prefix): looked up among live entities,
   ``404 Not found`` when none has it;
3. a base32 alias (upper case, no padding, optional ``shard.`` / ``shard.realm.`` prefix): looked up among
   entities not deleted, ``404 No account with a matching alias found`` when none has it;
4. anything else: ``400 Invalid parameter: idOrAliasOrEvmAddress``.

Two live entities with the same alias or EVM address is a broken database, not bad input: ``500``.
"""

from __future__ import annotations

import base64
import re

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest, InternalError, NotFound
from ledgermirror.api.resources import evm_lookup, schemas
from ledgermirror.db.sql import Column, Op, Select
from ledgermirror.ledger.aliases import InvalidAlias, decode_alias
from ledgermirror.ledger.entity_id import EntityId, EvmAddress, EvmForm, InvalidEntityId, parse_entity_ref

PATH_PARAMETER = "idOrAliasOrEvmAddress"
_ALIAS = re.compile(r"(?:(\d{1,5})\.)?(?:(\d{1,5})\.)?([A-Z2-7]+)", re.ASCII)
_ALIAS_COLUMN = Column("alias")
_DELETED = Column("deleted")
ALIAS_TEXT = (
    r"([A-Z2-7]{8})*"
    r"([A-Z2-7]{8}|[A-Z2-7][AEIMQUY4]|[A-Z2-7]{3}[AQ]|[A-Z2-7]{4}[ACEGIKMOQSUWY246]|[A-Z2-7]{6}[AIQY])"
)
"""Base32 without padding, as the document writes it: a length of 2, 4, 5, 7 or 0 characters modulo 8, the
bits after the last whole byte zero (the last character of a partial group is a multiple of 4, 16, 2 or 8)."""

OPENAPI_PATH_PARAMETER = {
    "name": PATH_PARAMETER,
    "in": "path",
    "required": True,
    "description": "Account id (shard.realm.num, realm.num or num), EVM address (with or without 0x) or "
    "base32 alias (with or without a shard.realm. prefix)",
    "schema": {
        "type": "string",
        "pattern": rf"^({schemas.ENTITY_ID_VALUE}|{schemas.EVM_ADDRESS_VALUE}|{ALIAS_TEXT})$",
    },
    "example": "0.0.1001",
}


def invalid() -> BadRequest:
    return BadRequest(f"Invalid parameter: {PATH_PARAMETER}")


def parse_alias(text: str, *, shard: int, realm: int) -> bytes | None:
    """The alias bytes of a base32 path segment, or None when the text is not an alias."""
    match = _ALIAS.fullmatch(text)
    if match is None:
        return None
    first, second, encoded = match.groups()
    if second is not None:
        prefix_shard, prefix_realm = int(first), int(second)
    elif first is not None:
        prefix_shard, prefix_realm = int(first), realm
    else:
        prefix_shard, prefix_realm = shard, realm
    if (prefix_shard, prefix_realm) != (shard, realm):
        raise invalid()
    try:
        raw = decode_alias(encoded)
    except InvalidAlias:
        raise invalid() from None
    if base64.b32encode(raw).decode().rstrip("=") != encoded:
        raise invalid()  # bits after the last whole byte are not zero: no alias is written that way
    return raw


async def path_account(request: Request, ctx: AppContext) -> int:
    """The account the request's path names: the ``locate`` step of the account lists."""
    return await resolve_account(request.path_params[PATH_PARAMETER], ctx)


async def resolve_account(text: str, ctx: AppContext) -> int:
    """The encoded id the path segment names (see the module docstring for the rules and errors)."""
    shard, realm = ctx.settings.shard, ctx.settings.realm
    try:
        ref = parse_entity_ref(text, shard=shard, realm=realm, evm=EvmForm.ANY)
    except InvalidEntityId:
        ref = None
    if isinstance(ref, EntityId):
        return ref.encoded
    if isinstance(ref, EvmAddress):
        return await evm_lookup.path_id(ctx, ref.address)
    alias = parse_alias(text, shard=shard, realm=realm)
    if alias is None:
        raise invalid()
    return await _by_alias(ctx, alias)


async def _by_alias(ctx: AppContext, alias: bytes) -> int:
    """``coalesce(deleted, false) <> true`` in the reference: a NULL ``deleted`` matches."""
    select = Select("select id from entity").is_not_true(_DELETED).compare(_ALIAS_COLUMN, Op.EQ, alias).limit(2)
    rows = await ctx.database.fetch(select.build())
    if not rows:
        raise NotFound("No account with a matching alias found")
    if len(rows) > 1:
        raise InternalError()
    return int(rows[0]["id"])
