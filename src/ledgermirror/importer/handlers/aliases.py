"""Alias or EVM address -> entity id for one batch: the entities it creates, and those ``lookups`` read.

A long-zero address (twelve zero bytes, then the num) needs no lookup; what is not known stays 0.0.0, as in
the reference (a recoverable error there).
"""

from __future__ import annotations

from typing import Any

from ledgermirror.importer.handlers import ids
from ledgermirror.ledger.evm import ADDRESS_LENGTH

_LONG_ZERO_PREFIX = bytes(12)


def long_zero(address: bytes) -> int | None:
    """The entity a long-zero EVM address names (shard and realm 0), None for any other address."""
    if len(address) == ADDRESS_LENGTH and address.startswith(_LONG_ZERO_PREFIX):
        return ids.encoded(0, 0, int.from_bytes(address[12:], "big"))
    return None


class Aliases:
    """Alias or EVM address bytes -> entity id, for one batch."""

    def __init__(self) -> None:
        self.known: dict[bytes, int] = {}

    def learn(self, key: bytes | None, entity_id: int) -> None:
        """An entity created in the batch (its alias or EVM address)."""
        if key and entity_id:
            self.known[bytes(key)] = entity_id

    def resolve(self, key: bytes) -> int:
        """The entity of an alias or EVM address, 0.0.0 when unknown."""
        found = long_zero(key)
        if found is not None:
            return found
        return self.known.get(key, ids.EMPTY)

    def account(self, message: Any) -> int:
        """An ``AccountID``: its number, else its alias looked up."""
        if message.WhichOneof("account") == "alias":
            return self.resolve(bytes(message.alias))
        return ids.account_id(message)

    def contract(self, message: Any) -> int:
        """A ``ContractID``: its number, else its EVM address looked up."""
        if message.WhichOneof("contract") == "evm_address":
            return self.resolve(bytes(message.evm_address))
        return ids.contract_id(message)
