"""Named load scenarios, one or more per endpoint, with realistic parameter mixes.

Ids are sampled from the server under test through its own API before the run, so a scenario works against
any implementation of this API (ours or the reference) on the same database.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bench._driver import NextPath, Post, get_json


@dataclass(frozen=True, slots=True)
class Sample:
    accounts: list[str]
    evm_addresses: list[str]
    aliases: list[str]
    tokens: list[str]
    blocks: list[str]
    block_hashes: list[str]
    topics: list[str] = field(default_factory=list)
    """Topics with messages, the busiest first; sequence numbers and timestamps of the first one's messages."""
    sequences: list[str] = field(default_factory=list)
    message_timestamps: list[str] = field(default_factory=list)
    transactions: list[str] = field(default_factory=list)
    """Transaction ids (``shard.realm.num-seconds-nanos``)."""
    transaction_hashes: list[str] = field(default_factory=list)
    """48-byte hashes of crypto transfers, in hex (a path segment needs no escaping). Crypto transfers: the
    synthetic ledger has no ``transaction_hash`` row for its topic messages, whose lookups would be 404s."""
    moments: list[str] = field(default_factory=list)
    """Consensus timestamps (``seconds.nanos``) within the ledger: the blocks' ends, for ``timestamp=`` filters."""
    contracts: ContractSample = field(default_factory=lambda: ContractSample([], [], [], []))
    """Contracts with logs, and what their logs name."""
    spread_accounts: list[str] = field(default_factory=list)
    """Accounts from all over the id range (``accounts`` are 100 neighbours: a few pages of each table), for
    the scenarios whose working set must be the ledger's, not a corner of it (``account-by-id-spread``)."""


@dataclass(frozen=True, slots=True)
class ContractSample:
    contracts: list[str]
    """Contracts that emitted logs."""
    topics: list[str]
    """topic0 values of their logs."""
    windows: list[str]
    """``timestamp=gte:..&timestamp=lte:..`` windows of a day ending at a log's timestamp."""
    hashes: list[str]
    """Transaction hashes of contract transactions (the actions route takes the 32-byte ones)."""


HASHED_TRANSACTIONS = "/api/v1/transactions?limit=100&transactiontype=CRYPTOTRANSFER"


def transaction_hashes(rows: list[Any]) -> list[str]:
    return [base64.b64decode(row["transaction_hash"]).hex() for row in rows if row.get("transaction_hash")]


def moments(blocks: list[Any]) -> list[str]:
    return [row["timestamp"]["to"] for row in blocks if row.get("timestamp", {}).get("to")]


async def sample(base_url: str) -> Sample:
    """Ids to fill the scenarios with; empty when the server has no ``/api/v1`` (the status service)."""
    try:
        accounts: Any = await get_json(
            base_url, "/api/v1/accounts?limit=100&account.id=gte:0.0.1001&balance=false"
        )
        tokens: Any = await get_json(base_url, "/api/v1/tokens?limit=100")
        blocks: Any = await get_json(base_url, "/api/v1/blocks?limit=25&order=desc")
        transactions: Any = await get_json(base_url, "/api/v1/transactions?limit=100")
        transfers: Any = await get_json(base_url, HASHED_TRANSACTIONS)
    except RuntimeError:
        return Sample([], [], [], [], [], [])
    rows = accounts["accounts"]
    topics, sequences, stamps = await sample_topics(lambda path: get_json(base_url, path))
    spread = await sample_spread_accounts(lambda path: get_json(base_url, path))
    contracts = await sample_contracts(lambda path: get_json(base_url, path))
    return Sample(
        accounts=[row["account"] for row in rows],
        evm_addresses=[row["evm_address"] for row in rows if row.get("evm_address")],
        aliases=[row["alias"] for row in rows if row.get("alias")],
        tokens=[row["token_id"] for row in tokens["tokens"]],
        blocks=[str(row["number"]) for row in blocks["blocks"]],
        block_hashes=[row["hash"] for row in blocks["blocks"]],
        topics=topics,
        sequences=sequences,
        message_timestamps=stamps,
        transactions=[row["transaction_id"] for row in transactions["transactions"]],
        transaction_hashes=transaction_hashes(transfers["transactions"]),
        moments=moments(blocks["blocks"]),
        contracts=contracts,
        spread_accounts=spread,
    )


_SPREAD_PAGES = 40


async def sample_spread_accounts(fetch: Callable[[str], Awaitable[Any]]) -> list[str]:
    """A page of 25 accounts at each of :data:`_SPREAD_PAGES` evenly spaced points of the id range (from 0.0.1001
    to the last account); empty when there are none. ``fetch(path)`` answers the JSON body (or raises
    ``RuntimeError``)."""
    try:
        last: Any = await fetch("/api/v1/accounts?order=desc&limit=1&balance=false")
    except RuntimeError:
        return []
    if not last.get("accounts"):
        return []
    shard, realm, highest = (int(part) for part in last["accounts"][0]["account"].split("."))
    found: list[str] = []
    for page in range(_SPREAD_PAGES):
        start = 1001 + (highest - 1001) * page // _SPREAD_PAGES
        rows: Any = await fetch(f"/api/v1/accounts?limit=25&balance=false&account.id=gte:{shard}.{realm}.{start}")
        found.extend(row["account"] for row in rows.get("accounts", []))
    return list(dict.fromkeys(found))


_DAY_NS = 86_400 * 1_000_000_000


async def sample_contracts(fetch: Callable[[str], Awaitable[Any]]) -> ContractSample:
    """Contracts, topics, day windows and transaction hashes from the newest logs; empty when there are none.
    ``fetch(path)`` answers the JSON body (or raises ``RuntimeError``)."""
    try:
        page: Any = await fetch("/api/v1/contracts/results/logs?limit=100")
    except RuntimeError:
        return ContractSample([], [], [], [])
    logs = page.get("logs") or []
    windows = []
    for log in logs:
        seconds, nanos = (int(part) for part in log["timestamp"].split("."))
        start = seconds * 1_000_000_000 + nanos - _DAY_NS
        windows.append(f"timestamp=gte:{start // 10**9}.{start % 10**9:09d}&timestamp=lte:{log['timestamp']}")
    return ContractSample(
        contracts=list(dict.fromkeys(log["contract_id"] for log in logs)),
        topics=list(dict.fromkeys(log["topics"][0] for log in logs if log["topics"])),
        windows=windows,
        hashes=list(dict.fromkeys(log["transaction_hash"] for log in logs)),
    )


_TOPIC_PROBES = 20


async def sample_topics(fetch: Callable[[str], Awaitable[Any]]) -> tuple[list[str], list[str], list[str]]:
    """Topics with messages among the ids after the last token (where the synthetic ledger puts them), and the
    sequence numbers and timestamps of the first one's first messages; empty lists when there are none.
    ``fetch(path)`` answers the JSON body (or raises ``RuntimeError``)."""
    try:
        last: Any = await fetch("/api/v1/tokens?order=desc&limit=1")
    except RuntimeError:
        return [], [], []
    if not last.get("tokens"):
        return [], [], []
    shard, realm, num = (int(part) for part in last["tokens"][0]["token_id"].split("."))
    topics: list[str] = []
    first: list[Any] = []
    for offset in range(1, _TOPIC_PROBES + 1):
        topic = f"{shard}.{realm}.{num + offset}"
        try:
            page: Any = await fetch(f"/api/v1/topics/{topic}/messages?limit=100")
        except RuntimeError:
            continue
        if page.get("messages"):
            topics.append(topic)
            first = first or page["messages"]
    sequences = [str(message["sequence_number"]) for message in first]
    return topics, sequences, [message["consensus_timestamp"] for message in first]


def _topic_deep(data: Sample, rng: random.Random) -> NextPath:
    """The busiest topic's messages from the first page to the end through ``links.next``, then again."""
    start = f"/api/v1/topics/{data.topics[0] if data.topics else '0.0.1'}/messages?limit=25"

    def next_path(previous_next: str | None) -> str:
        return previous_next or start

    return next_path


Builder = Callable[[Sample, random.Random], NextPath]


def _mix(*templates: str) -> Builder:
    """Each request picks one template and fills ``{account}``, ``{token}``, ... from the sample."""

    def build(data: Sample, rng: random.Random) -> NextPath:
        pools = {
            "account": data.accounts,
            "spread_account": data.spread_accounts or data.accounts,
            "evm": data.evm_addresses or data.accounts,
            "alias": data.aliases or data.accounts,
            "token": data.tokens,
            "block": data.blocks,
            "hash": data.block_hashes,
            # a ledger without topics still runs the topic scenarios (empty pages and 404s, not a crash)
            "topic": data.topics or ["0.0.1"],
            "first_topic": data.topics[:1] or ["0.0.1"],
            "sequence": data.sequences or ["1"],
            "message_ts": data.message_timestamps or ["1.000000000"],
            "transaction": data.transactions or ["0.0.2-1-000000000"],  # none: a 404, not a crash
            "transaction_hash": data.transaction_hashes or ["00" * 48],
            "moment": data.moments or ["1.000000000"],
            # a ledger without contracts still runs the contract scenarios (empty pages and 404s)
            "contract": data.contracts.contracts or ["0.0.1"],
            "event": data.contracts.topics or ["0x" + "00" * 32],
            "log_window": data.contracts.windows or ["timestamp=gte:1.000000000&timestamp=lte:2.000000000"],
            "contract_hash": data.contracts.hashes or ["0x" + "00" * 32],
        }

        def next_path(_: str | None) -> str:
            template = rng.choice(templates)
            return template.format(**{k: rng.choice(v) for k, v in pools.items() if "{" + k + "}" in template})

        return next_path

    return build


def _deep(start: str) -> Builder:
    """Follow ``links.next`` from the first page to the end, then start again."""

    def build(data: Sample, rng: random.Random) -> NextPath:
        def next_path(previous_next: str | None) -> str:
            return previous_next or start

        return next_path

    return build


def _transfer_bytes(signatures: int) -> bytes:
    """A signed CryptoTransfer ``Transaction`` with the given number of signatures, as a wallet sends it."""
    from hiero_sdk_python.hapi.services import (
        transaction_contents_pb2,
        transaction_pb2,
    )

    body = transaction_pb2.TransactionBody(transactionFee=200_000_000, memo="bench")
    body.transactionID.accountID.accountNum = 1001
    body.transactionID.transactionValidStart.seconds = 1_700_000_000
    body.nodeAccountID.accountNum = 3
    for account, amount in ((1001, -10), (1002, 10)):
        body.cryptoTransfer.transfers.accountAmounts.add(accountID={"accountNum": account}, amount=amount)
    signed = transaction_contents_pb2.SignedTransaction(bodyBytes=body.SerializeToString())
    for index in range(signatures):
        signed.sigMap.sigPair.add(pubKeyPrefix=bytes([index + 1]), ed25519=bytes([index]) * 64)
    transaction = transaction_pb2.Transaction(signedTransactionBytes=signed.SerializeToString())
    return bytes(transaction.SerializeToString())


def _fee_estimates(data: Sample, rng: random.Random) -> NextPath:
    bodies = [_transfer_bytes(signatures) for signatures in (1, 2, 5)]
    paths = [
        "/api/v1/network/fees",
        "/api/v1/network/fees?mode=STATE",
        "/api/v1/network/fees?high_volume_throttle=5000",
    ]

    def next_path(_: str | None) -> Post:
        return Post(rng.choice(paths), rng.choice(bodies), "application/protobuf")

    return next_path


SCENARIOS: dict[str, Builder] = {
    "tokens-list": _mix("/api/v1/tokens"),
    "tokens-first-page": _mix("/api/v1/tokens", "/api/v1/tokens?limit=100", "/api/v1/tokens?order=desc"),
    "tokens-deep": _deep("/api/v1/tokens?limit=25"),
    "tokens-filters": _mix(
        "/api/v1/tokens?token.id=gt:{token}",
        "/api/v1/tokens?type=NON_FUNGIBLE_UNIQUE&token.id=gte:{token}",
        "/api/v1/tokens?account.id={account}",
        "/api/v1/tokens?limit=5&token.id=lt:{token}&order=desc",
    ),
    "accounts-list": _mix("/api/v1/accounts?account.id=gt:{account}", "/api/v1/accounts?limit=100&balance=false"),
    "accounts-deep": _deep("/api/v1/accounts?limit=25"),
    "account-lookups": _mix(
        "/api/v1/accounts/{account}",
        "/api/v1/accounts/{evm}",
        "/api/v1/accounts/{alias}",
        "/api/v1/accounts/{account}?transactions=false",
    ),
    "account-by-id": _mix("/api/v1/accounts/{account}"),
    # 1,000 accounts from all over the ledger (account-by-id's 100 neighbours fit in a few pages): a cold
    # server's working set (bench/coldstart)
    "account-by-id-spread": _mix("/api/v1/accounts/{spread_account}"),
    "account-by-alias-or-evm": _mix("/api/v1/accounts/{evm}", "/api/v1/accounts/{alias}"),
    "crypto-allowances": _mix("/api/v1/accounts/{account}/allowances/crypto"),
    "account-allowances": _mix(
        "/api/v1/accounts/{account}/allowances/crypto",
        "/api/v1/accounts/{account}/allowances/tokens",
        "/api/v1/accounts/{account}/allowances/nfts",
    ),
    "account-rewards-nfts-airdrops": _mix(
        "/api/v1/accounts/{account}/rewards",
        "/api/v1/accounts/{account}/nfts",
        "/api/v1/accounts/{account}/airdrops/outstanding",
        "/api/v1/accounts/{account}/airdrops/pending",
    ),
    "network": _mix(
        "/api/v1/network/supply",
        "/api/v1/network/stake",
        "/api/v1/network/nodes",
        "/api/v1/network/exchangerate",
        "/api/v1/network/fees",
    ),
    "network-supply": _mix("/api/v1/network/supply"),
    "network-nodes": _mix("/api/v1/network/nodes"),
    "network-fee-estimate": _fee_estimates,
    "status-service": _mix(  # run with --url pointing at `ledgermirror status serve`
        "/api/v2/summary.json",
        "/api/v2/status.json",
        "/api/v2/components.json",
        "/api/v2/incidents.json",
        "/api/v2/incidents/unresolved.json",
        "/api/v2/scheduled-maintenances.json",
        "/api/v2/scheduled-maintenances/upcoming.json",
        "/api/v2/scheduled-maintenances/active.json",
    ),
    "blocks": _mix(
        "/api/v1/blocks",
        "/api/v1/blocks?block.number=lt:{block}&order=desc&limit=5",
        "/api/v1/blocks/{block}",
        "/api/v1/blocks/{hash}",
    ),
    "blocks-list": _mix("/api/v1/blocks"),
    "topic-messages": _mix(
        "/api/v1/topics/{topic}/messages",
        "/api/v1/topics/{topic}/messages?limit=100&order=desc",
        "/api/v1/topics/{first_topic}/messages?sequencenumber=gt:{sequence}&limit=25",
        "/api/v1/topics/{first_topic}/messages?encoding=utf-8&timestamp=gte:{message_ts}",
        "/api/v1/topics/{first_topic}/messages/{sequence}",
        "/api/v1/topics/messages/{message_ts}",
    ),
    "topic-messages-deep": _topic_deep,
    "transactions-first-page": _mix(
        "/api/v1/transactions", "/api/v1/transactions?limit=100", "/api/v1/transactions?order=asc"
    ),
    "transactions-by-account": _mix(
        "/api/v1/transactions?account.id={account}",
        "/api/v1/transactions?account.id={account}&type=credit",
        "/api/v1/transactions?account.id={account}&transactiontype=CRYPTOTRANSFER&limit=10",
    ),
    "transactions-by-type": _mix(
        "/api/v1/transactions?transactiontype=CRYPTOTRANSFER",
        "/api/v1/transactions?transactiontype=TOKENMINT",
        "/api/v1/transactions?result=fail",
        "/api/v1/transactions?type=debit",
    ),
    "transactions-deep": _deep("/api/v1/transactions?limit=25"),
    "transaction-lookups": _mix("/api/v1/transactions/{transaction}"),
    # The two that read the tables the reference partitions (transaction_hash; account_balance, token_balance).
    "transaction-hash-lookups": _mix("/api/v1/transactions/{transaction_hash}"),
    "balances": _mix(
        "/api/v1/balances",
        "/api/v1/balances?account.id={account}",
        "/api/v1/balances?timestamp={moment}",
        "/api/v1/balances?account.id={account}&timestamp={moment}",
        "/api/v1/tokens/{token}/balances",
        "/api/v1/tokens/{token}/balances?timestamp={moment}",
    ),
    # contracts
    "contract-results-first-page": _mix(
        "/api/v1/contracts/results",
        "/api/v1/contracts/results?limit=100",
        "/api/v1/contracts/results?order=asc",
        "/api/v1/contracts/{contract}/results",
    ),
    "contract-results-deep": _deep("/api/v1/contracts/results?limit=25"),
    "contract-logs-first-page": _mix(
        "/api/v1/contracts/results/logs",
        "/api/v1/contracts/results/logs?limit=100",
        "/api/v1/contracts/results/logs?order=asc",
    ),
    "contract-logs-by-contract": _mix(
        "/api/v1/contracts/{contract}/results/logs",
        "/api/v1/contracts/{contract}/results/logs?limit=100&order=asc",
        "/api/v1/contracts/{contract}/results/logs?{log_window}",
    ),
    "contract-logs-topics": _mix(
        "/api/v1/contracts/results/logs?topic0={event}&{log_window}",
        "/api/v1/contracts/{contract}/results/logs?topic0={event}&{log_window}",
        "/api/v1/contracts/results/logs?transaction.hash={contract_hash}",
    ),
    "contract-logs-deep": _deep("/api/v1/contracts/results/logs?limit=25"),
    "contract-actions": _mix("/api/v1/contracts/results/{contract_hash}/actions"),
    "token-routes": _mix(
        "/api/v1/tokens/{token}",
        "/api/v1/tokens/{token}/balances",
        "/api/v1/tokens/{token}/nfts",
        "/api/v1/accounts/{account}/tokens",
        "/api/v1/accounts/{account}/hooks",
        "/api/v1/network/registered-nodes",
    ),
}

SEPARATE_SERVICES = frozenset({"status-service"})
"""Scenarios for another service than the query API: run only when named, against that service's URL."""
