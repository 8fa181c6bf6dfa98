"""The hbar supply: the fixed total and the accounts whose balance is not released (the reference's
``hiero.mirror.rest-java.network.unreleasedSupplyAccounts``)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ledgermirror.ledger.entity_id import EntityId

TOTAL_SUPPLY = 5_000_000_000_000_000_000
"""50 billion hbars, in tinybars."""

UNRELEASED_SUPPLY_NUMS: tuple[tuple[int, int], ...] = (
    (2, 2),
    (42, 42),
    (44, 71),
    (73, 87),
    (99, 100),
    (200, 349),
    (400, 750),
)
"""Inclusive ranges of account numbers (in the configured shard and realm) whose balance is not released."""


def unreleased_ranges(shard: int, realm: int) -> Mapping[str, int]:
    """The encoded bounds of every unreleased-supply range, named ``low<i>`` and ``high<i>`` (the supply
    statements' parameters). Encoding keeps consecutive numbers of one shard and realm consecutive, so each
    range of numbers stays one range of ids: an index range scan each, never a list of 548 ids.

    >>> dict(unreleased_ranges(0, 0))["high6"], dict(unreleased_ranges(1, 2))["low0"] == (1 << 54) | (2 << 38) | 2
    (750, True)
    """
    bounds: dict[str, int] = {}
    for index, (low, high) in enumerate(UNRELEASED_SUPPLY_NUMS):
        bounds[f"low{index}"] = EntityId(shard, realm, low).encoded
        bounds[f"high{index}"] = EntityId(shard, realm, high).encoded
    return MappingProxyType(bounds)


def unreleased_accounts(shard: int, realm: int) -> list[int]:
    """The encoded ids of every unreleased-supply account."""
    return [
        EntityId(shard, realm, num).encoded for low, high in UNRELEASED_SUPPLY_NUMS for num in range(low, high + 1)
    ]
