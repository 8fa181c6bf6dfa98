"""What an execution touched, before and after it (the ``prestateTracer`` of HIP-1485, the reference web3's
``/prestate`` route): every account and storage slot the EVM read from the state (:class:`Recorder`, a
:class:`~ledgermirror.evm.state.StateReader` that keeps what it answered), and their values once the transaction
ran (:func:`touched`, read from the EVM's state after it). An account is read before anything is written to it
(and a slot before an ``SSTORE``, whose gas depends on it), so what was read is what was touched."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_typing import Address

from ledgermirror.evm.state import AccountState, StateReader
from ledgermirror.evm.token_facade import NftState, TokenState, proxy_code
from ledgermirror.evm.token_info import TokenDetail


@dataclass(frozen=True, slots=True)
class Touched:
    """One account the execution touched: its state before (None: it did not exist) and after (None: it does not
    exist), and each storage slot read as ``(key, before, after)``."""

    address: bytes
    pre: AccountState | None
    post: AccountState | None
    slots: tuple[tuple[int, int, int], ...]


class Recorder:
    """A reader that keeps each account and slot it answered, in the order first asked."""

    def __init__(self, inner: StateReader) -> None:
        self._inner = inner
        self.accounts: dict[bytes, AccountState | None] = {}
        self.slots: dict[bytes, dict[int, int]] = {}

    def account(self, address: bytes) -> AccountState | None:
        if address not in self.accounts:
            self.accounts[address] = self._inner.account(address)
        return self.accounts[address]

    def slot(self, address: bytes, key: int) -> int:
        read = self.slots.setdefault(address, {})
        if key not in read:
            read[key] = self._inner.slot(address, key)
        return read[key]

    def block_hash(self, number: int) -> bytes:
        return self._inner.block_hash(number)

    def token(self, address: bytes) -> TokenState | None:
        return self._inner.token(address)

    def exchange_rate(self) -> tuple[int, int]:
        return self._inner.exchange_rate()

    def nft(self, token: bytes, serial: int) -> NftState | None:
        return self._inner.nft(token, serial)

    def token_relation(self, token: bytes, account: bytes) -> tuple[bool, bool] | None:
        return self._inner.token_relation(token, account)

    def token_detail(self, address: bytes) -> TokenDetail | None:
        return self._inner.token_detail(address)

    def approved_for_all(self, token: bytes, owner: bytes, operator: bytes) -> bool:
        return self._inner.approved_for_all(token, owner, operator)

    def token_balance(self, token: bytes, owner: bytes) -> int:
        return self._inner.token_balance(token, owner)

    def token_allowance(self, token: bytes, owner: bytes, spender: bytes) -> int:
        return self._inner.token_allowance(token, owner, spender)

    def token_associated(self, token: bytes, account: bytes) -> bool:
        return self._inner.token_associated(token, account)

    def account_alias(self, address: bytes) -> tuple[int, bytes] | None:
        return self._inner.account_alias(address)

    def hbar_allowance(self, owner: bytes, spender: bytes) -> int:
        return self._inner.hbar_allowance(owner, spender)


def touched(state: Any, recorder: Recorder, coinbase: bytes) -> tuple[Touched, ...]:
    """Every account ``recorder`` answered, with its state after the execution (``state``: py-evm's state once
    the transaction ran); the coinbase (paid nothing: gas price 0) and the tokens' proxy code accounts (HTS
    tokens, not accounts or contracts) are left out, as are accounts that exist neither before nor after."""
    found: list[Touched] = []
    for address, pre in recorder.accounts.items():
        if address == coinbase or (pre is not None and pre.code and pre.code == proxy_code(address)):
            continue
        key = Address(address)
        post = None
        if not state.account_is_empty(key):
            post = AccountState(state.get_balance(key), state.get_nonce(key), bytes(state.get_code(key)))
        if pre is None and post is None:
            continue
        slots = tuple(
            (slot, before, int(state.get_storage(key, slot)))
            for slot, before in recorder.slots.get(address, {}).items()
        )
        found.append(Touched(address, pre, post, slots))
    return tuple(found)
