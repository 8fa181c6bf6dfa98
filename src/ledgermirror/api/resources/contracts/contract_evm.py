"""``GET /api/v1/contracts/results/{transactionIdOrHash}/opcodes``, not built yet: ``501``
(``upstream-contracts.md`` §0; ``POST /api/v1/contracts/call`` is ``contract_call.py``).

In the reference this is a route of its ``web3`` module: it re-executes a past transaction on the state just
before it to trace every operation. This mirror's EVM (``ledgermirror.evm``) runs calls but has no tracer nor
replay of stored transactions yet, so the route answers ``501`` with our error body and a message saying why
(docs/compatibility.md). Its input is still checked first, so a malformed request is a ``4xx`` as usual: the
path must be a transaction id (``shard.realm.num-sss-nnn``) or a 32-byte hash, as the reference's gateway routes
only those to web3 (anything else is ``404``), and its ``stack``, ``memory`` and ``storage`` parameters are
booleans.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.errors import NotFound, Unimplemented
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.params import ParamSet, ParamSpec

OPCODES_PATH = "/api/v1/contracts/results/{transactionIdOrHash}/opcodes"
_TRANSACTION = re.compile(r"(0x)?[A-Fa-f0-9]{64}|\d+\.\d+\.\d+-\d+-\d+", re.ASCII)
"""The reference gateway's rule for what it sends to web3's opcodes route."""

OPCODES_UNSUPPORTED = (
    "Opcode traces are not supported by this mirror yet: tracing re-executes the transaction in an EVM over the "
    "state of its block, and this mirror's EVM has no tracer nor replay of stored transactions yet"
)


def _flag(name: str, default: str) -> ParamSpec[bool]:
    return ParamSpec[bool](
        name,
        values.true_false,
        f"Whether the trace would include the {name} (true or false; default {default}).",
        ops=frozenset(),
        repeatable=False,
        schema={"type": "boolean"},
    )


OPCODES_PARAMS = ParamSet([_flag("stack", "true"), _flag("memory", "false"), _flag("storage", "false")])


async def opcodes(request: Request, ctx: AppContext) -> Page:
    if _TRANSACTION.fullmatch(str(request.path_params["transactionIdOrHash"])) is None:
        raise NotFound()
    query_of(request, ctx, OPCODES_PARAMS)
    raise Unimplemented(OPCODES_UNSUPPORTED)


_NOT_IMPLEMENTED: dict[str, Any] = {"501": {"description": "Not implemented: no opcode tracer yet"}}

OPCODES_ENDPOINT = Endpoint(
    path=OPCODES_PATH,
    handler=opcodes,
    params=OPCODES_PARAMS,
    max_age=0,
    summary="Trace a transaction's opcodes (not supported)",
    description="Answered 501: a trace re-executes the transaction in an EVM over the state of its block, and "
    "this mirror's EVM has no tracer nor replay of stored transactions yet.",
    response_schema={"type": "object"},
    tag="contracts",
    path_params=(
        {
            "name": "transactionIdOrHash",
            "in": "path",
            "required": True,
            "description": "A transaction id (shard.realm.num-sss-nnn) or a 32-byte transaction hash",
            "schema": {"type": "string", "pattern": r"^((0x)?[A-Fa-f0-9]{64}|\d+\.\d+\.\d+-\d+-\d+)$"},
            "example": "0.0.1001-1700000000-000000001",
        },
    ),
    extra_responses=_NOT_IMPLEMENTED,
)
