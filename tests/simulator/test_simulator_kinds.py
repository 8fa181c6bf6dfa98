"""The simulator's later kinds, read back from the verified files and compared with truth.json: token
freeze/KYC/pause, royalty fees, atomic batches, chunked messages, hooks, staking rewards, nodes and freezes;
and record files of v5 and v2, alone or switching versions mid-stream."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hiero_sdk_python.hapi.services import transaction_contents_pb2, transaction_pb2
from tests.simulator.reading import Item, items_of, verify_all

from ledgermirror.simulator.run import simulate

MIDNIGHT = 1_767_225_600_000_000_000
FREEZE_STATUS = {"tokenFreeze": 1, "tokenUnfreeze": 2}
KYC_STATUS = {"tokenGrantKyc": 1, "tokenRevokeKyc": 2}


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kinds")
    simulate(out, nodes=1, seconds=24, tps=40, seed=31, start=MIDNIGHT - 8_000_000_000)
    return out


@pytest.fixture(scope="module")
def items(network: Path) -> list[Item]:
    return items_of(verify_all(network))


@pytest.fixture(scope="module")
def truth(network: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((network / "truth.json").read_text())
    return document


def _id(entity: Any) -> str:
    return f"0.0.{entity.accountNum if hasattr(entity, 'accountNum') else entity.tokenNum}"


def test_every_new_kind_is_in_the_mix(items: list[Item]) -> None:
    names = Counter(item.body_name for item in items)
    for name in (
        "tokenFreeze", "tokenGrantKyc", "token_pause", "token_unpause", "tokenWipe", "tokenReject",
        "nodeCreate", "freeze", "fileCreate", "systemDelete", "systemUndelete", "contractUpdateInstance",
        "contractDeleteInstance", "hook_store", "atomic_batch", "tokenDeletion", "token_fee_schedule_update",
        "token_update_nfts",
    ):  # fmt: skip
        assert names[name] > 0, name
    assert names["tokenUnfreeze"] + names["tokenRevokeKyc"] > 0
    assert names["nodeUpdate"] + names["nodeDelete"] > 0
    assert any(item.record.paid_staking_rewards for item in items)
    assert any(item.body.consensusSubmitMessage.HasField("chunkInfo") for item in items)
    assert any(item.body.cryptoCreateAccount.hook_creation_details for item in items)


def test_token_statuses_and_pauses_follow_the_records(items: list[Item], truth: dict[str, Any]) -> None:
    statuses: dict[tuple[str, str], dict[str, int]] = {}
    paused: dict[str, bool] = {}
    for item in items:
        name = item.body_name
        if name in FREEZE_STATUS or name in KYC_STATUS:
            body = getattr(item.body, name)
            column = "freeze_status" if name in FREEZE_STATUS else "kyc_status"
            value = FREEZE_STATUS.get(name) or KYC_STATUS[name]
            statuses.setdefault((_id(body.token), _id(body.account)), {})[column] = value
        elif name in ("token_pause", "token_unpause"):
            paused[_id(getattr(item.body, name).token)] = name == "token_pause"
    assert statuses and paused
    for (token, account), set_here in statuses.items():
        state = truth["token_statuses"][token][account]
        assert {column: state[column] for column in set_here} == set_here
    for token, is_paused in paused.items():
        assert truth["tokens"][token]["pause_status"] == ("PAUSED" if is_paused else "UNPAUSED")
    regulated = {t for t, state in truth["tokens"].items() if state["regulated"]}
    for token in regulated:  # the treasury is unfrozen and granted KYC at creation
        treasury = truth["tokens"][token]["treasury"]
        assert truth["token_statuses"][token][treasury]["kyc_status"] in (1, 2)


def test_royalty_fees_are_a_fraction_of_the_price_or_the_fallback(
    items: list[Item], truth: dict[str, Any]
) -> None:
    royalties = {t: state["royalty_fees"][0] for t, state in truth["tokens"].items() if state["royalty_fees"]}
    charged = 0
    for item in items:
        nft_lists = [t for t in item.record.tokenTransferLists if t.nftTransfers]
        if item.body_name != "cryptoTransfer" or not nft_lists:
            continue
        token = _id(nft_lists[0].token)
        if token not in royalties or not item.record.assessed_custom_fees:
            continue
        royalty = royalties[token]
        (fee,) = item.record.assessed_custom_fees
        assert _id(fee.fee_collector_account_id) == royalty["collector"]
        price = max((a.amount for a in item.body.cryptoTransfer.transfers.accountAmounts), default=0)
        if price:  # a sale: the seller pays the fraction of the price
            assert fee.amount == price * royalty["numerator"] // royalty["denominator"]
            assert _id(fee.effective_payer_account_id[0]) == _id(nft_lists[0].nftTransfers[0].senderAccountID)
        else:  # a gift: the receiver pays the fallback
            assert fee.amount == royalty["fallback_amount"]
            assert _id(fee.effective_payer_account_id[0]) == _id(nft_lists[0].nftTransfers[0].receiverAccountID)
        charged += 1
    assert charged


def test_atomic_batches_list_their_inner_transactions(items: list[Item], truth: dict[str, Any]) -> None:
    batches = 0
    for index, item in enumerate(items):
        if item.body_name != "atomic_batch":
            continue
        batches += 1
        listed = list(item.body.atomic_batch.transactions)
        inner = items[index + 1 : index + 1 + len(listed)]
        assert [i.signed.SerializeToString() for i in inner] == listed
        for child in inner:
            assert (
                child.record.parent_consensus_timestamp.seconds * 10**9
                + (child.record.parent_consensus_timestamp.nanos)
                == item.consensus_timestamp
            )
            assert child.body.HasField("batch_key") and child.body.transactionID.nonce == 0
            assert not child.body.HasField("nodeAccountID")
            signed = transaction_contents_pb2.SignedTransaction.FromString(listed[inner.index(child)])
            assert transaction_pb2.TransactionBody.FromString(signed.bodyBytes) == child.body
    assert batches == truth["atomic_batches"] > 0


def test_chunked_messages_name_their_first_chunk(items: list[Item], truth: dict[str, Any]) -> None:
    chunks: Counter[str] = Counter()
    groups: dict[bytes, list[Any]] = {}
    for item in items:
        body = item.body.consensusSubmitMessage
        if item.body_name == "consensusSubmitMessage" and body.HasField("chunkInfo"):
            chunks[f"0.0.{body.topicID.topicNum}"] += 1
            groups.setdefault(body.chunkInfo.initialTransactionID.SerializeToString(), []).append(item.body)
    assert groups
    for first_id, bodies in groups.items():
        total = bodies[0].consensusSubmitMessage.chunkInfo.total
        assert [b.consensusSubmitMessage.chunkInfo.number for b in bodies] == list(range(1, total + 1))
        assert bodies[0].transactionID.SerializeToString() == first_id
    assert {t: state["chunks"] for t, state in truth["topics"].items() if state["chunks"]} == dict(chunks)


def test_hook_storage_is_the_fold_of_its_writes(items: list[Item], truth: dict[str, Any]) -> None:
    storage: dict[tuple[str, int], dict[str, str]] = {}
    for item in items:
        if item.body_name == "cryptoCreateAccount" and item.body.cryptoCreateAccount.hook_creation_details:
            owner = _id(item.record.receipt.accountID)
            for details in item.body.cryptoCreateAccount.hook_creation_details:
                slots = storage.setdefault((owner, details.hook_id), {})
                for update in details.evm_hook.storage_updates:
                    slots[update.storage_slot.key.hex()] = update.storage_slot.value.rjust(32, b"\0").hex()
        elif item.body_name == "hook_store":
            body = item.body.hook_store
            slots = storage[(_id(body.hook_id.entity_id.account_id), body.hook_id.hook_id)]
            for update in body.storage_updates:
                if update.storage_slot.value:
                    slots[update.storage_slot.key.hex()] = update.storage_slot.value.rjust(32, b"\0").hex()
                else:
                    slots.pop(update.storage_slot.key.hex(), None)
    assert storage == {(h["owner"], h["hook_id"]): h["storage"] for h in truth["hooks"]}


def test_staking_rewards_come_from_0_0_800_after_midnight(items: list[Item], truth: dict[str, Any]) -> None:
    paid: Counter[str] = Counter()
    for item in items:
        rewards = item.record.paid_staking_rewards
        if not rewards:
            continue
        assert item.consensus_timestamp > MIDNIGHT
        moves = {_id(a.accountID): a.amount for a in item.record.transferList.accountAmounts}
        assert moves["0.0.800"] == -sum(reward.amount for reward in rewards)
        for reward in rewards:
            paid[_id(reward.accountID)] += reward.amount
            assert truth["accounts"][_id(reward.accountID)]["created_timestamp"] < MIDNIGHT
    assert paid and dict(paid) == truth["staking_rewards"]


def test_nft_metadata_and_deleted_tokens_are_the_records(items: list[Item], truth: dict[str, Any]) -> None:
    metadata: dict[tuple[str, int], str] = {}
    deleted: set[str] = set()
    for item in items:
        if item.body_name == "tokenMint" and item.body.tokenMint.metadata:
            token = _id(item.body.tokenMint.token)
            for serial, data in zip(item.record.receipt.serialNumbers, item.body.tokenMint.metadata, strict=True):
                metadata[(token, serial)] = data.hex()
        elif item.body_name == "token_update_nfts":
            body = item.body.token_update_nfts
            for serial in body.serial_numbers:
                metadata[(_id(body.token), serial)] = body.metadata.value.hex()
        elif item.body_name == "tokenDeletion":
            deleted.add(_id(item.body.tokenDeletion.token))
    assert metadata == {
        (token, int(serial)): nft["metadata"]
        for token, serials in truth["nfts"].items()
        for serial, nft in serials.items()
    }
    assert deleted and deleted == {t for t, state in truth["tokens"].items() if state["deleted"]}


def test_nodes_and_freezes_are_the_records(items: list[Item], truth: dict[str, Any]) -> None:
    created = {
        str(item.record.receipt.node_id): item.consensus_timestamp
        for item in items
        if item.body_name == "nodeCreate"
    }
    assert {n: state["created_timestamp"] for n, state in truth["nodes"].items()} == created
    deleted = {str(item.body.nodeDelete.node_id) for item in items if item.body_name == "nodeDelete"}
    assert {n for n, state in truth["nodes"].items() if state["deleted"]} == deleted
    freezes = [
        (item.consensus_timestamp, item.body.freeze.freeze_type) for item in items if item.body_name == "freeze"
    ]
    assert freezes == [(f["consensus_timestamp"], f["type"]) for f in truth["freezes"]]
    assert {f["type"] for f in truth["freezes"]} == {2, 4}  # prepare upgrade, then abort


@pytest.mark.parametrize("version", ["5", "2", "mixed"])
def test_v5_v2_and_mixed_streams_verify(tmp_path: Path, version: str) -> None:
    simulate(tmp_path, nodes=1, seconds=12, tps=10, seed=3, record_version=version)
    verified = verify_all(tmp_path)
    expected = {"5": [5] * 6, "2": [2] * 6, "mixed": [2, 2, 5, 5, 6, 6]}[version]
    assert [v.record.version for v in verified] == expected
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert [f["version"] for f in truth["record_files"]["files"]] == expected
    assert [f["hash"] for f in truth["record_files"]["files"]] == [v.record.hash.hex() for v in verified]
    assert not any(v.sidecars for v in verified if v.record.version < 6)
    if version == "mixed":  # byte-identical per seed, like v6
        again = tmp_path / "again"
        simulate(again, nodes=1, seconds=12, tps=10, seed=3, record_version=version)
        files = sorted(
            p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file() and again not in p.parents
        )
        assert all((tmp_path / f).read_bytes() == (again / f).read_bytes() for f in files)
