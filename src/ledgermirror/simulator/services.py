"""Consensus, schedule and utility generators: topics and their messages (sequence numbers and v3 running
hashes), scheduled transfers signed later and executed as a child, PRNG."""

from __future__ import annotations

import hashlib
import struct

from ledgermirror.simulator import picks
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.hapi import set_timestamp
from ledgermirror.simulator.ledger_state import Schedule, Topic
from ledgermirror.simulator.picks import HBAR

RUNNING_HASH_VERSION = 3
_TOPIC_MEMOS = ("price feed", "audit log", "chat", "supply chain events", "votes", "iot readings")
_MESSAGES = ("temperature=21.5", "order shipped", "hello", "vote: yes", "checkpoint", "price 0.0521", "ping")


def topic_running_hash(
    previous: bytes, *, payer: int, topic: int, consensus: int, sequence: int, message: bytes
) -> bytes:
    """The v3 topic running hash after one more message (shard and realm 0)."""
    seconds, nanos = divmod(consensus, 1_000_000_000)
    data = previous + struct.pack(
        ">qqqqqqqqiq", RUNNING_HASH_VERSION, 0, 0, payer, 0, 0, topic, seconds, nanos, sequence
    )
    return hashlib.sha384(data + hashlib.sha384(message).digest()).digest()


def create_topic(em: Emitter, admin_keyed: bool | None = None) -> bool:
    payer = picks.payer(em, 100 * HBAR)
    if payer is None:
        return False
    num = em.ledger.new_num()
    body = em.hapi.bodies["consensus_create_topic"].ConsensusCreateTopicTransactionBody(
        memo=em.rng.choice(_TOPIC_MEMOS), autoRenewAccount=em.account_id(payer)
    )
    body.autoRenewPeriod.seconds = 7_776_000
    key = em.ledger.accounts[payer].key
    admin = key if (admin_keyed if admin_keyed is not None else em.rng.random() < 0.5) else None
    restricted = key if em.rng.random() < 0.3 else None
    if admin:
        body.adminKey.CopyFrom(picks.key_message(em, admin))
    if restricted:
        body.submitKey.CopyFrom(picks.key_message(em, restricted))
    record = em.new_record()
    record.receipt.topicID.topicNum = num
    stamp = em.emit(Tx(payer, "consensusCreateTopic", body, picks.fee(em, "consensusCreateTopic")), record)
    topic = Topic(num, body.memo, stamp, restricted, admin, payer)
    em.ledger.topics[num] = topic
    em.ledger.live_topics.append(topic)
    em.ledger.accounts[payer].pinned = True
    return True


def submit_message(em: Emitter, chunks: int | None = None) -> bool:
    """One message, or (one in ten, or ``chunks``) a large one in 2-3 chunks: one transaction per chunk,
    each with its own sequence number, all naming the first chunk's transaction id."""
    topic = picks.sample(em, em.ledger.live_topics)
    if topic is None:
        return False
    payer = topic.auto_renew_account if topic.submit_key else picks.payer(em, 10 * HBAR)
    if payer is None or em.ledger.balance(payer) < 10 * HBAR:
        return False
    total = chunks if chunks is not None else (em.rng.choice((2, 3)) if em.rng.random() < 0.1 else 1)
    first_id = None
    for number in range(1, total + 1):
        message = f"{em.rng.choice(_MESSAGES)} #{topic.sequence_number + 1}".encode()
        body = em.hapi.bodies["consensus_submit_message"].ConsensusSubmitMessageTransactionBody(message=message)
        body.topicID.topicNum = topic.num
        valid_start = em.valid_start(payer, em.peek())
        if total > 1:
            body.chunkInfo.total, body.chunkInfo.number = total, number
            if first_id is None:
                first_id = em.hapi.basic.TransactionID(accountID=em.account_id(payer))
                set_timestamp(first_id.transactionValidStart, valid_start)
            body.chunkInfo.initialTransactionID.CopyFrom(first_id)
        sequence = topic.sequence_number + 1
        running = topic_running_hash(
            topic.running_hash,
            payer=payer,
            topic=topic.num,
            consensus=em.peek(),
            sequence=sequence,
            message=message,
        )
        record = em.new_record()
        record.receipt.topicSequenceNumber = sequence
        record.receipt.topicRunningHash = running
        record.receipt.topicRunningHashVersion = RUNNING_HASH_VERSION
        fee = picks.fee(em, "consensusSubmitMessage")
        stamp = em.emit(Tx(payer, "consensusSubmitMessage", body, fee, valid_start=valid_start), record)
        topic.sequence_number = sequence
        topic.running_hash = running
        topic.last_message_timestamp = stamp
        topic.chunks += total > 1
    return True


def create_schedule(em: Emitter) -> bool:
    """A transfer from another account, scheduled by the payer (who will pay its fee); it executes when the
    sender signs (:func:`sign_schedule`)."""
    creator = picks.payer(em, 200 * HBAR)
    sender = picks.payer(em, 200 * HBAR, exclude=(creator or 0,))
    receiver = picks.other_user(em, sender or 0)
    if creator is None or sender is None or receiver is None:
        return False
    hapi = em.hapi
    amount = em.rng.randrange(1, 20) * HBAR
    scheduled_fee = 2 * picks.FEES["cryptoTransfer"]
    inner = hapi.schedulable.SchedulableTransactionBody(transactionFee=scheduled_fee, memo="scheduled payment")
    for account, value in sorted({sender: -amount, receiver: amount}.items()):
        inner.cryptoTransfer.transfers.accountAmounts.add(accountID=em.account_id(account), amount=value)
    num = em.ledger.new_num()
    admin_key = picks.ed25519_key(em)
    body = hapi.bodies["schedule_create"].ScheduleCreateTransactionBody(
        scheduledTransactionBody=inner, memo=f"schedule {num}", adminKey=picks.key_message(em, admin_key)
    )
    valid_start = em.valid_start(creator, em.peek())
    record = em.new_record()
    record.receipt.scheduleID.scheduleNum = num
    scheduled_id = record.receipt.scheduledTransactionID
    scheduled_id.accountID.accountNum = creator
    scheduled_id.scheduled = True
    set_timestamp(scheduled_id.transactionValidStart, valid_start)
    fee = picks.fee(em, "scheduleCreate")
    stamp = em.emit(Tx(creator, "scheduleCreate", body, fee, valid_start=valid_start), record)
    schedule = Schedule(
        num,
        creator,
        creator,
        body.memo,
        stamp,
        sender,
        receiver,
        amount,
        scheduled_fee,
        valid_start,
        [creator],
        admin_key,
        inner.SerializeToString(),
        [em.last_signature],
    )
    em.ledger.schedules[num] = schedule
    em.ledger.pending_schedules.append(schedule)
    for account in (creator, sender, receiver):
        em.ledger.accounts[account].pinned = True
    return True


def sign_schedule(em: Emitter) -> bool:
    """The sender signs a pending schedule; the transfer runs right after as a scheduled child record."""
    pending = em.ledger.pending_schedules
    if not pending:
        return False
    schedule = pending[0] if em.rng.random() < 0.7 else em.rng.choice(pending)
    ledger = em.ledger
    if ledger.balance(schedule.sender) < 10 * HBAR or ledger.balance(schedule.creator) < 10 * HBAR:
        return False
    hapi = em.hapi
    body = hapi.bodies["schedule_sign"].ScheduleSignTransactionBody()
    body.scheduleID.scheduleNum = schedule.num
    record = em.new_record()
    scheduled_id = record.receipt.scheduledTransactionID
    scheduled_id.accountID.accountNum = schedule.creator
    scheduled_id.scheduled = True
    set_timestamp(scheduled_id.transactionValidStart, schedule.valid_start)
    em.emit(Tx(schedule.sender, "scheduleSign", body, picks.fee(em, "scheduleSign")), record)
    schedule.signers.append(schedule.sender)
    schedule.signatures.append(em.last_signature)
    transfer = hapi.bodies["crypto_transfer"].CryptoTransferTransactionBody()
    moves = {schedule.sender: -schedule.amount, schedule.receiver: schedule.amount}
    for account in sorted(moves):
        transfer.transfers.accountAmounts.add(accountID=em.account_id(account), amount=moves[account])
    fee = picks.fee(em, "cryptoTransfer")
    enough = (
        ledger.balance(schedule.sender) - (fee if schedule.sender == schedule.creator else 0) > schedule.amount
    )
    child = em.new_record()
    child.scheduleRef.scheduleNum = schedule.num
    tx = Tx(
        schedule.creator,
        "cryptoTransfer",
        transfer,
        fee,
        status="SUCCESS" if enough else "INSUFFICIENT_ACCOUNT_BALANCE",
        hbar=moves if enough else {},
        memo="scheduled payment",
        scheduled=True,
        valid_start=schedule.valid_start,
        max_fee=schedule.scheduled_fee,
    )
    schedule.executed_timestamp = em.emit(tx, child)
    pending.remove(schedule)
    schedule.executed_result = tx.status
    return True


def update_or_delete_topic(em: Emitter) -> bool:
    """The admin of a topic with an admin key changes its memo, or (one time in four) deletes it."""
    topic = picks.sample(em, em.ledger.live_topics, lambda t: t.admin_key is not None)
    if topic is None:
        return False
    payer = topic.auto_renew_account
    if payer is None or em.ledger.balance(payer) < 50 * HBAR:
        return False
    if em.rng.random() < 0.25 and len(em.ledger.live_topics) > 1:
        body = em.hapi.bodies["consensus_delete_topic"].ConsensusDeleteTopicTransactionBody()
        body.topicID.topicNum = topic.num
        em.emit(Tx(payer, "consensusDeleteTopic", body, picks.fee(em, "consensusDeleteTopic")))
        topic.deleted = True
        em.ledger.live_topics.remove(topic)
        return True
    body = em.hapi.bodies["consensus_update_topic"].ConsensusUpdateTopicTransactionBody()
    body.topicID.topicNum = topic.num
    body.memo.value = f"{em.rng.choice(_TOPIC_MEMOS)} (updated)"
    em.emit(Tx(payer, "consensusUpdateTopic", body, picks.fee(em, "consensusUpdateTopic")))
    topic.memo = body.memo.value
    return True


def delete_schedule(em: Emitter) -> bool:
    """The creator deletes a schedule still pending (the creator holds its admin key)."""
    pending = em.ledger.pending_schedules
    if len(pending) < 2:
        return False
    schedule = pending[-1]
    if em.ledger.balance(schedule.creator) < 50 * HBAR:
        return False
    body = em.hapi.bodies["schedule_delete"].ScheduleDeleteTransactionBody()
    body.scheduleID.scheduleNum = schedule.num
    schedule.deleted_timestamp = em.emit(
        Tx(schedule.creator, "scheduleDelete", body, picks.fee(em, "scheduleDelete"))
    )
    pending.remove(schedule)
    return True


def prng(em: Emitter) -> bool:
    payer = picks.payer(em, 10 * HBAR)
    if payer is None:
        return False
    body = em.hapi.bodies["util_prng"].UtilPrngTransactionBody()
    record = em.new_record()
    if em.rng.random() < 0.5:
        body.range = em.rng.choice((10, 100, 1000, 2**31 - 1))
        record.prng_number = em.rng.randrange(body.range)
    else:
        record.prng_bytes = em.rng.randbytes(48)
    em.emit(Tx(payer, "util_prng", body, picks.fee(em, "util_prng")), record)
    return True
