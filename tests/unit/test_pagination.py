"""``links.next``: the reference's rules (upstream notes 1.7, 2.4) plus our deliberate differences.

Differences from the reference, on purpose:
* an anchor key given only as equality values still gets the ``gt:``/``lt:`` bound appended (the reference repeats
  the request, so following its link loops forever);
* values are percent-encoded where the query language needs it (the reference writes them raw).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.grammar import BadOperator, Op, Order, split_operator, split_query
from ledgermirror.api.querystring.pagination import Anchor, next_link, number_of
from ledgermirror.api.querystring.params import Filter, InvalidValue, ParseContext
from ledgermirror.ledger.entity_id import EntityId, EvmAddress, EvmForm

PATH = "/api/v1/tokens"
PK = "2b60955bcbf0cf5e9ea880b52e5b63f664b08edf6ed15e301049517438d61864"
_token = values.numeric_entity_id(EvmForm.LONG_ZERO)


def token_number(text: str) -> int | None:
    try:
        return _token(text, ParseContext()).encoded
    except InvalidValue:
        return None


def token_anchor(value: str) -> Anchor:
    return Anchor("token.id", value, number=token_number(value))


def typed(query: str) -> dict[str, list[Filter[Any]]]:
    """The query's filters as a ParamSet would type them: operator split off, id-like values as encoded ids
    (anything else kept as text, which has no number), the text as sent."""
    given: dict[str, list[Filter[Any]]] = {}
    for key, texts in split_query(query).items.items():
        for text in texts:
            try:
                op, rest = split_operator(text)
            except BadOperator:
                op, rest = None, text
            number = token_number(rest)
            given.setdefault(key, []).append(Filter(key, op or Op.EQ, rest if number is None else number, text))
    return given


def link(query: str, anchors: list[Anchor], order: Order = Order.ASC, path: str = PATH) -> str | None:
    return next_link(path, typed(query), anchors, order)


# --- the reference's spec examples ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "anchor", "order", "expected"),
    [
        pytest.param("limit=3", "0.0.25301", Order.ASC, "limit=3&token.id=gt:0.0.25301", id="tokens-limit"),
        pytest.param(
            "token.id=gte:0.0.18&token.id=lt:0.0.50000&limit=2",
            "0.0.25301",
            Order.ASC,
            "token.id=lt:0.0.50000&token.id=gt:0.0.25301&limit=2",
            id="tokens-range-asc",
        ),
        pytest.param(
            f"account.id=2&token.id=gte:0.0.18&token.id=lt:0.0.50000&limit=2&publickey={PK}&order=desc",
            "0.0.25301",
            Order.DESC,
            f"account.id=2&token.id=gte:0.0.18&token.id=lt:0.0.25301&limit=2&publickey={PK}&order=desc",
            id="all-params-desc",
        ),
        pytest.param(
            "account.id=2&token.id=gte:0000000000000000000000000000000000000012&token.id=lt:0.0.50000"
            f"&limit=2&publickey={PK}&order=desc",
            "0.0.25301",
            Order.DESC,
            "account.id=2&token.id=gte:0000000000000000000000000000000000000012&token.id=lt:0.0.25301"
            f"&limit=2&publickey={PK}&order=desc",
            id="all-params-desc-evm",
        ),
        pytest.param(
            "account.id=2&token.id=gte:0x0000000000000000000000000000000000000012&token.id=lt:0.0.50000"
            f"&limit=2&publickey={PK}&order=desc",
            "0.0.25301",
            Order.DESC,
            "account.id=2&token.id=gte:0x0000000000000000000000000000000000000012&token.id=lt:0.0.25301"
            f"&limit=2&publickey={PK}&order=desc",
            id="all-params-desc-0x-evm",
        ),
        pytest.param(
            "account.id=2&token.id=gte:0.0.0000000000000000000000000000000000000012&token.id=lt:0.0.50000"
            f"&limit=2&publickey={PK}&order=asc",
            "0.0.45678",
            Order.ASC,
            f"account.id=2&token.id=lt:0.0.50000&token.id=gt:0.0.45678&limit=2&publickey={PK}&order=asc",
            id="all-params-asc-shard-realm-evm",
        ),
        pytest.param(
            "limit=10", "0.0.6", Order.ASC, "limit=10&token.id=gt:0.0.6", id="capped-limit-keeps-original-text"
        ),
    ],
)
def test_reference_examples(query: str, anchor: str, order: Order, expected: str) -> None:
    assert link(query, [token_anchor(anchor)], order) == f"{PATH}?{expected}"


# --- the rules ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "anchor", "order", "expected"),
    [
        pytest.param("", "0.0.7", Order.ASC, "token.id=gt:0.0.7", id="absent-asc"),
        pytest.param("", "0.0.7", Order.DESC, "token.id=lt:0.0.7", id="absent-desc"),
        pytest.param(
            "token.id=gt:0.0.1&limit=2", "0.0.7", Order.ASC, "limit=2&token.id=gt:0.0.7", id="lone-gt-moves-to-end"
        ),
        pytest.param(
            "token.id=gte:0.0.1&limit=2",
            "0.0.7",
            Order.ASC,
            "limit=2&token.id=gt:0.0.7",
            id="lone-gte-moves-to-end",
        ),
        pytest.param(
            "token.id=lt:0.0.9&limit=2&order=desc",
            "0.0.7",
            Order.DESC,
            "limit=2&order=desc&token.id=lt:0.0.7",
            id="lone-lt-desc-moves-to-end",
        ),
        pytest.param(
            "token.id=lte:0.0.9&limit=2",
            "0.0.7",
            Order.ASC,
            "token.id=lte:0.0.9&token.id=gt:0.0.7&limit=2",
            id="lone-upper-bound-asc-kept-in-place",
        ),
        pytest.param(
            "token.id=gte:0.0.1&limit=2&order=desc",
            "0.0.7",
            Order.DESC,
            "token.id=gte:0.0.1&token.id=lt:0.0.7&limit=2&order=desc",
            id="lone-lower-bound-desc-kept-in-place",
        ),
        pytest.param(
            "token.id=ne:0.0.3&limit=2",
            "0.0.7",
            Order.ASC,
            "token.id=ne:0.0.3&token.id=gt:0.0.7&limit=2",
            id="ne-kept",
        ),
        pytest.param(
            "token.id=gt:0.0.1&token.id=gt:0.0.2&token.id=ne:0.0.3&limit=2",
            "0.0.7",
            Order.ASC,
            "token.id=ne:0.0.3&token.id=gt:0.0.7&limit=2",
            id="array-drops-every-forward-bound",
        ),
        pytest.param(
            "LIMIT=2&Token.ID=gt:0.0.1",
            "0.0.7",
            Order.ASC,
            "limit=2&token.id=gt:0.0.7",
            id="keys-lower-cased",
        ),
        pytest.param(
            "type=ALL&type=FUNGIBLE_COMMON&limit=2",
            "0.0.7",
            Order.ASC,
            "type=ALL&type=FUNGIBLE_COMMON&limit=2&token.id=gt:0.0.7",
            id="repeated-other-keys-kept",
        ),
        # deliberate difference: equality-only anchors still get a bound, so the link never repeats the request
        pytest.param(
            "token.id=0.0.5&limit=1",
            "0.0.5",
            Order.ASC,
            "token.id=0.0.5&token.id=gt:0.0.5&limit=1",
            id="equality-gets-bound",
        ),
        pytest.param(
            "token.id=eq:0.0.5&limit=1&order=desc",
            "0.0.5",
            Order.DESC,
            "token.id=eq:0.0.5&token.id=lt:0.0.5&limit=1&order=desc",
            id="eq-gets-bound-desc",
        ),
        pytest.param(
            "token.id=0.0.5&token.id=0.0.9&token.id=gt:0.0.1&limit=2",
            "0.0.9",
            Order.ASC,
            "token.id=0.0.5&token.id=0.0.9&token.id=gt:0.0.9&limit=2",
            id="array-led-by-equality-gets-bound",
        ),
    ],
)
def test_rules(query: str, anchor: str, order: Order, expected: str) -> None:
    assert link(query, [token_anchor(anchor)], order) == f"{PATH}?{expected}"


def test_crypto_allowance_equality_anchor_does_not_repeat_the_request() -> None:
    # The reference answers the request URL itself here (spec crypto/all-params.json); we append the bound.
    found = link("spender.id=5001&limit=1&order=asc", [Anchor("spender.id", "0.0.5001")], path="/api/v1/x")
    assert found == "/api/v1/x?spender.id=5001&spender.id=gt:0.0.5001&limit=1&order=asc"


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        pytest.param(
            Order.ASC, "limit=2&spender.id=gte:0.0.9&token.id=gt:0.0.3", id="asc-inclusive-then-exclusive"
        ),
        pytest.param(
            Order.DESC,
            "spender.id=gte:0.0.1&spender.id=lte:0.0.9&limit=2&token.id=lt:0.0.3",
            id="desc-inclusive-then-exclusive",
        ),
    ],
)
def test_two_anchors(order: Order, expected: str) -> None:
    anchors = [Anchor("spender.id", "0.0.9", inclusive=True), Anchor("token.id", "0.0.3")]
    assert link("spender.id=gte:0.0.1&limit=2", anchors, order) == f"{PATH}?{expected}"


# --- empty-range check (primary anchor only) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "anchor", "order", "expected"),
    [
        pytest.param("limit=3&token.id=lte:0.0.25301", "0.0.25301", Order.ASC, None, id="reference-tokens-limit"),
        pytest.param("token.id=lt:0.0.26", "0.0.25", Order.ASC, None, id="lt-next-is-empty"),
        pytest.param(
            "token.id=lt:0.0.27", "0.0.25", Order.ASC, "token.id=lt:0.0.27&token.id=gt:0.0.25", id="one-id-left"
        ),
        pytest.param("token.id=gte:0.0.25", "0.0.25", Order.DESC, None, id="desc-gte-reached"),
        pytest.param(
            "token.id=gte:0.0.24",
            "0.0.25",
            Order.DESC,
            "token.id=gte:0.0.24&token.id=lt:0.0.25",
            id="desc-one-id-left",
        ),
        pytest.param(
            "token.id=lte:0x000000000000000000000000000000000000000a",
            "0.0.10",
            Order.ASC,
            None,
            id="evm-bound-read-as-number",
        ),
        pytest.param(
            "token.id=lte:junk",
            "0.0.10",
            Order.ASC,
            "token.id=lte:junk&token.id=gt:0.0.10",
            id="unreadable-skipped",
        ),
    ],
)
def test_empty_range(query: str, anchor: str, order: Order, expected: str | None) -> None:
    found = link(query, [token_anchor(anchor)], order)
    assert found == (None if expected is None else f"{PATH}?{expected}")


def test_empty_range_needs_a_number() -> None:
    found = link("token.id=lte:0.0.5", [Anchor("token.id", "0.0.5")])
    assert found == f"{PATH}?token.id=lte:0.0.5&token.id=gt:0.0.5"


def test_inclusive_anchor_range_of_one_is_not_empty() -> None:
    anchor = Anchor("token.id", "0.0.10", inclusive=True, number=10)
    assert link("token.id=lte:0.0.10", [anchor]) == f"{PATH}?token.id=lte:0.0.10&token.id=gte:0.0.10"


def test_empty_range_checks_primary_anchor_only() -> None:
    anchors = [
        Anchor("spender.id", "0.0.5", inclusive=True, number=5),
        Anchor("token.id", "0.0.9", number=9),
    ]
    found = link("token.id=lte:0.0.9", anchors)
    assert found == f"{PATH}?token.id=lte:0.0.9&token.id=gt:0.0.9&spender.id=gte:0.0.5"


# --- serialisation --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("/api/v1/tokens", "/api/v1/tokens", id="plain"),
        pytest.param("/api/v1/tokens/", "/api/v1/tokens", id="one-trailing-slash-removed"),
        pytest.param("/api/v1/accounts/0x00AB/allowances/", "/api/v1/accounts/0x00AB/allowances", id="as-sent"),
        pytest.param("/", "/", id="root-kept"),
    ],
)
def test_path(path: str, expected: str) -> None:
    assert link("", [token_anchor("0.0.1")], path=path) == f"{expected}?token.id=gt:0.0.1"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("name=abc", "name=abc", id="plain"),
        pytest.param("name=a+b", "name=a%20b", id="space"),
        pytest.param("name=a%2Bb", "name=a%2Bb", id="plus"),
        pytest.param("name=a%26b", "name=a%26b", id="ampersand"),
        pytest.param("name=100%25", "name=100%25", id="percent"),
        pytest.param("name=a%23b", "name=a%23b", id="hash"),
        pytest.param("name=a%3Fb", "name=a%3Fb", id="question-mark"),
        pytest.param("name=%E2%84%8F", "name=%E2%84%8F", id="non-ascii"),
        pytest.param("name=eq%3Aa.b%2Cc-d_e~f", "name=eq:a.b,c-d_e~f", id="safe-characters-raw"),
        pytest.param("name=a%3Db", "name=a=b", id="equals-raw"),
        pytest.param("name=a%2Fb%40c", "name=a/b@c", id="slash-at-raw"),
    ],
)
def test_values_encoded_only_where_needed(query: str, expected: str) -> None:
    assert link(query, [token_anchor("0.0.1")]) == f"{PATH}?{expected}&token.id=gt:0.0.1"


@pytest.mark.parametrize(
    "value",
    ["a b", "a+b", "a&b", "100%", "a#b", "\u210f bar", "x=y", "gt:1", "%41"],
)
def test_link_query_round_trips_through_split_query(value: str) -> None:
    found = link(f"name={quote(value, safe='')}", [token_anchor("0.0.1")])
    assert found is not None
    assert split_query(found.partition("?")[2]).items == {"name": [value], "token.id": ["gt:0.0.1"]}


def test_given_filters_not_mutated() -> None:
    given = typed("token.id=gt:0.0.1&limit=2")
    next_link(PATH, given, [token_anchor("0.0.7")], Order.ASC)
    assert {key: [item.text for item in found] for key, found in given.items()} == {
        "token.id": ["gt:0.0.1"],
        "limit": ["2"],
    }


# --- typed values and anchors that only drop bounds -------------------------------------------------------------


def test_numbers_of_typed_values() -> None:
    assert number_of(EntityId(0, 0, 1001)) == 1001
    assert number_of(42) == 42
    assert number_of(EvmAddress(bytes.fromhex("ac384c53f03855fa1b3616052f8ba32c6c2a2fec"))) is None
    assert number_of(True) is None
    assert number_of("x") is None


@pytest.mark.parametrize(
    ("query", "order", "expected"),
    [
        pytest.param("serialnumber=gt:3&serialnumber=lt:9&limit=1", Order.ASC, "serialnumber=lt:9&limit=1&r=gt:5"),
        pytest.param("serialnumber=gte:3&limit=1", Order.ASC, "limit=1&r=gt:5", id="lone-forward-bound-dropped"),
        pytest.param("serialnumber=gte:3&limit=1", Order.DESC, "serialnumber=gte:3&limit=1&r=lt:5"),
        pytest.param("limit=1", Order.ASC, "limit=1&r=gt:5", id="absent-key"),
    ],
)
def test_anchor_without_value_drops_forward_bounds(query: str, order: Order, expected: str) -> None:
    anchors = [Anchor("r", "5", number=5), Anchor("serialnumber", None)]
    assert link(query, anchors, order) == f"{PATH}?{expected}"
