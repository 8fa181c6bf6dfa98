"""One contract result in detail (``upstream-contracts.md`` §5.1, §5.2):
``GET /api/v1/contracts/{contractIdOrAddress}/results/{timestamp}`` and
``GET /api/v1/contracts/results/{transactionIdOrHash}``.

Both find a consensus timestamp and an entity, then the ``contract_transaction`` row linking them (the payer and
every contract involved; none: ``404 Not found``), then read the result among the involved contracts (none:
``404``), the Ethereum transaction of the payer at that timestamp, the block, the logs and the state changes. An
Ethereum transaction whose call data lives in a user file (``call_data_id`` above 1000) supplies that file's
current content as ``function_parameters`` when neither the result nor the transaction carries any. A result
whose ``call_result`` is NULL (the record had no sidecar yet) is answered ``206``.

With ``synthetic_contract_results`` on (the reference since 0.164), a transaction with ``synthetic`` contract
logs and no contract result answers too, its result made from those logs (``206``: it has no call result): the
hash is then looked up in ``transaction_hash`` (a transaction whose only synthetic logs are wildcard NFT
transfers is not found), the link from the synthetic logs at the timestamp (the path contract's, or the
transaction id's payer's), and its logs leave out synthetic wildcard NFT transfers, as every result's do.

The path of the second route is a 32-byte Ethereum hash (64 hex digits, optional ``0x``; ``nonce`` is ignored),
looked up in ``contract_transaction_hash`` (a successful transaction first, then the newest), or a transaction id
``shard.realm.num-seconds-nanos`` with ``nonce`` (default 0; the last value wins), whose payer is the entity.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.querystring.params import ParamSet
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.contracts import contract_blocks, contract_ref
from ledgermirror.api.resources.contracts import contract_results_query as queries
from ledgermirror.api.resources.contracts.contract_result_defaults import NONE as NO_DEFAULTS
from ledgermirror.api.resources.contracts.contract_result_defaults import Defaults, GasPrices, defaults_of
from ledgermirror.api.resources.contracts.contract_result_detail import ONE_DETAIL_SCHEMA, Extras, render_detail
from ledgermirror.api.resources.contracts.contract_results import HBAR
from ledgermirror.api.resources.transactions.transaction import NONCE, parse_transaction_id
from ledgermirror.api.resources.transactions.transaction_query import IdLookup
from ledgermirror.ledger.entity_id import EntityId
from ledgermirror.ledger.timestamps import InvalidTimestamp, parse_timestamp

TIMESTAMP_PATH = "timestamp"
TRANSACTION_PATH = "transactionIdOrHash"
_TIMESTAMP = re.compile(r"\d{1,10}(\.\d{1,9})?", re.ASCII)
_ETHEREUM_HASH = re.compile(r"(?:0x)?([0-9a-fA-F]{64})", re.ASCII)

BY_TIMESTAMP_PARAMS = ParamSet([HBAR])
BY_TRANSACTION_PARAMS = ParamSet([HBAR, NONCE], per_value=True)
_PARTIAL = {"206": {"description": "The result's record has no call result yet (partial content)"}}

TIMESTAMP_PARAMETER: dict[str, Any] = {
    "name": TIMESTAMP_PATH,
    "in": "path",
    "required": True,
    "description": "The result's consensus timestamp (seconds[.nanoseconds])",
    "schema": {"type": "string", "pattern": f"^{schemas.TIMESTAMP_VALUE}$"},
    "example": "1676540001.234390005",
}
TRANSACTION_PARAMETER: dict[str, Any] = {
    "name": TRANSACTION_PATH,
    "in": "path",
    "required": True,
    "description": "A 32-byte Ethereum transaction hash (64 hex digits, optional 0x) or a transaction id "
    "(shard.realm.num-seconds-nanos)",
    "schema": {
        "type": "string",
        "pattern": r"^((0x)?[0-9A-Fa-f]{64}|\d{1,3}\.\d{1,4}\.\d{1,11}-(\d{1,9}|[0-8]\d{9})-\d{1,9})$",
    },
    "example": "0.0.1001-1676540001-234390005",
}


@dataclass(frozen=True, slots=True)
class Found:
    """The consensus timestamp and the entity whose ``contract_transaction`` row to read (``by_payer``: the
    entity is the payer, as for a transaction id; else a contract)."""

    timestamp: int
    entity: int
    by_payer: bool = False


def parse_timestamp_path(text: str) -> int | None:
    if not _TIMESTAMP.fullmatch(text):
        return None
    try:
        return parse_timestamp(text)
    except InvalidTimestamp:
        return None


def parse_transaction_path(text: str) -> bytes | IdLookup:
    """The 32 hash bytes, or the transaction id's payer and valid start; 400 for anything else."""
    match = _ETHEREUM_HASH.fullmatch(text)
    if match is not None:
        return bytes.fromhex(match.group(1))
    return parse_transaction_id(text)


async def _defaults(ctx: AppContext, timestamp: int, ethereum: bool) -> Defaults:
    if not ctx.settings.contract_result_defaults:
        return NO_DEFAULTS
    transaction_type = None
    if not ethereum:
        types = await ctx.database.fetch(queries.page_types([timestamp]))
        transaction_type = int(types[0]["type"]) if types else None
    return await defaults_of(ctx, GasPrices(ctx), timestamp, transaction_type, ethereum)


async def _detail(ctx: AppContext, found: Found, contract: int | None, hbar: bool) -> Page:
    """The detailed result of the ``contract_transaction`` row at ``found``; ``contract`` is the path contract
    (its own state changes show even when they are migrations)."""
    synthetic = ctx.settings.synthetic_contract_results
    links = await ctx.database.fetch(queries.involved(found.timestamp, found.entity))
    if not links and synthetic:
        links = await ctx.database.fetch(
            queries.synthetic_link(found.timestamp, found.entity, by_payer=found.by_payer)
        )
    if not links:
        raise NotFound()
    involved = [int(item) for item in links[0]["contract_ids"]]
    payer = int(links[0]["payer_account_id"])
    results, ethereum_rows, block, logs, state_changes = await asyncio.gather(
        ctx.database.fetch(queries.results_at(found.timestamp, involved)),
        ctx.database.fetch(queries.ethereum_at(found.timestamp, payer)),
        contract_blocks.block_at(ctx, found.timestamp),
        ctx.database.fetch(queries.logs_at(found.timestamp, involved)),
        ctx.database.fetch(queries.state_changes_at(found.timestamp, contract, involved)),
    )
    if not results and synthetic:
        results = await ctx.database.fetch(queries.synthetic_at(found.timestamp, involved))
    if not results:
        raise NotFound()
    row = results[0]
    ethereum = ethereum_rows[0] if ethereum_rows else None
    file_data = None
    call_data_id = ethereum["call_data_id"] if ethereum is not None else None
    if call_data_id is not None and EntityId.decode(int(call_data_id)).num >= queries.USER_FILE_MIN_NUM:
        content = await ctx.database.fetch(queries.latest_file(int(call_data_id)))
        file_data = bytes(content[0]["content"]) if content and content[0]["content"] is not None else b""
    extras = Extras(
        block=block,
        ethereum=ethereum,
        logs=logs,
        state_changes=state_changes,
        file_data=file_data,
        hbar=hbar,
        delegation=ctx.settings.enable_delegation_address,
        defaults=await _defaults(ctx, found.timestamp, ethereum is not None),
    )
    status = 206 if row["call_result"] is None else 200
    return Page(render_detail(row, extras), status=status)


async def by_timestamp(request: Request, ctx: AppContext) -> Page:
    contract_text = str(request.path_params[contract_ref.PATH_PARAMETER])
    timestamp = parse_timestamp_path(str(request.path_params[TIMESTAMP_PATH]))
    messages: list[str] = []
    try:
        contract_ref.parse_contract(contract_text, shard=ctx.settings.shard, realm=ctx.settings.realm)
    except BadRequest as error:
        messages.extend(error.messages)
    if timestamp is None:
        messages.append(f"Invalid parameter: {TIMESTAMP_PATH}")
    if messages:
        raise BadRequest(*messages)
    assert timestamp is not None
    query = query_of(request, ctx, BY_TIMESTAMP_PARAMS)
    contract = await contract_ref.resolve_contract(contract_text, ctx)
    return await _detail(ctx, Found(timestamp, contract), contract, query.last(HBAR, True))


async def by_transaction(request: Request, ctx: AppContext) -> Page:
    query = query_of(request, ctx, BY_TRANSACTION_PARAMS)
    path = parse_transaction_path(str(request.path_params[TRANSACTION_PATH]))
    if isinstance(path, bytes):
        rows = await ctx.database.fetch(queries.by_hash(path))
        if not rows and ctx.settings.synthetic_contract_results:
            rows = await ctx.database.fetch(queries.synthetic_by_hash(path))
        if not rows:
            raise NotFound()
        found = Found(int(rows[0]["consensus_timestamp"]), int(rows[0]["entity_id"]))
    else:
        rows = await ctx.database.fetch(queries.by_id(path.payer, path.valid_start, query.last(NONCE, 0)))
        if not rows:
            raise NotFound()
        found = Found(int(rows[0]["consensus_timestamp"]), int(rows[0]["payer_account_id"]), by_payer=True)
    return await _detail(ctx, found, None, query.last(HBAR, True))


BY_TIMESTAMP_ENDPOINT = Endpoint(
    path="/api/v1/contracts/{contractIdOrAddress}/results/{timestamp}",
    handler=by_timestamp,
    params=BY_TIMESTAMP_PARAMS,
    max_age=600,
    summary="Get a contract's result at a timestamp",
    description="The contract's result at this consensus timestamp, with its block, Ethereum transaction, logs "
    "and state changes (206 while the record has no call result).",
    response_schema=ONE_DETAIL_SCHEMA,
    tag="contracts",
    path_params=(contract_ref.OPENAPI_PATH_PARAMETER, TIMESTAMP_PARAMETER),
    extra_responses=_PARTIAL,
)
BY_TRANSACTION_ENDPOINT = Endpoint(
    path="/api/v1/contracts/results/{transactionIdOrHash}",
    handler=by_transaction,
    params=BY_TRANSACTION_PARAMS,
    max_age=600,
    summary="Get a contract result by transaction id or Ethereum hash",
    description="The contract result of a transaction, by its 32-byte Ethereum hash or its transaction id (and "
    "nonce, default 0), with its block, Ethereum transaction, logs and state changes (206 while the record has "
    "no call result).",
    response_schema=ONE_DETAIL_SCHEMA,
    tag="contracts",
    path_params=(TRANSACTION_PARAMETER,),
    extra_responses=_PARTIAL,
)
