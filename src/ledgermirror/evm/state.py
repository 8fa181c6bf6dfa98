"""The state a call runs on: every account and storage slot read through, on first use, from a
:class:`StateReader` (the route reads the mirror's tables at the requested block), beneath py-evm's journals.

The read values sit *below* the journals (in the account trie's and the storage tries' lookups), so a frame
that reverts discards only what the execution wrote, never what was read; everything the execution writes
stays in memory and is dropped with the state (the throwaway overlay: nothing reaches the database).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import rlp
from eth.constants import BLANK_ROOT_HASH, EMPTY_SHA3
from eth.db.account import AccountDB
from eth.db.backends.base import BaseDB
from eth.db.cache import CacheDB
from eth.db.journal import JournalDB
from eth.db.storage import AccountStorageDB
from eth.rlp.accounts import Account
from eth_typing import Address, Hash32

from ledgermirror.evm.token_facade import NftState, TokenState
from ledgermirror.evm.token_info import TokenDetail
from ledgermirror.ledger.evm import keccak256


@dataclass(frozen=True, slots=True)
class AccountState:
    """An account as the mirror holds it at the requested block."""

    balance: int
    nonce: int
    code: bytes


class StateReader(Protocol):
    """Where the state comes from; called from the thread the EVM runs in."""

    def account(self, address: bytes) -> AccountState | None:
        """The account at this 20-byte address, or None when there is none."""

    def slot(self, address: bytes, key: int) -> int:
        """The value of storage slot ``key`` of the contract at ``address`` (0 when unset)."""

    def block_hash(self, number: int) -> bytes:
        """The 32-byte hash of block ``number`` (an earlier block than the call's), or ``b""`` when unknown."""

    def token(self, address: bytes) -> TokenState | None:
        """The HTS token at this (long-zero) address, or None."""

    def exchange_rate(self) -> tuple[int, int]:
        """``(hbar_equivalent, cent_equivalent)`` of the current rate of file 0.0.112 at the call's block."""

    def nft(self, token: bytes, serial: int) -> NftState | None:
        """The NFT ``serial`` of ``token``, or None when it does not exist (or is burned) at the block."""

    def token_relation(self, token: bytes, account: bytes) -> tuple[bool, bool] | None:
        """``(frozen, kyc_granted)`` of ``account`` for ``token``, None when there is no such token."""

    def token_detail(self, address: bytes) -> TokenDetail | None:
        """The token's keys, treasury, supply rules, expiry and custom fees; None when there is no such token."""

    def approved_for_all(self, token: bytes, owner: bytes, operator: bytes) -> bool:
        """Whether ``operator`` is approved for all of ``owner``'s NFTs of ``token`` (``nft_allowance``)."""

    def token_balance(self, token: bytes, owner: bytes) -> int:
        """The balance of ``owner`` in ``token`` (0 without a relationship)."""

    def token_allowance(self, token: bytes, owner: bytes, spender: bytes) -> int:
        """What ``spender`` may still take of ``owner``'s ``token``."""

    def token_associated(self, token: bytes, account: bytes) -> bool:
        """Whether ``account`` is associated with ``token`` (a ``token_account`` row with ``associated``)."""

    def account_alias(self, address: bytes) -> tuple[int, bytes] | None:
        """``(entity number, EVM address alias or b"")`` of the account or contract at this address, or None."""

    def hbar_allowance(self, owner: bytes, spender: bytes) -> int:
        """The tinybars ``spender`` may still spend of ``owner``'s (0 without an allowance)."""


def _stored(inner: Any, key: bytes) -> bytes:
    """What a trie holds for ``key``: ``b""`` when nothing (tries answer a missing key with the empty value)."""
    try:
        value: bytes = inner[key]
    except KeyError:
        return b""
    return value


class _Accounts(BaseDB):
    """The account trie's lookup with a fall-through to the reader for addresses the trie does not hold. What is
    read is kept beside the trie, never written into it (a write would move its root, which reverts reset)."""

    def __init__(self, inner: Any, reader: StateReader, codes: Any) -> None:
        self._inner = inner
        self._reader = reader
        self._codes = codes
        self._read: dict[bytes, bytes] = {}

    def __getitem__(self, address: bytes) -> bytes:
        value = _stored(self._inner, address)
        if value:
            return value
        if address not in self._read:
            self._read[address] = self._load(address)
        return self._read[address]

    def _load(self, address: bytes) -> bytes:
        found = self._reader.account(address)
        if found is None:
            return b""
        code_hash = EMPTY_SHA3
        if found.code:
            code_hash = Hash32(keccak256(found.code))
            self._codes[code_hash] = found.code
        encoded: bytes = rlp.encode(Account(found.nonce, found.balance, BLANK_ROOT_HASH, code_hash))
        return encoded

    def __setitem__(self, key: bytes, value: bytes) -> None:
        self._inner[key] = value

    def __delitem__(self, key: bytes) -> None:
        del self._inner[key]

    def _exists(self, key: bytes) -> bool:
        return bool(self[key])


class _Slots(BaseDB):
    """A storage trie's lookup with a fall-through to the reader (keys: big-endian slot numbers); what is read is
    kept beside the trie, as for accounts."""

    def __init__(self, inner: Any, reader: StateReader, address: bytes) -> None:
        self._inner = inner
        self._reader = reader
        self._address = address
        self._read: dict[bytes, bytes] = {}

    def __getitem__(self, key: bytes) -> bytes:
        value = _stored(self._inner, key)
        if value:
            return value
        if key not in self._read:
            found = self._reader.slot(self._address, int.from_bytes(key, "big"))
            self._read[key] = rlp.encode(found) if found else b""
        return self._read[key]

    def __setitem__(self, key: bytes, value: bytes) -> None:
        self._inner[key] = value

    def __delitem__(self, key: bytes) -> None:
        del self._inner[key]

    def _exists(self, key: bytes) -> bool:
        return bool(self[key])


class _ReadThroughStorage(AccountStorageDB):
    def __init__(self, db: Any, storage_root: Hash32, address: Address, reader: StateReader) -> None:
        super().__init__(db, storage_root, address)
        self._storage_cache = CacheDB(_Slots(self._storage_lookup, reader, address))
        self._locked_changes = JournalDB(self._storage_cache)
        self._journal_storage = JournalDB(self._locked_changes)


class ReadThroughAccountDB(AccountDB):
    """py-evm's account database whose misses are read from :attr:`reader` (set before the first read)."""

    reader: StateReader

    def __init__(self, db: Any, state_root: Hash32 = BLANK_ROOT_HASH) -> None:
        super().__init__(db, state_root)
        self._trie_cache = CacheDB(_Accounts(self._trie_logger, _DeferredReader(self), self._batchdb))
        self._journaltrie = JournalDB(self._trie_cache)

    def _get_address_store(self, address: Address) -> Any:
        if address in self._account_stores:
            return self._account_stores[address]
        store = _ReadThroughStorage(self._raw_store_db, self._get_storage_root(address), address, self.reader)
        self._account_stores[address] = store
        return store


class _DeferredReader:
    """The account database's reader, looked up when first used (the state class builds the database)."""

    def __init__(self, owner: ReadThroughAccountDB) -> None:
        self._owner = owner

    def account(self, address: bytes) -> AccountState | None:
        return self._owner.reader.account(address)

    def slot(self, address: bytes, key: int) -> int:
        return self._owner.reader.slot(address, key)

    def block_hash(self, number: int) -> bytes:
        return self._owner.reader.block_hash(number)

    def token(self, address: bytes) -> TokenState | None:
        return self._owner.reader.token(address)

    def token_balance(self, token: bytes, owner: bytes) -> int:
        return self._owner.reader.token_balance(token, owner)

    def token_allowance(self, token: bytes, owner: bytes, spender: bytes) -> int:
        return self._owner.reader.token_allowance(token, owner, spender)

    def exchange_rate(self) -> tuple[int, int]:
        return self._owner.reader.exchange_rate()

    def nft(self, token: bytes, serial: int) -> NftState | None:
        return self._owner.reader.nft(token, serial)

    def token_relation(self, token: bytes, account: bytes) -> tuple[bool, bool] | None:
        return self._owner.reader.token_relation(token, account)

    def approved_for_all(self, token: bytes, owner: bytes, operator: bytes) -> bool:
        return self._owner.reader.approved_for_all(token, owner, operator)

    def token_detail(self, address: bytes) -> TokenDetail | None:
        return self._owner.reader.token_detail(address)

    def account_alias(self, address: bytes) -> tuple[int, bytes] | None:
        return self._owner.reader.account_alias(address)

    def hbar_allowance(self, owner: bytes, spender: bytes) -> int:
        return self._owner.reader.hbar_allowance(owner, spender)

    def token_associated(self, token: bytes, account: bytes) -> bool:
        return self._owner.reader.token_associated(token, account)
