"""The HTS token structs' failures inside and outside a static call (evm/token_info.py), as the consensus node's
TokenKeyCall (``isStaticCall && status != SUCCESS``: a revert) and AbstractNonRevertibleTokenViewCall (an unknown
token answers INVALID_TOKEN_ID with an empty struct). The route's tests (tests/api/test_contract_call.py) cover
the non-static answers through the EVM; no test contract makes a STATICCALL to these functions."""

from __future__ import annotations

import pytest

from ledgermirror.evm import token_info
from ledgermirror.evm.token_facade import NotAnswered, TokenState
from ledgermirror.evm.token_info import TokenDetail


@pytest.mark.parametrize("selector", sorted(token_info.SELECTORS))
def test_a_failure_reverts_inside_a_static_call(selector: bytes) -> None:
    with pytest.raises(NotAnswered):
        token_info.failed_view(selector, token_info.INVALID_TOKEN_ID, static=True)


@pytest.mark.parametrize("selector", sorted(token_info.SELECTORS))
def test_a_failure_outside_answers_its_code_first(selector: bytes) -> None:
    answer = token_info.failed_view(selector, token_info.INVALID_TOKEN_ID, static=False)
    assert int.from_bytes(answer[:32], "big") == 167


def test_the_codes() -> None:
    assert (token_info.INVALID_TOKEN_ID, token_info.KEY_NOT_PROVIDED) == (167, 44)


def test_an_unknown_serial_reverts_only_inside_a_static_call() -> None:
    # NftTokenInfoCall: ``isStaticCall && (status != SUCCESS || nft == null)`` reverts
    token = TokenState(name="Art", symbol="ART", decimals=0, total_supply=1, type="NON_FUNGIBLE_UNIQUE")
    treasury = (98).to_bytes(20, "big")
    detail = TokenDetail(
        treasury=treasury, memo="", supply_finite=False, max_supply=0, paused=False, deleted=False,
        keys=(None,) * 7, expiry_second=0, auto_renew_account=bytes(20), auto_renew_period=0, ledger_id="0x01",
    )  # fmt: skip
    data = (
        token_info.GET_NON_FUNGIBLE_TOKEN_INFO + bytes(12) + (2002).to_bytes(20, "big") + (9).to_bytes(32, "big")
    )
    with pytest.raises(NotAnswered):
        token_info.token_info_view(data, token, detail, None, static=True)
    answer = token_info.token_info_view(data, token, detail, None, static=False)
    assert int.from_bytes(answer[:32], "big") == token_info.INVALID_TOKEN_NFT_SERIAL_NUMBER == 225
