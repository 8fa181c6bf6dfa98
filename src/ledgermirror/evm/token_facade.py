"""The ERC-20/ERC-721 view functions of an HTS token's own address and the HTS reads at 0x167 that need no
more than the token row (upstream-web3.md §3.4), answered from the :class:`~ledgermirror.evm.state.StateReader`.

A call to a token's long-zero address runs as that token's ERC interface, as the consensus node routes it. Built:
``name``, ``symbol``, ``decimals`` (a revert for an NFT), ``totalSupply``, ``balanceOf``, ``allowance``,
``ownerOf``, ``tokenURI``, ``getApproved``, ``isApprovedForAll``; at 0x167 ``isToken``, ``getTokenType``, the
default statuses, ``isFrozen``, ``isKyc`` and the classic ``allowance``, ``getApproved`` and ``isApprovedForAll``
(the token as first argument, the response code first). Anything else reverts with no data. Every answer costs
``evm/system_gas.VIEW_GAS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ledgermirror.evm import abi
from ledgermirror.ledger.evm import keccak256

HTS_ADDRESS = (0x167).to_bytes(20, "big")
_PROXY_HEAD = bytes.fromhex("6080604052348015600f57600080fd5b506000610167905077618dc65e")
_PROXY_TAIL = bytes.fromhex(
    "600052366000602037600080366018016008845af43d806000803e8160008114605857816000f35b816000fdfea264697066735822"
    "1220d8378feed472ba49a0005514ef7087017f707b45fb9bf56bb81bb93ff19a238b64736f6c634300080b0033"
)
SUCCESS = 22
"""HAPI ``SUCCESS``, the response code HTS functions return first."""
FUNGIBLE_COMMON = "FUNGIBLE_COMMON"


@dataclass(frozen=True, slots=True)
class TokenState:
    name: str
    symbol: str
    decimals: int
    total_supply: int
    type: str
    """``FUNGIBLE_COMMON`` or ``NON_FUNGIBLE_UNIQUE``."""
    freeze_default: bool = False
    """New relationships start frozen (``token.freeze_default``)."""
    kyc_default: bool = False
    """New relationships start with KYC granted (``token.kyc_status`` GRANTED)."""


@dataclass(frozen=True, slots=True)
class NftState:
    owner: bytes | None
    """The owner's address (its EVM address, else long-zero); None when the mirror has no such account."""
    spender: bytes
    """The approved spender's address, or the zero address."""
    metadata: bytes
    created_second: int = 0
    """The NFT's ``created_timestamp`` in seconds."""


class NotAnswered(Exception):
    """The facade reverts (a function it does not offer, a bad argument, ``decimals`` of an NFT)."""


class Refused(NotAnswered):
    """A write the consensus node refuses with ``status`` (a HAPI response code's name): it reverts with the
    name's bytes as revert data, as its ``FullResult.revertResult`` does."""

    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


TokenLookup = Callable[[bytes], "TokenState | None"]
RelationLookup = Callable[[bytes, bytes], "tuple[bool, bool] | None"]
"""``(frozen, kyc_granted)`` of an account's relationship to a token, None when there is no such token."""


class TokenReads(Protocol):
    """What the facade reads beyond the token row (``evm/state.StateReader`` provides it)."""

    def token_balance(self, token: bytes, owner: bytes) -> int: ...

    def token_allowance(self, token: bytes, owner: bytes, spender: bytes) -> int: ...

    def nft(self, token: bytes, serial: int) -> NftState | None: ...

    def approved_for_all(self, token: bytes, owner: bytes, operator: bytes) -> bool: ...


def _selector(signature: str) -> bytes:
    return keccak256(signature.encode())[:4]


NAME = _selector("name()")
SYMBOL = _selector("symbol()")
DECIMALS = _selector("decimals()")
TOTAL_SUPPLY = _selector("totalSupply()")
BALANCE_OF = _selector("balanceOf(address)")
ALLOWANCE = _selector("allowance(address,address)")
IS_TOKEN = _selector("isToken(address)")
GET_TOKEN_TYPE = _selector("getTokenType(address)")
DEFAULT_FREEZE = _selector("getTokenDefaultFreezeStatus(address)")
DEFAULT_KYC = _selector("getTokenDefaultKycStatus(address)")
IS_FROZEN = _selector("isFrozen(address,address)")
IS_KYC = _selector("isKyc(address,address)")
OWNER_OF = _selector("ownerOf(uint256)")
TOKEN_URI = _selector("tokenURI(uint256)")
GET_APPROVED = _selector("getApproved(uint256)")
IS_APPROVED_FOR_ALL = _selector("isApprovedForAll(address,address)")
HTS_IS_APPROVED_FOR_ALL = _selector("isApprovedForAll(address,address,address)")
HTS_ALLOWANCE = _selector("allowance(address,address,address)")
HTS_GET_APPROVED = _selector("getApproved(address,uint256)")
REDIRECT_FOR_TOKEN = _selector("redirectForToken(address,bytes)")


def proxy_code(token_address: bytes) -> bytes:
    """The code a token's address holds (HIP-719): the consensus node's redirect of every call to
    ``redirectForToken(address,bytes)`` at 0x167, with the token's address written in. It never runs here (the
    facade answers first), but ``EXTCODESIZE``/``EXTCODEHASH`` see it, so Solidity's calls to a token pass."""
    return _PROXY_HEAD + token_address + _PROXY_TAIL


def token_view(
    token_address: bytes,
    token: TokenState,
    data: bytes,
    reads: TokenReads,
) -> bytes:
    """The answer of an ERC view called on the token's address; raises :class:`NotAnswered`."""
    selector = data[:4]
    if selector in (OWNER_OF, TOKEN_URI, GET_APPROVED):
        return _nft_view(token_address, token, data, reads)
    if selector == NAME:
        return abi.string(token.name)
    if selector == SYMBOL:
        return abi.string(token.symbol)
    if selector == DECIMALS:
        if token.type != FUNGIBLE_COMMON:
            raise NotAnswered()
        return abi.uint(token.decimals)
    if selector == TOTAL_SUPPLY:
        return abi.uint(token.total_supply)
    if selector == BALANCE_OF:
        owner = abi.address_argument(data, 0)
        if owner is None:
            raise NotAnswered()
        return abi.uint(reads.token_balance(token_address, owner))
    if selector == IS_APPROVED_FOR_ALL:
        return abi.boolean(_approved_for_all(token_address, token, data, 0, reads))
    if selector == ALLOWANCE and token.type == FUNGIBLE_COMMON:
        owner, spender = abi.address_argument(data, 0), abi.address_argument(data, 1)
        if owner is None or spender is None:
            raise NotAnswered()
        return abi.uint(reads.token_allowance(token_address, owner, spender))
    raise NotAnswered()


def _nft_view(token_address: bytes, token: TokenState, data: bytes, reads: TokenReads) -> bytes:
    """``ownerOf``, ``tokenURI`` and ``getApproved`` of an NFT: a revert for a fungible token, an unknown serial
    or (``ownerOf``) an owner the mirror does not hold."""
    serial = abi.word(data, 0)
    if token.type == FUNGIBLE_COMMON or serial is None or serial >= 1 << 63:
        raise NotAnswered()
    found = reads.nft(token_address, serial)
    if found is None:
        raise NotAnswered()
    selector = data[:4]
    if selector == OWNER_OF:
        if found.owner is None:
            raise NotAnswered()
        return abi.address(found.owner)
    if selector == TOKEN_URI:
        return abi.string(found.metadata.decode("utf-8", errors="replace"))
    return abi.address(found.spender)


def redirected_call(data: bytes) -> tuple[bytes, bytes]:
    """The token address and the ERC call data of ``redirectForToken(address,bytes)`` (the facade call routed
    through 0x167, as the proxy code at a token's address sends it); raises :class:`NotAnswered` when the
    arguments do not decode."""
    token_address, offset = abi.address_argument(data, 0), abi.word(data, 1)
    if token_address is None or offset is None or offset % 32 or offset > len(data):
        raise NotAnswered()
    length = abi.word(data, offset // 32)
    start = 4 + offset + 32
    if length is None or start + length > len(data):
        raise NotAnswered()
    return token_address, data[start : start + length]


def _approved_for_all(token_address: bytes, token: TokenState, data: bytes, first: int, reads: TokenReads) -> bool:
    """``isApprovedForAll(owner, operator)`` with its arguments from word ``first``: a revert for a fungible token
    (the consensus node's ``INVALID_TOKEN_ID``), false for an owner or operator the mirror does not know."""
    owner, operator = abi.address_argument(data, first), abi.address_argument(data, first + 1)
    if token.type == FUNGIBLE_COMMON or owner is None or operator is None:
        raise NotAnswered()
    return reads.approved_for_all(token_address, owner, operator)


def hts_view(data: bytes, token: TokenLookup, relation: RelationLookup, reads: TokenReads) -> bytes:
    """The answer of an HTS read at 0x167; raises :class:`NotAnswered`."""
    selector = data[:4]
    if selector in (HTS_ALLOWANCE, HTS_GET_APPROVED):
        return _classic_view(data, token, reads)
    if selector == HTS_IS_APPROVED_FOR_ALL:
        target = abi.address_argument(data, 0)
        found = None if target is None else token(target)
        if target is None or found is None:
            raise NotAnswered()
        return abi.uint(SUCCESS) + abi.boolean(_approved_for_all(target, found, data, 1, reads))
    if selector in (IS_FROZEN, IS_KYC):
        target, account = abi.address_argument(data, 0), abi.address_argument(data, 1)
        statuses = None if target is None or account is None else relation(target, account)
        if statuses is None:
            raise NotAnswered()
        return abi.uint(SUCCESS) + abi.boolean(statuses[0] if selector == IS_FROZEN else statuses[1])
    if selector not in (IS_TOKEN, GET_TOKEN_TYPE, DEFAULT_FREEZE, DEFAULT_KYC):
        raise NotAnswered()
    target = abi.address_argument(data, 0)
    if target is None:
        raise NotAnswered()
    found = token(target)
    if selector == IS_TOKEN:
        return abi.uint(SUCCESS) + abi.boolean(found is not None)
    if found is None:
        raise NotAnswered()
    if selector == DEFAULT_FREEZE:
        return abi.uint(SUCCESS) + abi.boolean(found.freeze_default)
    if selector == DEFAULT_KYC:
        return abi.uint(SUCCESS) + abi.boolean(found.kyc_default)
    return abi.uint(SUCCESS) + abi.uint(0 if found.type == FUNGIBLE_COMMON else 1)


def _classic_view(data: bytes, token: TokenLookup, reads: TokenReads) -> bytes:
    """HTS ``allowance(token, owner, spender)`` (a fungible token) and ``getApproved(token, serial)`` (an NFT):
    the response code 22 and the ERC answer; an unknown token, the other type or an unknown serial reverts, as the
    consensus node's ``GetAllowanceCall`` and ``GetApprovedCall`` (``INVALID_TOKEN_ID``,
    ``INVALID_TOKEN_NFT_SERIAL_NUMBER``)."""
    target = abi.address_argument(data, 0)
    found = None if target is None else token(target)
    if target is None or found is None:
        raise NotAnswered()
    if data[:4] == HTS_ALLOWANCE:
        owner, spender = abi.address_argument(data, 1), abi.address_argument(data, 2)
        if owner is None or spender is None or found.type != FUNGIBLE_COMMON:
            raise NotAnswered()
        return abi.uint(SUCCESS) + abi.uint(reads.token_allowance(target, owner, spender))
    serial = abi.word(data, 1)
    if serial is None or found.type == FUNGIBLE_COMMON or serial >= 1 << 63:
        raise NotAnswered()
    nft = reads.nft(target, serial)
    if nft is None:
        raise NotAnswered()
    return abi.uint(SUCCESS) + abi.address(nft.spender)
