"""``GET /api/v1/contracts/{contractIdOrAddress}``: one contract with its code (``upstream-contracts.md`` §3).

The path is an entity id, a long-zero address (its num) or any other EVM address, which is matched against
``entity.evm_address`` inside the query (no lookup: an unknown address is a plain ``404 Not found``, as in the
reference). The only parameter is ``timestamp`` (every operator, repeatable): each value is a condition on the
version's ``timestamp_range`` (``eq``/``lte``: started by then, ``lt``: started before, ``gt``/``gte``: still
current after or at, ``ne``: not current at), and the current and historical versions are searched together,
the newest matching one answering. Anything but exactly one row is ``404 Not found``.

``bytecode`` is the content of the contract's creating file (a user file, num above 1000) at its creation: the
file's rows from its latest create, or non-empty update, at or before the creation, up to the creation; the
content is hex text, answered with ``0x`` added. Without such a file it is the contract's ``initcode``.
``runtime_bytecode`` is the stored runtime code.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.errors import NotFound
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.grammar import Op
from ledgermirror.api.querystring.params import Filter, ParamSet, ParamSpec
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.contracts import contract_ref, contract_render
from ledgermirror.db.sql import Fragment, Statement, joined, template
from ledgermirror.ledger.entity_id import MAX_NUM, EntityId

TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The contract as of this consensus timestamp, with an optional operator; repeat for ranges (every value is "
    "a condition on the version's lifetime, the newest matching version answers).",
    schema=schemas.TIMESTAMP_QUERY,
    example="lte:1700000000.000000000",
)
PARAMS = ParamSet([TIMESTAMP], per_value=True)

RESULTS = "results"
"""The path segment of ``/api/v1/contracts/results``, which this route's template also matches."""
USER_FILE_MIN_NUM = 1001
"""Files 0.0.1 to 0.0.1000 are system files; a contract's creating file is a user file."""

_VERSION = Fragment(f"select {contract_render.COLUMNS}, {contract_render.BYTECODE_COLUMNS}\n") + Fragment(
    "from {table} e\nleft join contract c on c.id = e.id\nwhere e.type = 'CONTRACT' and {conditions}"
)
_NEWEST = Fragment("{current}\nunion\n{history}\norder by timestamp_range desc\nlimit 1")
_CURRENT_TABLE, _HISTORY_TABLE = Fragment("entity"), Fragment("entity_history")
_BY_ID = Fragment("e.id = {contract}")
_BY_ADDRESS = Fragment("e.evm_address = {address}")
_RANGES = {
    Op.EQ: "e.timestamp_range && int8range(null, {%s}, '(]')",
    Op.LTE: "e.timestamp_range && int8range(null, {%s}, '(]')",
    Op.LT: "e.timestamp_range && int8range(null, {%s}, '()')",
    Op.GT: "e.timestamp_range && int8range({%s}, null, '()')",
    Op.GTE: "e.timestamp_range && int8range({%s}, null, '[)')",
    Op.NE: "not e.timestamp_range @> {%s}::bigint",
}
"""One ``timestamp`` filter as a condition on the version's range; ``%s`` is its marker's name."""

_FILE_CONTENT = """select string_agg(f.file_data, ''::bytea order by f.consensus_timestamp) as content
from file_data f
where f.entity_id = {file} and f.consensus_timestamp <= {created}
  and f.consensus_timestamp >= (
    select s.consensus_timestamp
    from file_data s
    where s.entity_id = {file} and s.consensus_timestamp <= {created}
      and (s.transaction_type = 17 or (s.transaction_type = 19 and length(s.file_data) <> 0))
    order by s.consensus_timestamp desc
    limit 1)"""
"""The file's content at ``created``: every row from its latest create (17) or non-empty update (19) at or
before then, up to then, concatenated in order (NULL when there is none)."""


def statement(ref: EntityId | contract_ref.ContractAddress, stamps: list[Filter[int]]) -> Statement:
    """The contract's current version, or with timestamps the newest matching version of the current table and
    ``entity_history``."""
    markers: dict[str, Any] = {}
    conditions: list[Fragment] = []
    if isinstance(ref, EntityId):
        conditions.append(_BY_ID)
        markers["contract"] = ref.encoded
    else:
        conditions.append(_BY_ADDRESS)
        markers["address"] = ref.address
    for index, stamp in enumerate(stamps):
        name = f"t{index}"
        conditions.append(Fragment(_RANGES[stamp.op] % name))
        markers[name] = stamp.value
    where = joined(" and ", conditions)
    current = _VERSION.fill(table=_CURRENT_TABLE, conditions=where)
    if not stamps:
        return template(current, **markers)
    history = _VERSION.fill(table=_HISTORY_TABLE, conditions=where)
    return template(_NEWEST.fill(current=current, history=history), **markers)


def is_user_file(encoded: int | None) -> bool:
    return encoded is not None and (encoded & MAX_NUM) >= USER_FILE_MIN_NUM


async def _file_content(ctx: AppContext, file_id: int, created: int | None) -> bytes | None:
    if created is None:
        return None
    rows = await ctx.database.fetch(template(_FILE_CONTENT, file=file_id, created=created))
    content = rows[0]["content"] if rows else None
    return None if content is None else bytes(content)


async def get_contract(request: Request, ctx: AppContext) -> Page:
    text = str(request.path_params[contract_ref.PATH_PARAMETER])
    if text == RESULTS:
        raise NotFound()  # /contracts/results is its own route, listed before this one (the reference's guard)
    ref = contract_ref.parse_contract(text, shard=ctx.settings.shard, realm=ctx.settings.realm)
    query = query_of(request, ctx, PARAMS)
    rows = await ctx.database.fetch(statement(ref, query.filters(TIMESTAMP)))
    if len(rows) != 1:
        raise NotFound()
    row = rows[0]
    from_file = is_user_file(row["file_id"])
    content = await _file_content(ctx, int(row["file_id"]), row["created_timestamp"]) if from_file else None
    return Page(contract_render.render_with_bytecode(row, content, from_file))


ENDPOINT = Endpoint(
    path="/api/v1/contracts/{contractIdOrAddress}",
    handler=get_contract,
    params=PARAMS,
    max_age=1,
    summary="Get a contract",
    description="One contract by id or EVM address, with its bytecode (the creating file's content at its "
    "creation, else its initcode) and runtime bytecode; as of a timestamp, the newest version matching every "
    "timestamp condition.",
    response_schema=contract_render.CONTRACT_WITH_BYTECODE_SCHEMA,
    tag="contracts",
    path_params=(contract_ref.OPENAPI_PATH_PARAMETER,),
)
