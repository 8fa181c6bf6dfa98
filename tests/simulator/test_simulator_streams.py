"""A short simulated network: every file verifies as the importer checks it, the records agree with
truth.json (recomputed here from the files), hbar is conserved, the mix covers every kind, same seed same
bytes."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import struct
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tests.simulator.reading import Item, items_of, node_folders, verify_all

from ledgermirror.importer.errors import FileHashMismatch, SignatureRejected
from ledgermirror.importer.record_file_reader import read_record_file
from ledgermirror.importer.verify import VerifiedRecordFile
from ledgermirror.simulator.run import Summary, simulate

NODES = 4
SECONDS = 24
TPS = 40
SUCCESS = 22


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Summary]:
    out = tmp_path_factory.mktemp("network")
    return out, simulate(out, nodes=NODES, seconds=SECONDS, tps=TPS, seed=11)


@pytest.fixture(scope="module")
def verified(network: tuple[Path, Summary]) -> list[VerifiedRecordFile]:
    return verify_all(network[0])


@pytest.fixture(scope="module")
def items(verified: list[VerifiedRecordFile]) -> list[Item]:
    return items_of(verified)


@pytest.fixture(scope="module")
def truth(network: tuple[Path, Summary]) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((network[0] / "truth.json").read_text())
    return document


def _num(account_id: Any) -> str:
    return f"{account_id.shardNum}.{account_id.realmNum}.{account_id.accountNum}"


def test_every_file_verifies_with_every_node(
    network: tuple[Path, Summary], verified: list[VerifiedRecordFile]
) -> None:
    out, summary = network
    assert len(verified) == summary.record_files == SECONDS // 2
    assert [v.record.block_number for v in verified] == list(range(len(verified)))
    for result in verified:
        assert result.consensus.agreed[0].node_ids == tuple(range(NODES))
        assert not result.consensus.rejected
        assert result.record.name.removesuffix(".rcd.gz").replace("_", ":") == _iso(result.record.consensus_start)
        assert result.record.hapi_version == (0, 66, 0)
    assert sum(v.record.count for v in verified) == summary.transactions
    assert sum(len(v.sidecars) for v in verified) == summary.sidecar_files > 0
    for folder in node_folders(out)[1:]:  # the data files are the same bytes in every node folder
        for path in folder.glob("*.rcd.gz"):
            assert path.read_bytes() == (node_folders(out)[0] / path.name).read_bytes()


def _iso(nanos: int) -> str:
    seconds, fraction = divmod(nanos, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{fraction:09d}Z"


def test_a_changed_byte_or_a_foreign_signature_is_refused(network: tuple[Path, Summary], tmp_path: Path) -> None:
    """The verification above can fail: one byte of an item's hash changed (re-gzipped), or node 0's signature file
    presented as node 1's."""
    copy = tmp_path / "copy"
    shutil.copytree(network[0], copy)
    folders = node_folders(copy)
    name = sorted(path.name for path in folders[0].glob("*.rcd.gz"))[1]
    original = (folders[0] / name).read_bytes()
    content = bytearray(gzip.decompress(original))
    transaction_hash = read_record_file(name, original).items[3].record.transactionHash
    content[content.index(transaction_hash) + 5] ^= 1  # still well-formed, no longer what was signed
    for folder in folders:
        (folder / name).write_bytes(gzip.compress(bytes(content), mtime=0))
    with pytest.raises(FileHashMismatch):
        verify_all(copy)
    for folder in folders:
        (folder / name).write_bytes(original)
    stem = name.removesuffix(".rcd.gz")
    (folders[1] / f"{stem}.rcd_sig").write_bytes((folders[0] / f"{stem}.rcd_sig").read_bytes())
    rejected = verify_all(copy)[1].consensus.rejected
    assert len(rejected) == 1
    assert isinstance(rejected[0], SignatureRejected)
    assert rejected[0].node_id == 1


def test_hbar_is_conserved_and_balances_are_the_transfers(items: list[Item], truth: dict[str, Any]) -> None:
    balances: Counter[str] = Counter(truth["initial_balances"])
    for item in items:
        assert sum(a.amount for a in item.record.transferList.accountAmounts) == 0
        for amount in item.record.transferList.accountAmounts:
            balances[_num(amount.accountID)] += amount.amount
    assert sum(truth["balances"].values()) == truth["initial_supply"] == 5_000_000_000_000_000_000
    assert {k: v for k, v in balances.items() if v} == {k: v for k, v in truth["balances"].items() if v}
    for account, state in truth["accounts"].items():
        assert state["balance"] == truth["balances"].get(account, 0)
        if state["deleted"]:
            assert state["balance"] == 0


def test_fees_go_from_the_payer_to_the_node_and_0_0_98(items: list[Item]) -> None:
    """An atomic batch's inner transactions name no node: their node share goes to the batch's node."""
    batch_node = ""
    for item in items:
        if item.body_name == "atomic_batch":
            batch_node = _num(item.body.nodeAccountID)
        fee = item.record.transactionFee
        if not fee or item.record.HasField("scheduleRef"):
            continue
        moves = {_num(a.accountID): a.amount for a in item.record.transferList.accountAmounts}
        inner = item.body.HasField("batch_key")
        node = batch_node if inner else _num(item.body.nodeAccountID)
        assert inner == (node != _num(item.body.nodeAccountID))
        assert moves[node] == fee // 10
        assert moves["0.0.98"] == fee - fee // 10
        if item.record.receipt.status != SUCCESS:
            assert set(moves) == {node, "0.0.98", _num(item.body.transactionID.accountID)}


def test_token_balances_supply_and_nft_owners_follow_the_records(items: list[Item], truth: dict[str, Any]) -> None:
    balances: Counter[tuple[str, str]] = Counter()
    owners: dict[tuple[str, int], str | None] = {}
    for item in items:
        for listed in item.record.tokenTransferLists:
            token = f"0.0.{listed.token.tokenNum}"
            for amount in listed.transfers:
                balances[(token, _num(amount.accountID))] += amount.amount
            for nft in listed.nftTransfers:
                owners[(token, nft.serialNumber)] = _num(nft.receiverAccountID)
                balances[(token, _num(nft.receiverAccountID))] += 1
                if nft.HasField("senderAccountID"):
                    balances[(token, _num(nft.senderAccountID))] -= 1
    expected = {(t, a): b for t, per in truth["token_balances"].items() for a, b in per.items() if b}
    assert {k: v for k, v in balances.items() if v} == expected
    for token, state in truth["tokens"].items():
        held = sum(truth["token_balances"][token].values())
        assert held == state["total_supply"], token
        assert (state["type"] == "FUNGIBLE_COMMON") == (token not in truth["nfts"])
    for token, serials in truth["nfts"].items():
        for serial, nft in serials.items():
            assert owners[(token, int(serial))] == nft["owner"]
    assert truth["nfts"] and any(t["custom_fees"] for t in truth["tokens"].values())


def test_topic_sequence_numbers_and_running_hashes(items: list[Item], truth: dict[str, Any]) -> None:
    state: dict[str, tuple[int, bytes]] = {}
    for item in items:
        if item.body_name != "consensusSubmitMessage" or item.record.receipt.status != SUCCESS:
            continue
        topic = item.body.consensusSubmitMessage.topicID.topicNum
        sequence, previous = state.get(f"0.0.{topic}", (0, bytes(48)))
        seconds, nanos = divmod(item.consensus_timestamp, 1_000_000_000)
        payer = item.body.transactionID.accountID.accountNum
        data = previous + struct.pack(">qqqqqqqqiq", 3, 0, 0, payer, 0, 0, topic, seconds, nanos, sequence + 1)
        running = hashlib.sha384(data + hashlib.sha384(item.body.consensusSubmitMessage.message).digest()).digest()
        assert item.record.receipt.topicSequenceNumber == sequence + 1
        assert item.record.receipt.topicRunningHash == running
        state[f"0.0.{topic}"] = (sequence + 1, running)
    assert state
    for topic, (sequence, running) in state.items():
        assert truth["topics"][topic]["sequence_number"] == sequence
        assert truth["topics"][topic]["running_hash"] == running.hex()


def test_the_mix_covers_every_kind(items: list[Item], truth: dict[str, Any]) -> None:
    names = Counter(item.body_name for item in items)
    assert names == Counter(truth["transactions"]["by_type"])
    for name in (
        "cryptoTransfer", "cryptoCreateAccount", "cryptoUpdateAccount", "cryptoDelete",
        "cryptoApproveAllowance", "cryptoDeleteAllowance", "tokenCreation", "tokenAssociate", "tokenMint",
        "tokenBurn", "consensusCreateTopic", "consensusSubmitMessage", "scheduleCreate", "scheduleSign",
        "fileUpdate", "fileAppend", "util_prng", "node_stake_update", "contractCreateInstance", "contractCall",
        "tokenAirdrop", "tokenDissociate", "tokenUpdate", "scheduleDelete", "ethereumTransaction",
    ):  # fmt: skip
        assert names[name] > 0, name
    assert names["cryptoTransfer"] > len(items) / 2
    assert names["tokenClaimAirdrop"] + names["tokenCancelAirdrop"] > 0
    assert names["consensusUpdateTopic"] + names["consensusDeleteTopic"] > 0
    statuses = Counter(item.record.receipt.status for item in items)
    assert statuses[10] and statuses[28] and statuses[104] and statuses[184]  # balances, part, not associated
    files = {item.body.fileUpdate.fileID.fileNum for item in items if item.body_name == "fileUpdate"}
    files |= {item.body.fileAppend.fileID.fileNum for item in items if item.body_name == "fileAppend"}
    assert {num for num in files if num < 1000} == {101, 102, 111, 112}
    assert {f"0.0.{num}" for num in files if num >= 1000} <= set(truth["user_files"])  # files users created
    children = [item for item in items if item.record.HasField("parent_consensus_timestamp")]
    assert any(item.body_name == "cryptoCreateAccount" and item.record.alias for item in children)
    scheduled = [item for item in items if item.record.HasField("scheduleRef")]
    assert scheduled and all(item.body.transactionID.scheduled for item in scheduled)
    created = {
        f"0.0.{item.record.receipt.scheduleID.scheduleNum}" for item in items if item.body_name == "scheduleCreate"
    }
    assert set(truth["schedules"]) == created
    executed = {f"0.0.{item.record.scheduleRef.scheduleNum}": item.consensus_timestamp for item in scheduled}
    assert executed == {
        k: v["executed_timestamp"] for k, v in truth["schedules"].items() if v["executed_timestamp"]
    }
    nft_moves = [n for item in items for t in item.record.tokenTransferLists for n in t.nftTransfers]
    assert any(n.HasField("senderAccountID") for n in nft_moves)
    assert any(item.record.assessed_custom_fees for item in items)
    approvals = [a for item in items for a in item.body.cryptoTransfer.transfers.accountAmounts if a.is_approval]
    assert approvals


def test_receipts_name_the_created_entities(items: list[Item], truth: dict[str, Any]) -> None:
    created = {
        "cryptoCreateAccount": lambda r: r.receipt.accountID.accountNum,
        "tokenCreation": lambda r: r.receipt.tokenID.tokenNum,
        "consensusCreateTopic": lambda r: r.receipt.topicID.topicNum,
        "contractCreateInstance": lambda r: r.receipt.contractID.contractNum,
    }
    found: dict[str, set[str]] = {name: set() for name in created}
    for item in items:
        if item.body_name in created and item.record.receipt.status == SUCCESS:
            found[item.body_name].add(f"0.0.{created[item.body_name](item.record)}")
    assert found["cryptoCreateAccount"] == set(truth["accounts"])
    assert found["tokenCreation"] == set(truth["tokens"])
    assert found["consensusCreateTopic"] == set(truth["topics"])
    assert found["contractCreateInstance"] == set(truth["contracts"])
    stamps = [item.consensus_timestamp for item in items]
    assert stamps == sorted(set(stamps))


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    def run(name: str, seed: int) -> dict[str, bytes]:
        out = tmp_path / name
        simulate(out, nodes=2, seconds=4, tps=15, seed=seed)
        return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}

    first, second, other = run("a", 5), run("b", 5), run("c", 6)
    assert first == second
    assert any(data != other.get(path) for path, data in first.items() if path.endswith(".rcd.gz"))
    assert first["truth.json"] != other["truth.json"]
    assert first["addressbook.bin"] != other["addressbook.bin"]


def test_address_book_updates_rebuild_the_bootstrap_keys(network: tuple[Path, Summary], items: list[Item]) -> None:
    """0.0.102 arrives as a FileUpdate whose part alone is no book, then a FileAppend; the book they make
    holds the keys of addressbook.bin (so files after the update still verify)."""
    from ledgermirror.importer.address_book import read_address_book
    from ledgermirror.importer.errors import AddressBookError

    bootstrap = read_address_book((network[0] / "addressbook.bin").read_bytes())
    books = []
    for index, item in enumerate(items):
        if item.body_name == "fileUpdate" and item.body.fileUpdate.fileID.fileNum == 102:
            part = item.body.fileUpdate.contents
            append = items[index + 1]
            assert append.body_name == "fileAppend" and append.body.fileAppend.fileID.fileNum == 102
            with pytest.raises(AddressBookError):
                read_address_book(part)
            books.append(read_address_book(part + append.body.fileAppend.contents))
    assert len(books) == 2  # at the start and half way
    for book in books:
        assert [(n.node_id, n.public_key_hex) for n in book.nodes] == [
            (n.node_id, n.public_key_hex) for n in bootstrap.nodes
        ]


def test_airdrops_pending_claimed_or_straight_through(items: list[Item], truth: dict[str, Any]) -> None:
    pending: dict[tuple[str, str, str], int] = {}
    pending_nfts: set[tuple[str, str, str, int]] = set()
    settled: dict[tuple[str, str, str, int], str] = {}
    straight = 0
    for item in items:
        for entry in item.record.new_pending_airdrops:
            key = entry.pending_airdrop_id
            if key.HasField("non_fungible_token"):
                nft = key.non_fungible_token
                pending_nfts.add(
                    (_num(key.sender_id), _num(key.receiver_id), f"0.0.{nft.token_ID.tokenNum}", nft.serial_number)
                )
                continue
            token = f"0.0.{key.fungible_token_type.tokenNum}"
            pending[(_num(key.sender_id), _num(key.receiver_id), token)] = entry.pending_airdrop_value.amount
        if item.body_name in ("tokenClaimAirdrop", "tokenCancelAirdrop"):
            for key in getattr(item.body, item.body_name).pending_airdrops:
                if key.HasField("non_fungible_token"):
                    nft = key.non_fungible_token
                    ident = (
                        _num(key.sender_id),
                        _num(key.receiver_id),
                        f"0.0.{nft.token_ID.tokenNum}",
                        nft.serial_number,
                    )
                    settled[ident] = "CLAIMED" if item.body_name == "tokenClaimAirdrop" else "CANCELLED"
        if item.body_name == "tokenAirdrop" and item.record.tokenTransferLists:
            assert item.record.automatic_token_associations
            straight += 1
    assert pending
    states = {(a["sender"], a["receiver"], a["token"]): a for a in truth["airdrops"]}
    assert set(states) == set(pending)
    for key, amount in pending.items():
        assert states[key]["amount"] == amount
    assert {a["state"] for a in truth["airdrops"]} <= {"PENDING", "CLAIMED", "CANCELLED"}
    assert pending_nfts, "NFT serials are airdropped pending"
    nft_states = {(a["sender"], a["receiver"], a["token"], a["serial"]): a["state"] for a in truth["nft_airdrops"]}
    assert set(nft_states) == pending_nfts
    assert nft_states == {key: settled.get(key, "PENDING") for key in pending_nfts}


def test_truth_lists_the_record_files_as_read(verified: list[VerifiedRecordFile], truth: dict[str, Any]) -> None:
    listed = truth["record_files"]["files"]
    assert [f["name"] for f in listed] == [v.record.name for v in verified]
    for entry, result in zip(listed, verified, strict=True):
        record = result.record
        assert entry["block_number"] == record.block_number
        assert entry["count"] == record.count
        assert entry["size"] == record.size
        assert entry["hash"] == record.hash.hex()
        assert entry["previous_hash"] == record.previous_hash.hex()
        assert entry["file_hash"] == record.file_hash.hex()
        assert (entry["consensus_start"], entry["consensus_end"]) == (record.consensus_start, record.consensus_end)
        assert entry["sidecar"] == bool(record.sidecars)


def test_schedules_carry_their_body_and_signatures(items: list[Item], truth: dict[str, Any]) -> None:
    signatures: dict[str, list[dict[str, str]]] = {}
    for item in items:
        if item.record.receipt.status != SUCCESS:
            continue
        if item.body_name == "scheduleCreate":
            schedule = f"0.0.{item.record.receipt.scheduleID.scheduleNum}"
            body = item.body.scheduleCreate
            assert (
                truth["schedules"][schedule]["transaction_body"]
                == body.scheduledTransactionBody.SerializeToString().hex()
            )
            assert truth["schedules"][schedule]["admin_key"] == body.adminKey.SerializeToString().hex()
        elif item.body_name == "scheduleSign":
            schedule = f"0.0.{item.body.scheduleSign.scheduleID.scheduleNum}"
        else:
            continue
        pairs = item.signed.sigMap.sigPair
        signatures.setdefault(schedule, []).extend(
            {"public_key_prefix": p.pubKeyPrefix.hex(), "signature": p.ed25519.hex()} for p in pairs
        )
    assert signatures == {k: v["signatures"] for k, v in truth["schedules"].items()}


def test_exchange_rate_and_address_book_are_the_last_file_contents(
    items: list[Item], truth: dict[str, Any]
) -> None:
    from hiero_sdk_python.hapi.services import exchange_rate_pb2

    last = [
        i.body.fileUpdate.contents
        for i in items
        if i.body_name == "fileUpdate" and i.body.fileUpdate.fileID.fileNum == 112
    ]
    rates = exchange_rate_pb2.ExchangeRateSet.FromString(last[-1])
    assert truth["exchange_rate"]["current_rate"] == {
        "cent_equivalent": rates.currentRate.centEquiv,
        "hbar_equivalent": rates.currentRate.hbarEquiv,
        "expiration_time": rates.currentRate.expirationTime.seconds,
    }
    assert [n["node_id"] for n in truth["address_book"]] == list(range(NODES))
    assert all("revision 1" in n["description"] for n in truth["address_book"])
    assert truth["address_book"][0]["service_endpoints"][0] == {
        "ip_address_v4": "10.0.1.1",
        "domain_name": "",
        "port": 50211,
    }


def test_a_stake_update_follows_each_midnight(tmp_path: Path) -> None:
    """(In the HIP-679 layout, which verifies the same way.)"""
    midnight = 1_767_225_600_000_000_000
    simulate(tmp_path, nodes=1, seconds=8, tps=10, seed=4, start=midnight - 4_000_000_000, layout="node-id")
    stamps = [i.consensus_timestamp for i in items_of(verify_all(tmp_path)) if i.body_name == "node_stake_update"]
    assert len(stamps) == 2
    assert stamps[0] < midnight <= stamps[1] < midnight + 2_000_000_000


def _rlp_decode(data: bytes, pos: int = 0) -> tuple[Any, int]:
    """A test-side RLP reader (bytes or nested lists) and the position after the item."""
    head = data[pos]
    if head < 0x80:
        return data[pos : pos + 1], pos + 1
    if head < 0xC0:
        short = head < 0xB8
        size_bytes = 0 if short else head - 0xB7
        length = head - 0x80 if short else int.from_bytes(data[pos + 1 : pos + 1 + size_bytes], "big")
        start = pos + 1 + size_bytes
        return data[start : start + length], start + length
    short = head < 0xF8
    size_bytes = 0 if short else head - 0xF7
    length = head - 0xC0 if short else int.from_bytes(data[pos + 1 : pos + 1 + size_bytes], "big")
    start = pos = pos + 1 + size_bytes
    items = []
    while pos < start + length:
        item, pos = _rlp_decode(data, pos)
        items.append(item)
    return items, pos


def test_ethereum_transactions_decode_and_agree_with_their_records(
    items: list[Item], truth: dict[str, Any]
) -> None:
    from Crypto.Hash import keccak
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    wallets = {}
    for item in items:
        if item.body_name == "cryptoCreateAccount" and item.body.cryptoCreateAccount.key.ECDSA_secp256k1:
            compressed = item.body.cryptoCreateAccount.key.ECDSA_secp256k1
            point = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), compressed)
            uncompressed = point.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
            address = keccak.new(digest_bits=256, data=uncompressed[1:]).digest()[-20:]
            assert item.body.cryptoCreateAccount.alias == item.record.evm_address == address
            wallets[_num(item.record.receipt.accountID)] = address
    nonces: Counter[str] = Counter()
    calls = [item for item in items if item.body_name == "ethereumTransaction"]
    assert calls and wallets
    for item in calls:
        data = item.body.ethereumTransaction.ethereum_data
        assert data[0] == 2  # EIP-1559
        fields, end = _rlp_decode(data, 1)
        assert end == len(data) and len(fields) == 12
        chain_id, nonce, to, call_data = fields[0], fields[1], fields[5], fields[7]
        result = item.record.contractCallResult
        sender = _num(result.sender_id)
        assert int.from_bytes(chain_id, "big") == 298
        assert int.from_bytes(nonce, "big") == nonces[sender]
        assert result.signer_nonce.value == nonces[sender] + 1
        assert (
            int.from_bytes(to, "big")
            == result.contractID.contractNum
            == item.record.receipt.contractID.contractNum
        )
        assert call_data == result.functionParameters
        assert item.record.ethereum_hash == keccak.new(digest_bits=256, data=data).digest()
        assert sender in wallets and _num(item.body.transactionID.accountID) != sender  # a relay pays
        nonces[sender] += 1
    for account, address in wallets.items():
        assert truth["accounts"][account]["evm_address"] == address.hex()
        assert truth["accounts"][account]["ethereum_nonce"] == nonces[account]


def test_initial_balances_snapshot_reads_as_the_importer_reads_it(
    network: tuple[Path, Summary], verified: list[VerifiedRecordFile], truth: dict[str, Any]
) -> None:
    from ledgermirror.importer.handlers.balances import read_balance_snapshot

    snapshot = read_balance_snapshot((network[0] / truth["network"]["initial_balances"]).read_bytes())
    assert snapshot.consensus_timestamp < verified[0].record.consensus_start
    assert {f"0.0.{account}": balance for account, balance in snapshot.balances} == truth["initial_balances"]
    assert truth["initial_balances"]["0.0.2"] == truth["initial_supply"]
    assert {"0.0.3", "0.0.6", "0.0.98"} <= set(truth["initial_balances"])  # credited, never created in-stream
