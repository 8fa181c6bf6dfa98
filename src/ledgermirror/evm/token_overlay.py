"""HTS writes of a simulated call, kept in a throwaway overlay (upstream-web3.md §3.6): token transfers,
allowances, approvals and associations that later reads of the same call see, and that nothing persists.

The overlay lives in the EVM's own state, as storage slots of the token's address (the mirror never has storage
there): py-evm's journal then undoes an overlay write exactly when the frame that made it, or any frame around
it, reverts, and the whole state is dropped with the call. A slot holds the value plus one (zero: not written in
this call, read the mirror's). Accounts are keyed by entity number, so an account's long-zero and EVM addresses
are the same holder.

Built: the ERC-20 facade's ``transfer``, ``transferFrom`` and ``approve``, ERC-721's ``transferFrom``, ``approve``
and ``setApprovalForAll`` (NFT owners, spenders and operators), HRC-719's ``associate()``, ``dissociate()`` and (a
view) ``isAssociated()`` of the caller on any token's facade; at 0x167 ``transferToken``, ``transferFrom(token,
from, to, amount)``, ``approve(token, spender, amount)``, ``associateToken``, ``transferNFT``, ``approveNFT`` and
``setApprovalForAll(token, operator, approved)``. Each refuses what the consensus node refuses (a revert whose data
is the response code's name, as its ``revertResult``, where the check is one of the dispatched transaction's; with
no data for a bad argument, a static call or a missing signature): a write inside a static call, a fungible write
of an NFT (or the reverse), an account the mirror does not hold, an unknown serial or one not the sender's, an NFT
moved or approved by neither its owner, its spender nor an operator, an amount that is negative or above ``int64``,
a holder not associated with the token, a frozen holder, a paused token, a balance or allowance too small, a
transfer of another account's tokens without an allowance, associating another account than the caller or an
account already associated, dissociating a holder with a balance or the token's treasury.
"""

from __future__ import annotations

from typing import Any, Protocol

from eth_typing import Address

from ledgermirror.evm import abi
from ledgermirror.evm.token_facade import FUNGIBLE_COMMON, SUCCESS, NftState, NotAnswered, Refused, TokenState
from ledgermirror.evm.token_info import TokenDetail
from ledgermirror.ledger.evm import keccak256
from ledgermirror.ledger.transaction_codes import result_number

_INT64_LIMIT = 1 << 63


def _selector(signature: str) -> bytes:
    return keccak256(signature.encode())[:4]


ERC_TRANSFER = _selector("transfer(address,uint256)")
ERC_TRANSFER_FROM = _selector("transferFrom(address,address,uint256)")
ERC_APPROVE = _selector("approve(address,uint256)")
HRC_IS_ASSOCIATED = _selector("isAssociated()")
HRC_ASSOCIATE = _selector("associate()")
HRC_DISSOCIATE = _selector("dissociate()")
ERC_SET_APPROVAL_FOR_ALL = _selector("setApprovalForAll(address,bool)")
ERC_WRITES = frozenset(
    {ERC_TRANSFER, ERC_TRANSFER_FROM, ERC_APPROVE, ERC_SET_APPROVAL_FOR_ALL, HRC_ASSOCIATE, HRC_DISSOCIATE}
)
HTS_TRANSFER_TOKEN = _selector("transferToken(address,address,address,int64)")
HTS_TRANSFER_FROM = _selector("transferFrom(address,address,address,uint256)")
HTS_APPROVE = _selector("approve(address,address,uint256)")
HTS_ASSOCIATE_TOKEN = _selector("associateToken(address,address)")
HTS_TRANSFER_NFT = _selector("transferNFT(address,address,address,int64)")
HTS_APPROVE_NFT = _selector("approveNFT(address,address,uint256)")
HTS_SET_APPROVAL_FOR_ALL = _selector("setApprovalForAll(address,address,bool)")
HTS_WRITES = frozenset(
    {
        HTS_TRANSFER_TOKEN,
        HTS_TRANSFER_FROM,
        HTS_APPROVE,
        HTS_ASSOCIATE_TOKEN,
        HTS_TRANSFER_NFT,
        HTS_APPROVE_NFT,
        HTS_SET_APPROVAL_FOR_ALL,
    }
)


class MirrorReads(Protocol):
    """What the overlay reads beneath its writes (``evm/state.StateReader`` provides it)."""

    def token(self, address: bytes) -> TokenState | None: ...

    def token_detail(self, address: bytes) -> TokenDetail | None: ...

    def token_balance(self, token: bytes, owner: bytes) -> int: ...

    def token_allowance(self, token: bytes, owner: bytes, spender: bytes) -> int: ...

    def token_associated(self, token: bytes, account: bytes) -> bool: ...

    def token_relation(self, token: bytes, account: bytes) -> tuple[bool, bool] | None: ...

    def account_alias(self, address: bytes) -> tuple[int, bytes] | None: ...

    def nft(self, token: bytes, serial: int) -> NftState | None: ...

    def approved_for_all(self, token: bytes, owner: bytes, operator: bytes) -> bool: ...


def _refused(status: str) -> Refused:
    """A refusal with a HAPI response code's name (checked to be one)."""
    result_number(status)
    return Refused(status)


def _slot(kind: bytes, *numbers: int) -> int:
    return int.from_bytes(
        keccak256(b"ledgermirror.overlay." + kind + b"".join(n.to_bytes(8, "big") for n in numbers))
    )


class TokenOverlay:
    """The token reads of one call, seeing its own writes (``state``: py-evm's state of the call)."""

    def __init__(self, state: Any, reader: MirrorReads) -> None:
        self._state = state
        self._reader = reader

    def _get(self, token: bytes, slot: int) -> int | None:
        stored = int(self._state.get_storage(Address(token), slot))
        return None if stored == 0 else stored - 1

    def _set(self, token: bytes, slot: int, value: int) -> None:
        self._state.set_storage(Address(token), slot, value + 1)

    def _num(self, address: bytes) -> int | None:
        found = self._reader.account_alias(address)
        return None if found is None else found[0]

    def same_account(self, first: bytes, second: bytes) -> bool:
        """Whether two addresses (long-zero or EVM) name the same account the mirror holds."""
        num = self._num(first)
        return first == second or (num is not None and num == self._num(second))

    def token_balance(self, token: bytes, owner: bytes) -> int:
        num = self._num(owner)
        written = None if num is None else self._get(token, _slot(b"balance", num))
        return self._reader.token_balance(token, owner) if written is None else written

    def token_allowance(self, token: bytes, owner: bytes, spender: bytes) -> int:
        owner_num, spender_num = self._num(owner), self._num(spender)
        written = None
        if owner_num is not None and spender_num is not None:
            written = self._get(token, _slot(b"allowance", owner_num, spender_num))
        return self._reader.token_allowance(token, owner, spender) if written is None else written

    def associated(self, token: bytes, account: bytes) -> bool:
        num = self._num(account)
        written = None if num is None else self._get(token, _slot(b"associated", num))
        return self._reader.token_associated(token, account) if written is None else written == 1

    def _address_of(self, num: int) -> bytes:
        """An account's priority address: its EVM address alias, else its long-zero address."""
        long_zero = num.to_bytes(20, "big")
        found = self._reader.account_alias(long_zero)
        return found[1] if found is not None and len(found[1]) == 20 else long_zero

    def nft(self, token: bytes, serial: int) -> NftState | None:
        found = self._reader.nft(token, serial)
        if found is None:
            return None
        owner = self._get(token, _slot(b"nft.owner", serial))
        spender = self._get(token, _slot(b"nft.spender", serial))
        return NftState(
            owner=found.owner if owner is None else self._address_of(owner),
            spender=found.spender if spender is None else (self._address_of(spender) if spender else bytes(20)),
            metadata=found.metadata,
            created_second=found.created_second,
        )

    def approved_for_all(self, token: bytes, owner: bytes, operator: bytes) -> bool:
        owner_num, operator_num = self._num(owner), self._num(operator)
        written = None
        if owner_num is not None and operator_num is not None:
            written = self._get(token, _slot(b"operator", owner_num, operator_num))
        return self._reader.approved_for_all(token, owner, operator) if written is None else written == 1

    def is_nft(self, token: bytes) -> bool:
        found = self._reader.token(token)
        return found is not None and found.type != FUNGIBLE_COMMON

    def _unique(self, token: bytes) -> None:
        """An NFT token that is not paused, else a revert."""
        detail = self._reader.token_detail(token) if self.is_nft(token) else None
        if detail is None:
            raise NotAnswered()
        if detail.paused:
            raise _refused("TOKEN_IS_PAUSED")

    def _owned(self, token: bytes, serial: int) -> NftState:
        found = self.nft(token, serial) if 0 < serial < _INT64_LIMIT else None
        if found is None or found.owner is None:
            raise _refused("INVALID_NFT_ID")  # (or an owner the mirror does not hold)
        return found

    def transfer_nft(self, token: bytes, sender: bytes, receiver: bytes, serial: int, caller: bytes) -> None:
        """Move NFT ``serial`` from ``sender`` (its owner) to ``receiver``, by the owner itself, the serial's
        approved spender or an operator approved for all of the owner's NFTs; the serial's approval is cleared."""
        self._unique(token)
        found = self._owned(token, serial)
        assert found.owner is not None
        if not self.same_account(found.owner, sender):
            raise _refused("SENDER_DOES_NOT_OWN_NFT_SERIAL_NO")
        allowed = (
            self.same_account(caller, sender)
            or (found.spender != bytes(20) and self.same_account(found.spender, caller))
            or self.approved_for_all(token, sender, caller)
        )
        if not allowed:
            raise _refused("SPENDER_DOES_NOT_HAVE_ALLOWANCE")
        from_num, to_num = self._holder(token, sender), self._holder(token, receiver)
        if from_num != to_num:
            self._set(token, _slot(b"balance", from_num), self.token_balance(token, sender) - 1)
            self._set(token, _slot(b"balance", to_num), self.token_balance(token, receiver) + 1)
        self._set(token, _slot(b"nft.owner", serial), to_num)
        self._set(token, _slot(b"nft.spender", serial), 0)

    def approve_nft(self, token: bytes, caller: bytes, spender: bytes, serial: int) -> None:
        """Approve ``spender`` (the zero address: nobody) for NFT ``serial``, by its owner or an operator."""
        self._unique(token)
        found = self._owned(token, serial)
        assert found.owner is not None
        if not (self.same_account(found.owner, caller) or self.approved_for_all(token, found.owner, caller)):
            raise _refused("SENDER_DOES_NOT_OWN_NFT_SERIAL_NO")
        spender_num = 0 if spender == bytes(20) else self._num(spender)
        if spender_num is None:
            raise _refused("INVALID_ALLOWANCE_SPENDER_ID")
        self._set(token, _slot(b"nft.spender", serial), spender_num)

    def set_approval_for_all(self, token: bytes, owner: bytes, operator: bytes, approved: bool) -> None:
        self._unique(token)
        owner_num, operator_num = self._num(owner), self._num(operator)
        if owner_num is None:
            raise _refused("INVALID_ALLOWANCE_OWNER_ID")
        if operator_num is None:
            raise _refused("INVALID_ALLOWANCE_SPENDER_ID")
        self._set(token, _slot(b"operator", owner_num, operator_num), 1 if approved else 0)

    def _fungible(self, token: bytes) -> None:
        """A fungible token that is not paused, else a revert."""
        found = self._reader.token(token)
        detail = None if found is None else self._reader.token_detail(token)
        if found is None or found.type != FUNGIBLE_COMMON or detail is None:
            raise NotAnswered()
        if detail.paused:
            raise _refused("TOKEN_IS_PAUSED")

    def _holder(self, token: bytes, account: bytes) -> int:
        """The entity number of an associated, unfrozen holder of ``token``, else a revert."""
        num = self._num(account)
        if num is None:
            raise _refused("INVALID_ACCOUNT_ID")
        if not self.associated(token, account):
            raise _refused("TOKEN_NOT_ASSOCIATED_TO_ACCOUNT")
        relation = self._reader.token_relation(token, account)
        if relation is not None and relation[0]:
            raise _refused("ACCOUNT_FROZEN_FOR_TOKEN")
        return num

    def transfer(self, token: bytes, sender: bytes, receiver: bytes, amount: int, spender: bytes | None) -> None:
        """Move ``amount`` of ``token`` from ``sender`` to ``receiver`` (using ``spender``'s allowance when
        given)."""
        self._fungible(token)
        if not 0 <= amount < _INT64_LIMIT:
            raise NotAnswered()
        from_num, to_num = self._holder(token, sender), self._holder(token, receiver)
        if spender is not None:
            spender_num = self._num(spender)
            allowed = self.token_allowance(token, sender, spender)
            if spender_num is None or allowed == 0 < amount:
                raise _refused("SPENDER_DOES_NOT_HAVE_ALLOWANCE")
            if allowed < amount:
                raise _refused("AMOUNT_EXCEEDS_ALLOWANCE")
            self._set(token, _slot(b"allowance", from_num, spender_num), allowed - amount)
        balance = self.token_balance(token, sender)
        if balance < amount:
            raise _refused("INSUFFICIENT_TOKEN_BALANCE")
        received = self.token_balance(token, receiver)
        self._set(token, _slot(b"balance", from_num), balance - amount)
        received = received if from_num != to_num else balance - amount
        self._set(token, _slot(b"balance", to_num), received + amount)

    def approve(self, token: bytes, owner: bytes, spender: bytes, amount: int) -> None:
        self._fungible(token)
        if not 0 <= amount < _INT64_LIMIT:
            raise NotAnswered()
        owner_num, spender_num = self._holder(token, owner), self._num(spender)
        if spender_num is None:
            raise _refused("INVALID_ALLOWANCE_SPENDER_ID")
        self._set(token, _slot(b"allowance", owner_num, spender_num), amount)

    def dissociate(self, token: bytes, account: bytes) -> None:
        """End ``account``'s association: refused for a holder that is not associated, still holds some of the
        token (``TRANSACTION_REQUIRES_ZERO_TOKEN_BALANCES``) or is its treasury (``ACCOUNT_IS_TREASURY``)."""
        num = self._num(account)
        detail = self._reader.token_detail(token)
        if detail is None or num is None:
            raise NotAnswered()
        if not self.associated(token, account):
            raise _refused("TOKEN_NOT_ASSOCIATED_TO_ACCOUNT")
        if self.same_account(detail.treasury, account):
            raise _refused("ACCOUNT_IS_TREASURY")
        if self.token_balance(token, account) != 0:
            raise _refused("TRANSACTION_REQUIRES_ZERO_TOKEN_BALANCES")
        self._set(token, _slot(b"associated", num), 0)

    def associate(self, token: bytes, account: bytes) -> None:
        num = self._num(account)
        if self._reader.token(token) is None:
            raise _refused("INVALID_TOKEN_ID")
        if num is None:
            raise _refused("INVALID_ACCOUNT_ID")
        if self.associated(token, account):
            raise _refused("TOKEN_ALREADY_ASSOCIATED_TO_ACCOUNT")
        self._set(token, _slot(b"associated", num), 1)
        self._set(token, _slot(b"balance", num), 0)


def _words(data: bytes, count: int) -> list[int]:
    words = [abi.word(data, index) for index in range(count)]
    if any(word is None for word in words):
        raise NotAnswered()
    return [word for word in words if word is not None]


def _address(value: int) -> bytes:
    if value >> 160:
        raise NotAnswered()
    return value.to_bytes(20, "big")


def erc_write(token: bytes, data: bytes, caller: bytes, overlay: TokenOverlay) -> bytes:
    """The facade's ``transfer``, ``transferFrom`` or ``approve`` called by ``caller`` (``true``), or HRC-719's
    ``associate()`` or ``dissociate()`` of the caller (the response code 22)."""
    selector = data[:4]
    if overlay.is_nft(token) and selector in (ERC_TRANSFER_FROM, ERC_APPROVE, ERC_SET_APPROVAL_FOR_ALL):
        return _erc721_write(token, data, caller, overlay)
    if selector == ERC_TRANSFER:
        to, amount = _words(data, 2)
        overlay.transfer(token, caller, _address(to), amount, None)
    elif selector == ERC_TRANSFER_FROM:
        owner, to, amount = _words(data, 3)
        overlay.transfer(token, _address(owner), _address(to), amount, caller)
    elif selector == ERC_APPROVE:
        spender, amount = _words(data, 2)
        overlay.approve(token, caller, _address(spender), amount)
    elif selector == HRC_ASSOCIATE:
        overlay.associate(token, caller)
        return abi.uint(SUCCESS)
    elif selector == HRC_DISSOCIATE:
        overlay.dissociate(token, caller)
        return abi.uint(SUCCESS)
    else:
        raise NotAnswered()
    return abi.boolean(True)


def _erc721_write(token: bytes, data: bytes, caller: bytes, overlay: TokenOverlay) -> bytes:
    """ERC-721's ``transferFrom``, ``approve`` and ``setApprovalForAll`` of an NFT token: no return value."""
    selector = data[:4]
    if selector == ERC_TRANSFER_FROM:
        owner, to, serial = _words(data, 3)
        overlay.transfer_nft(token, _address(owner), _address(to), serial, caller)
    elif selector == ERC_APPROVE:
        spender, serial = _words(data, 2)
        overlay.approve_nft(token, caller, _address(spender), serial)
    else:
        operator, approved = _words(data, 2)
        if approved > 1:
            raise NotAnswered()
        overlay.set_approval_for_all(token, caller, _address(operator), approved == 1)
    return b""


def hts_write(data: bytes, caller: bytes, overlay: TokenOverlay) -> bytes:
    """One of :data:`HTS_WRITES` at 0x167 called by ``caller``: the response code 22 (and ``true`` for
    ``approve``). A transfer of another account's tokens than the caller's goes through the caller's allowance
    (``transferFrom``) or is refused (``transferToken``: the consensus node wants that account's signature)."""
    selector = data[:4]
    if selector == HTS_TRANSFER_TOKEN:
        token, sender, receiver, amount = _words(data, 4)
        if not overlay.same_account(_address(sender), caller):
            raise NotAnswered()
        overlay.transfer(_address(token), caller, _address(receiver), amount, None)
        return abi.uint(SUCCESS)
    if selector == HTS_TRANSFER_FROM:
        token, sender, receiver, amount = _words(data, 4)
        overlay.transfer(_address(token), _address(sender), _address(receiver), amount, caller)
        return abi.uint(SUCCESS)
    if selector == HTS_APPROVE:
        token, spender, amount = _words(data, 3)
        overlay.approve(_address(token), caller, _address(spender), amount)
        return abi.uint(SUCCESS) + abi.boolean(True)
    if selector == HTS_TRANSFER_NFT:
        token, sender, receiver, serial = _words(data, 4)
        if not overlay.same_account(_address(sender), caller):
            raise NotAnswered()
        overlay.transfer_nft(_address(token), caller, _address(receiver), serial, caller)
        return abi.uint(SUCCESS)
    if selector == HTS_APPROVE_NFT:
        token, spender, serial = _words(data, 3)
        overlay.approve_nft(_address(token), caller, _address(spender), serial)
        return abi.uint(SUCCESS)
    if selector == HTS_SET_APPROVAL_FOR_ALL:
        token, operator, approved = _words(data, 3)
        if approved > 1:
            raise NotAnswered()
        overlay.set_approval_for_all(_address(token), caller, _address(operator), approved == 1)
        return abi.uint(SUCCESS)
    if selector == HTS_ASSOCIATE_TOKEN:
        account, token = _words(data, 2)
        if not overlay.same_account(_address(account), caller):
            raise NotAnswered()
        overlay.associate(_address(token), caller)
        return abi.uint(SUCCESS)
    raise NotAnswered()
