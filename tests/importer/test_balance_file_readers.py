"""The account balance file readers, with the cases and expected values of the reference's
``ProtoBalanceFileReaderTest``, ``AccountBalanceLineParserV2Test`` and the CSV reader rules
(``BalanceFileReaderImplV1``/``V2``, ``CompositeBalanceFileReader``)."""

from __future__ import annotations

import base64
import gzip

import pytest

from ledgermirror.importer.balance_file import (
    InvalidBalanceLine,
    is_balance_file,
    parse_instant,
    parse_line,
    read_balance_file,
)
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.ledger.protobuf import hapi_module

TOKENS_BASE64 = "CggKAxjsBxCEBwoHCgMY7QcQGQoKCgMY7gcQwKilBAoICgMY8gcQhAcKBwoDGPMHEBkKCgoDGPQHEMCopQQ"
TOKENS = ((1004, 900), (1005, 25), (1006, 9000000), (1010, 900), (1011, 25), (1012, 9000000))
PROTO_NAME = "2021-03-08T20_15_00Z_Balances.pb.gz"


def _all_account_balances() -> bytes:
    """``ProtoBalanceFileReaderTest.getExpectedAccountBalanceFile``: accounts 0.0.2000+i with 3000+i tinybars and
    tokens 0.0.(5000+5i+j) with 6000+5i+j, at 2021-03-08T20:15:00Z."""
    module = hapi_module("streams.account_balance_file_pb2")
    message = module.AllAccountBalances()
    message.consensusTimestamp.seconds = 1_615_234_500
    for i in range(10):
        account = message.allAccounts.add()
        account.accountID.accountNum = 2000 + i
        account.hbarBalance = 3000 + i
        for j in range(5):
            token = account.tokenUnitBalances.add()
            token.tokenId.tokenNum = 5000 + i * 5 + j
            token.balance = 6000 + i * 5 + j
    return bytes(message.SerializeToString())


def test_proto_read_gzip() -> None:
    """``ProtoBalanceFileReaderTest.readGzip``: the items and the file hash of the reference's fixture content."""
    read = read_balance_file(PROTO_NAME, gzip.compress(_all_account_balances()))
    assert read.consensus_timestamp == parse_instant("2021-03-08T20:15:00Z") == 1_615_234_500_000_000_000
    assert read.file_hash.hex() == (
        "67c2fd054621366dd5a37b6ee36a51bc590361379d539fdac2265af08cb8097729218c7d9ff1f1e354c85b820c5b8cf8"
    )
    assert [(line.account, line.balance) for line in read.accounts] == [(2000 + i, 3000 + i) for i in range(10)]
    assert read.accounts[3].tokens == tuple((5000 + 15 + j, 6000 + 15 + j) for j in range(5))


def test_proto_empty_and_missing_timestamp_are_refused() -> None:
    """``ProtoBalanceFileReaderTest.emptyProtobuf`` and ``missingTimestamp``."""
    module = hapi_module("streams.account_balance_file_pb2")
    with pytest.raises(StreamParseError, match="Missing required consensusTimestamp field"):
        read_balance_file("2021-03-08T20_15_00Z_Balances.pb", b"")
    message = module.AllAccountBalances()
    message.allAccounts.add()
    with pytest.raises(StreamParseError, match="Missing required consensusTimestamp field"):
        read_balance_file("2021-03-08T20_15_00Z_Balances.pb", message.SerializeToString())


def test_proto_unknown_fields_are_ignored() -> None:
    """``ProtoBalanceFileReaderTest.unknownFields``: field 23 (fixed32 11) unknown, one item read."""
    module = hapi_module("streams.account_balance_file_pb2")
    message = module.AllAccountBalances()
    message.consensusTimestamp.seconds = 1
    message.allAccounts.add()
    tag = 23 << 3 | 5  # a varint of two bytes
    data = bytes(message.SerializeToString()) + bytes([tag & 0x7F | 0x80, tag >> 7]) + (11).to_bytes(4, "little")
    assert len(read_balance_file("2021-03-08T20_15_00Z_Balances.pb", data).accounts) == 1


def test_proto_corrupted_bytes_are_refused() -> None:
    """``ProtoBalanceFileReaderTest.readCorruptedBytes``: every byte flipped."""
    data = bytes(byte ^ 0xFF for byte in gzip.compress(_all_account_balances()))
    with pytest.raises(StreamParseError):
        read_balance_file(PROTO_NAME, data)


@pytest.mark.parametrize(
    ("name", "supported"),
    [
        ("2021-03-10T16_00_00Z_Balances.pb.gz", True),
        ("2021-03-10T16_00_00Z_Balances.pb", True),
        ("2021-03-10T16_00_00Z_Balances.csv", True),
        ("2021-03-10T16_00_00Z_Balances.csv.gz", True),
        ("2021-03-10T16_00_00Z.rcd.gz", False),
    ],
)
def test_names(name: str, supported: bool) -> None:
    """``ProtoBalanceFileReaderTest.supports``/``unsupported`` (the composite reader takes csv and pb)."""
    assert is_balance_file(name) is supported


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (f"0,0,123,700,{TOKENS_BASE64}", (0, 123, 700, TOKENS)),
        ("0,0,123,700,", (0, 123, 700, ())),
        (f" 0,0,123,700,{TOKENS_BASE64}", (0, 123, 700, TOKENS)),
        (f"0, 0,123,700,{TOKENS_BASE64}", (0, 123, 700, TOKENS)),
        (f"0,0, 123,700,{TOKENS_BASE64}", (0, 123, 700, TOKENS)),
        (f"0,0,123, 700,{TOKENS_BASE64}", (0, 123, 700, TOKENS)),
        (f"0,0,123,700, {TOKENS_BASE64}", (0, 123, 700, TOKENS)),
        (f"0,0,123,700,{TOKENS_BASE64} ", (0, 123, 700, TOKENS)),
        ("0,0,123,700,CggKAxjsBxCEBwoHCgMY7QcQGQoKCgMY7gcQwKilBAoICgMY8gcQhAcKBwoDGPMHEBkKCgo", None),
        ("1,0,123,700,", None),
        ("x,0,123,700,", None),
        ("0,x,123,700,", None),
        ("0,0,x,700,", None),
        ("0,0,123,a00,", None),
        ("1000000000000000000000000000,0,123,700,", None),
        ("0,1000000000000000000000000000,123,700,", None),
        ("0,0,1000000000000000000000000000,700,", None),
        ("0,0,123,1000000000000000000000000000,", None),
        ("-1,0,123,700,", None),
        ("0,-1,123,700,", None),
        ("0,0,-1,700,", None),
        ("0,0,123,-1,", None),
        ("foobar", None),
        ("", None),
    ],
)
def test_line_parser_v2(line: str, expected: tuple[int, int, int, tuple[tuple[int, int], ...]] | None) -> None:
    """``AccountBalanceLineParserV2Test.parse``: (realm, account, balance, tokens), or an invalid line."""
    if expected is None:
        with pytest.raises(InvalidBalanceLine):
            parse_line(line)
        return
    realm, num, balance, tokens = expected
    parsed = parse_line(line)
    assert (parsed.account, parsed.balance, parsed.tokens) == ((realm << 38) | num, balance, tokens)


@pytest.mark.parametrize(
    ("line", "valid"),
    [
        ("0,0,123,700", True),
        (" 0, 0, 123, 700 ", True),
        ("0,0,123,700,", True),
        ("0,0,123", False),
        ("1,0,1,2", False),
    ],
)
def test_line_parser_v1(line: str, valid: bool) -> None:
    """``AccountBalanceLineParserV1``: exactly 4 parts after empty ones are dropped, shard 0."""
    if valid:
        assert (parse_line(line, max_parts=4).account, parse_line(line, max_parts=4).balance) == (123, 700)
    else:
        with pytest.raises(InvalidBalanceLine):
            parse_line(line, max_parts=4)


def test_csv_v1_header_and_bad_lines() -> None:
    """``BalanceFileReaderImplV1``: the timestamp header (any case), the column header after it, a bad line
    skipped."""
    text = (
        "year,month,day,hour,minute,second\n2019,JUNE,28,22,30,0.016002001\n"
        "TimeStamp:2019-08-30T18:15:00.016002001Z\nshardNum,realmNum,accountNum,balance\n"
        "0,0,1,100\n0,0,x,5\n0,0,2,200\n"
    )
    read = read_balance_file("2019-08-30T18_15_00.016002001Z_Balances.csv", text.encode())
    assert read.consensus_timestamp == parse_instant("2019-08-30T18:15:00.016002001Z")
    assert [(line.account, line.balance) for line in read.accounts] == [(1, 100), (2, 200)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("shardNum,realmNum,accountNum,balance\n0,0,1,1\n", "Timestamp / column header not found"),
        ("TimeStamp:2019-08-30T18:15:00.016002001Z\n0,0,1,1\n", "Timestamp / column header not found"),
        ("TimeStamp:yesterday\nshard\n", "Invalid timestamp header line"),
    ],
)
def test_csv_v1_refused(text: str, message: str) -> None:
    with pytest.raises(StreamParseError, match=message):
        read_balance_file("2019-08-30T18_15_00.016002001Z_Balances.csv", text.encode())


def test_csv_v2_with_token_balances() -> None:
    """``BalanceFileReaderImplV2``: version line (any case), ``# TimeStamp:``, the column header, then lines
    with a base64 ``TokenBalances``."""
    encoded = base64.b64encode(base64.b64decode(TOKENS_BASE64 + "=")).decode()
    text = (
        "# Version:2\n# TimeStamp:2020-09-22T04:25:00.083212003Z\n"
        "shardNum,realmNum,accountNum,balance,tokenBalances\n"
        f"0,0,1,100,\n0,0,123,700,{encoded}\n"
    )
    read = read_balance_file("2020-09-22T04_25_00.083212003Z_Balances.csv", text.encode())
    assert read.consensus_timestamp == 1_600_748_700_083_212_003
    assert [(line.account, line.balance, line.tokens) for line in read.accounts] == [
        (1, 100, ()),
        (123, 700, TOKENS),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# version:2\nTimeStamp:2020-09-22T04:25:00Z\nshard\n", "Timestamp not found"),
        ("# version:2\n# TimeStamp:2020-09-22T04:25:00Z\nShardNum\n", "Column header not found"),
        ("# version:2\n# TimeStamp:2020-09-22T04:25:00Z\n", "Column header not found"),
    ],
)
def test_csv_v2_refused(text: str, message: str) -> None:
    with pytest.raises(StreamParseError, match=message):
        read_balance_file("2020-09-22T04_25_00Z_Balances.csv", text.encode())


def test_duplicate_token_balances_are_dropped() -> None:
    """``AccountBalanceFileParser``: a second (account, token) in a file is skipped."""
    module = hapi_module("streams.account_balance_file_pb2")
    message = module.AllAccountBalances()
    message.consensusTimestamp.seconds = 1
    account = message.allAccounts.add()
    account.accountID.accountNum = 7
    for balance in (5, 6):
        token = account.tokenUnitBalances.add()
        token.tokenId.tokenNum = 9
        token.balance = balance
    assert read_balance_file("x_Balances.pb", message.SerializeToString()).accounts[0].tokens == ((9, 5),)
