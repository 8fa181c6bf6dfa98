"""Pending staking rewards (``entity_stake``), computed after a NodeStakeUpdate as the reference's
``EntityStakeCalculatorImpl`` and ``EntityStakeRepository.updateEntityStake`` do (reference §5.6).

:func:`pending` gives the new ``entity_stake`` rows of the next staking period to end (one period per call),
or nothing when 0.0.800 does not exist or its row already ends at the latest ``node_stake.epoch_day``. The
caller writes them with ``write.upsert`` (the previous rows go to ``entity_stake_history``).

The state of each entity at the end of the period (``entity_state_start``): its staking columns from the
version of ``entity`` or ``entity_history`` in force at the period's end (``node_stake.staking_period``), its
balance the current one minus the transfers after that instant; live accounts and contracts only.
"""

from __future__ import annotations

from typing import Any

import asyncpg

_DONE = """
with last_epoch_day as (
  select coalesce((select epoch_day from node_stake order by consensus_timestamp desc limit 1), -1) as epoch_day
), entity_stake_info as (
  select coalesce((select end_stake_period from entity_stake where id = $1), -1) as end_stake_period
)
select not exists (select 1 from entity where id = $1)
  or (select epoch_day from last_epoch_day) in (-1, (select end_stake_period from entity_stake_info))
"""

_PENDING = """
with ending_period as (
  select epoch_day, consensus_timestamp, staking_period
  from node_stake
  where epoch_day >= coalesce(
    (select end_stake_period + 1 from entity_stake where id = $1),
    (select epoch_day from node_stake
     where consensus_timestamp > (
       select min(lower(timestamp_range)) from (
         select timestamp_range from entity where id = $1
         union all
         select timestamp_range from entity_history where id = $1) versions)
     order by consensus_timestamp limit 1))
  order by consensus_timestamp
  limit 1
), versions as (
  select id, balance, decline_reward, staked_account_id, staked_node_id, stake_period_start, deleted, type,
         timestamp_range
  from entity
  union all
  select id, balance, decline_reward, staked_account_id, staked_node_id, stake_period_start, deleted, type,
         timestamp_range
  from entity_history
), later_transfers as (
  select ct.entity_id, sum(ct.amount) as amount
  from crypto_transfer ct, ending_period ep
  where ct.consensus_timestamp > ep.staking_period and ct.errata is distinct from 'DELETE'
  group by ct.entity_id
), entity_state_start as (
  select v.id,
         coalesce(current.balance, 0) - coalesce(t.amount, 0) as balance,
         v.decline_reward,
         coalesce(v.staked_account_id, 0) as staked_account_id,
         coalesce(v.staked_node_id, -1) as staked_node_id,
         coalesce(v.stake_period_start, -1) as stake_period_start
  from versions v
  cross join ending_period ep
  left join entity current on current.id = v.id
  left join later_transfers t on t.entity_id = v.id
  where v.timestamp_range @> ep.staking_period
    and v.deleted is not true
    and v.type in ('ACCOUNT', 'CONTRACT')
    and (v.id = $1 or coalesce(v.staked_node_id, -1) <> -1 or coalesce(v.staked_account_id, 0) <> 0)
), ending_period_stake_state as (
  select es.id as entity_id, es.pending_reward, es.staked_node_id_start,
         es.stake_total_start / 100000000 as stake_total_start_whole_bar, node_stake.reward_rate
  from entity_stake es
  left join (
    select node_id, reward_rate from node_stake ns, ending_period ep
    where ns.consensus_timestamp = ep.consensus_timestamp
  ) node_stake on es.staked_node_id_start = node_stake.node_id
), forfeited_period as (
  select distinct on (node_id) node_id, reward_rate
  from node_stake
  where epoch_day = (select epoch_day from ending_period) - 365
  order by node_id, consensus_timestamp
), proxy_staking as (
  select staked_account_id, sum(balance) as staked_to_me
  from entity_state_start
  where staked_account_id <> 0
  group by staked_account_id
)
select
  ep.epoch_day as end_stake_period,
  ess.id,
  (case
     when coalesce(s.staked_node_id_start, -1) = -1 then 0
     when ess.decline_reward then 0
     when s.reward_rate is null then s.pending_reward
     when ess.stake_period_start > ep.epoch_day - 1 then 0
     when ess.stake_period_start = ep.epoch_day - 1 then s.reward_rate * s.stake_total_start_whole_bar
     when ep.epoch_day - ess.stake_period_start > 365
       then s.pending_reward + s.reward_rate * s.stake_total_start_whole_bar
         - coalesce((select reward_rate from forfeited_period f where f.node_id = s.staked_node_id_start), 0)
           * s.stake_total_start_whole_bar
     else s.pending_reward + s.reward_rate * s.stake_total_start_whole_bar
   end) as pending_reward,
  ess.staked_node_id as staked_node_id_start,
  coalesce(ps.staked_to_me, 0) as staked_to_me,
  (case when ess.staked_node_id = -1 then 0 else ess.balance + coalesce(ps.staked_to_me, 0) end)
    as stake_total_start,
  ep.consensus_timestamp as timestamp_range
from entity_state_start ess
  left join ending_period_stake_state s on s.entity_id = ess.id
  left join proxy_staking ps on ps.staked_account_id = ess.id
  cross join ending_period ep
where ess.id = $1 or ess.staked_node_id <> -1
order by ess.id
"""


async def pending(conn: asyncpg.Connection, staking_reward_account: int) -> list[dict[str, Any]]:
    """The ``entity_stake`` rows of the next period to end (``timestamp_range`` = the lower bound: the
    NodeStakeUpdate's timestamp), none when every period is done or 0.0.800 does not exist."""
    if await conn.fetchval(_DONE, staking_reward_account):
        return []
    return [dict(row) for row in await conn.fetch(_PENDING, staking_reward_account)]
