"""``GET /api/v1/transactions``, the query side: which consensus timestamps make a page.

The reference's first phase. Without ``account.id`` or ``type`` the page is read from ``transaction`` alone
(its primary key, or ``(type, consensus_timestamp)`` with ``transactiontype``). With ``account.id`` the page is
the union of four sources, each read in consensus order up to the page size through its own index: transactions
the account paid for (synthetic child records excepted), ``entity_transaction``, and the account's hbar and
token transfers (each of several ``account.id`` equalities gets its own branches, and only the timestamp bounds
that were given are written: PostgreSQL's generic plans then still read the account's indexes). With ``type``
(credit or debit) only the two transfer sources count, with the amount's sign.
The details of the page's transactions are loaded by ``account_transactions_query.DETAILS_SQL``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from ledgermirror.api.querystring.grammar import Order
from ledgermirror.db.sql import Column, Fragment, Op, Select, Statement, condition, joined, template
from ledgermirror.ledger.transaction_codes import CRYPTOCREATEACCOUNT, CRYPTOUPDATEACCOUNT

PRECEDING_TYPES = [CRYPTOCREATEACCOUNT, CRYPTOUPDATEACCOUNT]
"""Child records the payer's list keeps even with a nonce (the reference's ``precedingTransactionTypes``)."""
FEE_COLLECTOR = 98
"""Encoded id of 0.0.98, which the partial index on ``crypto_transfer (entity_id, consensus_timestamp)`` leaves
out (it is in almost every transaction)."""

_CONSENSUS_TIMESTAMP = Column("consensus_timestamp")
_TYPE = Column("type")
_RESULT = Column("result")
PLAIN_HEAD = "select consensus_timestamp from transaction"


@dataclass(frozen=True, slots=True)
class AccountCondition:
    """One ``account.id`` filter: an operator and an encoded id."""

    op: Op
    value: int


@dataclass(frozen=True, slots=True)
class TransactionsFilter:
    """The typed filters of one request, after the route's rules: the inclusive consensus window minus the
    excluded timestamps, the account conditions (equalities merged into ``accounts_in``), the transfer sign
    (``credit``: amount > 0, ``debit``: < 0), the wanted types and results (None: any)."""

    lower: int | None = None
    upper: int | None = None
    excluded: tuple[int, ...] = ()
    accounts_in: tuple[int, ...] = ()
    account_conditions: tuple[AccountCondition, ...] = ()
    sign: str | None = None
    types: tuple[int, ...] | None = None
    results: tuple[int, ...] | None = None
    results_excluded: bool = False
    """True: ``results`` are the ones to leave out (``result=fail``)."""
    by_account: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_account", bool(self.accounts_in or self.account_conditions))


def _holds(op: Op, left: int, right: int) -> bool:
    return {
        Op.EQ: left == right,
        Op.NE: left != right,
        Op.GT: left > right,
        Op.GTE: left >= right,
        Op.LT: left < right,
        Op.LTE: left <= right,
    }[op]


def page_statement(found: TransactionsFilter, *, order: Order, limit: int) -> Select | Statement:
    """The page's consensus timestamps, in ``order``, at most ``limit``."""
    if not found.by_account and found.sign is None:
        return _plain(found, order=order, limit=limit)
    return _union(found, order=order, limit=limit)


def _plain(found: TransactionsFilter, *, order: Order, limit: int) -> Select:
    select = Select(PLAIN_HEAD)
    if found.lower is not None:
        select.compare(_CONSENSUS_TIMESTAMP, Op.GTE, found.lower)
    if found.upper is not None:
        select.compare(_CONSENSUS_TIMESTAMP, Op.LTE, found.upper)
    if found.excluded:
        select.none_of(_CONSENSUS_TIMESTAMP, found.excluded)
    if found.types is not None:
        select.any_of(_TYPE, found.types)
    if found.results is not None:
        if found.results_excluded:
            select.none_of(_RESULT, found.results)
        else:
            select.any_of(_RESULT, found.results)
    return select.order_by([_CONSENSUS_TIMESTAMP], order).limit(limit)


# One branch of the union: a source read in consensus order through its index, cut to the page size.
_BRANCH = Fragment(
    "(select {distinct}{p}consensus_timestamp from {source}\n where {conditions}\n"
    " order by {p}consensus_timestamp {order} limit {limit})"
)
_UNION = Fragment(
    "select consensus_timestamp from (\n{branches}\n) found\norder by consensus_timestamp {order}\nlimit {limit}"
)
_LOWER = Fragment("{p}consensus_timestamp >= {lower}")
_UPPER = Fragment("{p}consensus_timestamp <= {upper}")
_EXCLUDED = Fragment("{p}consensus_timestamp <> all({excluded}::bigint[])")
_TYPES = Fragment("{p}type = any({types}::smallint[])")
_RESULTS_IN = Fragment("{p}result = any({results}::smallint[])")
_RESULTS_OUT = Fragment("{p}result <> all({results}::smallint[])")
_NOT_CHILD = Fragment(
    "(nonce = 0 or parent_consensus_timestamp is not null or type = any({preceding}::smallint[]))"
)
_TRANSACTION_EXISTS = Fragment(
    "exists (select 1 from transaction t where t.consensus_timestamp = {p}consensus_timestamp and {conditions})"
)
_NOT_FEE_COLLECTOR = Fragment("{p}entity_id <> {fee_collector}").fill(fee_collector=FEE_COLLECTOR)
_SIGN = {"credit": Fragment("{p}amount > 0"), "debit": Fragment("{p}amount < 0")}
_DISTINCT = {True: Fragment("distinct "), False: Fragment("")}
_NO_PREFIX = Fragment("")
_CT, _TT = Fragment("ct."), Fragment("tt.")
_T = Fragment("t.")


@dataclass(frozen=True, slots=True)
class _Shape:
    """What the union's text depends on (not the values it binds): the bounds given, the account equalities
    (each with whether it may be the fee collector) and the operators of the other account conditions, the
    sign, whether types and results are filtered, the order and the row limit."""

    lower: bool
    upper: bool
    excluded: bool
    equalities: int
    """How many ``account.id`` equalities: a group of branches each (one group without any)."""
    fee_collector: tuple[bool, ...]
    """Per branch group (one per account equality, or one): whether 0.0.98 may match its account conditions."""
    account_ops: tuple[Op, ...]
    sign: str | None
    types: bool
    results: bool
    results_excluded: bool
    order: Order
    limit: int

    @classmethod
    def of(cls, found: TransactionsFilter, order: Order, limit: int) -> _Shape:
        equals: list[int | None] = list(range(len(found.accounts_in))) or [None]
        return cls(
            lower=found.lower is not None,
            upper=found.upper is not None,
            excluded=bool(found.excluded),
            equalities=len(found.accounts_in),
            fee_collector=tuple(_may_match(found, equal, FEE_COLLECTOR) for equal in equals),
            account_ops=tuple(item.op for item in found.account_conditions),
            sign=found.sign,
            types=found.types is not None,
            results=found.results is not None,
            results_excluded=found.results_excluded,
            order=order,
            limit=limit,
        )


def _window(shape: _Shape, p: Fragment) -> list[Fragment]:
    """Only the bounds that were given: PostgreSQL's generic plan for a bound it cannot see guesses it selective
    and walks the timestamp index instead of the account's."""
    conditions = []
    if shape.lower:
        conditions.append(_LOWER.fill(p=p))
    if shape.upper:
        conditions.append(_UPPER.fill(p=p))
    if shape.excluded:
        conditions.append(_EXCLUDED.fill(p=p))
    return conditions


def _account_conditions(shape: _Shape, column: str, equal: int | None) -> list[Fragment]:
    """The account conditions of one branch: ``equal`` is the index of its equality (one branch per account:
    PostgreSQL's generic plan for a list of accounts guesses many rows and walks the timestamp index instead)."""
    conditions = [] if equal is None else [Fragment(condition(Column(column), Op.EQ, f"account_in_{equal}"))]
    for index, op in enumerate(shape.account_ops):
        conditions.append(Fragment(condition(Column(column), op, f"account_{index}")))
    return conditions


def _may_match(found: TransactionsFilter, equal: int | None, account: int) -> bool:
    if equal is not None and found.accounts_in[equal] != account:
        return False
    return all(_holds(item.op, account, item.value) for item in found.account_conditions)


def _type_result(shape: _Shape, p: Fragment) -> list[Fragment]:
    conditions = []
    if shape.types:
        conditions.append(_TYPES.fill(p=p))
    if shape.results:
        conditions.append((_RESULTS_OUT if shape.results_excluded else _RESULTS_IN).fill(p=p))
    return conditions


def _branch(
    shape: _Shape, source: str, p: Fragment, conditions: list[Fragment], *, distinct: bool = False
) -> Fragment:
    return _BRANCH.fill(
        distinct=_DISTINCT[distinct],
        p=p,
        source=Fragment(source),
        conditions=joined("\n   and ", conditions),
        order=shape.order,
        limit=shape.limit,
    )


def _transfer_branch(shape: _Shape, source: str, p: Fragment, account: str, equal: int | None) -> Fragment:
    conditions = [*_window(shape, p), *_account_conditions(shape, f"{p.text}{account}", equal)]
    if source.startswith("crypto_transfer") and not shape.fee_collector[0 if equal is None else equal]:
        conditions.append(_NOT_FEE_COLLECTOR.fill(p=p))  # lets the partial index serve the branch
    if shape.sign is not None:
        conditions.append(_SIGN[shape.sign].fill(p=p))
    typed = _type_result(shape, _T)
    if typed:
        conditions.append(_TRANSACTION_EXISTS.fill(p=p, conditions=joined(" and ", typed)))
    return _branch(shape, source, p, conditions, distinct=True)


@functools.lru_cache(maxsize=1024)
def _union_text(shape: _Shape) -> Fragment:
    """The union's text for one shape: composed once, then remembered (a pure function of the shape)."""
    branches = []
    equals: list[int | None] = list(range(shape.equalities)) or [None]
    for equal in equals:
        if shape.sign is None:
            payer = [
                *_window(shape, _NO_PREFIX),
                *_account_conditions(shape, "payer_account_id", equal),
                _NOT_CHILD,
                *_type_result(shape, _NO_PREFIX),
            ]
            branches.append(_branch(shape, "transaction", _NO_PREFIX, payer))
            entity = [
                *_window(shape, _NO_PREFIX),
                *_account_conditions(shape, "entity_id", equal),
                *_type_result(shape, _NO_PREFIX),
            ]
            branches.append(_branch(shape, "entity_transaction", _NO_PREFIX, entity))
        branches.append(_transfer_branch(shape, "crypto_transfer ct", _CT, "entity_id", equal))
        branches.append(_transfer_branch(shape, "token_transfer tt", _TT, "account_id", equal))
    return _UNION.fill(branches=joined("\n    union\n", branches), order=shape.order, limit=shape.limit)


def _union(found: TransactionsFilter, *, order: Order, limit: int) -> Statement:
    text = _union_text(_Shape.of(found, order, limit))
    values: dict[str, Any] = {}
    if found.lower is not None:
        values["lower"] = found.lower
    if found.upper is not None:
        values["upper"] = found.upper
    if found.excluded:
        values["excluded"] = list(found.excluded)
    if found.sign is None:
        values["preceding"] = PRECEDING_TYPES
    for index, account in enumerate(found.accounts_in):
        values[f"account_in_{index}"] = account
    for index, item in enumerate(found.account_conditions):
        values[f"account_{index}"] = item.value
    if found.types is not None:
        values["types"] = list(found.types)
    if found.results is not None:
        values["results"] = list(found.results)
    return template(text, **values)
