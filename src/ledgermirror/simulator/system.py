"""System transactions: the node address book (files 0.0.101/0.0.102, and the bootstrap file), the exchange
rates (0.0.112) and the fee schedule (0.0.111) updated in parts, and the daily node stake update. They are
paid by the privileged system accounts and charged no fee, as on the network."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.hapi import Hapi, set_timestamp

FIRST_NODE_ACCOUNT = 3
ADDRESS_BOOK_ADMIN = 55
FEE_SCHEDULE_ADMIN = 56
EXCHANGE_RATE_ADMIN = 57
SYSTEM_ADMIN = 50
NODE_DETAILS = 101
ADDRESS_BOOK = 102
FEE_SCHEDULE = 111
EXCHANGE_RATES = 112
NODE_STAKE_TOTAL = 5_000_000_000 * 100_000_000
"""The stake of all nodes together, in tinybars (a tenth of the supply), shared equally."""
NANOS_PER_DAY = 86_400 * 1_000_000_000
REWARD_RATE = 2_000
"""Tinybars per whole hbar staked paid for a staking period (every node's ``reward_rate``)."""


def address_book(hapi: Hapi, keys: Sequence[RSAPublicKey], revision: int = 0) -> bytes:
    """A ``NodeAddressBook`` for nodes 0..N-1 on accounts 0.0.3.., their keys as hex DER, endpoints and a
    description that names the revision (so an in-stream update really changes the file)."""
    book = hapi.basic.NodeAddressBook()
    for node_id, key in enumerate(keys):
        der = key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
        account = FIRST_NODE_ACCOUNT + node_id
        entry = book.nodeAddress.add(
            nodeId=node_id,
            RSA_PubKey=der.hex(),
            memo=f"0.0.{account}".encode(),
            description=f"simulated node {node_id} (revision {revision})",
            nodeCertHash=der[-48:].hex().encode(),
        )
        entry.nodeAccountId.accountNum = account
        entry.serviceEndpoint.add(ipAddressV4=bytes((10, 0, revision % 256, node_id + 1)), port=50211)
        entry.serviceEndpoint.add(domain_name=f"node{node_id}.sim.ledgermirror.test", port=50212)
    return bytes(book.SerializeToString())


def update_address_book(em: Emitter, contents: bytes) -> None:
    """0.0.101 in one FileUpdate; 0.0.102 as a FileUpdate of the first half and a FileAppend of the rest."""
    _file_update(em, NODE_DETAILS, contents, ADDRESS_BOOK_ADMIN)
    half = _unparsable_split(em.hapi, contents)
    _file_update(em, ADDRESS_BOOK, contents[:half], ADDRESS_BOOK_ADMIN)
    _file_append(em, ADDRESS_BOOK, contents[half:], ADDRESS_BOOK_ADMIN)


def _unparsable_split(hapi: Hapi, contents: bytes) -> int:
    """A split point near the middle whose first part is not a book on its own (an importer skips a part
    that does not parse and must not take a cut between two entries for a smaller book)."""
    decode_error = importlib.import_module("google.protobuf.message").DecodeError
    for split in range(len(contents) // 2, len(contents)):
        try:
            hapi.basic.NodeAddressBook.FromString(contents[:split])
        except decode_error:
            return split
    raise ValueError("no split point leaves an unparsable first part")


def update_exchange_rates(em: Emitter, cents_per_hbar: int) -> None:
    rates = em.hapi.exchange_rate.ExchangeRateSet()
    hour = (em.now // 3_600_000_000_000 + 1) * 3600
    for rate, cents, expiry in (
        (rates.currentRate, cents_per_hbar, hour),
        (rates.nextRate, cents_per_hbar + 1, hour + 3600),
    ):
        rate.hbarEquiv = 30_000
        rate.centEquiv = cents * 30_000 // 100
        rate.expirationTime.seconds = expiry
    _file_update(em, EXCHANGE_RATES, rates.SerializeToString(), EXCHANGE_RATE_ADMIN)


def update_fee_schedule(em: Emitter) -> None:
    """A small ``CurrentAndNextFeeSchedule`` uploaded in two parts: the FileUpdate is answered with
    FEE_SCHEDULE_FILE_PART_UPLOADED, the FileAppend completes it."""
    basic = em.hapi.basic
    schedules = basic.CurrentAndNextFeeSchedule()
    expiry = (em.now // 1_000_000_000 // 86_400 + 30) * 86_400
    for schedule, scale in ((schedules.currentFeeSchedule, 1), (schedules.nextFeeSchedule, 2)):
        schedule.expiryTime.seconds = expiry
        for functionality in (
            basic.CryptoTransfer,
            basic.CryptoCreate,
            basic.ConsensusSubmitMessage,
            basic.TokenMint,
        ):
            entry = schedule.transactionFeeSchedule.add(hederaFunctionality=functionality)
            fees = entry.fees.add()
            for part, constant in (
                (fees.nodedata, 7_000),
                (fees.networkdata, 140_000),
                (fees.servicedata, 140_000),
            ):
                part.min, part.max, part.constant = 0, 1_000_000_000_000_000, constant * scale
                part.bpt, part.vpt, part.rbh = 11 * scale, 27 * scale, 3
    contents = schedules.SerializeToString()
    half = len(contents) // 2
    _file_update(em, FEE_SCHEDULE, contents[:half], FEE_SCHEDULE_ADMIN, status="FEE_SCHEDULE_FILE_PART_UPLOADED")
    _file_append(em, FEE_SCHEDULE, contents[half:], FEE_SCHEDULE_ADMIN)


def node_stake_update(em: Emitter, node_count: int) -> None:
    """The daily stake update, just after midnight: every node with an equal stake (so the stake-weighted
    consensus of the importer and the count-based one agree)."""
    body = em.hapi.node_stake.NodeStakeUpdateTransactionBody(
        max_staking_reward_rate_per_hbar=17_808,
        staking_periods_stored=365,
        staking_period=1440,
        staking_start_threshold=25_000_000 * 100_000_000,
        staking_reward_rate=100_000_000_000,
        reserved_staking_rewards=0,
        unreserved_staking_reward_balance=0,
        reward_balance_threshold=8_500_000 * 100_000_000,
        max_stake_rewarded=650_000_000 * 100_000_000,
        max_total_reward=0,
    )
    set_timestamp(body.end_of_staking_period, em.now // NANOS_PER_DAY * NANOS_PER_DAY - 1)
    body.node_reward_fee_fraction.numerator, body.node_reward_fee_fraction.denominator = 0, 100
    body.staking_reward_fee_fraction.numerator, body.staking_reward_fee_fraction.denominator = 10, 100
    per_node = NODE_STAKE_TOTAL // node_count
    for node_id in range(node_count):
        body.node_stake.add(
            node_id=node_id,
            stake=per_node,
            stake_rewarded=per_node // 2,
            stake_not_rewarded=per_node - per_node // 2,
            min_stake=per_node // 4,
            max_stake=per_node * 2,
            reward_rate=REWARD_RATE,
        )
    em.emit(Tx(SYSTEM_ADMIN, "node_stake_update", body, 0))
    em.ledger.reward_rate = REWARD_RATE
    em.ledger.reward_period_end = em.now // NANOS_PER_DAY * NANOS_PER_DAY


def _file_update(em: Emitter, num: int, contents: bytes, payer: int, *, status: str = "SUCCESS") -> None:
    body: Any = em.hapi.bodies["file_update"].FileUpdateTransactionBody(contents=contents)
    body.fileID.fileNum = num
    em.emit(Tx(payer, "fileUpdate", body, 0, status=status))
    em.ledger.files[num] = contents


def _file_append(em: Emitter, num: int, contents: bytes, payer: int) -> None:
    body: Any = em.hapi.bodies["file_append"].FileAppendTransactionBody(contents=contents)
    body.fileID.fileNum = num
    em.emit(Tx(payer, "fileAppend", body, 0))
    em.ledger.files[num] = em.ledger.files.get(num, b"") + contents
