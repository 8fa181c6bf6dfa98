"""``GET /api/v1/contracts/results/{transactionIdOrHash}/prestate``: the accounts a stored contract call
touched, as they were before it and (``diff=true``) how it changed them: the ``prestateTracer`` of
``debug_traceTransaction`` (HIP-1485; the reference web3's ``PrestateController``, newer than the reference
commit of ``../shared/reference``).

The call is the one ``/opcodes`` replays (``contract_evm.prepare_replay``: the same transaction lookup, 404s and
state one nanosecond before it), run once in an EVM worker that keeps every account and storage slot it read and
their values after the transaction (``evm/prestate.py``). ``pre`` lists each touched account that existed:
``address``, ``balance`` (tinybars, a number as the reference since 0.167, the mirror's balance before the
minimum-balance rule), ``nonce``, ``code`` (with ``code=true``: the runtime bytecode, ``""`` for an account) and
``storage`` (with ``storage=true``, of a contract: each slot read that held a value). ``post`` (``diff=true``,
else empty) lists each touched account that exists after the call, its unchanged ``balance``, ``nonce`` and
``code`` null and only its changed slots, as the reference's ``loadPostAccountTraces``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.params import ParamSet, ParamSpec
from ledgermirror.api.resources.contracts.contract_call_state import MirrorState
from ledgermirror.api.resources.contracts.contract_evm import OPCODES_ENDPOINT, prepare_replay, run_replay
from ledgermirror.evm.prestate import Touched
from ledgermirror.evm.state import AccountState

PRESTATE_PATH = "/api/v1/contracts/results/{transactionIdOrHash}/prestate"


def _flag(name: str, what: str) -> ParamSpec[bool]:
    return values.switch(name, f"Whether the answer {what} (true or false; default false).")


DIFF = _flag("diff", "also lists the accounts after the call, with what it changed")
CODE = _flag("code", "shows each account's runtime bytecode")
STORAGE = _flag("storage", "shows each contract's storage slots the call read")
PRESTATE_PARAMS = ParamSet([DIFF, CODE, STORAGE])


def _word(value: int) -> str:
    return "0x" + format(value, "064x")


def _code(state: AccountState) -> str:
    return "0x" + state.code.hex() if state.code else ""


def _pre(touched: Touched, pre: AccountState, balance: int, code: bool, storage: bool) -> dict[str, Any]:
    slots = None
    if storage and pre.code:
        slots = {_word(key): _word(before) for key, before, _ in touched.slots if before}
    return {
        "address": "0x" + touched.address.hex(),
        "balance": balance,
        "code": _code(pre) if code else None,
        "nonce": pre.nonce,
        "storage": slots,
    }


def _post(touched: Touched, post: AccountState, balance: int, code: bool, storage: bool) -> dict[str, Any]:
    pre = touched.pre
    slots = None
    if storage and post.code:
        # a new contract: the slots it holds; else the slots the call changed
        kept = [
            (key, after) for key, before, after in touched.slots if (after if pre is None else after != before)
        ]
        slots = {_word(key): _word(new) for key, new in kept}
    changed_code = pre is None or post.code != pre.code
    return {
        "address": "0x" + touched.address.hex(),
        "balance": None if pre is not None and post.balance == pre.balance else balance,
        "code": _code(post) if code and changed_code else None,
        "nonce": None if pre is not None and post.nonce == pre.nonce else post.nonce,
        "storage": slots,
    }


async def prestate(request: Request, ctx: AppContext) -> Page:
    path = str(request.path_params["transactionIdOrHash"])
    query = query_of(request, ctx, PRESTATE_PARAMS)
    diff, code, storage = query.last(DIFF, False), query.last(CODE, False), query.last(STORAGE, False)
    replay = await prepare_replay(ctx, path)
    state = MirrorState(ctx, replay.timestamp - 1)
    result = await run_replay(ctx, replay, state, prestate=True)
    pre_list: list[dict[str, Any]] = []
    post_list: list[dict[str, Any]] = []
    for touched in result.touched or ():
        # the mirror's own balance (the EVM saw at least the minimum balance); after the call, moved by as much
        lift = 0 if touched.pre is None else touched.pre.balance - state.balances.get(touched.address, 0)
        if touched.pre is not None:
            pre_list.append(_pre(touched, touched.pre, touched.pre.balance - lift, code, storage))
        if diff and touched.post is not None:
            post_list.append(_post(touched, touched.post, touched.post.balance - lift, code, storage))
    return Page({"pre": pre_list, "post": post_list})


_ACCOUNT_TRACE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "address": {"type": "string"},
        "balance": {"type": ["integer", "null"], "format": "int64", "description": "Tinybars"},
        "code": {"type": ["string", "null"]},
        "nonce": {"type": ["integer", "null"], "format": "int64"},
        "storage": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
    },
}

PRESTATE_ENDPOINT = Endpoint(
    path=PRESTATE_PATH,
    handler=prestate,
    params=PRESTATE_PARAMS,
    max_age=0,
    summary="The accounts a contract call touched, before it and what it changed",
    description="Replays the stored contract call on the state just before it and lists the accounts it touched "
    "(the prestateTracer; docs/contracts-call.md): their balance, nonce and, on request, code and storage; with "
    "diff=true also what the call changed.",
    response_schema={
        "type": "object",
        "properties": {
            "pre": {"type": "array", "items": _ACCOUNT_TRACE},
            "post": {"type": "array", "items": _ACCOUNT_TRACE},
        },
    },
    tag="contracts",
    path_params=OPCODES_ENDPOINT.path_params,
    extra_responses={"404": {"description": "Transaction, contract result, record file or init code not found"}},
)
