"""Hedera's account service system contract at 0x16a (HIP-906, upstream-web3.md §3.4), its read-only functions as
the consensus node's ``HasSystemContract`` answers them: ``hbarAllowance(owner, spender)`` (``HbarAllowanceCall``),
``getEvmAddressAlias(address)`` (``EvmAddressAliasCall``), ``getHederaAccountNumAlias(address)``
(``HederaAccountNumAliasCall``) and ``isValidAlias(address)`` (``IsValidAliasCall``).

An account's *priority address* is its EVM address alias when it has one, else its long-zero address; an address
of an existing account that is not its priority address (the long-zero address of an account with an EVM alias)
is a "non-canonical" reference. HRC-632's ``hbarAllowance(spender)`` on an account's own address answers as
``hbarAllowance(account, spender)``. Anything else (``isAuthorized``, ``isAuthorizedRaw``, ``hbarApprove``) reverts
with no data here.
"""

from __future__ import annotations

from typing import Protocol

from ledgermirror.evm import abi
from ledgermirror.evm.token_facade import SUCCESS, NotAnswered
from ledgermirror.ledger.evm import keccak256
from ledgermirror.ledger.transaction_codes import result_number

ACCOUNT_SERVICE_ADDRESS = (0x16A).to_bytes(20, "big")
HBAR_ALLOWANCE = keccak256(b"hbarAllowance(address,address)")[:4]
GET_EVM_ADDRESS_ALIAS = keccak256(b"getEvmAddressAlias(address)")[:4]
GET_HEDERA_ACCOUNT_NUM_ALIAS = keccak256(b"getHederaAccountNumAlias(address)")[:4]
IS_VALID_ALIAS = keccak256(b"isValidAlias(address)")[:4]
HBAR_ALLOWANCE_FACADE = keccak256(b"hbarAllowance(address)")[:4]
"""HRC-632's ``hbarAllowance(spender)`` called on an account's own address (the owner)."""
INVALID_ACCOUNT_ID = result_number("INVALID_ACCOUNT_ID")
INVALID_SOLIDITY_ADDRESS = result_number("INVALID_SOLIDITY_ADDRESS")
_LONG_ZERO_PREFIX = bytes(12)
_ZERO_ADDRESS = bytes(20)


class AccountReads(Protocol):
    """What the account service reads (``evm/state.StateReader`` provides it)."""

    def account_alias(self, address: bytes) -> tuple[int, bytes] | None:
        """``(entity number, EVM address alias or b"")`` of the account or contract at this address (long-zero
        or EVM address), None when there is none."""

    def hbar_allowance(self, owner: bytes, spender: bytes) -> int:
        """The tinybars ``spender`` may still spend of ``owner``'s (``crypto_allowance``), 0 without one."""


def _long_zero(num: int) -> bytes:
    return num.to_bytes(20, "big")


def _priority_address(num: int, alias: bytes) -> bytes:
    return alias if len(alias) == 20 else _long_zero(num)


def account_view(data: bytes, reads: AccountReads) -> bytes:
    """The answer of one of the account service's read-only functions; raises :class:`NotAnswered`."""
    selector = data[:4]
    address = abi.address_argument(data, 0)
    if address is None:
        raise NotAnswered()
    if selector == HBAR_ALLOWANCE:
        spender = abi.address_argument(data, 1)
        if spender is None or reads.account_alias(address) is None:
            raise NotAnswered()  # the consensus node reverts (INVALID_ALLOWANCE_OWNER_ID) for an unknown owner
        return abi.uint(SUCCESS) + abi.uint(reads.hbar_allowance(address, spender))
    if selector == GET_EVM_ADDRESS_ALIAS:
        found = reads.account_alias(address) if address.startswith(_LONG_ZERO_PREFIX) else None
        if found is None or len(found[1]) != 20:
            return abi.uint(INVALID_ACCOUNT_ID) + abi.address(_ZERO_ADDRESS)
        return abi.uint(SUCCESS) + abi.address(found[1])
    if selector == GET_HEDERA_ACCOUNT_NUM_ALIAS:
        found = reads.account_alias(address)
        if found is None or _priority_address(*found) != address:  # missing, or a non-canonical reference
            return abi.uint(INVALID_SOLIDITY_ADDRESS) + abi.address(_ZERO_ADDRESS)
        return abi.uint(SUCCESS) + abi.address(_long_zero(found[0]))
    if selector == IS_VALID_ALIAS:
        return abi.boolean(reads.account_alias(address) is not None)
    raise NotAnswered()


def account_facade_view(owner: bytes, data: bytes, reads: AccountReads) -> bytes:
    """HRC-632's ``hbarAllowance(spender)`` called on ``owner``'s address: 22 and the allowance."""
    spender = abi.address_argument(data, 0)
    if data[:4] != HBAR_ALLOWANCE_FACADE or spender is None:
        raise NotAnswered()
    return abi.uint(SUCCESS) + abi.uint(reads.hbar_allowance(owner, spender))
