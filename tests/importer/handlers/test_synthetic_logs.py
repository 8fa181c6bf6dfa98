"""Synthetic ERC-20/721 logs of HTS token operations (``persist.syntheticContractLogs``, on by default)."""

from __future__ import annotations

from typing import Any

from tests.importer.handlers.items import (
    T0,
    account,
    basic,
    body,
    encoded,
    fetch,
    import_items,
    module,
    record_file,
    record_item,
    token,
    write,
)
from tests.support import Ledger

from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.file_rows import rows_of_file
from ledgermirror.importer.handlers.synthetic_logs import APPROVAL, TRANSFER

FUNGIBLE, NFT = 5000, 6000
A, B, C, D = 1001, 1002, 1003, 1004


def amounts(*pairs: tuple[int, int]) -> list[Any]:
    return [basic.AccountAmount(accountID=account(num), amount=amount) for num, amount in pairs]


def logs(url: str) -> list[dict[str, Any]]:
    return fetch(url, "select * from contract_log order by consensus_timestamp, index")


def test_mint_transfer_pairs_nft_and_approval(ledger: Ledger) -> None:
    mint = module("token_mint_pb2").TokenMintTransactionBody(token=token(FUNGIBLE), amount=100)
    minted = record_item(
        body("tokenMint", mint),
        at=T0,
        receipt={"newTotalSupply": 100},
        tokenTransferLists=[basic.TokenTransferList(token=token(FUNGIBLE), transfers=amounts((A, 100)))],
    )
    transfer = module("crypto_transfer_pb2").CryptoTransferTransactionBody()
    moved = record_item(
        body("cryptoTransfer", transfer),
        at=T0 + 1,
        tokenTransferLists=[
            basic.TokenTransferList(
                token=token(FUNGIBLE), transfers=amounts((C, 60), (B, -30), (D, 40), (A, -70))
            ),
            basic.TokenTransferList(
                token=token(NFT),
                nftTransfers=[
                    basic.NftTransfer(senderAccountID=account(A), receiverAccountID=account(B), serialNumber=5)
                ],
            ),
        ],
    )
    approve = module("crypto_approve_allowance_pb2").CryptoApproveAllowanceTransactionBody(
        tokenAllowances=[module("crypto_approve_allowance_pb2").TokenAllowance(
            tokenId=token(FUNGIBLE), owner=account(A), spender=account(C), amount=9
        )]
    )  # fmt: skip
    approved = record_item(body("cryptoApproveAllowance", approve), at=T0 + 2)
    import_items(ledger.url, minted, moved, approved)
    rows = logs(ledger.url)
    a, b, c, d = (bytes([num >> 8, num & 0xFF]) for num in (A, B, C, D))
    assert [row["index"] for row in rows] == [0, 1, 2, 3, 4, 5]  # one running index per file
    assert [(row["topic0"], row["topic1"], row["topic2"], row["topic3"], row["data"]) for row in rows] == [
        (TRANSFER, b"", a, None, b"\x64"),  # mint: from 0.0.0
        (TRANSFER, a, c, None, b"\x3c"),  # the largest sender to the largest receiver: 60
        (TRANSFER, a, d, None, b"\x0a"),  # the rest of A's 70
        (TRANSFER, b, d, None, b"\x1e"),
        (TRANSFER, a, b, b"\x05", b""),  # NFT serial 5
        (APPROVAL, a, c, None, b"\x09"),
    ]
    assert all(row["contract_id"] == row["root_contract_id"] for row in rows)
    assert [row["contract_id"] for row in rows] == [encoded(FUNGIBLE)] * 4 + [encoded(NFT), encoded(FUNGIBLE)]
    # SyntheticContractLogServiceImpl: synthetic = (log instanceof TransferContractLog); the NFT transfer is a
    # TransferIndexedContractLog, so only the four fungible transfers are synthetic
    assert [row["synthetic"] for row in rows] == [True] * 4 + [False, False]
    assert all(row["bloom"] == b"\x00" for row in rows)
    assert rows[1]["transaction_hash"] == moved.record.transactionHash[:32] and rows[1]["transaction_index"] == 1


def _call_result() -> Any:
    return module("contract_types_pb2").ContractFunctionResult(
        contractID=basic.ContractID(contractNum=359), gasUsed=5
    )


def test_precompile_children_take_the_parents_place(ledger: Ledger) -> None:
    """A contract call whose child mints through the token precompile: the child's log carries the parent's
    timestamp, index and hash. From HAPI 0.71 an item with a contract result gets no synthetic log."""
    call = module("contract_call_pb2").ContractCallTransactionBody(contractID=basic.ContractID(contractNum=359))
    parent = record_item(body("contractCall", call), at=T0, contractCallResult=_call_result())
    mint = module("token_mint_pb2").TokenMintTransactionBody(token=token(FUNGIBLE), amount=3)
    child = record_item(
        body("tokenMint", mint, nonce=1),
        at=T0 + 1,
        parent=T0,
        receipt={"newTotalSupply": 3},
        tokenTransferLists=[basic.TokenTransferList(token=token(FUNGIBLE), transfers=amounts((A, 3)))],
    )
    import_items(ledger.url, parent, child)
    rows = logs(ledger.url)
    assert [(row["consensus_timestamp"], row["transaction_index"], row["transaction_hash"]) for row in rows] == [
        (T0, 0, parent.record.transactionHash[:32])
    ]
    burn = module("token_burn_pb2").TokenBurnTransactionBody(token=token(FUNGIBLE), amount=1)

    def burned(at: int) -> Any:
        return record_item(
            body("tokenBurn", burn, valid_start=at),
            at=at,
            receipt={"newTotalSupply": 2},
            contractCallResult=_call_result(),
            tokenTransferLists=[basic.TokenTransferList(token=token(FUNGIBLE), transfers=amounts((A, -1)))],
        )

    batch = Batch()
    rows_of_file(record_file([burned(T0 + 4)], hapi=(0, 71, 0)), batch)
    write(ledger.url, batch)
    assert len(logs(ledger.url)) == 1
    batch = Batch()
    rows_of_file(record_file([burned(T0 + 5)], hapi=(0, 70, 0)), batch)
    write(ledger.url, batch)
    burn_log = [row for row in logs(ledger.url) if row["consensus_timestamp"] == T0 + 5]
    assert [(row["topic1"], row["topic2"], row["data"], row["bloom"]) for row in burn_log] == [
        (bytes([A >> 8, A & 0xFF]), b"", b"\x01", b"\x01")
    ]
