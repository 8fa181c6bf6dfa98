"""The crypto service (reference §3.1, §1.14): accounts, allowances, approved-debit tracking."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from ledgermirror.importer.handlers import evm, hooks, ids, synthetic_logs
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import Handler, ItemContext
from ledgermirror.importer.handlers.entities import Operation, key_or_none, sanitize, upsert_entity
from ledgermirror.importer.handlers.item import Item
from ledgermirror.importer.items_read_ahead import split_transfers

ACCOUNT = "ACCOUNT"
STAKING_MINOR = 27
"""Staking fields are read from HAPI 0.27 on."""
CLEARED_STAKED_ACCOUNT = 0
CLEARED_STAKED_NODE = -1


def staking_fields(item: Item, body: Any, *, update: bool) -> dict[str, Any]:
    """decline_reward, staked_node_id / staked_account_id and stake_period_start (HAPI >= 0.27)."""
    if not item.hapi_at_least(STAKING_MINOR):
        return {}
    fields: dict[str, Any] = {}
    if update:
        if body.HasField("decline_reward"):
            fields["decline_reward"] = body.decline_reward.value
    else:
        fields["decline_reward"] = body.decline_reward
    case = body.WhichOneof("staked_id")
    if case == "staked_node_id":
        fields["staked_node_id"] = body.staked_node_id
        if update:
            fields["staked_account_id"] = CLEARED_STAKED_ACCOUNT
    elif case == "staked_account_id":
        fields["staked_account_id"] = ids.account_id(body.staked_account_id)
        if update:
            fields["staked_node_id"] = CLEARED_STAKED_NODE
    if case is not None or (update and "decline_reward" in fields):
        fields["stake_period_start"] = ids.epoch_day(item.consensus_timestamp)
    return fields


def crypto_create(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.cryptoCreateAccount
    account = ids.account_id(item.record.receipt.accountID)
    context.set_transaction(entity_id=ids.nullable(account), initial_balance=body.initialBalance)
    key = key_or_none(body, "key")
    alias = bytes(item.record.alias) or bytes(body.alias)
    if key is None and len(alias) > evm.ADDRESS_LENGTH:
        key = alias
    evm_address = bytes(item.record.evm_address) or evm.address_of_alias(alias)
    if item.successful:
        batch.aliases.learn(alias, account)
        batch.aliases.learn(evm_address, account)
    upsert_entity(
        item,
        batch,
        account,
        Operation.CREATE,
        ACCOUNT,
        balance=0,
        balance_timestamp=item.consensus_timestamp,
        key=key,
        alias=alias or None,
        evm_address=evm_address,
        auto_renew_period=body.autoRenewPeriod.seconds if body.HasField("autoRenewPeriod") else None,
        proxy_account_id=ids.account_id(body.proxyAccountID) or None if body.HasField("proxyAccountID") else None,
        max_automatic_token_associations=body.max_automatic_token_associations,
        memo=sanitize(body.memo),
        receiver_sig_required=body.receiverSigRequired,
        **staking_fields(item, body, update=False),
    )
    hooks.create_hooks(item, batch, account, body.hook_creation_details)


def crypto_update(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.cryptoUpdateAccount
    account = ids.account_id(body.accountIDToUpdate)  # not looked up: an alias updates nothing (the reference)
    context.set_transaction(entity_id=ids.nullable(account))
    receiver_sig_required = None
    if body.HasField("receiverSigRequiredWrapper"):
        receiver_sig_required = body.receiverSigRequiredWrapper.value
    elif body.receiverSigRequired:
        receiver_sig_required = True
    upsert_entity(
        item,
        batch,
        account,
        Operation.UPDATE,
        ACCOUNT,
        auto_renew_period=body.autoRenewPeriod.seconds if body.HasField("autoRenewPeriod") else None,
        expiration_timestamp=ids.nanos(body.expirationTime) if body.HasField("expirationTime") else None,
        key=key_or_none(body, "key"),
        max_automatic_token_associations=(
            body.max_automatic_token_associations.value
            if body.HasField("max_automatic_token_associations")
            else None
        ),
        memo=sanitize(body.memo.value) if body.HasField("memo") else None,
        proxy_account_id=ids.account_id(body.proxyAccountID) if body.HasField("proxyAccountID") else None,
        receiver_sig_required=receiver_sig_required,
        **staking_fields(item, body, update=True),
    )
    hooks.delete_hooks(item, batch, account, body.hook_ids_to_delete)
    hooks.create_hooks(item, batch, account, body.hook_creation_details)


def crypto_delete(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.cryptoDelete
    account = ids.account_id(body.deleteAccountID)  # not looked up (the obtainer is), as in the reference
    context.set_transaction(entity_id=ids.nullable(account))
    obtainer = batch.account_of(body.transferAccountID) if body.HasField("transferAccountID") else 0
    upsert_entity(item, batch, account, Operation.DELETE, ACCOUNT, obtainer_id=obtainer or None)


def crypto_transfer(item: Item, batch: Batch, context: ItemContext) -> None:
    """No entity; the hooks it calls (for the storage changes of their executions); the approved debits among
    its HBAR transfers (``ItemContext.approved_debits``); on success, approved debits lower the spender's
    allowances (§1.14). The body's HBAR transfers are read once for all three, unless the unpacking process read
    the approved debits (:attr:`Item.approved_debits`: then none calls a hook)."""
    body = item.body.cryptoTransfer
    approved = item.approved_debits
    hooked: list[Any] = []
    if approved is None:
        approved, hooked = split_transfers(body.transfers)
    if approved:
        context.approved_debits = approved
    token_lists = body.tokenTransfers
    if hooked or token_lists:
        hooks.hook_queue(item, batch, context, hooked)
    if not item.successful:
        return
    spender = item.payer_account_id
    for account, amount in approved:
        batch.add_allowance_debit(account, spender, amount)
    if token_lists:
        _token_allowance_debits(item, batch, token_lists)


def _token_allowance_debits(item: Item, batch: Batch, token_lists: Iterable[Any]) -> None:
    """The approved fungible token debits of a successful CryptoTransfer lower the spender's allowances (the
    spender: the payer, or the sender of the contract call that made the transfer)."""
    record = item.record
    spender = item.payer_account_id
    if record.HasField("contractCallResult") and record.contractCallResult.HasField("sender_id"):
        spender = ids.account_id(record.contractCallResult.sender_id)
    for token_list in token_lists:
        token = ids.token_id(token_list.token)
        for entry in token_list.transfers:
            if entry.is_approval and entry.amount < 0:
                batch.add_allowance_debit(ids.account_id(entry.accountID), spender, entry.amount, token)


def _latest_first(entries: Iterable[Any], key: Any) -> list[Any]:
    """The entries in reverse, the last one per key only (the reference's order)."""
    seen: set[Any] = set()
    kept = []
    for entry in reversed(list(entries)):
        identity = key(entry)
        if identity in seen:
            continue
        seen.add(identity)
        kept.append(entry)
    return kept


def _owner(item: Item, batch: Batch, message: Any) -> int | None:
    """An allowance's owner: the payer when unset; an alias looked up; None (skip) when it is not found."""
    if not message.ByteSize():
        return item.payer_account_id
    return batch.account_of(message) or None


def crypto_approve_allowance(item: Item, batch: Batch, context: ItemContext) -> None:
    if not item.successful:
        return
    body = item.body.cryptoApproveAllowance
    stamp = item.consensus_timestamp
    payer = item.payer_account_id
    for entry in _latest_first(
        body.cryptoAllowances, lambda e: (_owner(item, batch, e.owner), ids.account_id(e.spender))
    ):
        owner = _owner(item, batch, entry.owner)
        if owner is None:
            continue
        batch.upsert(
            "crypto_allowance",
            {
                "owner": owner,
                "spender": ids.account_id(entry.spender),
                "amount": entry.amount,
                "amount_granted": entry.amount,
                "payer_account_id": payer,
                "timestamp_range": stamp,
            },
        )
    token_key = lambda e: (_owner(item, batch, e.owner), ids.account_id(e.spender), ids.token_id(e.tokenId))  # noqa: E731
    for entry in _latest_first(body.tokenAllowances, token_key):
        owner = _owner(item, batch, entry.owner)
        if owner is None:
            continue
        batch.upsert(
            "token_allowance",
            {
                "owner": owner,
                "spender": ids.account_id(entry.spender),
                "token_id": ids.token_id(entry.tokenId),
                "amount": entry.amount,
                "amount_granted": entry.amount,
                "payer_account_id": payer,
                "timestamp_range": stamp,
            },
        )
        parties = (owner, ids.account_id(entry.spender))
        synthetic_logs.approval(item, batch, context, ids.token_id(entry.tokenId), parties, amount=entry.amount)
    _nft_allowances(item, batch, context, body.nftAllowances)


def _nft_allowances(item: Item, batch: Batch, context: ItemContext, entries: Iterable[Any]) -> None:
    stamp = item.consensus_timestamp
    seen_serials: set[tuple[int, int]] = set()
    approvals = _latest_first(
        [entry for entry in entries if entry.HasField("approved_for_all")],
        lambda e: (_owner(item, batch, e.owner), ids.account_id(e.spender), ids.token_id(e.tokenId)),
    )
    for entry in approvals:
        owner = _owner(item, batch, entry.owner)
        if owner is None:
            continue
        batch.upsert(
            "nft_allowance",
            {
                "owner": owner,
                "spender": ids.account_id(entry.spender),
                "token_id": ids.token_id(entry.tokenId),
                "approved_for_all": entry.approved_for_all.value,
                "payer_account_id": item.payer_account_id,
                "timestamp_range": stamp,
            },
        )
        parties = (owner, ids.account_id(entry.spender))
        approved = entry.approved_for_all.value
        synthetic_logs.approval_for_all(
            item, batch, context, ids.token_id(entry.tokenId), parties, approved=approved
        )
    for entry in reversed(list(entries)):
        owner = _owner(item, batch, entry.owner)
        if owner is None:
            continue
        token = ids.token_id(entry.tokenId)
        delegating = ids.account_id(entry.delegating_spender) if entry.HasField("delegating_spender") else 0
        for serial in entry.serial_numbers:
            if (token, serial) in seen_serials:
                continue
            seen_serials.add((token, serial))
            batch.upsert(
                "nft",
                {
                    "token_id": token,
                    "serial_number": serial,
                    "account_id": owner,
                    "spender": ids.account_id(entry.spender),
                    "delegating_spender": delegating or None,
                    "timestamp_range": stamp,
                },
            )
            synthetic_logs.nft_approval(
                item, batch, context, token, (owner, ids.account_id(entry.spender)), serial=serial
            )


def crypto_delete_allowance(item: Item, batch: Batch, context: ItemContext) -> None:
    """Each listed NFT serial gets a new state without spender (which clears ``spender`` and
    ``delegating_spender``)."""
    if not item.successful:
        return
    for entry in item.body.cryptoDeleteAllowance.nftAllowances:
        token = ids.token_id(entry.token_id)
        owner = _owner(item, batch, entry.owner) or ids.EMPTY
        for serial in entry.serial_numbers:
            batch.upsert(
                "nft", {"token_id": token, "serial_number": serial, "timestamp_range": item.consensus_timestamp}
            )
            synthetic_logs.nft_approval(item, batch, context, token, (owner, ids.EMPTY), serial=serial)


def live_hash(item: Item, batch: Batch, context: ItemContext) -> None:
    """CryptoAddLiveHash / CryptoDeleteLiveHash: the account is the entity (``live_hash`` is off by default)."""
    body = item.body.cryptoAddLiveHash if item.body_name == "cryptoAddLiveHash" else item.body.cryptoDeleteLiveHash
    account = body.liveHash.accountId if item.body_name == "cryptoAddLiveHash" else body.accountOfLiveHash
    context.set_transaction(entity_id=ids.nullable(ids.account_id(account)))


HANDLERS: Mapping[str, Handler] = MappingProxyType(
    {
        "cryptoCreateAccount": crypto_create,
        "cryptoUpdateAccount": crypto_update,
        "cryptoDelete": crypto_delete,
        "cryptoTransfer": crypto_transfer,
        "cryptoApproveAllowance": crypto_approve_allowance,
        "cryptoDeleteAllowance": crypto_delete_allowance,
        "cryptoAddLiveHash": live_hash,
        "cryptoDeleteLiveHash": live_hash,
    }
)
