"""The mirror's state as of a block, as ``POST /api/v1/contracts/call``'s EVM asks for it: each account, storage
slot, block hash, token, token balance or allowance and the exchange rate read once per request from the
request's pinned database (upstream-web3.md §2). The worker process asks with ``(what, *arguments)`` tuples
(``evm/worker.py``); :meth:`MirrorState.answer` reads and answers them."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from ledgermirror.api.context import AppContext
from ledgermirror.api.resources.contracts import contract_call_query as q
from ledgermirror.api.resources.network import system_files
from ledgermirror.db.sql import Statement, template
from ledgermirror.evm.calls import long_zero_num
from ledgermirror.evm.exchange_rate import DEFAULT_RATE
from ledgermirror.evm.state import AccountState
from ledgermirror.evm.token_facade import NftState, TokenState, proxy_code
from ledgermirror.evm.token_info import CustomFees, FixedFee, FractionalFee, KeyValue, RoyaltyFee, TokenDetail
from ledgermirror.ledger.entity_id import encode_entity_id
from ledgermirror.ledger.int64 import INT64_MAX
from ledgermirror.ledger.protobuf import hapi, hapi_module
from ledgermirror.ledger.system_files import EXCHANGE_RATE_FILE, decode_exchange_rates

NANOS_PER_SECOND = 10**9
DEFAULT_AUTO_RENEW_PERIOD = 7_776_000
"""A token's auto-renew period when its entity has none (the reference's ``Utils.DEFAULT_AUTO_RENEW_PERIOD``)."""
DEFAULT_EXPIRY_SECOND = 4_102_444_800
"""2100-01-01 UTC: a token's expiry when its entity has neither an expiry nor a creation time and period (the
reference's ``DEFAULT_EXPIRY_TIMESTAMP``, midnight in the JVM's zone, UTC in its images)."""
LEDGER_IDS = {295: "0x00", 296: "0x01", 297: "0x02"}
"""``TokenInfo.ledgerId`` by chain id (mainnet, testnet, previewnet); another network: ``0x03``."""
_KEY_COLUMNS = ("admin_key", "kyc_key", "freeze_key", "wipe_key", "supply_key", "fee_schedule_key", "pause_key")
"""The key of each of ``evm/token_info.KEY_TYPES``, in its order."""
MINIMUM_ACCOUNT_BALANCE = 10**17
"""Accounts below this many tinybars are reported with it (the reference's ``evm.minimumAccountBalance``), so a
call never fails for lack of funds."""
TREASURY_NUM = 2
KYC_GRANTED = 1
KYC_REVOKED = 2
FROZEN = 1
"""``freeze_status`` of a frozen relationship (1 FROZEN, 2 UNFROZEN, 0 none)."""
"""``token.kyc_status`` of a token whose relationships start with KYC granted (1 GRANTED, 2 REVOKED, 0 none)."""


def _fee_list(value: Any) -> list[dict[str, Any]]:
    """A JSONB fee list as asyncpg returns it (text), or ``[]``."""
    loaded = json.loads(value) if isinstance(value, str) else value
    return [item for item in loaded if isinstance(item, dict)] if isinstance(loaded, list) else []


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | str) and str(value).lstrip("-").isdigit() else 0


def _contract_address(contract: Any) -> bytes:
    """A HAPI ``ContractID`` as an address: its EVM address, else long-zero."""
    if contract.HasField("evm_address"):
        evm_address: bytes = bytes(contract.evm_address)[-20:].rjust(20, b"\0")
        return evm_address
    return (int(contract.contractNum) & ((1 << 64) - 1)).to_bytes(20, "big")


def key_value(raw: bytes | None) -> KeyValue | None:
    """A token key (a serialized HAPI ``Key``) as ``KeyValue``; None when there is none (or it does not decode).
    A key list or threshold key has all fields empty, as the consensus node answers it."""
    if not raw:
        return None
    classes = hapi()
    try:
        key = hapi_module("services.basic_types_pb2").Key.FromString(bytes(raw))
    except classes.DecodeError:
        return None
    kind = key.WhichOneof("key")
    if kind == "ed25519":
        return KeyValue(ed25519=bytes(key.ed25519))
    if kind == "ECDSA_secp256k1":
        return KeyValue(ecdsa_secp256k1=bytes(key.ECDSA_secp256k1))
    if kind == "contractID":
        return KeyValue(contract=_contract_address(key.contractID))
    if kind == "delegatable_contract_id":
        return KeyValue(delegatable_contract=_contract_address(key.delegatable_contract_id))
    return KeyValue()


def hash32(text: str) -> bytes:
    """The first 32 bytes of a ``record_file.hash`` (hex), as the EVM sees a block hash."""
    return bytes.fromhex(text[:64].ljust(64, "0"))


class UnknownQuestion(Exception):
    """A worker asked for something this reader does not know (a bug, never the client's doing)."""


class MirrorState:
    """The state at ``at`` (a block's ``consensus_end``; None: the current tables)."""

    def __init__(self, ctx: AppContext, at: int | None) -> None:
        self._ctx = ctx
        self._at = at
        self._entities: dict[bytes, tuple[int, str, AccountState] | None] = {}
        self._tokens: dict[bytes, TokenState | None] = {}
        self.balances: dict[bytes, int] = {}
        """Each account's tinybars as the mirror holds them, before the minimum-balance rule (``/prestate``)."""
        self._aliases: dict[bytes, bytes] = {}
        """The EVM address alias (or ``b""``) of each entity :meth:`entity` found, by the address asked."""

    async def answer(self, question: tuple[Any, ...]) -> Any:
        what, *arguments = question
        handlers: dict[str, Callable[..., Awaitable[Any]]] = {
            "account": self.account,
            "slot": self.slot,
            "block_hash": self.block_hash,
            "token": self.token,
            "token_balance": self.token_balance,
            "token_allowance": self.token_allowance,
            "exchange_rate": self.exchange_rate,
            "nft": self.nft,
            "token_relation": self.token_relation,
            "approved_for_all": self.approved_for_all,
            "token_detail": self.token_detail,
            "account_alias": self.account_alias,
            "hbar_allowance": self.hbar_allowance,
            "token_associated": self.token_associated,
        }
        handler = handlers.get(what)
        if handler is None:
            raise UnknownQuestion(repr(what))
        return await handler(*arguments)

    def _encoded(self, num: int) -> int:
        return encode_entity_id(self._ctx.settings.shard, self._ctx.settings.realm, num)

    def _as_of(self, latest: str, historical: str, **values: Any) -> Statement:
        if self._at is None:
            return template(latest, **values)
        return template(historical, **values, at=self._at)

    async def entity(self, address: bytes) -> tuple[int, str, AccountState] | None:
        """The account's or contract's entity id, type and state; None when the mirror has none."""
        if address not in self._entities:
            self._entities[address] = await self._fetch_entity(address)
        return self._entities[address]

    async def _fetch_entity(self, address: bytes) -> tuple[int, str, AccountState] | None:
        num = long_zero_num(address)
        if num is not None:
            statement = self._as_of(q.ACCOUNT_BY_ID, q.ACCOUNT_BY_ID_AT, id=self._encoded(num))
        else:
            statement = self._as_of(q.ACCOUNT_BY_EVM_ADDRESS, q.ACCOUNT_BY_EVM_ADDRESS_AT, address=address)
        rows = await self._ctx.database.fetch(statement)
        if not rows:
            return None
        row = rows[0]
        self._aliases[address] = bytes(row["evm_address"] or b"")
        balance = int(row["balance"] or 0)
        if self._at is not None:
            treasury = self._encoded(TREASURY_NUM)
            at_block = template(q.BALANCE_AT, treasury=treasury, id=int(row["id"]), at=self._at)
            balance = int((await self._ctx.database.fetch(at_block))[0]["balance"] or 0)
        self.balances[address] = balance
        if row["type"] == "ACCOUNT":
            balance = max(balance, MINIMUM_ACCOUNT_BALANCE)
        code = bytes(row["runtime_bytecode"] or b"") if row["type"] == "CONTRACT" else b""
        return int(row["id"]), str(row["type"]), AccountState(balance, int(row["ethereum_nonce"] or 0), code)

    async def account(self, address: bytes) -> AccountState | None:
        found = await self.entity(address)
        if found is not None:
            return found[2]
        return None if await self.token(address) is None else AccountState(0, 0, proxy_code(address))

    async def slot(self, address: bytes, key: int) -> int:
        found = await self.entity(address)
        if found is None or found[1] != "CONTRACT":
            return 0
        padded = key.to_bytes(32, "big")
        if self._at is None:
            statement = template(q.SLOTS, contract=found[0], slots=[padded])
        else:
            statement = template(q.SLOTS_AT, contract=found[0], slots=[padded.lstrip(b"\0")], at=self._at)
        rows = await self._ctx.database.fetch(statement)
        return int.from_bytes(bytes(rows[0]["value"]), "big") if rows and rows[0]["value"] is not None else 0

    async def block_hash(self, number: int) -> bytes:
        rows = await self._ctx.database.fetch(template(q.BLOCK_BY_NUMBER, number=number))
        return hash32(str(rows[0]["hash"])) if rows else b""

    async def token(self, address: bytes) -> TokenState | None:
        num = long_zero_num(address)
        if num is None:
            return None
        if address not in self._tokens:
            rows = await self._ctx.database.fetch(self._as_of(q.TOKEN, q.TOKEN_AT, id=self._encoded(num)))
            self._tokens[address] = None
            if rows:
                row = rows[0]
                self._tokens[address] = TokenState(
                    name=str(row["name"]),
                    symbol=str(row["symbol"]),
                    decimals=int(row["decimals"]),
                    total_supply=int(row["total_supply"]),
                    type=str(row["type"]),
                    freeze_default=bool(row["freeze_default"]),
                    kyc_default=row["kyc_status"] == KYC_GRANTED,
                )
        return self._tokens[address]

    def _long_zero(self, entity_id: Any) -> bytes:
        return bytes(20) if not entity_id else (int(entity_id) & ((1 << 38) - 1)).to_bytes(20, "big")

    async def token_detail(self, address: bytes) -> TokenDetail | None:
        """The token's keys, treasury, supply rules, expiry and custom fees (``evm/token_info``)."""
        num = long_zero_num(address)
        if num is None or await self.token(address) is None:
            return None
        token_id = self._encoded(num)
        rows = await self._ctx.database.fetch(self._as_of(q.TOKEN_DETAIL, q.TOKEN_DETAIL_AT, id=token_id))
        if not rows:
            return None
        row = rows[0]
        period = row["auto_renew_period"]
        expiry = row["expiration_timestamp"]
        if expiry is None:
            created = row["created_timestamp"]
            known = created is not None and period is not None
            expiry = created + period * NANOS_PER_SECOND if known else DEFAULT_EXPIRY_SECOND * NANOS_PER_SECOND
        fee_rows = await self._ctx.database.fetch(self._as_of(q.CUSTOM_FEES, q.CUSTOM_FEES_AT, id=token_id))
        return TokenDetail(
            treasury=self._long_zero(row["treasury_account_id"]),
            memo=str(row["memo"] or ""),
            supply_finite=row["supply_type"] == "FINITE",
            max_supply=int(row["max_supply"] or 0),
            paused=row["pause_status"] == "PAUSED",
            deleted=False,
            keys=tuple(key_value(row[column]) for column in _KEY_COLUMNS),
            expiry_second=int(expiry) // NANOS_PER_SECOND,
            auto_renew_account=self._long_zero(row["auto_renew_account_id"]),
            auto_renew_period=DEFAULT_AUTO_RENEW_PERIOD if period is None else int(period),
            ledger_id=LEDGER_IDS.get(self._ctx.settings.contract_call_chain_id, "0x03"),
            fees=self._fees(fee_rows[0]) if fee_rows else CustomFees(),
            metadata=bytes(row["metadata"] or b""),
            metadata_key=key_value(row["metadata_key"]),
        )

    def _fees(self, row: Any) -> CustomFees:
        fixed = tuple(
            FixedFee(
                amount=_int(fee.get("amount")),
                token=self._long_zero(fee.get("denominating_token_id")),
                use_current_token=False,
                collector=self._long_zero(fee.get("collector_account_id")),
            )
            for fee in _fee_list(row["fixed_fees"])
        )
        fractional = tuple(
            FractionalFee(
                numerator=_int(fee.get("numerator")),
                denominator=_int(fee.get("denominator")),
                minimum=_int(fee.get("minimum_amount")),
                maximum=_int(fee.get("maximum_amount")),
                net_of_transfers=bool(fee.get("net_of_transfers", False)),
                collector=self._long_zero(fee.get("collector_account_id")),
            )
            for fee in _fee_list(row["fractional_fees"])
        )
        royalty = []
        for fee in _fee_list(row["royalty_fees"]):
            given = fee.get("fallback_fee")
            fallback: dict[str, Any] = given if isinstance(given, dict) else {}
            royalty.append(
                RoyaltyFee(
                    numerator=_int(fee.get("numerator")),
                    denominator=_int(fee.get("denominator")),
                    fallback_amount=_int(fallback.get("amount")),
                    fallback_token=self._long_zero(fallback.get("denominating_token_id")),
                    collector=self._long_zero(fee.get("collector_account_id")),
                )
            )
        return CustomFees(fixed, fractional, tuple(royalty))

    async def _account_id(self, address: bytes) -> int | None:
        num = long_zero_num(address)
        if num is not None:
            return self._encoded(num)
        found = await self.entity(address)
        return None if found is None else found[0]

    async def account_alias(self, address: bytes) -> tuple[int, bytes] | None:
        """The account's entity number and EVM address alias (``b""`` without one); None without an account."""
        found = await self.entity(address)
        if found is None:
            return None
        return found[0] & ((1 << 38) - 1), self._aliases.get(address, b"")

    async def hbar_allowance(self, owner: bytes, spender: bytes) -> int:
        owner_id, spender_id = await self._account_id(owner), await self._account_id(spender)
        if owner_id is None or spender_id is None:
            return 0
        statement = self._as_of(q.HBAR_ALLOWANCE, q.HBAR_ALLOWANCE_AT, owner=owner_id, spender=spender_id)
        return await self._amount(statement, "amount")

    async def _amount(self, statement: Statement, column: str) -> int:
        rows = await self._ctx.database.fetch(statement)
        return int(rows[0][column] or 0) if rows else 0

    async def token_balance(self, token: bytes, owner: bytes) -> int:
        token_num, account = long_zero_num(token), await self._account_id(owner)
        if token_num is None or account is None:
            return 0
        token_id = self._encoded(token_num)
        return await self._amount(
            self._as_of(q.TOKEN_BALANCE, q.TOKEN_BALANCE_AT, account=account, token=token_id), "balance"
        )

    async def token_associated(self, token: bytes, account: bytes) -> bool:
        token_num, account_id = long_zero_num(token), await self._account_id(account)
        if token_num is None or account_id is None:
            return False
        token_id = self._encoded(token_num)
        statement = self._as_of(q.TOKEN_BALANCE, q.TOKEN_BALANCE_AT, account=account_id, token=token_id)
        return bool(await self._ctx.database.fetch(statement))

    async def token_allowance(self, token: bytes, owner: bytes, spender: bytes) -> int:
        token_num = long_zero_num(token)
        owner_id, spender_id = await self._account_id(owner), await self._account_id(spender)
        if token_num is None or owner_id is None or spender_id is None:
            return 0
        statement = self._as_of(
            q.TOKEN_ALLOWANCE,
            q.TOKEN_ALLOWANCE_AT,
            owner=owner_id,
            spender=spender_id,
            token=self._encoded(token_num),
        )
        return await self._amount(statement, "amount")

    async def approved_for_all(self, token: bytes, owner: bytes, operator: bytes) -> bool:
        token_num = long_zero_num(token)
        owner_id, operator_id = await self._account_id(owner), await self._account_id(operator)
        if token_num is None or owner_id is None or operator_id is None:
            return False
        statement = self._as_of(
            q.NFT_APPROVED_FOR_ALL,
            q.NFT_APPROVED_FOR_ALL_AT,
            owner=owner_id,
            spender=operator_id,
            token=self._encoded(token_num),
        )
        rows = await self._ctx.database.fetch(statement)
        return bool(rows) and rows[0]["approved_for_all"] is True

    def _address_of(self, entity_id: int, evm_address: bytes | None) -> bytes:
        """An entity's address as the EVM sees it: its EVM address, else its long-zero address."""
        if evm_address:
            return bytes(evm_address)
        return (entity_id & ((1 << 38) - 1)).to_bytes(20, "big")

    async def nft(self, token: bytes, serial: int) -> NftState | None:
        token_num = long_zero_num(token)
        if token_num is None:
            return None
        statement = self._as_of(q.NFT, q.NFT_AT, token=self._encoded(token_num), serial=serial)
        rows = await self._ctx.database.fetch(statement)
        if not rows:
            return None
        row = rows[0]
        owner = (
            None if row["owner_id"] is None else self._address_of(int(row["owner_id"]), row["owner_evm_address"])
        )
        spender = (
            bytes(20)
            if row["spender"] is None
            else self._address_of(int(row["spender"]), row["spender_evm_address"])
        )
        created = int(row["created_timestamp"] or 0) // NANOS_PER_SECOND
        return NftState(
            owner=owner,
            spender=spender,
            metadata=bytes(row["metadata"] or b""),
            created_second=created,
        )

    async def token_relation(self, token: bytes, account: bytes) -> tuple[bool, bool] | None:
        token_num, account_id = long_zero_num(token), await self._account_id(account)
        if token_num is None:
            return None
        statement = self._as_of(q.RELATION, q.RELATION_AT, token=self._encoded(token_num), account=account_id or 0)
        rows = await self._ctx.database.fetch(statement)
        if not rows:
            return None
        return rows[0]["freeze_status"] == FROZEN, rows[0]["kyc_status"] != KYC_REVOKED

    async def exchange_rate(self) -> tuple[int, int]:
        bounds = system_files.Window(upper=INT64_MAX if self._at is None else self._at)
        loaded = await system_files.load(self._ctx, EXCHANGE_RATE_FILE, bounds, decode_exchange_rates)
        current = None if loaded is None else loaded.content.current
        if current is None:
            return DEFAULT_RATE
        return current.hbar_equivalent, current.cent_equivalent
