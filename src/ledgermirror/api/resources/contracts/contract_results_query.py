"""The statements of the contract result routes (``upstream-contracts.md`` §4, §5): the result lists, the block a
``block.number``/``block.hash`` filter names, the Ethereum transactions of a page, and everything one detailed
result reads (its ``contract_transaction`` link, the results, Ethereum transaction, logs and state changes at its
consensus timestamp, the call data file, and the lookups by Ethereum hash and by transaction id).

Blocks of results (which record file holds a timestamp) are :mod:`.contract_blocks`'.
"""

from __future__ import annotations

from typing import Any

from ledgermirror.api.resources.contracts.contract_result_detail import ETHEREUM_COLUMNS
from ledgermirror.api.resources.contracts.contract_result_render import RESULT_COLUMNS, RESULT_FROM
from ledgermirror.db.sql import Column, Op, Select, Statement, template
from ledgermirror.ledger.int64 import INT64_MAX
from ledgermirror.ledger.transaction_codes import result_number, type_number

SUCCESS = result_number("SUCCESS")
ID_WINDOW_NS = 35 * 60 * 1_000_000_000
"""How long after its valid start a transaction may reach consensus (``maxTransactionConsensusTimestampRange``)."""
USER_FILE_MIN_NUM = 1001
"""Files numbered above 1000 are user files; only those hold call data."""

RESULTS_HEAD = f"select {RESULT_COLUMNS}\n{RESULT_FROM}"
TIMESTAMP = Column("cr.consensus_timestamp")
CONTRACT = Column("cr.contract_id")
SENDER = Column("cr.sender_id")
TRANSACTION_INDEX = Column("cr.transaction_index")
TOP_LEVEL = "cr.transaction_nonce = 0"
"""``internal=false`` (the default): child results (a nonzero nonce) are hidden."""

SYNTHETIC_HEAD = f"""select distinct on (cl.consensus_timestamp)
       null::bigint as amount, null::bytea as bloom, null::bytea as call_result, cl.consensus_timestamp,
       coalesce(cl.root_contract_id, cl.contract_id) as contract_id, null::bigint[] as created_contract_ids,
       null::text as error_message, null::bytea as failed_initcode, ''::bytea as function_parameters,
       null::bytea as function_result, null::bigint as gas_consumed, 0::bigint as gas_limit,
       null::bigint as gas_used, cl.payer_account_id, cl.payer_account_id as sender_id, cl.transaction_hash,
       cl.transaction_index, 0 as transaction_nonce, {SUCCESS}::smallint as transaction_result, e.evm_address
from contract_log cl
left join entity e on e.id = coalesce(cl.root_contract_id, cl.contract_id)"""
"""A result made from a transaction's synthetic logs (the reference's synthetic contract result): the first log's
contract, the payer as sender, no amount, gas, call data or output, ``SUCCESS``; the same columns as
:data:`RESULTS_HEAD`, so the two parts of a list make one ``union all``."""
SYNTHETIC_ONLY = "cl.synthetic is true"
NOT_WILDCARD = (
    "(cl.topic0 is distinct from '\\xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'::bytea"
    " or cl.topic3 is distinct from '\\xffffffffffffffff'::bytea)"
)
"""Not the ``Transfer`` of an NFT treasury change (serial -1, the wildcard), which the reference leaves out."""
NO_REAL_RESULT = (
    "not exists (select 1 from contract_result r where r.consensus_timestamp = cl.consensus_timestamp)"
)
"""A transaction with a contract result shows that result only (the reference drops such synthetic rows)."""
NO_REAL_RESULT_OF_CONTRACT = (
    "not exists (select 1 from contract_result r where r.consensus_timestamp = cl.consensus_timestamp"
    " and r.contract_id = coalesce(cl.root_contract_id, cl.contract_id))"
)
"""Per contract: no result of the same contract at that timestamp (the list's real part would show it; a result
of another contract there, a precompile call's, does not hide the token's synthetic result, as in the
reference's per-contract list). Read by ``contract_id``, its distribution column under Citus."""
SYNTHETIC_TIMESTAMP = Column("cl.consensus_timestamp")
SYNTHETIC_CONTRACT = Column("coalesce(cl.root_contract_id, cl.contract_id)")
SYNTHETIC_TRANSACTION_INDEX = Column("cl.transaction_index")
SYNTHETIC_LOG_INDEX = Column("cl.index")
MERGE_KEY = Column("consensus_timestamp")
"""The output column both parts of a result list are merged on."""

_BLOCK_HEAD = "select consensus_start, consensus_end from record_file"
_BLOCK_INDEX = Column("index")
_BLOCK_HASH_C = Column('hash collate "C"')
"""Matches the ``record_file__hash`` index: exact and prefix lookups are index range scans."""

_PAGE_ETHEREUM = f"""select {ETHEREUM_COLUMNS}
from ethereum_transaction et
where et.consensus_timestamp = any({{timestamps}}::bigint[])
  and et.payer_account_id = any({{payers}}::bigint[])
  and et.consensus_timestamp between {{lowest}} and {{highest}}"""
_PAGE_TYPES = """select t.consensus_timestamp, t.type
from transaction t
where t.consensus_timestamp = any({timestamps}::bigint[])
  and t.consensus_timestamp between {lowest} and {highest}"""
_INVOLVED = """select contract_ids, payer_account_id
from contract_transaction
where consensus_timestamp = {timestamp} and entity_id = {entity}"""
_RESULTS_AT = f"""{RESULTS_HEAD}
where cr.consensus_timestamp = {{timestamp}} and cr.contract_id = any({{contracts}}::bigint[])"""
_ETHEREUM_AT = f"""select {ETHEREUM_COLUMNS}, et.call_data, et.call_data_id, et.gas_limit
from ethereum_transaction et
where et.consensus_timestamp = {{timestamp}} and et.payer_account_id = {{payer}}"""
_LOGS_AT = f"""select cl.bloom, cl.contract_id, cl.data, cl.index, cl.topic0, cl.topic1, cl.topic2, cl.topic3,
       e.evm_address
from contract_log cl
left join entity e on e.id = cl.contract_id
where cl.consensus_timestamp = {{timestamp}} and cl.contract_id = any({{contracts}}::bigint[])
  and (cl.synthetic is not true or {NOT_WILDCARD})
order by cl.index"""
_SYNTHETIC_BY_HASH = f"""select th.consensus_timestamp, coalesce(cl.root_contract_id, cl.contract_id) as entity_id
from transaction_hash th
join contract_log cl on cl.consensus_timestamp = th.consensus_timestamp
where substring(th.hash from 1 for 32) = {{hash}} and cl.synthetic is true and {NOT_WILDCARD}
order by th.consensus_timestamp, cl.index
limit 1"""
_SYNTHETIC_LINK = """select cl.payer_account_id,
       (select array_agg(distinct coalesce(s.root_contract_id, s.contract_id))
        from contract_log s
        where s.consensus_timestamp = {{timestamp}} and s.synthetic is true) as contract_ids
from contract_log cl
where cl.consensus_timestamp = {{timestamp}} and cl.synthetic is true and {match} = {{entity}}
order by cl.index
limit 1"""
_SYNTHETIC_LINK_BY_CONTRACT = _SYNTHETIC_LINK.format(match=SYNTHETIC_CONTRACT)
_SYNTHETIC_LINK_BY_PAYER = _SYNTHETIC_LINK.format(match="cl.payer_account_id")
_SYNTHETIC_AT = f"""{SYNTHETIC_HEAD}
where cl.consensus_timestamp = {{timestamp}} and cl.synthetic is true
  and {SYNTHETIC_CONTRACT} = any({{contracts}}::bigint[])
order by cl.consensus_timestamp, cl.index
limit 1"""
_STATE_CHANGES_AT = """select csc.contract_id, csc.slot, csc.value_read, csc.value_written, e.evm_address
from contract_state_change csc
left join entity e on e.id = csc.contract_id
where csc.consensus_timestamp = {timestamp}
  and (csc.contract_id = {contract}::bigint
       or (csc.contract_id = any({contracts}::bigint[]) and csc.migration is false))
order by csc.contract_id, csc.slot"""
_LATEST_FILE = """select string_agg(fd.file_data, ''::bytea order by fd.consensus_timestamp) as content
from file_data fd
where fd.entity_id = {file}
  and fd.transaction_type = any({types}::smallint[])
  and fd.consensus_timestamp >= (select max(consensus_timestamp)
                                 from file_data
                                 where entity_id = {file} and transaction_type = any({starts}::smallint[]))"""
_BY_HASH = """select consensus_timestamp, entity_id, payer_account_id
from contract_transaction_hash
where hash = {hash}
order by transaction_result = {success} desc, consensus_timestamp desc
limit 1"""
_BY_ID = """select consensus_timestamp, payer_account_id
from transaction
where payer_account_id = {payer} and valid_start_ns = {valid_start}
  and consensus_timestamp between {valid_start} and {latest}
  and nonce = {nonce}
order by result = {success} desc, consensus_timestamp desc
limit 1"""
FILE_TYPES = tuple(type_number(name) for name in ("FILEAPPEND", "FILECREATE", "FILEUPDATE"))
FILE_STARTS = tuple(type_number(name) for name in ("FILECREATE", "FILEUPDATE"))


def results_select() -> Select:
    """The head of a result list; the plan adds its conditions, order and limit."""
    return Select(RESULTS_HEAD)


def block_by_number(number: int) -> Select:
    return Select(_BLOCK_HEAD).compare(_BLOCK_INDEX, Op.EQ, number).limit(1)


def block_by_hash(digits: str) -> Select:
    """96 lower-case hex digits match the whole record file hash, 64 its first half (a prefix range)."""
    select = Select(_BLOCK_HEAD)
    if len(digits) == 96:
        return select.compare(_BLOCK_HASH_C, Op.EQ, digits).limit(1)
    upper = digits[:-1] + chr(ord(digits[-1]) + 1)
    return select.compare(_BLOCK_HASH_C, Op.GTE, digits).compare(_BLOCK_HASH_C, Op.LT, upper).limit(1)


def page_ethereum(rows: list[Any]) -> Statement:
    """The Ethereum transactions of a page of results (by timestamp and payer)."""
    timestamps = [int(row["consensus_timestamp"]) for row in rows]
    payers = sorted({int(row["payer_account_id"]) for row in rows})
    return template(
        _PAGE_ETHEREUM, timestamps=timestamps, payers=payers, lowest=min(timestamps), highest=max(timestamps)
    )


def page_types(timestamps: list[int]) -> Statement:
    """The transaction types of these consensus timestamps (the gas price a result without one shows)."""
    return template(_PAGE_TYPES, timestamps=timestamps, lowest=min(timestamps), highest=max(timestamps))


def involved(timestamp: int, entity: int) -> Statement:
    return template(_INVOLVED, timestamp=timestamp, entity=entity)


def results_at(timestamp: int, contracts: list[int]) -> Statement:
    return template(_RESULTS_AT, timestamp=timestamp, contracts=contracts)


def ethereum_at(timestamp: int, payer: int) -> Statement:
    return template(_ETHEREUM_AT, timestamp=timestamp, payer=payer)


def synthetic_by_hash(digest: bytes) -> Statement:
    """The first transaction with this hash (its first 32 bytes) that has synthetic logs other than a wildcard
    NFT transfer, and the contract of its first such log."""
    return template(_SYNTHETIC_BY_HASH, hash=digest[:32])


def synthetic_link(timestamp: int, entity: int, *, by_payer: bool) -> Statement:
    """What ``contract_transaction`` would say of a transaction with synthetic logs only: its payer and every
    contract of its synthetic logs, when one of them is the entity's (the contract's, or the payer's)."""
    text = _SYNTHETIC_LINK_BY_PAYER if by_payer else _SYNTHETIC_LINK_BY_CONTRACT
    return template(text, timestamp=timestamp, entity=entity)


def synthetic_at(timestamp: int, contracts: list[int]) -> Statement:
    """The result made from the synthetic logs at the timestamp (columns of :data:`SYNTHETIC_HEAD`)."""
    return template(_SYNTHETIC_AT, timestamp=timestamp, contracts=contracts)


def logs_at(timestamp: int, contracts: list[int]) -> Statement:
    """The logs at the timestamp, without synthetic wildcard NFT transfers (as the reference's)."""
    return template(_LOGS_AT, timestamp=timestamp, contracts=contracts)


def state_changes_at(timestamp: int, contract: int | None, contracts: list[int]) -> Statement:
    """The state changes at the timestamp: the path contract's (``contract``, also migrations), and those of
    every involved contract that are not migrations."""
    return template(_STATE_CHANGES_AT, timestamp=timestamp, contract=contract, contracts=contracts)


def latest_file(file_id: int) -> Statement:
    """The file's current content: its newest create or update and the appends after it."""
    return template(_LATEST_FILE, file=file_id, types=list(FILE_TYPES), starts=list(FILE_STARTS))


def by_hash(ethereum_hash: bytes) -> Statement:
    """The contract transaction with this Ethereum hash: a successful one first, then the newest."""
    return template(_BY_HASH, hash=ethereum_hash, success=SUCCESS)


def by_id(payer: int, valid_start: int, nonce: int) -> Statement:
    """The transaction with this id and nonce: a successful one first, then the newest."""
    return template(
        _BY_ID,
        payer=payer,
        valid_start=valid_start,
        latest=min(INT64_MAX, valid_start + ID_WINDOW_NS),
        nonce=nonce,
        success=SUCCESS,
    )
