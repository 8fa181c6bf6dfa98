"""``custom_fee`` rows of tokens (TokenCreate, TokenFeeScheduleUpdate) and topics (ConsensusCreateTopic/
UpdateTopic): one versioned row per entity whose three JSON lists replace the previous schedule entirely.

JSON keys are snake_case, ids are encoded ids; a value the fee does not have is left out of its object.
A denominating token given as 0.0.0 means the token the fee belongs to. An empty schedule is a row with only
``entity_id`` and ``timestamp_range`` (every list NULL): the fees were cleared.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.item import Item


def _denominating(fixed_fee: Any, entity_id: int) -> int | None:
    if not fixed_fee.HasField("denominating_token_id"):
        return None  # HBAR
    token = ids.token_id(fixed_fee.denominating_token_id)
    return token or entity_id or None


def _fixed(fixed_fee: Any, collector: int | None, exempt: bool, entity_id: int) -> dict[str, Any]:
    fee: dict[str, Any] = {
        "all_collectors_are_exempt": exempt,
        "amount": fixed_fee.amount,
        "collector_account_id": collector,
    }
    denominating = _denominating(fixed_fee, entity_id)
    if denominating is not None:
        fee["denominating_token_id"] = denominating
    return fee


def _fractional(fractional: Any, collector: int | None, exempt: bool) -> dict[str, Any]:
    fee: dict[str, Any] = {
        "all_collectors_are_exempt": exempt,
        "collector_account_id": collector,
        "denominator": fractional.fractional_amount.denominator,
        "minimum_amount": fractional.minimum_amount,
        "net_of_transfers": fractional.net_of_transfers,
        "numerator": fractional.fractional_amount.numerator,
    }
    if fractional.maximum_amount:  # 0 means no maximum
        fee["maximum_amount"] = fractional.maximum_amount
    return fee


def _royalty(royalty: Any, collector: int | None, exempt: bool, entity_id: int) -> dict[str, Any]:
    fee: dict[str, Any] = {
        "all_collectors_are_exempt": exempt,
        "collector_account_id": collector,
        "denominator": royalty.exchange_value_fraction.denominator,
        "numerator": royalty.exchange_value_fraction.numerator,
    }
    if royalty.HasField("fallback_fee"):
        fallback: dict[str, Any] = {"amount": royalty.fallback_fee.amount}
        denominating = _denominating(royalty.fallback_fee, entity_id)
        if denominating is not None:
            fallback["denominating_token_id"] = denominating
        fee["fallback_fee"] = fallback
    return fee


def fee_lists(custom_fees: Iterable[Any], entity_id: int) -> dict[str, list[dict[str, Any]] | None]:
    """``fixed_fees``, ``fractional_fees`` and ``royalty_fees`` of a list of ``CustomFee`` (None when empty)."""
    fixed: list[dict[str, Any]] = []
    fractional: list[dict[str, Any]] = []
    royalty: list[dict[str, Any]] = []
    for custom_fee in custom_fees:
        collector = ids.nullable(ids.account_id(custom_fee.fee_collector_account_id))
        exempt = bool(custom_fee.all_collectors_are_exempt)
        kind = custom_fee.WhichOneof("fee")
        if kind == "fixed_fee":
            fixed.append(_fixed(custom_fee.fixed_fee, collector, exempt, entity_id))
        elif kind == "fractional_fee":
            fractional.append(_fractional(custom_fee.fractional_fee, collector, exempt))
        elif kind == "royalty_fee":
            royalty.append(_royalty(custom_fee.royalty_fee, collector, exempt, entity_id))
    return {"fixed_fees": fixed or None, "fractional_fees": fractional or None, "royalty_fees": royalty or None}


def topic_fee_lists(fixed_custom_fees: Iterable[Any]) -> dict[str, list[dict[str, Any]] | None]:
    """The lists of a topic's ``FixedCustomFee`` entries: fixed fees only, ``[]`` when there are none (the
    reference's ``updateCustomFee`` writes its list as it is)."""
    fixed = [
        _fixed(fee.fixed_fee, ids.nullable(ids.account_id(fee.fee_collector_account_id)), False, ids.EMPTY)
        for fee in fixed_custom_fees
    ]
    return {"fixed_fees": fixed, "fractional_fees": None, "royalty_fees": None}


def write_custom_fee(item: Item, batch: Batch, entity_id: int, lists: dict[str, Any]) -> None:
    """The entity's fee schedule from this transaction on."""
    batch.upsert("custom_fee", {"entity_id": entity_id, "timestamp_range": item.consensus_timestamp, **lists})


def collectors_in_own_token(custom_fees: Iterable[Any]) -> list[int]:
    """Collectors of the fees charged in the new token itself (fractional fees, and fixed fees whose
    denominating token is 0.0.0): TokenCreate associates them with the token."""
    found: list[int] = []
    for custom_fee in custom_fees:
        kind = custom_fee.WhichOneof("fee")
        own = kind == "fractional_fee" or (
            kind == "fixed_fee"
            and custom_fee.fixed_fee.HasField("denominating_token_id")
            and ids.token_id(custom_fee.fixed_fee.denominating_token_id) == ids.EMPTY
        )
        collector = ids.account_id(custom_fee.fee_collector_account_id)
        if own and collector and collector not in found:
            found.append(collector)
    return found
