"""The HTS reads at 0x167 that answer a token's structs (IHederaTokenService's ``Expiry``, ``KeyValue``,
``TokenInfo``, ...; upstream-web3.md §3.4), encoded with Solidity's ABI as the consensus node's system contract
returns them: ``getTokenExpiryInfo``, ``getTokenKey``, ``getTokenInfo``, ``getFungibleTokenInfo``,
``getNonFungibleTokenInfo``, their V2 forms (``HederaTokenV2``: the token's metadata after the expiry, and the
metadata key, type 128, as an eighth ``tokenKeys`` entry) and ``getTokenCustomFees``. Each answer starts with
the response code 22 (SUCCESS).
As the consensus node's non-revertible view calls: an unknown token (``INVALID_TOKEN_ID``) or a key the token does
not have (``KEY_NOT_PROVIDED``) answers that code and an empty struct, or reverts inside a static call
(:func:`failed_view`); an unknown serial answers ``INVALID_TOKEN_NFT_SERIAL_NUMBER`` with the token's info and
the treasury as owner (a revert in a static call)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_abi.abi import encode

from ledgermirror.evm import abi
from ledgermirror.evm.token_facade import SUCCESS, NftState, NotAnswered, TokenState
from ledgermirror.ledger.evm import keccak256
from ledgermirror.ledger.transaction_codes import result_number


def _selector(signature: str) -> bytes:
    return keccak256(signature.encode())[:4]


GET_TOKEN_EXPIRY_INFO = _selector("getTokenExpiryInfo(address)")
GET_TOKEN_KEY = _selector("getTokenKey(address,uint256)")
GET_TOKEN_INFO = _selector("getTokenInfo(address)")
GET_FUNGIBLE_TOKEN_INFO = _selector("getFungibleTokenInfo(address)")
GET_NON_FUNGIBLE_TOKEN_INFO = _selector("getNonFungibleTokenInfo(address,int64)")
GET_TOKEN_CUSTOM_FEES = _selector("getTokenCustomFees(address)")
GET_TOKEN_INFO_V2 = _selector("getTokenInfoV2(address)")
GET_FUNGIBLE_TOKEN_INFO_V2 = _selector("getFungibleTokenInfoV2(address)")
GET_NON_FUNGIBLE_TOKEN_INFO_V2 = _selector("getNonFungibleTokenInfoV2(address,int64)")
NFT_INFO_SELECTORS = frozenset({GET_NON_FUNGIBLE_TOKEN_INFO, GET_NON_FUNGIBLE_TOKEN_INFO_V2})
_V2 = frozenset({GET_TOKEN_INFO_V2, GET_FUNGIBLE_TOKEN_INFO_V2, GET_NON_FUNGIBLE_TOKEN_INFO_V2})
SELECTORS = frozenset(
    {
        GET_TOKEN_EXPIRY_INFO,
        GET_TOKEN_KEY,
        GET_TOKEN_INFO,
        GET_FUNGIBLE_TOKEN_INFO,
        GET_NON_FUNGIBLE_TOKEN_INFO,
        GET_TOKEN_CUSTOM_FEES,
    }
    | _V2
)

INVALID_TOKEN_ID = result_number("INVALID_TOKEN_ID")
KEY_NOT_PROVIDED = result_number("KEY_NOT_PROVIDED")
INVALID_TOKEN_NFT_SERIAL_NUMBER = result_number("INVALID_TOKEN_NFT_SERIAL_NUMBER")
KEY_TYPES = (1, 2, 4, 8, 16, 32, 64)
"""The key types of ``getTokenKey`` and of ``HederaToken.tokenKeys``, in this order: admin, KYC, freeze, wipe,
supply, fee schedule, pause."""
METADATA_KEY_TYPE = 128
"""The eighth key of ``HederaTokenV2.tokenKeys``."""

_EXPIRY = "(int64,address,int64)"
_KEY_VALUE = "(bool,address,bytes,bytes,address)"
_HEDERA_TOKEN = f"(string,string,address,string,bool,int64,bool,(uint256,{_KEY_VALUE})[],{_EXPIRY})"
_FIXED_FEE = "(int64,address,bool,bool,address)"
_FRACTIONAL_FEE = "(int64,int64,int64,int64,bool,address)"
_ROYALTY_FEE = "(int64,int64,int64,address,bool,address)"
_FEES = f"{_FIXED_FEE}[],{_FRACTIONAL_FEE}[],{_ROYALTY_FEE}[]"
_TOKEN_INFO = f"({_HEDERA_TOKEN},int64,bool,bool,bool,{_FEES},string)"
_HEDERA_TOKEN_V2 = f"(string,string,address,string,bool,int64,bool,(uint256,{_KEY_VALUE})[],{_EXPIRY},bytes)"
_TOKEN_INFO_V2 = f"({_HEDERA_TOKEN_V2},int64,bool,bool,bool,{_FEES},string)"
_ZERO_ADDRESS = bytes(20)


@dataclass(frozen=True, slots=True)
class KeyValue:
    """A key as ``IHederaTokenService.KeyValue`` holds it: a contract id, an Ed25519 or ECDSA(secp256k1) public
    key or a delegatable contract id (a key list or threshold key: all empty)."""

    contract: bytes = _ZERO_ADDRESS
    ed25519: bytes = b""
    ecdsa_secp256k1: bytes = b""
    delegatable_contract: bytes = _ZERO_ADDRESS

    def encoded(self) -> tuple[Any, ...]:
        return (False, self.contract, self.ed25519, self.ecdsa_secp256k1, self.delegatable_contract)


@dataclass(frozen=True, slots=True)
class FixedFee:
    amount: int
    token: bytes
    """The denominating token, the zero address for hbars."""
    use_current_token: bool
    collector: bytes


@dataclass(frozen=True, slots=True)
class FractionalFee:
    numerator: int
    denominator: int
    minimum: int
    maximum: int
    net_of_transfers: bool
    collector: bytes


@dataclass(frozen=True, slots=True)
class RoyaltyFee:
    numerator: int
    denominator: int
    fallback_amount: int
    fallback_token: bytes
    collector: bytes


@dataclass(frozen=True, slots=True)
class CustomFees:
    fixed: tuple[FixedFee, ...] = ()
    fractional: tuple[FractionalFee, ...] = ()
    royalty: tuple[RoyaltyFee, ...] = ()

    def encoded(self) -> tuple[list[Any], list[Any], list[Any]]:
        fixed = [
            (
                f.amount,
                f.token,
                f.token == _ZERO_ADDRESS and not f.use_current_token,
                f.use_current_token,
                f.collector,
            )
            for f in self.fixed
        ]
        fractional = [
            (f.numerator, f.denominator, f.minimum, f.maximum, f.net_of_transfers, f.collector)
            for f in self.fractional
        ]
        royalty = [
            (
                f.numerator,
                f.denominator,
                f.fallback_amount,
                f.fallback_token,
                f.fallback_token == _ZERO_ADDRESS,  # no denominating token, with or without a fallback
                f.collector,
            )
            for f in self.royalty
        ]
        return fixed, fractional, royalty


@dataclass(frozen=True, slots=True)
class TokenDetail:
    """What the token's structs need beyond :class:`TokenState` (token and entity rows at the block)."""

    treasury: bytes
    memo: str
    supply_finite: bool
    max_supply: int
    paused: bool
    deleted: bool
    """Always false from the mirror (the reference's web3 builds every token with ``deleted(false)``)."""
    keys: tuple[KeyValue | None, ...]
    """One per :data:`KEY_TYPES`, None where the token has no such key."""
    expiry_second: int
    auto_renew_account: bytes
    auto_renew_period: int
    ledger_id: str
    """``0x00`` mainnet, ``0x01`` testnet, ``0x02`` previewnet, ``0x03`` another network."""
    fees: CustomFees = CustomFees()
    metadata: bytes = b""
    """``token.metadata`` (HIP-646), the V2 structs' last ``HederaTokenV2`` field."""
    metadata_key: KeyValue | None = None
    """``token.metadata_key``, the V2 structs' eighth key."""


def _expiry(detail: TokenDetail) -> tuple[int, bytes, int]:
    return detail.expiry_second, detail.auto_renew_account, detail.auto_renew_period


def _token_info(token: TokenState, detail: TokenDetail, v2: bool = False) -> tuple[Any, ...]:
    """``TokenInfo`` (or with ``v2`` ``TokenInfoV2``) as ``eth-abi`` encodes it."""
    key_types: tuple[int, ...] = KEY_TYPES
    key_values: tuple[KeyValue | None, ...] = detail.keys
    if v2:
        key_types, key_values = (*KEY_TYPES, METADATA_KEY_TYPE), (*detail.keys, detail.metadata_key)
    keys = [(key_type, (key or KeyValue()).encoded()) for key_type, key in zip(key_types, key_values, strict=True)]
    hedera_token: tuple[Any, ...] = (
        token.name,
        token.symbol,
        detail.treasury,
        detail.memo,
        detail.supply_finite,
        detail.max_supply,
        token.freeze_default,
        keys,
        _expiry(detail),
    )
    if v2:
        hedera_token = (*hedera_token, detail.metadata)
    fixed, fractional, royalty = detail.fees.encoded()
    return (
        hedera_token,
        token.total_supply,
        detail.deleted,
        token.kyc_default,
        detail.paused,
        fixed,
        fractional,
        royalty,
        detail.ledger_id,
    )


_ZERO = _ZERO_ADDRESS
_EMPTY_EXPIRY = (0, _ZERO_ADDRESS, 0)


def _int64(word: int | None) -> int | None:
    """A word as ``int64`` (two's complement), None when it is missing or out of range."""
    if word is None:
        return None
    value = word - (1 << 256) if word >> 255 else word
    return value if -(1 << 63) <= value < 1 << 63 else None


_EMPTY_INFO: tuple[Any, ...] = (
    ("", "", _ZERO_ADDRESS, "", False, 0, False, [], _EMPTY_EXPIRY),
    0,
    False,
    False,
    False,
    [],
    [],
    [],
    "",
)
_EMPTY_INFO_V2: tuple[Any, ...] = ((*_EMPTY_INFO[0], b""), *_EMPTY_INFO[1:])


def _info_types(selector: bytes) -> tuple[str, str, str]:
    """The ABI types of ``TokenInfo``, ``FungibleTokenInfo`` and ``NonFungibleTokenInfo`` (V2 or not)."""
    info = _TOKEN_INFO_V2 if selector in _V2 else _TOKEN_INFO
    return info, f"({info},int32)", f"({info},int64,address,int64,bytes,address)"


def failed_view(selector: bytes, status: int, static: bool) -> bytes:
    """The answer of one of :data:`SELECTORS` that fails with ``status``: a revert inside a static call, else
    ``status`` and the function's empty struct (the consensus node's ``viewCallResultWith``)."""
    if static:
        raise NotAnswered()
    if selector == GET_TOKEN_EXPIRY_INFO:
        return encode(["int64", _EXPIRY], [status, _EMPTY_EXPIRY])
    if selector == GET_TOKEN_KEY:
        return encode(["int64", _KEY_VALUE], [status, KeyValue().encoded()])
    if selector == GET_TOKEN_CUSTOM_FEES:
        return encode(
            ["int64", f"{_FIXED_FEE}[]", f"{_FRACTIONAL_FEE}[]", f"{_ROYALTY_FEE}[]"], [status, [], [], []]
        )
    info_type, fungible_type, nft_type = _info_types(selector)
    empty = _EMPTY_INFO_V2 if selector in _V2 else _EMPTY_INFO
    if selector in (GET_TOKEN_INFO, GET_TOKEN_INFO_V2):
        return encode(["int64", info_type], [status, empty])
    if selector in (GET_FUNGIBLE_TOKEN_INFO, GET_FUNGIBLE_TOKEN_INFO_V2):
        return encode(["int64", fungible_type], [status, (empty, 0)])
    empty_nft = (empty, 0, _ZERO_ADDRESS, 0, b"", _ZERO_ADDRESS)
    return encode(["int64", nft_type], [status, empty_nft])


def token_info_view(
    data: bytes, token: TokenState, detail: TokenDetail, nft: NftState | None, static: bool = False
) -> bytes:
    """The answer of one of :data:`SELECTORS` for ``token`` (``nft``: the serial ``getNonFungibleTokenInfo``
    asks for, looked up by the caller; ``static``: called by STATICCALL); raises :class:`NotAnswered`."""
    selector = data[:4]
    if selector == GET_TOKEN_EXPIRY_INFO:
        return encode(["int64", _EXPIRY], [SUCCESS, _expiry(detail)])
    if selector == GET_TOKEN_KEY:
        key_type = abi.word(data, 1)
        key = detail.keys[KEY_TYPES.index(key_type)] if key_type in KEY_TYPES else None
        if key is None:
            return failed_view(selector, KEY_NOT_PROVIDED, static)
        return encode(["int64", _KEY_VALUE], [SUCCESS, key.encoded()])
    if selector == GET_TOKEN_CUSTOM_FEES:
        fixed, fractional, royalty = detail.fees.encoded()
        return encode(
            ["int64", f"{_FIXED_FEE}[]", f"{_FRACTIONAL_FEE}[]", f"{_ROYALTY_FEE}[]"],
            [SUCCESS, fixed, fractional, royalty],
        )
    info_type, fungible_type, nft_type = _info_types(selector)
    v2 = selector in _V2
    if selector in (GET_TOKEN_INFO, GET_TOKEN_INFO_V2):
        return encode(["int64", info_type], [SUCCESS, _token_info(token, detail, v2)])
    if selector in (GET_FUNGIBLE_TOKEN_INFO, GET_FUNGIBLE_TOKEN_INFO_V2):  # of an NFT too (its decimals, 0)
        return encode(["int64", fungible_type], [SUCCESS, (_token_info(token, detail, v2), token.decimals)])
    if selector in NFT_INFO_SELECTORS:
        serial = _int64(abi.word(data, 1))
        if serial is None:
            raise NotAnswered()
        status = SUCCESS
        if nft is None:  # no such serial (a fungible token has none): the code, the treasury as owner, no NFT
            if static:
                raise NotAnswered()
            status, nft = (
                INVALID_TOKEN_NFT_SERIAL_NUMBER,
                NftState(owner=detail.treasury, spender=_ZERO, metadata=b""),
            )
        if nft.owner is None:
            raise NotAnswered()  # no owner account: the consensus node's priorityAddressOf fails (requireNonNull)
        info = (_token_info(token, detail, v2), serial, nft.owner, nft.created_second, nft.metadata, nft.spender)
        return encode(["int64", nft_type], [status, info])
    raise NotAnswered()
