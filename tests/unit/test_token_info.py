"""The HTS token structs' failures inside and outside a static call (evm/token_info.py), as the consensus node's
TokenKeyCall (``isStaticCall && status != SUCCESS``: a revert) and AbstractNonRevertibleTokenViewCall (an unknown
token answers INVALID_TOKEN_ID with an empty struct). The route's tests (tests/api/test_contract_call.py) cover
the non-static answers through the EVM; no test contract makes a STATICCALL to these functions."""

from __future__ import annotations

import pytest

from ledgermirror.evm import token_info
from ledgermirror.evm.token_facade import NotAnswered


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
