"""POST /api/v1/contracts/call and Hedera's system contracts beyond the first token views (embedded PostgreSQL,
the mirrored rows of tests/api/test_contract_call.py): the classic HTS ``allowance``/``getApproved`` at 0x167,
``redirectForToken``, the V2 token infos (metadata and metadata key), value sent to a system contract refused
with ``INVALID_CONTRACT_ID``, and the gas a system-contract view costs (the consensus node's canonical view gas),
in a call and in an estimate. Ported cases name their source test in the reference."""

from __future__ import annotations

from typing import Any

from eth_abi.abi import decode, encode
from starlette.testclient import TestClient
from tests.api.test_contract_call import (
    _EXPIRY,
    _FEES,
    _KEY_VALUE,
    COMPILED,
    ECDSA,
    ED25519,
    EXCHANGE_RATE,
    FUNGIBLE,
    HOLDER,
    HTS,
    INFO_TOKEN,
    NFT,
    PRNG,
    SETUP,
    TOKENS,
    addr,
    address_word,
    call,
    errors,
    post,
    result,
    selector,
    text,
    word,
)
from tests.support import Ledger

_HEDERA_TOKEN_V2 = f"(string,string,address,string,bool,int64,bool,(uint256,{_KEY_VALUE})[],{_EXPIRY},bytes)"
_TOKEN_INFO_V2 = f"({_HEDERA_TOKEN_V2},int64,bool,bool,bool,{_FEES},string)"
"""IHederaTokenService's V2 structs as its Solidity declares them (``HederaTokenV2``: ``HederaToken`` and
``bytes metadata``), written out here apart from evm/token_info.py."""
METADATA_KEY = "02" + "ef" * 32
V2_TOKEN: dict[str, Any] = {
    "entities": [{"num": 2005, "type": "TOKEN", "key": "1220" + ED25519}],
    "tokens": [
        {"token_id": "0.0.2005", "name": "Meta", "symbol": "MTA", "decimals": 2, "total_supply": 900,
         "type": "FUNGIBLE_COMMON", "treasury_account_id": "0.0.1010", "created_timestamp": 150,
         "metadata": "0x6d6574612d64617461", "metadata_key": "\\x3a21" + METADATA_KEY},
    ],
}  # fmt: skip
V2 = addr(2005)


def loaded(client: TestClient, ledger: Ledger, *specs: dict[str, Any]) -> TestClient:
    ledger.load(SETUP)
    for spec in specs:
        ledger.load(spec)
    return client


def reverted(client: TestClient, to: str, data: str) -> bool:
    response = post(client, {"to": to, "data": data})
    return response.status_code == 400 and errors(response)[0]["message"] == "CONTRACT_REVERT_EXECUTED"


def test_classic_allowance_and_get_approved(client: TestClient, ledger: Ledger) -> None:
    # ContractCallServiceERCTokenReadOnlyFunctionsTest: ethCallAllowanceStatic, ethCallGetApprovedStatic,
    # ethCallGetApprovedEmptySpenderStatic, their values asked through the classic HTS forms at 0x167 (the
    # consensus node's GetAllowanceCall and GetApprovedCall: the response code first)
    mirrored = loaded(client, ledger, TOKENS)
    allowance = "allowance(address,address,address)"
    assert call(mirrored, HTS, allowance, word(2001) + word(1010) + word(1001)) == "0x" + word(22) + word(77)
    assert call(mirrored, HTS, allowance, word(2001) + address_word(HOLDER) + word(1001)) == "0x" + word(
        22
    ) + word(77)  # the owner by its EVM address
    assert call(mirrored, HTS, allowance, word(2001) + word(1001) + word(1010)) == "0x" + word(22) + word(0)
    approved = "getApproved(address,uint256)"
    assert call(mirrored, HTS, approved, word(2002) + word(1)) == "0x" + word(22) + word(1001)
    assert call(mirrored, HTS, approved, word(2002) + word(1), block="1") == "0x" + word(22) + word(0)
    # an unknown token, the other type of token, an unknown or burned serial, a short argument list: reverts
    for data in (
        selector(allowance) + word(4242) + word(1010) + word(1001),
        selector(allowance) + word(2002) + word(1010) + word(1001),
        selector(allowance) + word(2001) + word(1010),
        selector(approved) + word(2001) + word(1),
        selector(approved) + word(2002) + word(3),
        selector(approved) + word(2002) + word(9),
        selector(approved) + word(4242) + word(1),
    ):
        assert reverted(mirrored, HTS, "0x" + data), data


def redirect(token: int, inner: bytes) -> str:
    arguments = encode(["address", "bytes"], [addr(token), inner]).hex()
    return "0x" + selector("redirectForToken(address,bytes)") + arguments


def test_redirect_for_token(client: TestClient, ledger: Ledger) -> None:
    # ContractCallServiceERCTokenReadOnlyFunctionsTest: the RedirectTestContract cases (name, symbol, decimals,
    # totalSupply, balanceOf, allowance, ownerOf, tokenURI, getApproved through redirectForToken); the same answers
    # as the token's own address gives
    mirrored = loaded(client, ledger, TOKENS)
    cases = [
        (2001, "name()", b""),
        (2001, "symbol()", b""),
        (2001, "decimals()", b""),
        (2001, "totalSupply()", b""),
        (2001, "balanceOf(address)", bytes.fromhex(word(1010))),
        (2001, "allowance(address,address)", bytes.fromhex(word(1010) + word(1001))),
        (2002, "ownerOf(uint256)", bytes.fromhex(word(1))),
        (2002, "tokenURI(uint256)", bytes.fromhex(word(1))),
        (2002, "getApproved(uint256)", bytes.fromhex(word(1))),
    ]
    for token, signature, args in cases:
        inner = bytes.fromhex(selector(signature)) + args
        direct = call(mirrored, addr(token), signature, args.hex())
        assert result(mirrored, {"to": HTS, "data": redirect(token, inner)}) == direct, signature
    assert result(mirrored, {"to": HTS, "data": redirect(2001, bytes.fromhex(selector("name()")))}) == text(
        "Fungible"
    )
    # an unknown token, a function the facade does not offer, decimals of an NFT, data that does not decode
    assert reverted(mirrored, HTS, redirect(4242, bytes.fromhex(selector("name()"))))
    assert reverted(mirrored, HTS, redirect(2001, bytes.fromhex(selector("fakeSignature()"))))
    assert reverted(mirrored, HTS, redirect(2002, bytes.fromhex(selector("decimals()"))))
    assert reverted(mirrored, HTS, "0x" + selector("redirectForToken(address,bytes)") + word(2001) + word(64))


def test_token_info_v2(client: TestClient, ledger: Ledger) -> None:
    # ContractCallServicePrecompileReadonlyTest: getInformationForTokenV2, getInformationForFungibleTokenV2,
    # getInformationForNonFungibleTokenV2 (HIP-646: the token's metadata and its metadata key, type 128)
    mirrored = loaded(client, ledger, TOKENS, INFO_TOKEN, V2_TOKEN)
    raw = call(mirrored, HTS, "getTokenInfoV2(address)", word(2005))
    code, info = decode(["int64", _TOKEN_INFO_V2], bytes.fromhex(raw[2:]))
    token = info[0]
    assert code == 22 and token[:2] == ("Meta", "MTA") and token[2].lower() == addr(1010)
    assert token[9] == b"meta-data" and info[1] == 900
    keys = {key_type: value for key_type, value in token[7]}
    assert list(keys) == [1, 2, 4, 8, 16, 32, 64, 128]
    assert keys[1] == (False, addr(0), bytes.fromhex(ED25519), b"", addr(0))
    assert keys[128] == (False, addr(0), b"", bytes.fromhex(METADATA_KEY), addr(0))
    assert keys[2] == (False, addr(0), b"", b"", addr(0))
    # the V1 form of the same token: seven keys, no metadata
    v1 = call(mirrored, HTS, "getTokenInfo(address)", word(2005))
    assert len(v1) < len(raw)
    code, (fungible, decimals) = decode(
        ["int64", f"({_TOKEN_INFO_V2},int32)"],
        bytes.fromhex(call(mirrored, HTS, "getFungibleTokenInfoV2(address)", word(2005))[2:]),
    )
    assert (code, decimals, fungible[0][9]) == (22, 2, b"meta-data")
    # a token without metadata: empty bytes and an empty metadata key (INFO_TOKEN's 0.0.2003)
    _, info = decode(
        ["int64", _TOKEN_INFO_V2], bytes.fromhex(call(mirrored, HTS, "getTokenInfoV2(address)", word(2003))[2:])
    )
    assert info[0][9] == b"" and dict(info[0][7])[2] == (False, addr(0), b"", bytes.fromhex(ECDSA), addr(0))
    nft_type = f"({_TOKEN_INFO_V2},int64,address,int64,bytes,address)"
    code, nft = decode(
        ["int64", nft_type],
        bytes.fromhex(call(mirrored, HTS, "getNonFungibleTokenInfoV2(address,int64)", word(2002) + word(1))[2:]),
    )
    assert (code, nft[1], nft[2].lower(), nft[4], nft[5].lower()) == (22, 1, HOLDER, b"ipfs://art", addr(1001))
    assert nft[0][0][:2] == ("Art", "ART")
    # unknown token: INVALID_TOKEN_ID (167) and the empty V2 struct; unknown serial: 225 with the treasury
    code, empty = decode(
        ["int64", _TOKEN_INFO_V2], bytes.fromhex(call(mirrored, HTS, "getTokenInfoV2(address)", word(4242))[2:])
    )
    assert code == 167 and empty[0][0] == "" and empty[0][9] == b""
    code, missing = decode(
        ["int64", nft_type],
        bytes.fromhex(call(mirrored, HTS, "getNonFungibleTokenInfoV2(address,int64)", word(2002) + word(9))[2:]),
    )
    assert code == 225 and missing[1] == 9


def test_value_sent_to_a_system_contract_is_refused(client: TestClient, ledger: Ledger) -> None:
    # ContractCallSystemPrecompileTest: the exchange rate and PRNG called with value -> INVALID_CONTRACT_ID (the
    # consensus node's CustomMessageCallProcessor halts a value transfer to a system contract or a precompile)
    mirrored = loaded(client, ledger, TOKENS)
    sender = "0x" + format(2, "040x")
    for to, data in (
        (EXCHANGE_RATE, selector("tinycentsToTinybars(uint256)") + word(100)),
        (PRNG, selector("getPseudorandomSeed()")),
        (HTS, selector("isToken(address)") + word(2001)),
        ("0x" + format(2, "040x"), "ff"),  # SHA-256
    ):
        response = post(mirrored, {"to": to, "data": "0x" + data, "value": 1, "from": sender})
        assert response.status_code == 400, to
        assert errors(response) == [{"message": "INVALID_CONTRACT_ID", "detail": "", "data": "0x"}], to
        assert post(mirrored, {"to": to, "data": "0x" + data, "from": sender}).status_code == 200, to


def gas_used(client: TestClient, to: str, data: str, gas: int) -> bool:
    return post(client, {"to": to, "data": data, "gas": gas}).status_code == 200


def test_view_gas_is_the_canonical_view_price(client: TestClient, ledger: Ledger) -> None:
    # The consensus node's SystemContractGasCalculator.viewGasRequirement (canonical TokenGetInfo price, $0.0001,
    # at $0.0000000852 per gas, plus a fifth): 2,607 gas per view, where the exchange rate's call costs 100
    mirrored = loaded(client, ledger, TOKENS)
    data = "0x" + selector("isToken(address)") + word(2001)
    intrinsic = 21_000 + sum(4 if byte == 0 else 16 for byte in bytes.fromhex(data[2:]))
    assert gas_used(mirrored, HTS, data, intrinsic + 2_607)
    out_of_gas = post(mirrored, {"to": HTS, "data": data, "gas": intrinsic + 2_606})
    assert errors(out_of_gas)[0]["message"] == "INSUFFICIENT_GAS"
    estimate = int(result(mirrored, {"to": HTS, "data": data, "estimate": True}), 16)
    assert intrinsic + 2_607 <= estimate <= (intrinsic + 2_607) * 1.2
    # a facade view costs the same; the exchange rate's conversion 100
    facade = "0x" + selector("name()")
    facade_intrinsic = 21_000 + 4 * 16
    assert gas_used(mirrored, FUNGIBLE, facade, facade_intrinsic + 2_607)
    assert not gas_used(mirrored, FUNGIBLE, facade, facade_intrinsic + 2_606)
    rate = "0x" + selector("tinycentsToTinybars(uint256)") + word(100)
    rate_intrinsic = 21_000 + sum(4 if byte == 0 else 16 for byte in bytes.fromhex(rate[2:]))
    assert gas_used(mirrored, EXCHANGE_RATE, rate, rate_intrinsic + 100)
    assert not gas_used(mirrored, EXCHANGE_RATE, rate, rate_intrinsic + 99)


ACCOUNT_SERVICE = addr(0x16A)
HBAR_ALLOWANCES: dict[str, Any] = {
    "cryptoAllowances": [
        {"owner": "0.0.1010", "spender": "0.0.1001", "amount": 300, "amount_granted": 500,
         "timestamp_range": "[2000000000,)"},
        {"owner": "0.0.1010", "spender": "0.0.1001", "amount": 40, "amount_granted": 40,
         "timestamp_range": "[150,2000000000)"},
    ],
}  # fmt: skip


def test_account_service_reads(client: TestClient, ledger: Ledger) -> None:
    # ContractCallAliasTests and the hbarAllowance cases of the reference's HAS tests; the consensus node's
    # HbarAllowanceCall, EvmAddressAliasCall, HederaAccountNumAliasCall, IsValidAliasCall (response code first)
    mirrored = loaded(client, ledger, HBAR_ALLOWANCES)
    allowance = "hbarAllowance(address,address)"
    assert call(mirrored, ACCOUNT_SERVICE, allowance, word(1010) + word(1001)) == "0x" + word(22) + word(300)
    assert call(mirrored, ACCOUNT_SERVICE, allowance, word(1010) + word(1001), block="1") == "0x" + word(
        22
    ) + word(40)
    assert call(mirrored, ACCOUNT_SERVICE, allowance, address_word(HOLDER) + word(1001)) == "0x" + word(22) + word(
        300
    )  # the owner by its EVM address
    assert call(mirrored, ACCOUNT_SERVICE, allowance, word(1010) + word(4242)) == "0x" + word(22) + word(0)
    assert reverted(mirrored, ACCOUNT_SERVICE, "0x" + selector(allowance) + word(4242) + word(1001))  # no owner
    evm_alias = "getEvmAddressAlias(address)"
    assert call(mirrored, ACCOUNT_SERVICE, evm_alias, word(1010)) == "0x" + word(22) + address_word(HOLDER)
    for missing in (word(2), word(4242), address_word(HOLDER)):  # no alias, no account, not long-zero
        assert call(mirrored, ACCOUNT_SERVICE, evm_alias, missing) == "0x" + word(15) + word(0), missing
    num_alias = "getHederaAccountNumAlias(address)"
    assert call(mirrored, ACCOUNT_SERVICE, num_alias, address_word(HOLDER)) == "0x" + word(22) + word(1010)
    assert call(mirrored, ACCOUNT_SERVICE, num_alias, word(2)) == "0x" + word(22) + word(2)  # no alias: itself
    # INVALID_SOLIDITY_ADDRESS (29): an unknown EVM address, an unknown number, and the long-zero address of an
    # account whose priority address is its alias (a non-canonical reference)
    for invalid in (address_word("0x" + "cd" * 20), word(4242), word(1010)):
        assert call(mirrored, ACCOUNT_SERVICE, num_alias, invalid) == "0x" + word(29) + word(0), invalid
    valid = "isValidAlias(address)"
    for address, expected in (
        (address_word(HOLDER), 1),
        (word(1010), 1),
        (word(2), 1),
        (word(1001), 1),  # a contract is an account
        (word(4242), 0),
        (address_word("0x" + "cd" * 20), 0),
    ):
        assert call(mirrored, ACCOUNT_SERVICE, valid, address) == "0x" + word(expected), address
    # HRC-632 on the account's own address: hbarAllowance(spender) of that owner; other data on an account runs
    # nothing (an empty success), and value still moves to it
    facade = "hbarAllowance(address)"
    assert call(mirrored, HOLDER, facade, word(1001)) == "0x" + word(22) + word(300)
    assert call(mirrored, addr(1010), facade, word(1001), block="1") == "0x" + word(22) + word(40)
    assert call(mirrored, HOLDER, facade, word(4242)) == "0x" + word(22) + word(0)
    assert call(mirrored, HOLDER, "name()") == "0x"
    assert result(mirrored, {"to": HOLDER, "value": 5, "from": addr(2)}) == "0x"
    # not a read this route answers (isAuthorizedRaw), and value sent: refused
    assert reverted(mirrored, ACCOUNT_SERVICE, "0x" + selector("isAuthorizedRaw(address,bytes,bytes)") + word(1))
    sent = post(mirrored, {"to": ACCOUNT_SERVICE, "data": "0x" + selector(valid) + word(2), "value": 1,
                           "from": addr(2)})  # fmt: skip
    assert errors(sent)[0]["message"] == "INVALID_CONTRACT_ID"


WRITER = addr(1005)
FRESH_WRITER = addr(1006)
WRITES: dict[str, Any] = {
    "contracts": [
        {"num": 1005, "runtime_bytecode": COMPILED["TokenWriter"]["runtime"]},
        {"num": 1006, "runtime_bytecode": COMPILED["TokenWriter"]["runtime"]},
    ],
    "tokenaccounts": [
        {"account_id": "0.0.1005", "token_id": "0.0.2001", "balance": 1_000, "created_timestamp": 150},
    ],
    "tokenAllowances": [
        {"owner": "0.0.1010", "spender": "0.0.1005", "token_id": "0.0.2001", "amount": 500},
        {"owner": "0.0.1010", "spender": "0.0.1006", "token_id": "0.0.2001", "amount": 60},
    ],
}  # fmt: skip


def writer(client: TestClient, signature: str, types: list[str], values: list[Any], out: list[str]) -> Any:
    data = "0x" + selector(signature) + encode(types, values).hex()
    return decode(out, bytes.fromhex(result(client, {"to": WRITER, "data": data})[2:]))


def test_hts_writes_in_a_throwaway_overlay(client: TestClient, ledger: Ledger) -> None:
    # upstream-web3.md §3.6 (writes against the request's write cache, later reads in the same call see them);
    # ContractCallServicePrecompileModificationTest: transferToken, transferFrom, approve, associateToken;
    # ContractCallServiceERCTokenModificationFunctionsTest: transfer, transferFrom, approve (values ours)
    mirrored = loaded(client, ledger, TOKENS, WRITES)
    token, holder = addr(2001), addr(1010)
    assert writer(mirrored, "transferThenBalances(address,address,uint256)", ["address", "address", "uint256"],
                  [token, holder, 250], ["uint256", "uint256"]) == (750, 4_450)  # fmt: skip
    # nothing persisted: the next call starts from the mirror again
    assert call(mirrored, FUNGIBLE, "balanceOf(address)", word(1005)) == "0x" + word(1_000)
    assert writer(mirrored, "htsTransferThenBalances(address,address,int64)", ["address", "address", "int64"],
                  [token, holder, 100], ["uint256", "uint256"]) == (900, 4_300)  # fmt: skip
    assert writer(
        mirrored,
        "transferFromThenState(address,address,address,uint256)",
        ["address", "address", "address", "uint256"],
        [token, holder, WRITER, 200],
        ["uint256", "uint256", "uint256"],
    ) == (4_000, 1_200, 300)
    assert writer(
        mirrored,
        "approveThenAllowances(address,address,uint256,uint256)",
        ["address", "address", "uint256", "uint256"],
        [token, addr(1001), 11, 22],
        ["uint256", "uint256"],
    ) == (11, 22)
    # a reverted frame undoes its transfer; a write inside a static frame fails
    assert writer(mirrored, "balanceAfterRevertedTransfer(address,address,uint256)", ["address", "address",
                  "uint256"], [token, holder, 10], ["uint256"]) == (1_000,)  # fmt: skip
    assert writer(mirrored, "staticTransferFails(address,address)", ["address", "address"], [token, holder],
                  ["bool"]) == (True,)  # fmt: skip
    # associate, then take an allowance's worth: a contract not associated before the call
    data = "0x" + selector("associateThenTransfer(address,address,uint256)")
    data += encode(["address", "address", "uint256"], [token, holder, 50]).hex()
    answer = result(mirrored, {"to": FRESH_WRITER, "data": data})
    assert decode(["int64", "uint256"], bytes.fromhex(answer[2:])) == (22, 50)
    # the same takes more than the allowance (60): the whole call reverts
    over = "0x" + selector("associateThenTransfer(address,address,uint256)")
    over += encode(["address", "address", "uint256"], [token, holder, 61]).hex()
    assert reverted(mirrored, FRESH_WRITER, over)
    estimate = result(mirrored, {"to": FRESH_WRITER, "data": data, "estimate": True})
    assert post(mirrored, {"to": FRESH_WRITER, "data": data, "gas": int(estimate, 16)}).status_code == 200


def test_hts_writes_refused(client: TestClient, ledger: Ledger) -> None:
    # The consensus node's refusals (TOKEN_NOT_ASSOCIATED_TO_ACCOUNT, INSUFFICIENT_TOKEN_BALANCE, an NFT through
    # the fungible facade, another account's tokens without its signature, TOKEN_ALREADY_ASSOCIATED_TO_ACCOUNT):
    # each a revert
    mirrored = loaded(client, ledger, TOKENS, WRITES)
    transfer = "0x" + selector("transfer(address,uint256)")
    sent = {"to": FUNGIBLE, "from": HOLDER, "data": transfer + word(1005) + word(5)}
    assert result(mirrored, sent) == "0x" + word(1)  # from the holder to an associated contract
    for data, status in (
        (transfer + word(1001) + word(5), "TOKEN_NOT_ASSOCIATED_TO_ACCOUNT"),
        (transfer + word(1005) + word(4_201), "INSUFFICIENT_TOKEN_BALANCE"),
        (transfer + word(4242) + word(5), "INVALID_ACCOUNT_ID"),
    ):
        response = post(mirrored, {"to": FUNGIBLE, "from": HOLDER, "data": data})
        # the consensus node's FullResult.revertResult: the response code's name as revert data
        assert errors(response) == [
            {"message": "CONTRACT_REVERT_EXECUTED", "detail": "", "data": "0x" + status.encode().hex()}
        ], data
    nft = post(mirrored, {"to": NFT, "from": HOLDER, "data": transfer + word(1005) + word(1)})
    assert errors(nft)[0]["message"] == "CONTRACT_REVERT_EXECUTED"
    transfer_token = "0x" + selector("transferToken(address,address,address,int64)")
    own = transfer_token + word(2001) + word(1010) + word(1005) + word(5)
    assert result(mirrored, {"to": HTS, "from": HOLDER, "data": own}) == "0x" + word(22)
    others = transfer_token + word(2001) + word(1005) + word(1010) + word(5)  # the contract's tokens
    assert reverted(mirrored, HTS, others)
    associate = "0x" + selector("associateToken(address,address)")
    already = post(mirrored, {"to": HTS, "from": HOLDER, "data": associate + word(1010) + word(2001)})
    assert errors(already)[0]["data"] == "0x" + b"TOKEN_ALREADY_ASSOCIATED_TO_ACCOUNT".hex()
    for data in (associate + word(1010) + word(4242), associate + word(1005) + word(2001)):  # no token; not self
        response = post(mirrored, {"to": HTS, "from": HOLDER, "data": data})
        assert errors(response)[0]["message"] == "CONTRACT_REVERT_EXECUTED", data


def test_hrc_association_functions(client: TestClient, ledger: Ledger) -> None:
    # ContractCallServicePrecompileReadonlyTest.hrcIsAssociatedFails (false for a caller without a relationship);
    # HRC-719 isAssociated/associate/dissociate on the token's address, for the caller
    empty = {
        "tokenaccounts": [{"account_id": "0.0.2", "token_id": "0.0.2002", "balance": 0, "created_timestamp": 150}]
    }
    mirrored = loaded(client, ledger, TOKENS, WRITES, empty)
    is_associated = "0x" + selector("isAssociated()")
    assert result(mirrored, {"to": FUNGIBLE, "from": HOLDER, "data": is_associated}) == "0x" + word(1)
    assert result(mirrored, {"to": NFT, "from": HOLDER, "data": is_associated}) == "0x" + word(1)
    assert result(mirrored, {"to": FUNGIBLE, "from": addr(2), "data": is_associated}) == "0x" + word(0)
    associate, dissociate = "0x" + selector("associate()"), "0x" + selector("dissociate()")
    assert result(mirrored, {"to": FUNGIBLE, "from": addr(2), "data": associate}) == "0x" + word(22)
    assert result(mirrored, {"to": NFT, "from": addr(2), "data": dissociate}) == "0x" + word(22)  # holds none
    for to, sender, data, status in (
        (FUNGIBLE, HOLDER, associate, "TOKEN_ALREADY_ASSOCIATED_TO_ACCOUNT"),
        (FUNGIBLE, HOLDER, dissociate, "TRANSACTION_REQUIRES_ZERO_TOKEN_BALANCES"),  # holds 4,200
        (FUNGIBLE, addr(2), dissociate, "TOKEN_NOT_ASSOCIATED_TO_ACCOUNT"),
    ):
        response = post(mirrored, {"to": to, "from": sender, "data": data})
        assert errors(response)[0]["message"] == "CONTRACT_REVERT_EXECUTED", (to, sender, data)
        assert errors(response)[0]["data"] == "0x" + status.encode().hex(), (to, sender, data)


NFT_WRITES: dict[str, Any] = {
    "tokenaccounts": [
        {"account_id": "0.0.1005", "token_id": "0.0.2002", "balance": 1, "created_timestamp": 150,
         "freeze_status": 2},  # unfrozen (the token freezes new relationships by default)
    ],
    "nfts": [
        {"token_id": "0.0.2002", "serial_number": 4, "account_id": "0.0.1005", "metadata": "\\x",
         "created_timestamp": 150, "timestamp_range": "[150,)"},
    ],
}  # fmt: skip


def test_nft_writes_in_the_overlay(client: TestClient, ledger: Ledger) -> None:
    # ContractCallServiceERCTokenModificationFunctionsTest (ERC-721 transferFrom, approve, setApprovalForAll) and
    # ContractCallServicePrecompileModificationTest (transferNFT, approveNFT), each read back in the same call
    mirrored = loaded(client, ledger, TOKENS, WRITES, NFT_WRITES)
    token = addr(2002)
    owner, mine, theirs = writer(
        mirrored,
        "nftTransferThenState(address,address,uint256)",
        ["address", "address", "uint256"],
        [token, HOLDER, 4],
        ["address", "uint256", "uint256"],
    )
    assert (owner.lower(), mine, theirs) == (HOLDER, 0, 3)  # the owner by its priority (EVM) address
    assert call(mirrored, NFT, "ownerOf(uint256)", word(4)) == "0x" + word(1005)  # nothing persisted
    moved = writer(mirrored, "htsNftTransferThenOwner(address,address,int64)", ["address", "address", "int64"],
                   [token, HOLDER, 4], ["address"])  # fmt: skip
    assert moved[0].lower() == HOLDER
    approved, operator, cleared = writer(
        mirrored,
        "nftApprovalsThenRead(address,address,uint256)",
        ["address", "address", "uint256"],
        [token, addr(1001), 4],
        ["address", "bool", "address"],
    )
    assert (approved.lower(), operator, cleared.lower()) == (addr(1001), True, addr(0))
    # refused: a serial the caller does not own (serial 1 is the holder's), an unknown serial, an ERC-20 transfer
    # of an NFT, a spender the mirror does not hold
    transfer_from = "0x" + selector("transferFrom(address,address,uint256)")
    approve = "0x" + selector("approve(address,uint256)")
    for sender, data, status in (
        (addr(2), transfer_from + word(1010) + word(1005) + word(1), "SPENDER_DOES_NOT_HAVE_ALLOWANCE"),
        (HOLDER, transfer_from + word(1010) + word(1005) + word(9), "INVALID_NFT_ID"),
        (HOLDER, transfer_from + word(1005) + word(1010) + word(1), "SENDER_DOES_NOT_OWN_NFT_SERIAL_NO"),
        (HOLDER, approve + word(4242) + word(1), "INVALID_ALLOWANCE_SPENDER_ID"),
        (addr(2), approve + word(1001) + word(1), "SENDER_DOES_NOT_OWN_NFT_SERIAL_NO"),
    ):
        response = post(mirrored, {"to": NFT, "from": sender, "data": data})
        assert errors(response)[0]["message"] == "CONTRACT_REVERT_EXECUTED", (sender, data)
        assert errors(response)[0]["data"] == "0x" + status.encode().hex(), (sender, data)
    # the holder's own serial 1 to the contract (associated): success, no return value
    assert result(
        mirrored, {"to": NFT, "from": HOLDER, "data": transfer_from + word(1010) + word(1005) + word(1)}
    ) == ("0x")
