"""The two contract routes that need an EVM: ``POST /api/v1/contracts/call`` and
``GET /api/v1/contracts/results/{transactionIdOrHash}/opcodes`` (``upstream-contracts.md`` §0).

In the reference they are not REST routes of the Node service but of its ``web3`` module: ``/call`` executes or
estimates a call (``eth_call`` / ``eth_estimateGas``) and ``/opcodes`` re-executes a past transaction at the
state of its block to trace it, both in a Hedera EVM running over the mirrored state. Tables alone cannot answer
either, and this mirror runs no EVM, so both answer ``501`` with our error body and a message saying why
(docs/compatibility.md). Their input is still checked first, so a malformed request is a ``4xx`` as usual: the
opcodes path must be a transaction id (``shard.realm.num-sss-nnn``) or a 32-byte hash, as the reference's
gateway routes only those to web3 (anything else is ``404``), and its ``stack``, ``memory`` and ``storage``
parameters are booleans.
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

CALL_PATH = "/api/v1/contracts/call"
OPCODES_PATH = "/api/v1/contracts/results/{transactionIdOrHash}/opcodes"
_TRANSACTION = re.compile(r"(0x)?[A-Fa-f0-9]{64}|\d+\.\d+\.\d+-\d+-\d+", re.ASCII)
"""The reference gateway's rule for what it sends to web3's opcodes route."""

CALL_UNSUPPORTED = (
    "Contract calls are not supported by this mirror: executing or estimating a call (eth_call, "
    "eth_estimateGas) needs an EVM running over the mirrored state, which this REST service does not have"
)
OPCODES_UNSUPPORTED = (
    "Opcode traces are not supported by this mirror: tracing re-executes the transaction in an EVM over the "
    "state of its block, which this REST service does not have"
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
NO_PARAMS = ParamSet([])


async def call(request: Request, ctx: AppContext) -> Page:
    raise Unimplemented(CALL_UNSUPPORTED)


async def opcodes(request: Request, ctx: AppContext) -> Page:
    if _TRANSACTION.fullmatch(str(request.path_params["transactionIdOrHash"])) is None:
        raise NotFound()
    query_of(request, ctx, OPCODES_PARAMS)
    raise Unimplemented(OPCODES_UNSUPPORTED)


_NOT_IMPLEMENTED: dict[str, Any] = {"501": {"description": "Not implemented: this mirror runs no EVM"}}

CALL_ENDPOINT = Endpoint(
    path=CALL_PATH,
    handler=call,
    params=NO_PARAMS,
    max_age=0,
    summary="Execute or estimate a contract call (not supported)",
    description="Answered 501: executing a call needs an EVM over the mirrored state, which this mirror does "
    "not run (the reference serves this route from its web3 module).",
    response_schema={"type": "object", "properties": {"result": {"type": "string"}}},
    tag="contracts",
    method="POST",
    operation_id="api_v1_contracts_call",
    request_body={"required": True, "content": {"application/json": {"schema": {"type": "object"}}}},
    extra_responses=_NOT_IMPLEMENTED,
)
OPCODES_ENDPOINT = Endpoint(
    path=OPCODES_PATH,
    handler=opcodes,
    params=OPCODES_PARAMS,
    max_age=0,
    summary="Trace a transaction's opcodes (not supported)",
    description="Answered 501: a trace re-executes the transaction in an EVM over the state of its block, which "
    "this mirror does not run (the reference serves this route from its web3 module).",
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
