"""``GET /api/v1/tokens`` without a database: its parameter set and the SQL it plans.

The 400 rows are the URLs and message lists of the reference spec ``tokens/invalid-query-params.json``.
"""

from __future__ import annotations

from typing import Any

import pytest

from ledgermirror.api.errors import BadRequest
from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.params import Filter, ParseContext
from ledgermirror.api.resources.tokens import tokens
from ledgermirror.ledger.entity_id import EntityId, EvmAddress

CTX = ParseContext()
PK = "2b60955bcbf0cf5e9ea880b52e5b63f664b08edf6ed15e301049517438d61864"
DER_PREFIX = "302a300506032b6570032100"
LONG_NAME = (
    "IAmALongStringThatIsLongerThanTheMaximumSizeForATokenNameWhichIsOneHundredBytesAndNotOneSingleByteMore"
)
OPAQUE = "06bd279138d5918402fc8ad500526cb2ee0eb985"
INVALID_ALL = [
    "Invalid parameter: account.id",
    "Invalid parameter: token.id",
    "Invalid parameter: limit",
    "Invalid parameter: publickey",
    "Invalid parameter: order",
    "Unknown query parameter: block.number",
]
INVALID_WITH_NAME = [
    "Invalid parameter: limit",
    "Invalid parameter: publickey",
    "Invalid parameter: order",
    "Invalid parameter: name",
    "Unknown query parameter: block.number",
]
NAME_AND_ACCOUNT = ["account.id and name cannot be used together"]
NAME_AND_TOKEN = ["token.id and name can not be used together. Use a more specific name instead."]


def messages(query: str) -> list[str]:
    with pytest.raises(BadRequest) as caught:
        tokens.PARAMS.parse(query, CTX)
    assert caught.value.status == 400
    return list(caught.value.messages)


def test_reference_long_name_is_102_bytes() -> None:
    assert len(LONG_NAME.encode()) == 102


def test_parameter_names() -> None:
    assert tokens.PARAMS.names() == ["account.id", "limit", "name", "order", "publickey", "token.id", "type"]


# --- reference spec tokens/invalid-query-params.json ----------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param(
            "account.id=lte:0.1.2.3&token.id=abc&limit=-2&publickey=-2&order=any&block.number=3",
            INVALID_ALL,
            id="token-id-abc",
        ),
        pytest.param(
            "account.id=lte:0.1.2.3&token.id=0.0.0x0000000000000000000000000000000000000012"
            "&limit=-2&publickey=-2&order=any&block.number=3",
            INVALID_ALL,
            id="token-id-prefix-and-0x",
        ),
        pytest.param(
            "account.id=lte:0.1.2.3&token.id=06bd279138d5918402fc8ad500526cb2ee0eb985"
            "&limit=-2&publickey=-2&order=any&block.number=3",
            INVALID_ALL,
            id="token-id-opaque-evm",
        ),
        pytest.param(
            f"limit=-2&publickey=-2&order=any&block.number=3&name={LONG_NAME}",
            INVALID_WITH_NAME,
            id="name-102-bytes",
        ),
        pytest.param(
            "limit=-2&publickey=-2&order=any&block.number=3&name=ab", INVALID_WITH_NAME, id="name-2-bytes"
        ),
        pytest.param(
            "limit=-2&publickey=-2&order=any&block.number=3&name=ne:bar", INVALID_WITH_NAME, id="name-ne"
        ),
        pytest.param(
            "limit=-2&publickey=-2&order=any&block.number=3&name=lt:bar", INVALID_WITH_NAME, id="name-lt"
        ),
        pytest.param(
            "limit=-2&publickey=-2&order=any&block.number=3&name=lte:bar", INVALID_WITH_NAME, id="name-lte"
        ),
        pytest.param(
            "limit=-2&publickey=-2&order=any&block.number=3&name=gt:bar", INVALID_WITH_NAME, id="name-gt"
        ),
        pytest.param(
            "limit=-2&publickey=-2&order=any&block.number=3&name=gte:bar", INVALID_WITH_NAME, id="name-gte"
        ),
        pytest.param("account.id=gt:5&name=validname", NAME_AND_ACCOUNT, id="account-gt-with-name"),
        pytest.param("account.id=gte:5&name=validname", NAME_AND_ACCOUNT, id="account-gte-with-name"),
        pytest.param("account.id=lt:5&name=validname", NAME_AND_ACCOUNT, id="account-lt-with-name"),
        pytest.param("account.id=lte:5&name=validname", NAME_AND_ACCOUNT, id="account-lte-with-name"),
        pytest.param("account.id=eq:5&name=validname", NAME_AND_ACCOUNT, id="account-eq-with-name"),
        pytest.param("account.id=5&name=validname", NAME_AND_ACCOUNT, id="account-with-name"),
        pytest.param("token.id=gt:5&name=validname", NAME_AND_TOKEN, id="token-gt-with-name"),
        pytest.param("token.id=gte:5&name=validname", NAME_AND_TOKEN, id="token-gte-with-name"),
        pytest.param("token.id=lt:5&name=validname", NAME_AND_TOKEN, id="token-lt-with-name"),
        pytest.param("token.id=lte:5&name=validname", NAME_AND_TOKEN, id="token-lte-with-name"),
        pytest.param("token.id=eq:5&name=validname", NAME_AND_TOKEN, id="token-eq-with-name"),
        pytest.param("token.id=5&name=validname", NAME_AND_TOKEN, id="token-with-name"),
    ],
)
def test_reference_invalid_query_params(query: str, expected: list[str]) -> None:
    assert messages(query) == expected


# --- more conflicts and errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("name=validname&token.id=5&account.id=5", NAME_AND_TOKEN, id="token-conflict-reported-first"),
        pytest.param("NAME=validname&Token.Id=5", NAME_AND_TOKEN, id="conflict-keys-any-case"),
        pytest.param("name=ab&token.id=abc&block.number=3", NAME_AND_TOKEN, id="conflict-before-validation"),
        pytest.param("name=validname&account.id=", NAME_AND_ACCOUNT, id="conflict-with-empty-value"),
        pytest.param("account.id=2&account.id=3", ["Invalid parameter: account.id"], id="account-repeated"),
        pytest.param("account.id=eq:2", ["Invalid parameter: account.id"], id="account-operator"),
        pytest.param("token.id=0.0.1.2", ["Invalid parameter: token.id"], id="token-four-parts"),
        pytest.param("type=token", ["Invalid parameter: type"], id="type-unknown"),
        pytest.param("publickey=0x" + PK[:-2], ["Invalid parameter: publickey"], id="publickey-short"),
        pytest.param("limit=0", ["Invalid parameter: limit"], id="limit-zero"),
        pytest.param("limit=", ["Invalid parameter: limit"], id="limit-empty"),
        pytest.param("timestamp=1", ["Unknown query parameter: timestamp"], id="timestamp-unknown"),
        pytest.param(
            "&".join(["token.id=1"] * 101),
            ["Array limit exceeded. Only 100 elements allowed in an array."],
            id="array-limit",
        ),
        pytest.param(
            "&".join(["token.id=1"] * 100 + ["TOKEN.ID=2"]),
            ["Parameter values count exceeds maximum number allowed: token.id count: 101 max: 100"],
            id="values-count",
        ),
    ],
)
def test_more_errors(query: str, expected: list[str]) -> None:
    assert messages(query) == expected


# --- accepted queries -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "key", "expected"),
    [
        pytest.param("account.id=0.0.2", "account.id", [EntityId(0, 0, 2)], id="account-full"),
        pytest.param("account.id=0.2", "account.id", [EntityId(0, 0, 2)], id="account-realm-num"),
        pytest.param("account.id=2", "account.id", [EntityId(0, 0, 2)], id="account-num"),
        pytest.param(
            f"account.id=0x{OPAQUE}", "account.id", [EvmAddress(bytes.fromhex(OPAQUE))], id="account-opaque-evm"
        ),
        pytest.param(
            "token.id=0x0000000000000000000000000000000000000012", "token.id", [EntityId(0, 0, 18)], id="evm"
        ),
        pytest.param(
            "token.id=gte:0.0.0000000000000000000000000000000000000012",
            "token.id",
            [EntityId(0, 0, 18)],
            id="evm-shard-realm",
        ),
        pytest.param("token.id=0.7.25301", "token.id", [EntityId(0, 7, 25301)], id="token-realm-7"),
        pytest.param("type=all&type=Fungible_Common", "type", ["ALL", "FUNGIBLE_COMMON"], id="type-upper-cased"),
        pytest.param(f"publickey=0x{DER_PREFIX}{PK}", "publickey", [PK], id="publickey-der"),
        pytest.param("name=%E2%84%8F", "name", ["\u210f"], id="name-hbar-3-bytes"),
        pytest.param("name=ber&name=eq:qber1", "name", ["ber", "qber1"], id="name-repeated"),
        pytest.param("limit=1000", "limit", [100], id="limit-capped"),
        pytest.param("limit=2&limit=3", "limit", [3], id="limit-last-wins"),
        pytest.param("order=DESC&order=Asc", "order", [Order.ASC], id="order-last-wins"),
    ],
)
def test_accepted(query: str, key: str, expected: list[Any]) -> None:
    parsed = tokens.PARAMS.parse(query, CTX)
    assert [item.value for item in parsed.values[key]] == expected


def test_filters_keep_operators() -> None:
    parsed = tokens.PARAMS.parse("token.id=gt:1134&token.id=ne:0.0.5&publickey=lte:" + PK, CTX)
    assert parsed.filters(tokens.TOKEN_ID) == [
        Filter("token.id", Op.GT, EntityId(0, 0, 1134)),
        Filter("token.id", Op.NE, EntityId(0, 0, 5)),
    ]
    assert parsed.filters(tokens.PUBLICKEY) == [Filter("publickey", Op.LTE, PK)]


# --- plan: SQL text and arguments -----------------------------------------------------------------------------

SELECT = """select t.token_id, t.name, t.symbol, t.type::text as type, t.decimals, t.metadata, e.key
from token t
join entity e on e.id = t.token_id"""
SELECT_FOR_ACCOUNT = SELECT + "\njoin token_account ta on ta.token_id = t.token_id"


@pytest.mark.parametrize(
    ("query", "account", "text", "args"),
    [
        pytest.param("", None, f"{SELECT}\norder by t.token_id asc\nlimit 25", (), id="no-params"),
        pytest.param(
            "token.id=0.0.1135&token.id=eq:0.0.25301&token.id=gt:1134&token.id=lte:0.0.25301",
            None,
            f"{SELECT}\nwhere t.token_id = any($1) and t.token_id > $2 and t.token_id <= $3"
            "\norder by t.token_id asc\nlimit 25",
            ([1135, 25301], 1134, 25301),
            id="equalities-as-one-list-then-ranges",
        ),
        pytest.param(
            "token.id=ne:0.7.25301&limit=2&order=desc",
            None,
            f"{SELECT}\nwhere t.token_id <> $1\norder by t.token_id desc\nlimit 2",
            ((7 << 38) | 25301,),
            id="ne-and-encoded-realm",
        ),
        pytest.param(
            f"account.id=2&token.id=gte:0.0.18&token.id=lt:0.0.50000&limit=2&publickey={PK}&order=desc",
            2,
            f"{SELECT_FOR_ACCOUNT}\nwhere ta.account_id = $1 and ta.associated is true and t.token_id >= $2"
            " and t.token_id < $3 and e.public_key = $4\norder by t.token_id desc\nlimit 2",
            (2, 18, 50000, PK),
            id="reference-all-params",
        ),
        pytest.param(
            "type=ALL&type=fungible_common&type=ne:non_fungible_unique",
            None,
            f"{SELECT}\nwhere t.type = $1 and t.type <> $2\norder by t.token_id asc\nlimit 25",
            ("FUNGIBLE_COMMON", "NON_FUNGIBLE_UNIQUE"),
            id="type-all-ignored",
        ),
        pytest.param(
            "type=all",
            None,
            f"{SELECT}\norder by t.token_id asc\nlimit 25",
            (),
            id="type-all-only",
        ),
        pytest.param(
            "name=ber&name=100%25_x&order=desc",
            None,
            f"{SELECT}\nwhere t.name ilike $1 and t.name ilike $2\norder by t.token_id desc\nlimit 25",
            ("%ber%", "%100\\%\\_x%"),
            id="names-escaped",
        ),
        pytest.param(
            f"publickey=0x{DER_PREFIX.upper()}{PK.upper()}",
            None,
            f"{SELECT}\nwhere e.public_key = $1\norder by t.token_id asc\nlimit 25",
            (PK,),
            id="publickey-normalised",
        ),
    ],
)
def test_plan(query: str, account: int | None, text: str, args: tuple[Any, ...]) -> None:
    parsed = tokens.PARAMS.parse(query, CTX)
    limit = parsed.last(tokens.LIMIT, CTX.limit_default)  # as the handler reads them
    order = parsed.last(tokens.ORDER, Order.ASC)
    statement = tokens.plan(account, parsed, limit, order).build()
    assert statement.text == text
    assert statement.args == args
