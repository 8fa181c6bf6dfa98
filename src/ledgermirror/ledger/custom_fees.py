"""``transaction.max_custom_fees``: the payer's limits on custom fees, stored as serialized HAPI
``CustomFeeLimit`` messages (an account and the ``FixedFee``s it accepts), decoded to plain values.

A message that does not decode contributes nothing, so a damaged row never fails a response.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ledgermirror.ledger.entity_id import EntityId, InvalidEntityId, format_encoded
from ledgermirror.ledger.protobuf import hapi

if TYPE_CHECKING:
    from hiero_sdk_python.hapi.services.basic_types_pb2 import AccountID, TokenID


@dataclass(frozen=True, slots=True)
class FeeLimit:
    """One fee of one ``CustomFeeLimit``: its account, amount and denominating token (ids as
    ``shard.realm.num``; None for none, num 0, or an id out of range)."""

    account_id: str | None
    amount: int
    denominating_token_id: str | None


def _text(shard: int, realm: int, num: int) -> str | None:
    try:
        return format_encoded(EntityId(shard, realm, num).encoded)
    except InvalidEntityId:
        return None


def _account(account: AccountID) -> str | None:
    return _text(account.shardNum, account.realmNum, account.accountNum)


def _token(token: TokenID) -> str | None:
    return _text(token.shardNum, token.realmNum, token.tokenNum)


def decode_fee_limits(limits: Sequence[bytes] | None) -> list[FeeLimit]:
    """Each fee of each message, in order. Imports the HAPI classes on first use (see ``ledger/protobuf.py``)."""
    if not limits:
        return []
    classes = hapi()
    found: list[FeeLimit] = []
    for raw in limits:
        try:
            message = classes.CustomFeeLimit.FromString(raw)
        except classes.DecodeError:
            continue
        account = _account(message.account_id)
        for fee in message.fees:
            token = _token(fee.denominating_token_id) if fee.HasField("denominating_token_id") else None
            found.append(FeeLimit(account, fee.amount, token))
    return found
