"""The simulator's later kinds through the whole pipeline, checked against ``truth.json`` in the tables and
the REST API: token freeze/KYC statuses, pauses, wipes, rejects and royalty fees; NFT airdrops and the owners
after claims; nodes, freezes, system delete/undelete, contract update/delete; hooks and hook storage; atomic
batches; staking rewards paid after the midnight stake update; chunked topic messages. A second network
switches record file versions (v2, v5, v6) mid-stream and imports to its balances."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.importer.importing import fetch, run
from tests.support import Ledger

from ledgermirror.runtime import Prepared
from ledgermirror.simulator.run import INITIAL_BALANCES, simulate

pytestmark = pytest.mark.usefixtures("ledger")

MIDNIGHT = 1_767_225_600_000_000_000
ATOMIC_BATCH = 74


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Eight seconds before midnight to twelve after: accounts staked before the new staking day are paid
    their rewards after the stake update that opens it."""
    out = tmp_path_factory.mktemp("kinds")
    simulate(out, nodes=1, seconds=20, tps=40, seed=21, start=MIDNIGHT - 8_000_000_000)
    return out


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mixed")
    simulate(out, nodes=2, seconds=12, tps=25, seed=22, record_version="mixed")
    return out


def _num(text: str) -> int:
    return int(text.rsplit(".", 1)[1])


def _import(url: str, out: Path) -> dict[str, Any]:
    truth: dict[str, Any] = json.loads((out / "truth.json").read_text())
    stats = run(url, out, book=out / "addressbook.bin", initial_balances=out / INITIAL_BALANCES)
    assert stats.files == truth["record_files"]["count"]
    return truth


def _balances_and_tokens_match(url: str, truth: dict[str, Any]) -> None:
    balances = {row["id"]: row["balance"] for row in fetch(url, "select id, balance from entity")}
    expected = {_num(account): balance for account, balance in truth["balances"].items()}
    assert {account: balances.get(account) for account in expected} == expected
    held = {
        (row["token_id"], row["account_id"]): row["balance"]
        for row in fetch(url, "select token_id, account_id, balance from token_account")
    }
    expected_held = {
        (_num(token), _num(account)): balance
        for token, accounts in truth["token_balances"].items()
        for account, balance in accounts.items()
    }
    assert {key: held.get(key) for key in expected_held} == expected_held
    supply = {
        row["token_id"]: row["total_supply"] for row in fetch(url, "select token_id, total_supply from token")
    }
    assert {_num(t): supply.get(_num(t)) for t in truth["tokens"]} == {
        _num(t): state["total_supply"] for t, state in truth["tokens"].items()
    }
    nfts = {
        (row["token_id"], row["serial_number"]): (row["account_id"], row["deleted"], row["metadata"].hex())
        for row in fetch(url, "select token_id, serial_number, account_id, deleted, metadata from nft")
    }
    expected_nfts = {
        (_num(token), int(serial)): (_num(nft["owner"]) if nft["owner"] else None, nft["deleted"], nft["metadata"])
        for token, serials in truth["nfts"].items()
        for serial, nft in serials.items()
    }
    assert {key: nfts.get(key) for key in expected_nfts} == expected_nfts


def _token_administration_matches(url: str, truth: dict[str, Any]) -> None:
    statuses = {
        (row["token_id"], row["account_id"]): (row["freeze_status"], row["kyc_status"])
        for row in fetch(url, "select token_id, account_id, freeze_status, kyc_status from token_account")
    }
    expected = {
        (_num(token), _num(account)): (state["freeze_status"], state["kyc_status"])
        for token, accounts in truth["token_statuses"].items()
        for account, state in accounts.items()
    }
    assert expected, "a regulated token has relationships with a set status"
    for key, (freeze, kyc) in expected.items():
        stored = statuses[key]
        assert (freeze is None or stored[0] == freeze, kyc is None or stored[1] == kyc) == (True, True), key
    assert 1 in {kyc for _, kyc in expected.values()}  # a KYC grant
    assert {1, 2} & {freeze for freeze, _ in expected.values()}  # a freeze or unfreeze
    pauses = {
        row["token_id"]: row["pause_status"] for row in fetch(url, "select token_id, pause_status from token")
    }
    assert {_num(t): pauses[_num(t)] for t in truth["tokens"]} == {
        _num(t): state["pause_status"] for t, state in truth["tokens"].items()
    }
    fee_rows = {row["entity_id"]: row for row in fetch(url, "select * from custom_fee")}
    fees = {token: row["royalty_fees"] for token, row in fee_rows.items()}
    for token, state in truth["tokens"].items():  # fixed fees, after the fee schedule updates
        fixed = json.loads(fee_rows[_num(token)]["fixed_fees"] or "[]")
        assert [(f["collector_account_id"], f["amount"]) for f in fixed] == [
            (_num(f["collector"]), f["amount"]) for f in state["custom_fees"]
        ], token
    deleted = {row["id"] for row in fetch(url, "select id from entity where type = 'TOKEN' and deleted")}
    assert deleted == {_num(t) for t, state in truth["tokens"].items() if state["deleted"]} != set()
    royalties = {t: state["royalty_fees"] for t, state in truth["tokens"].items() if state["royalty_fees"]}
    assert royalties
    for token, listed in royalties.items():
        stored = json.loads(fees[_num(token)])  # jsonb arrives as text
        assert [
            (fee["collector_account_id"], fee["numerator"], fee["denominator"], fee["fallback_fee"]["amount"])
            for fee in stored
        ] == [(_num(f["collector"]), f["numerator"], f["denominator"], f["fallback_amount"]) for f in listed]


def _nft_airdrops_match(url: str, client: TestClient, truth: dict[str, Any]) -> None:
    rows = fetch(
        url,
        "select sender_account_id, receiver_account_id, token_id, serial_number, state::text from token_airdrop "
        "where serial_number > 0",
    )
    stored = {
        (row["sender_account_id"], row["receiver_account_id"], row["token_id"], row["serial_number"]): row["state"]
        for row in rows
    }
    expected = {
        (_num(a["sender"]), _num(a["receiver"]), _num(a["token"]), a["serial"]): a["state"]
        for a in truth["nft_airdrops"]
    }
    assert expected and stored == expected
    for airdrop in truth["nft_airdrops"]:
        if airdrop["state"] == "PENDING":
            pending = client.get(f"/api/v1/accounts/{airdrop['receiver']}/airdrops/pending").json()["airdrops"]
            assert (airdrop["token"], airdrop["serial"]) in {(p["token_id"], p["serial_number"]) for p in pending}
        owner = truth["nfts"][airdrop["token"]][str(airdrop["serial"])]["owner"]
        if airdrop["state"] == "CLAIMED" and owner == airdrop["receiver"]:
            served = client.get(f"/api/v1/accounts/{owner}/nfts").json()["nfts"]
            assert (airdrop["token"], airdrop["serial"]) in {(n["token_id"], n["serial_number"]) for n in served}


def _network_work_matches(url: str, truth: dict[str, Any]) -> None:
    nodes = {row["node_id"]: row for row in fetch(url, "select * from node")}
    assert truth["nodes"] and set(nodes) == {int(n) for n in truth["nodes"]}
    for node_id, state in truth["nodes"].items():
        row = nodes[int(node_id)]
        assert (row["account_id"], row["deleted"], row["decline_reward"], row["created_timestamp"]) == (
            _num(state["account"]), state["deleted"], state["decline_reward"], state["created_timestamp"],
        )  # fmt: skip
        assert row["admin_key"].hex() == state["admin_key"]
    freezes = fetch(url, "select * from network_freeze order by consensus_timestamp")
    assert [
        (row["consensus_timestamp"], row["type"], row["file_id"], row["file_hash"].hex(), row["start_time"])
        for row in freezes
    ] == [
        (
            f["consensus_timestamp"],
            f["type"],
            _num(f["file_id"]) if f["file_id"] else None,
            f["file_hash"],
            f["start_time"],
        )
        for f in truth["freezes"]
    ]
    entities = {
        row["id"]: row for row in fetch(url, "select id, deleted, memo, obtainer_id, type::text from entity")
    }
    assert truth["user_files"]
    contents = {
        row["entity_id"]: row["file_data"]
        for row in fetch(url, "select entity_id, file_data from file_data order by consensus_timestamp")
    }
    for file, state in truth["user_files"].items():
        assert (entities[_num(file)]["type"], entities[_num(file)]["deleted"]) == ("FILE", state["deleted"])
        assert hashlib.sha384(contents[_num(file)]).hexdigest() == state["sha384"]
    assert any(state["deleted"] for state in truth["contracts"].values())
    for contract, state in truth["contracts"].items():
        row = entities[_num(contract)]
        obtainer = _num(state["obtainer"]) if state["obtainer"] else None
        assert (row["type"], row["deleted"], row["memo"], row["obtainer_id"]) == (
            "CONTRACT", state["deleted"], state["memo"], obtainer,
        ), contract  # fmt: skip


def _hooks_match(url: str, truth: dict[str, Any]) -> None:
    hooks = {
        (row["owner_id"], row["hook_id"]): (row["contract_id"], row["created_timestamp"], row["deleted"])
        for row in fetch(url, "select * from hook")
    }
    assert truth["hooks"]
    assert hooks == {
        (_num(h["owner"]), h["hook_id"]): (_num(h["contract"]), h["created_timestamp"], h["deleted"])
        for h in truth["hooks"]
    }
    storage = {
        (row["owner_id"], row["hook_id"], row["key"].hex()): row["value"].hex()
        for row in fetch(url, "select * from hook_storage where not deleted")
    }
    assert storage == {
        (_num(h["owner"]), h["hook_id"], slot): bytes.fromhex(value).lstrip(b"\0").hex()
        for h in truth["hooks"]
        for slot, value in h["storage"].items()
    }


def _batches_rewards_and_messages_match(url: str, client: TestClient, truth: dict[str, Any]) -> None:
    batches = fetch(
        url, "select consensus_timestamp, inner_transactions from transaction where type = $1", ATOMIC_BATCH
    )
    assert len(batches) == truth["atomic_batches"] > 0
    for batch in batches:
        inner = fetch(
            url,
            "select payer_account_id, valid_start_ns from transaction where parent_consensus_timestamp = $1 "
            "and batch_key is not null order by consensus_timestamp",
            batch["consensus_timestamp"],
        )
        assert len(inner) >= 2
        assert batch["inner_transactions"] == [value for row in inner for value in row.values()]
    paid = {
        row["account_id"]: row["sum"]
        for row in fetch(url, "select account_id, sum(amount) from staking_reward_transfer group by account_id")
    }
    assert truth["staking_rewards"], "rewards are paid after the midnight stake update"
    assert paid == {_num(account): amount for account, amount in truth["staking_rewards"].items()}
    for account, amount in truth["staking_rewards"].items():
        rewards = client.get(f"/api/v1/accounts/{account}/rewards").json()["rewards"]
        assert sum(reward["amount"] for reward in rewards) == amount
        served = client.get(f"/api/v1/accounts/{account}").json()
        assert served["balance"]["balance"] == truth["balances"][account]
    messages = {
        row["topic_id"]: (row["count"], row["chunks"])
        for row in fetch(
            url,
            "select topic_id, count(*), count(*) filter (where chunk_total > 1) as chunks from topic_message "
            "group by topic_id",
        )
    }
    assert any(state["chunks"] for state in truth["topics"].values())
    assert {_num(t): messages.get(_num(t), (0, 0)) for t in truth["topics"]} == {
        _num(t): (state["sequence_number"], state["chunks"]) for t, state in truth["topics"].items()
    }


def _topics_are_served(client: TestClient, truth: dict[str, Any]) -> None:
    """Every topic by ``/topics/{id}``, its last message's running hash, and its messages followed page by page
    with their chunk information."""
    for topic, state in truth["topics"].items():
        served = client.get(f"/api/v1/topics/{topic}").json()
        assert (served["memo"], served["deleted"]) == (state["memo"], state["deleted"]), topic
        if not state["sequence_number"]:
            continue
        last = client.get(f"/api/v1/topics/{topic}/messages/{state['sequence_number']}").json()
        assert base64.b64decode(last["running_hash"]).hex() == state["running_hash"]
        messages: list[dict[str, Any]] = []
        link: str | None = f"/api/v1/topics/{topic}/messages?limit=100"
        while link:
            page = client.get(link).json()
            messages += page["messages"]
            link = page["links"]["next"]
        assert [m["sequence_number"] for m in messages] == list(range(1, state["sequence_number"] + 1))
        chunks = [m["chunk_info"] for m in messages if m["chunk_info"] and m["chunk_info"]["total"] > 1]
        assert len(chunks) == state["chunks"], topic
        for chunk in chunks:
            assert 1 <= chunk["number"] <= chunk["total"] and chunk["initial_transaction_id"]


def test_every_kind_imports_to_its_truth(
    database: Prepared, ledger: Ledger, client: TestClient, network: Path
) -> None:
    truth = _import(database.owner_url, network)
    url = database.owner_url
    _balances_and_tokens_match(url, truth)
    _token_administration_matches(url, truth)
    _nft_airdrops_match(url, client, truth)
    _network_work_matches(url, truth)
    _hooks_match(url, truth)
    _batches_rewards_and_messages_match(url, client, truth)
    _topics_are_served(client, truth)


def test_record_versions_switch_mid_stream(database: Prepared, ledger: Ledger, mixed: Path) -> None:
    truth = _import(database.owner_url, mixed)
    rows = fetch(database.owner_url, "select name, version, index, hash from record_file order by index")
    listed = truth["record_files"]["files"]
    assert [(r["name"], r["version"], r["index"], r["hash"]) for r in rows] == [
        (f["name"], f["version"], f["block_number"], f["hash"]) for f in listed
    ]
    assert [f["version"] for f in listed] == [2, 2, 5, 5, 6, 6]
    _balances_and_tokens_match(database.owner_url, truth)
