"""The ``{tokenId}`` path segment of the ``/api/v1/tokens/{tokenId}...`` routes, and its OpenAPI parameter.

A token id is ``num``, ``realm.num`` or ``shard.realm.num``, or a long-zero EVM address (40 hex digits with or
without ``0x``, or ``shard.realm.`` and 40 hex digits without ``0x``). Anything else, an opaque EVM address
included, is ``400 Invalid parameter: tokenid``, as in the reference.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.resources import schemas
from ledgermirror.ledger.entity_id import EntityId, EvmForm, InvalidEntityId, parse_entity_ref
from ledgermirror.pg_text import storable

PATH_PARAMETER = "tokenId"

OPENAPI_PATH_PARAMETER: dict[str, Any] = {
    "name": PATH_PARAMETER,
    "in": "path",
    "required": True,
    "description": "Token id (shard.realm.num, realm.num or num) or its long-zero EVM address (a num below 2^38)",
    "schema": {
        "type": "string",
        "pattern": rf"^({schemas.ENTITY_ID_VALUE}|(0x)?0{{30}}[0-3][0-9a-fA-F]{{9}})$",
    },
    "example": "0.0.1001",
}


def parse_token(text: str, ctx: AppContext) -> int:
    """The encoded token id the path names, or ``400 Invalid parameter: tokenid``."""
    if not storable(text):
        raise BadRequest("Invalid parameter: tokenid")
    try:
        ref = parse_entity_ref(text, shard=ctx.settings.shard, realm=ctx.settings.realm, evm=EvmForm.LONG_ZERO)
    except InvalidEntityId:
        raise BadRequest("Invalid parameter: tokenid") from None
    if not isinstance(ref, EntityId):
        raise BadRequest("Invalid parameter: tokenid")
    return ref.encoded


def token_of(path_params: dict[str, Any], ctx: AppContext) -> int:
    return parse_token(str(path_params[PATH_PARAMETER]), ctx)


async def path_token(request: Request, ctx: AppContext) -> int:
    """The token the request's path names: the ``locate`` step of the token lists."""
    return token_of(request.path_params, ctx)
