"""Pending staking rewards (``entity_stake``) computed after each NodeStakeUpdate, as the reference does."""

from __future__ import annotations

from typing import Any

from tests.importer.handlers.items import (
    SECOND,
    T0,
    basic,
    body,
    crypto_transfer,
    encoded,
    fetch,
    import_items,
    module,
    record_item,
    timestamp,
)
from tests.support import Ledger

DAY = 86_400 * SECOND
HBAR = 100_000_000
DAY0 = T0 - T0 % DAY
STAKER, PROXY, DECLINER = 1001, 1002, 1003


def seed(ledger: Ledger) -> None:
    rows = (
        (800, 0, -1, 0, False),
        (2, 10_000 * HBAR, -1, 0, False),
        (STAKER, 500 * HBAR, 0, 0, False),
        (PROXY, 100 * HBAR, -1, encoded(STAKER), False),
        (DECLINER, 50 * HBAR, 0, 0, True),
    )
    for num, balance, node, proxy_to, decline in rows:
        ledger.execute(
            "insert into entity (id, num, realm, shard, type, balance, staked_node_id, staked_account_id,"
            " decline_reward, stake_period_start, created_timestamp, deleted, timestamp_range)"
            " values ($1, $1, 0, 0, 'ACCOUNT', $2, $3, $4, $5, $6, 1, false, '[1,)')",
            encoded(num), balance, node, proxy_to, decline, DAY0 // DAY - 10,
        )  # fmt: skip


def stake_update(at: int, reward_rate: int) -> Any:
    stake = module("node_stake_update_pb2")
    message = stake.NodeStakeUpdateTransactionBody(
        end_of_staking_period=timestamp(at - 5 * SECOND - 1),
        node_stake=[
            stake.NodeStake(node_id=0, reward_rate=reward_rate, stake=700 * HBAR, stake_rewarded=600 * HBAR)
        ],
        node_reward_fee_fraction=basic.Fraction(numerator=0, denominator=10),
        staking_reward_fee_fraction=basic.Fraction(numerator=0, denominator=10),
    )
    return record_item(body("node_stake_update", message, payer=2), at=at)


def stakes(url: str) -> dict[int, dict[str, Any]]:
    return {row["id"]: row for row in fetch(url, "select * from entity_stake")}


def test_pending_rewards_per_period(ledger: Ledger) -> None:
    seed(ledger)
    day1 = DAY0 + DAY + 5 * SECOND
    # A transfer after the period's end, before the update: not part of the ending period's stake.
    import_items(ledger.url, crypto_transfer([(2, -7 * HBAR), (STAKER, 7 * HBAR)], at=day1 - 2 * SECOND))
    import_items(ledger.url, stake_update(day1, reward_rate=3))
    first = stakes(ledger.url)
    assert sorted(first) == [800, STAKER, DECLINER]  # staked to a node, and 0.0.800
    staker = first[STAKER]
    assert (staker["end_stake_period"], staker["pending_reward"], staker["staked_node_id_start"]) == (
        DAY0 // DAY,
        0,
        0,
    )  # fmt: skip  (no earlier period: nothing pending yet)
    assert (staker["staked_to_me"], staker["stake_total_start"]) == (100 * HBAR, 600 * HBAR)
    assert staker["timestamp_range"].lower == day1
    assert (first[800]["stake_total_start"], first[800]["staked_node_id_start"]) == (0, -1)

    day2 = day1 + DAY
    import_items(ledger.url, stake_update(day2, reward_rate=10))
    second = stakes(ledger.url)
    assert second[STAKER]["end_stake_period"] == DAY0 // DAY + 1
    assert second[STAKER]["pending_reward"] == 10 * 600  # the ending period's rate per whole hbar staked
    assert second[STAKER]["stake_total_start"] == (500 + 7 + 100) * HBAR  # the transfer now counts
    assert second[DECLINER]["pending_reward"] == 0
    history = fetch(ledger.url, "select id, end_stake_period from entity_stake_history order by id")
    assert history == [{"id": id_, "end_stake_period": DAY0 // DAY} for id_ in (800, STAKER, DECLINER)]

    import_items(ledger.url, crypto_transfer([(2, -1), (STAKER, 1)], at=day2 + SECOND))  # no update: no period
    assert stakes(ledger.url) == second


def test_nothing_without_the_staking_reward_account(ledger: Ledger) -> None:
    ledger.execute(
        "insert into entity (id, num, realm, shard, type, balance, staked_node_id, created_timestamp,"
        " timestamp_range) values ($1, $1, 0, 0, 'ACCOUNT', $2, 0, 1, '[1,)')",
        encoded(STAKER), 500 * HBAR,
    )  # fmt: skip
    import_items(ledger.url, stake_update(DAY0 + DAY + 5 * SECOND, reward_rate=3))
    assert fetch(ledger.url, "select count(*) from entity_stake") == [{"count": 0}]
