"""The rows every record item writes whatever its type (``EntityRecordItemListener.onItem``, reference §1).

Order per item (the reference's ``onItem``): the item's handler (its ``entity_id`` and type-specific rows),
then, always (even on failure), crypto transfers with their balance changes and staking reward transfers; on
success or FAIL_INVALID: automatic token associations (not for TokenCreate), token transfers, NFT transfers
(with their synthetic ERC-20/721 ``Transfer`` logs, ``synthetic_logs``) and assessed custom fees; then the
registry's common steps (the contract result and its logs: their log indexes follow the synthetic logs', as
in the reference); then the ``transaction`` row and its ``transaction_hash`` row (every type but
ConsensusSubmitMessage), and ``entity_transaction`` rows when the batch keeps them.
"""

from __future__ import annotations

from typing import Any

from ledgermirror.importer.handlers import ids, synthetic_logs
from ledgermirror.importer.handlers.batch import RECORD_COLUMNS, Batch
from ledgermirror.importer.handlers.context import FileState, ItemContext
from ledgermirror.importer.handlers.item import Item
from ledgermirror.importer.handlers.registry import COMMON, HANDLERS
from ledgermirror.importer.items_read_ahead import hbar_transfers, transaction_head
from ledgermirror.ledger.transaction_codes import type_number

CONSENSUS_SUBMIT_MESSAGE = type_number("CONSENSUSSUBMITMESSAGE")
TOKEN_CREATE = "tokenCreation"
ATOMIC_BATCH = type_number("ATOMICBATCH")
ERRATA_END = 1577836799000000000
"""Failed CryptoTransfers before 2019-12-31T23:59:59Z list spurious transfers (errata DELETE)."""
NFT_TREASURY_WILDCARD = -1


def _in_order(table: str, *names: str) -> tuple[str, ...]:
    """``names``, the columns of ``table``'s value rows in the model's order (``batch.RECORD_COLUMNS``), which
    the literals of this module write by position: a keyword call of the table's record maker costs up to
    thirteen times as much (the ``transaction`` row: 1.16 µs against 0.09), and these rows are made for every
    transaction (``crypto_transfer``: about four). An error on import when the model's columns differ."""
    if RECORD_COLUMNS[table] != names:
        raise RuntimeError(f"{table}'s columns are now {RECORD_COLUMNS[table]}: update common.py")
    return names


_TRANSACTION_COLUMNS = _in_order(
    "transaction",
    *("consensus_timestamp", "type", "result", "payer_account_id", "valid_start_ns", "valid_duration_seconds"),
    *("node_account_id", "entity_id", "initial_balance", "max_fee", "charged_tx_fee", "memo", "transaction_hash"),
    *("transaction_bytes", "scheduled", "nonce", "parent_consensus_timestamp", "errata", "index", "nft_transfer"),
    *("itemized_transfer", "transaction_record_bytes", "max_custom_fees", "batch_key", "inner_transactions"),
    *("high_volume", "congestion_pricing_multiplier", "high_volume_pricing_multiplier"),
)
_INNER_TRANSACTIONS = _TRANSACTION_COLUMNS.index("inner_transactions")
_CRYPTO_TRANSFER_COLUMNS = _in_order(
    "crypto_transfer", "entity_id", "consensus_timestamp", "amount", "payer_account_id", "is_approval", "errata"
)
_TOKEN_TRANSFER_COLUMNS = _in_order(
    "token_transfer", "token_id", "account_id", "consensus_timestamp", "amount", "payer_account_id", "is_approval"
)
_TRANSACTION_HASH_COLUMNS = _in_order(
    "transaction_hash", "consensus_timestamp", "hash", "payer_account_id", "hash_suffix"
)
ENTITY_TRANSACTION_EXCLUDED = frozenset({98, 800, 801})
"""The fee-collection accounts the reference leaves out of ``entity_transaction`` (0.0.98, 0.0.800, 0.0.801)."""


def rows_of_item(item: Item, batch: Batch, file: FileState) -> None:
    """The item's rows; ``file`` is what the items of its file share."""
    context = ItemContext(transaction_row(item), file, entity_transactions=batch.entity_transactions)
    handler = HANDLERS.get(item.body_name)
    if handler is not None:
        handler(item, batch, context)
    crypto_transfers(item, batch, context)
    record = item.record  # below, a step is called only when the record holds what it reads
    if record.paid_staking_rewards:
        staking_rewards(item, batch)
    if item.successful_or_fail_invalid:
        if item.body_name != TOKEN_CREATE and record.automatic_token_associations:
            automatic_associations(item, batch)
        if record.tokenTransferLists:
            token_transfers(item, batch, context)
        if record.assessed_custom_fees:
            assessed_custom_fees(item, batch)
    for step in COMMON:
        step(item, batch, context)
    if context.transaction_value("batch_key") is not None or item.type == ATOMIC_BATCH:
        _inner_transaction(item, batch, context)
    batch.records("transaction").append(context.transaction)
    transaction_hash(item, batch, context.transaction_value("transaction_hash"))
    if batch.entity_transactions:
        entity_transactions(item, batch, context)


def transaction_row(item: Item) -> list[Any]:
    """The ``transaction`` row (§1.4) before the handler sets ``entity_id`` and the like: every column's value
    in the model's order (:data:`_TRANSACTION_COLUMNS`), in a list (the handlers complete it;
    ``ItemContext.set_transaction``). The columns not set here are NULL until a handler sets them. The values
    the body and the record give are those the unpacking process read (:attr:`Item.head`), else
    ``items_read_ahead.transaction_head`` of the parsed messages."""
    head = item.head
    if head is None:
        head = transaction_head(item.body, item.record, item.transaction_id)
    (
        valid_start,
        duration,
        node,
        max_fee,
        charged,
        memo,
        digest,
        scheduled,
        nonce,
        custom_fees,
        batch_key,
        high_volume,
        multiplier,
    ) = head
    return [  # the columns of _TRANSACTION_COLUMNS, in order
        item.consensus_timestamp,
        item.type,
        item.result,
        item.payer_account_id,
        valid_start,  # valid_start_ns
        duration,  # valid_duration_seconds
        node,  # node_account_id
        None,  # entity_id
        0,  # initial_balance
        max_fee,
        charged,  # charged_tx_fee
        memo,
        digest,  # transaction_hash
        None,  # transaction_bytes
        scheduled,
        nonce,
        item.parent_consensus_timestamp,
        None,  # errata
        item.index,
        None,  # nft_transfer
        None,  # itemized_transfer
        None,  # transaction_record_bytes
        custom_fees,  # max_custom_fees
        batch_key,
        None,  # inner_transactions
        high_volume,
        None,  # congestion_pricing_multiplier
        multiplier,  # high_volume_pricing_multiplier
    ]


def _inner_transaction(item: Item, batch: Batch, context: ItemContext) -> None:
    """An atomic batch's inner transaction (batch key, nonce 0) is listed on its parent's row (NULL until the
    first one is: the reference's ``addInnerTransaction``)."""
    if item.body.HasField("batch_key") and item.transaction_id.nonce == 0:
        parent = context.file.atomic_batches.get(item.parent_consensus_timestamp or -1)
        if parent is not None:
            listed = parent[_INNER_TRANSACTIONS] or []
            listed.extend((item.payer_account_id, context.transaction_value("valid_start_ns")))
            parent[_INNER_TRANSACTIONS] = listed
    if item.type == ATOMIC_BATCH:
        context.file.atomic_batches[item.consensus_timestamp] = context.transaction


def crypto_transfers(item: Item, batch: Batch, context: ItemContext) -> None:
    """§1.5: one row per record transfer, even on failure; each adds to the account's balance. A transfer is an
    approved debit when the body lists the same (account, amount) as one (its handler's
    ``ItemContext.approved_debits``). The transfers are those the unpacking process read ahead
    (:attr:`Item.transfers`), else the record's."""
    approved: set[tuple[int, int]] | frozenset[tuple[int, int]] = frozenset()
    errata: set[tuple[int, int]] = set()
    if item.body_name == "cryptoTransfer":
        if context.approved_debits:
            approved = set(context.approved_debits)
        if not item.successful and item.consensus_timestamp < ERRATA_END:
            errata = {
                (ids.account_id(entry.accountID), entry.amount)
                for entry in item.body.cryptoTransfer.transfers.accountAmounts
            }
    stamp = item.consensus_timestamp
    payer = item.payer_account_id
    rows = batch.records("crypto_transfer")
    balances = batch.entity_balances()
    touched = context.touched if batch.entity_transactions else None
    transfers = item.transfers
    for account, amount in hbar_transfers(item.record) if transfers is None else transfers:
        rows.append(  # the columns of _CRYPTO_TRANSFER_COLUMNS, in order
            (
                account,
                stamp,
                amount,
                payer,
                bool(approved) and (account, amount) in approved,
                "DELETE" if errata and (account, amount) in errata else None,
            )
        )
        held = balances.get(account)  # batch.add_delta inline: it runs for every transfer
        if held is None:
            balances[account] = [amount, stamp]
        else:
            held[0] += amount
            held[1] = stamp
        if touched is not None and account:
            touched.add(account)


def staking_rewards(item: Item, batch: Batch) -> None:
    """§1.8: paid staking rewards, even on failure; the receiver earns again from the day that ends next: its
    ``stake_period_start`` moves there unless the batch already set it to that day or later (the reference's
    ``onStakingRewardTransfer``: only a strictly later start is written)."""
    rewards = item.record.paid_staking_rewards
    if not rewards:
        return
    stamp = item.consensus_timestamp
    period_start = ids.epoch_day(stamp) - 1
    for entry in rewards:
        account = ids.account_id(entry.accountID)
        batch.insert(
            "staking_reward_transfer",
            {
                "account_id": account,
                "amount": entry.amount,
                "consensus_timestamp": stamp,
                "payer_account_id": item.payer_account_id,
            },
        )
        held = batch.latest("entity", account)
        current = held.get("stake_period_start") if held is not None else None
        if current is not None and current >= period_start:
            continue
        batch.upsert(
            "entity", {**ids.parts(account), "stake_period_start": period_start, "timestamp_range": stamp}
        )


def automatic_associations(item: Item, batch: Batch) -> None:
    """§1.10: each automatic association starts a ``token_account`` at balance 0."""
    stamp = item.consensus_timestamp
    for association in item.record.automatic_token_associations:
        batch.upsert(
            "token_account",
            {
                "account_id": ids.account_id(association.account_id),
                "token_id": ids.token_id(association.token_id),
                "associated": True,
                "automatic_association": True,
                "balance": 0,
                "balance_timestamp": stamp,
                "created_timestamp": stamp,
                "timestamp_range": stamp,
            },
        )


def _body_token_transfers(item: Item) -> dict[int, Any]:
    if item.body_name != "cryptoTransfer":
        return {}
    return {ids.token_id(entry.token): entry for entry in item.body.cryptoTransfer.tokenTransfers}


def _token_approval(body_list: Any, account: int, amount: int) -> bool:
    """§1.6, for a debit (``amount`` < 0) of a token the body lists (``body_list``): the body's flag of the same
    (account, amount), else any approved entry of the account (a credit, or a token the body does not list, is
    never an approval: :func:`token_transfers` checks that before the call)."""
    same_account = [entry for entry in body_list.transfers if ids.account_id(entry.accountID) == account]
    for entry in same_account:
        if entry.amount == amount:
            return bool(entry.is_approval)
    return any(entry.is_approval for entry in same_account)


def token_transfers(item: Item, batch: Batch, context: ItemContext) -> None:
    """§1.6, §1.7: fungible ``token_transfer`` rows and their balances; NFT transfers as the transaction's
    ``nft_transfer`` JSON, ownership updates of ``nft`` and ±1 balances."""
    token_lists = item.record.tokenTransferLists
    if not token_lists:
        return
    stamp = item.consensus_timestamp
    payer = item.payer_account_id
    body_lists = _body_token_transfers(item)
    nft_transfers: list[dict[str, Any]] = []
    rows = batch.records("token_transfer")
    balances = batch.token_balances()
    touch = context.touch if batch.entity_transactions else None
    account_id = ids.account_id
    for token_list in token_lists:
        token = ids.token_id(token_list.token)
        body_list = body_lists.get(token)
        transfers = token_list.transfers
        for entry in transfers:
            account = account_id(entry.accountID)
            amount = entry.amount
            rows.append(  # the columns of _TOKEN_TRANSFER_COLUMNS, in order
                (
                    token,
                    account,
                    stamp,
                    amount,
                    payer,
                    amount < 0 and body_list is not None and _token_approval(body_list, account, amount),
                )
            )
            held = balances.get((account, token))  # batch.add_delta inline (Batch.add_token_balance)
            if held is None:
                balances[account, token] = [amount, stamp]
            else:
                held[0] += amount
                held[1] = stamp
        if touch is not None:
            touch(token, *(account_id(entry.accountID) for entry in transfers))
        if transfers:
            synthetic_logs.fungible_transfers(item, batch, context, token, transfers)
        for transfer in token_list.nftTransfers:
            nft_transfers.append(_nft_transfer(item, batch, context, token, transfer, body_list=body_list))
    if nft_transfers:
        context.set_transaction(nft_transfer=nft_transfers)


def _nft_transfer(
    item: Item, batch: Batch, context: ItemContext, token: int, transfer: Any, *, body_list: Any
) -> dict[str, Any]:
    stamp = item.consensus_timestamp
    sender = ids.account_id(transfer.senderAccountID)
    receiver = ids.account_id(transfer.receiverAccountID)
    serial = transfer.serialNumber
    approval = body_list is not None and any(
        entry.is_approval
        and entry.serialNumber == serial
        and ids.account_id(entry.senderAccountID) == sender
        and ids.account_id(entry.receiverAccountID) == receiver
        for entry in body_list.nftTransfers
    )
    context.touch(sender, receiver)
    if serial != NFT_TREASURY_WILDCARD:
        if receiver:
            batch.upsert(
                "nft",
                {"token_id": token, "serial_number": serial, "account_id": receiver, "timestamp_range": stamp},
            )
            batch.add_token_balance(receiver, token, 1, stamp)
        if sender:
            batch.add_token_balance(sender, token, -1, stamp)
    synthetic_logs.nft_transfer(item, batch, context, token, (sender, receiver), serial=serial)
    return {
        "is_approval": approval,
        "receiver_account_id": ids.nullable(receiver),
        "sender_account_id": ids.nullable(sender),
        "serial_number": serial,
        "token_id": token,
    }


def assessed_custom_fees(item: Item, batch: Batch) -> None:
    """§1.9: one row per assessed custom fee of the record."""
    for fee in item.record.assessed_custom_fees:
        batch.insert(
            "assessed_custom_fee",
            {
                "amount": fee.amount,
                "collector_account_id": ids.account_id(fee.fee_collector_account_id),
                "consensus_timestamp": item.consensus_timestamp,
                "token_id": ids.token_id(fee.token_id) if fee.HasField("token_id") else None,
                "effective_payer_account_ids": [ids.account_id(p) for p in fee.effective_payer_account_id],
                "payer_account_id": item.payer_account_id,
            },
        )


def transaction_hash(item: Item, batch: Batch, digest: bytes) -> None:
    """§1.11: the record hash (``digest``, as the ``transaction`` row holds it) split into its first 32 bytes
    and the rest (not for ConsensusSubmitMessage)."""
    if item.type == CONSENSUS_SUBMIT_MESSAGE:
        return
    if len(digest) not in (32, 48):
        return
    batch.records("transaction_hash").append(  # the columns of _TRANSACTION_HASH_COLUMNS, in order
        (item.consensus_timestamp, digest[:32], item.payer_account_id, digest[32:] or None)
    )


def entity_transactions(item: Item, batch: Batch, context: ItemContext) -> None:
    """§1.13 (off by default): one row per distinct entity the item touches."""
    context.touch(
        item.payer_account_id, context.transaction_value("node_account_id"), context.transaction_value("entity_id")
    )
    for entity_id in sorted(context.touched):
        if ids.parts(entity_id)["num"] in ENTITY_TRANSACTION_EXCLUDED:
            continue
        batch.insert(
            "entity_transaction",
            {
                "consensus_timestamp": item.consensus_timestamp,
                "entity_id": entity_id,
                "payer_account_id": item.payer_account_id,
                "result": item.result,
                "type": item.type,
            },
        )
