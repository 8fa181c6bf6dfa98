"""The statements of ``POST /api/v1/contracts/call``: the block a call runs at, and the accounts, bytecode and
storage slots the EVM reads, now or as of a block's end (upstream-web3.md §2)."""

from __future__ import annotations

_BLOCK = "select index, consensus_start, consensus_end, hash from record_file"
BLOCK_LATEST = _BLOCK + " order by consensus_end desc limit 1"
BLOCK_EARLIEST = _BLOCK + " order by index limit 1"
BLOCK_BY_NUMBER = _BLOCK + " where index = {number}"
BLOCK_BY_HASH = _BLOCK + " where hash like {prefix} order by consensus_end limit 1"
"""``prefix`` is hex digits and ``%``: a 32-byte Ethereum block hash matches its 48-byte record file hash."""


def _in_force(columns: str, table: str, where: str) -> str:
    """The row of ``table`` matching ``where`` that was in force at ``{at}``: the current row if it began by then,
    else the newest of ``<table>_history`` that did (a parenthesised subquery of ``columns`` and the range)."""
    return f"""(
  (select {columns}, timestamp_range from {table}
   where {where} and lower(timestamp_range) <= {{at}})
  union all
  (select {columns}, timestamp_range from {table}_history
   where {where} and lower(timestamp_range) <= {{at}}
   order by lower(timestamp_range) desc limit 1)
  order by timestamp_range desc limit 1
)"""


_ACCOUNT_COLUMNS = "e.id, e.type, e.balance, e.ethereum_nonce, e.evm_address, c.runtime_bytecode"
ACCOUNT_BY_ID = f"""select {_ACCOUNT_COLUMNS}
from entity e left join contract c on c.id = e.id
where e.id = {{id}} and e.deleted is not true and e.type in ('ACCOUNT', 'CONTRACT')"""
ACCOUNT_BY_EVM_ADDRESS = f"""select {_ACCOUNT_COLUMNS}
from entity e left join contract c on c.id = e.id
where e.evm_address = {{address}} and e.deleted is not true and e.type in ('ACCOUNT', 'CONTRACT')
order by e.created_timestamp desc nulls last limit 1"""

_AS_OF = f"""select {_ACCOUNT_COLUMNS}
from (
  (select id, type, balance, ethereum_nonce, evm_address, deleted, timestamp_range from entity
   where id = {{{{key}}}} and lower(timestamp_range) <= {{at}})
  union all
  (select id, type, balance, ethereum_nonce, evm_address, deleted, timestamp_range from entity_history
   where id = {{{{key}}}} and lower(timestamp_range) <= {{at}}
   order by lower(timestamp_range) desc limit 1)
  order by timestamp_range desc limit 1
) e left join contract c on c.id = e.id
where e.deleted is not true and e.type in ('ACCOUNT', 'CONTRACT')"""
ACCOUNT_BY_ID_AT = _AS_OF.replace("{{key}}", "{id}")
"""The entity row in force at ``at`` (current or history)."""
ACCOUNT_BY_EVM_ADDRESS_AT = _AS_OF.replace(
    "{{key}}",
    "(select id from entity where evm_address = {address} and created_timestamp <= {at}"
    " order by created_timestamp desc limit 1)",
)
"""The newest entity created with this EVM address by ``at``, as it was at ``at``."""

SLOTS = """select slot, value from contract_state
where contract_id = {contract} and slot = any({slots}::bytea[])"""
"""Current values; ``contract_state.slot`` is stored as 32 bytes."""
SLOTS_AT = """select distinct on (slot) slot, coalesce(value_written, value_read) as value
from contract_state_change
where contract_id = {contract} and slot = any({slots}::bytea[]) and consensus_timestamp <= {at}
order by slot, consensus_timestamp desc"""
"""Values as of ``at``, the newest change of each slot; ``contract_state_change.slot`` is stored without its
leading zero bytes."""

TOKEN = """select t.name, t.symbol, t.decimals, t.total_supply, t.type, t.freeze_default, t.kyc_status
from token t join entity e on e.id = t.token_id
where t.token_id = {id} and e.deleted is not true"""
TOKEN_AT = """select t.name, t.symbol, t.decimals, t.total_supply, t.type, t.freeze_default, t.kyc_status
from (
  (select name, symbol, decimals, total_supply, type, freeze_default, kyc_status, timestamp_range from token
   where token_id = {id} and lower(timestamp_range) <= {at})
  union all
  (select name, symbol, decimals, total_supply, type, freeze_default, kyc_status, timestamp_range
   from token_history
   where token_id = {id} and lower(timestamp_range) <= {at}
   order by lower(timestamp_range) desc limit 1)
  order by timestamp_range desc limit 1
) t"""
"""The token row in force at ``at``."""
_DETAIL_COLUMNS = """t.treasury_account_id, t.supply_type, t.max_supply, t.pause_status, t.kyc_key, t.freeze_key,
       t.wipe_key, t.supply_key, t.fee_schedule_key, t.pause_key, t.metadata, t.metadata_key, e.key as admin_key,
       e.memo, e.expiration_timestamp, e.auto_renew_account_id, e.auto_renew_period, e.created_timestamp,
       e.deleted"""
_DETAIL_TOKEN = """treasury_account_id, supply_type, max_supply, pause_status, kyc_key, freeze_key, wipe_key,
     supply_key, fee_schedule_key, pause_key, metadata, metadata_key, timestamp_range"""
_DETAIL_ENTITY = """key, memo, expiration_timestamp, auto_renew_account_id, auto_renew_period, created_timestamp,
     deleted, timestamp_range"""
TOKEN_DETAIL = f"""select {_DETAIL_COLUMNS}
from token t join entity e on e.id = t.token_id
where t.token_id = {{id}}"""
"""What the HTS token infos, keys and expiry need beyond :data:`TOKEN`: the token's keys, treasury and supply
rules, and its entity's admin key, memo, expiry and auto-renewal."""
TOKEN_DETAIL_AT = f"""select {_DETAIL_COLUMNS}
from (
  (select {_DETAIL_TOKEN} from token where token_id = {{id}} and lower(timestamp_range) <= {{at}})
  union all
  (select {_DETAIL_TOKEN} from token_history where token_id = {{id}} and lower(timestamp_range) <= {{at}}
   order by lower(timestamp_range) desc limit 1)
  order by timestamp_range desc limit 1
) t, (
  (select {_DETAIL_ENTITY} from entity where id = {{id}} and lower(timestamp_range) <= {{at}})
  union all
  (select {_DETAIL_ENTITY} from entity_history where id = {{id}} and lower(timestamp_range) <= {{at}}
   order by lower(timestamp_range) desc limit 1)
  order by timestamp_range desc limit 1
) e"""
"""The same, from the token and entity rows in force at ``at``."""

CUSTOM_FEES = """select fixed_fees, fractional_fees, royalty_fees from custom_fee where entity_id = {id}"""
CUSTOM_FEES_AT = (
    "select fixed_fees, fractional_fees, royalty_fees from "
    + _in_force("fixed_fees, fractional_fees, royalty_fees", "custom_fee", "entity_id = {id}")
    + " f"
)
"""A token's custom fee schedule now or in force at ``at`` (JSONB lists, ids encoded)."""

TOKEN_BALANCE = """select balance from token_account
where account_id = {account} and token_id = {token} and associated is true"""
TOKEN_BALANCE_AT = (
    "select balance, associated from "
    + _in_force("balance, associated", "token_account", "account_id = {account} and token_id = {token}")
    + " r where associated is true"
)
"""The relationship in force at ``at`` (its balance as then stored)."""
TOKEN_ALLOWANCE = """select amount from token_allowance
where owner = {owner} and spender = {spender} and token_id = {token}"""
TOKEN_ALLOWANCE_AT = (
    "select amount from "
    + _in_force("amount", "token_allowance", "owner = {owner} and spender = {spender} and token_id = {token}")
    + " a"
)

HBAR_ALLOWANCE = """select amount from crypto_allowance where owner = {owner} and spender = {spender}"""
HBAR_ALLOWANCE_AT = (
    "select amount from "
    + _in_force("amount", "crypto_allowance", "owner = {owner} and spender = {spender}")
    + " a"
)
"""The tinybars ``spender`` may still spend of ``owner``'s, now or in force at ``at``."""

NFT_APPROVED_FOR_ALL = """select approved_for_all from nft_allowance
where owner = {owner} and spender = {spender} and token_id = {token}"""
NFT_APPROVED_FOR_ALL_AT = (
    "select approved_for_all from "
    + _in_force(
        "approved_for_all", "nft_allowance", "owner = {owner} and spender = {spender} and token_id = {token}"
    )
    + " a"
)
"""Whether ``spender`` may move all of ``owner``'s NFTs of ``token`` (the allowance in force now or at ``at``)."""

BALANCE_AT = """with snapshot as (
  select max(consensus_timestamp) as taken from account_balance
  where account_id = {treasury} and consensus_timestamp > {at} - 2678400000000000 and consensus_timestamp <= {at}
), base as (
  select b.balance, b.consensus_timestamp from account_balance b, snapshot s
  where b.account_id = {id} and b.consensus_timestamp > s.taken - 2678400000000000
    and b.consensus_timestamp <= s.taken
  order by b.consensus_timestamp desc limit 1
)
select coalesce((select balance from base), 0) + coalesce((
  select sum(amount) from crypto_transfer
  where entity_id = {id} and consensus_timestamp > coalesce((select consensus_timestamp from base), 0)
    and consensus_timestamp <= {at} and errata is distinct from 'DELETE'), 0) as balance"""
"""An account's tinybars at ``at`` as the reference computes them (upstream-web3.md §2.5): its balance in the
newest snapshot within 31 days before the treasury's newest snapshot of the 31 days before ``at`` (none: 0), plus
its transfers after that balance up to ``at``."""

_NFT_PARTIES = """left join entity o on o.id = n.account_id and o.deleted is not true
left join entity s on s.id = n.spender and s.deleted is not true"""
NFT = f"""select n.account_id, o.id as owner_id, o.evm_address as owner_evm_address, n.spender,
       s.evm_address as spender_evm_address, n.metadata, n.created_timestamp
from nft n {_NFT_PARTIES}
where n.token_id = {{token}} and n.serial_number = {{serial}} and n.deleted is not true"""
"""An NFT now, with its owner's and spender's entities (an owner the mirror does not hold has no ``owner_id``)."""
NFT_AT = f"""select n.account_id, o.id as owner_id, o.evm_address as owner_evm_address, n.spender,
       s.evm_address as spender_evm_address, n.metadata, n.created_timestamp
from (
  (select account_id, spender, metadata, deleted, created_timestamp, timestamp_range from nft
   where token_id = {{token}} and serial_number = {{serial}} and lower(timestamp_range) <= {{at}})
  union all
  (select account_id, spender, metadata, deleted, created_timestamp, timestamp_range from nft_history
   where token_id = {{token}} and serial_number = {{serial}} and lower(timestamp_range) <= {{at}}
   order by lower(timestamp_range) desc limit 1)
  order by timestamp_range desc limit 1
) n {_NFT_PARTIES}
where n.deleted is not true"""
"""The NFT row in force at ``at``."""

# The opcodes route: the transaction to replay, its stored result and its Ethereum transaction, if any.
TRACED_BY_HASH = """select consensus_timestamp from contract_transaction_hash
where hash = {hash} order by consensus_timestamp limit 1"""
TRACED_BY_ID = """select consensus_timestamp from transaction
where payer_account_id = {payer} and valid_start_ns = {valid_start} order by consensus_timestamp limit 1"""
TRACED_RESULT = """select r.contract_id, r.sender_id, r.function_parameters, r.gas_limit, r.gas_used, r.amount,
       r.call_result, r.transaction_result, r.failed_initcode, k.file_id, k.initcode,
       s.evm_address as sender_evm_address, c.evm_address as contract_evm_address, t.type as transaction_type,
       e.call_data, e.call_data_id, e.value as ethereum_value, e.gas_limit as ethereum_gas_limit, e.to_address,
       e.consensus_timestamp is not null as ethereum
from contract_result r
left join entity s on s.id = r.sender_id
left join entity c on c.id = r.contract_id
left join contract k on k.id = r.contract_id
left join transaction t on t.consensus_timestamp = r.consensus_timestamp
left join ethereum_transaction e on e.consensus_timestamp = r.consensus_timestamp
where r.consensus_timestamp = {timestamp}"""
FILE_CONTENT_AT = """select string_agg(f.file_data, ''::bytea order by f.consensus_timestamp) as content
from file_data f
where f.entity_id = {file} and f.consensus_timestamp <= {at}
  and f.consensus_timestamp >= (
    select s.consensus_timestamp
    from file_data s
    where s.entity_id = {file} and s.consensus_timestamp <= {at}
      and (s.transaction_type = 17 or (s.transaction_type = 19 and length(s.file_data) <> 0))
    order by s.consensus_timestamp desc
    limit 1)"""
"""A file's content at ``at`` (a creation's bytecode file, an Ethereum transaction's call data file): every row
from its latest create (17) or non-empty update (19) at or before then, concatenated in order (as the contract
route's ``bytecode``); NULL when there is none."""
BLOCK_OF = _BLOCK + " where consensus_end >= {timestamp} order by consensus_end limit 1"
"""The block (record file) holding a consensus timestamp."""

RELATION = """select coalesce(r.freeze_status, t.freeze_status) as freeze_status,
       coalesce(r.kyc_status, t.kyc_status) as kyc_status
from token t left join token_account r on r.token_id = t.token_id and r.account_id = {account}
where t.token_id = {token}"""
"""A relationship's freeze and KYC statuses, the token's where the account has no relationship (or no status)."""
RELATION_AT = """select coalesce(r.freeze_status, t.freeze_status) as freeze_status,
       coalesce(r.kyc_status, t.kyc_status) as kyc_status
from (
  (select freeze_status, kyc_status, timestamp_range from token
   where token_id = {token} and lower(timestamp_range) <= {at})
  union all
  (select freeze_status, kyc_status, timestamp_range from token_history
   where token_id = {token} and lower(timestamp_range) <= {at}
   order by lower(timestamp_range) desc limit 1)
  order by timestamp_range desc limit 1
) t left join (
  (select freeze_status, kyc_status, timestamp_range from token_account
   where account_id = {account} and token_id = {token} and lower(timestamp_range) <= {at})
  union all
  (select freeze_status, kyc_status, timestamp_range from token_account_history
   where account_id = {account} and token_id = {token} and lower(timestamp_range) <= {at}
   order by lower(timestamp_range) desc limit 1)
  order by timestamp_range desc limit 1
) r on true"""
"""The same as of ``at``."""
