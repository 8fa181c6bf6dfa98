"""The network's account balance files, byte level (no I/O): CSV v1, CSV v2 and protobuf (``.pb``/``.pb.gz``),
read as the reference's ``CompositeBalanceFileReader`` chooses and reads them.

- A name ending ``.pb`` or ``.pb.gz`` is an ``AllAccountBalances`` protobuf (its ``consensusTimestamp`` is
  required; unknown fields are ignored).
- A ``.csv`` whose first line starts (any case) with ``# version:2`` is v2: line 2 ``# TimeStamp:<instant>``,
  line 3 the column header (``shard...``), then ``shard,realm,account,balance[,tokenBalances]`` lines, the 5th
  field a base64 ``TokenBalances`` protobuf.
- Any other ``.csv`` is v1: up to 10 header lines, one ``timestamp:<instant>`` (any case), the header ending at a
  line starting with ``shard`` (any case) after it; then ``shard,realm,account,balance`` lines.

A bad data line is skipped (logged), as in the reference; a bad header refuses the file. The file hash is the
SHA-384 of the (decompressed) bytes: what the nodes' signature files sign.
"""

from __future__ import annotations

import base64
import binascii
import calendar
import gzip
import hashlib
import logging
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from ledgermirror.importer.errors import StreamParseError
from ledgermirror.ledger.entity_id import encode_entity_id
from ledgermirror.ledger.protobuf import hapi_module

_log = logging.getLogger("ledgermirror.importer")

_V1_HEADER_LINES = 10
_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1
_INSTANT = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$")
_NAME = re.compile(r"_Balances\.(csv|pb)(\.gz)?$")


@dataclass(frozen=True, slots=True)
class AccountBalanceLine:
    account: int
    """Encoded account id."""
    balance: int
    tokens: tuple[tuple[int, int], ...]
    """(encoded token id, balance), duplicates dropped."""


@dataclass(frozen=True, slots=True)
class BalanceFile:
    name: str
    consensus_timestamp: int
    accounts: tuple[AccountBalanceLine, ...]
    file_hash: bytes
    """SHA-384 of the decompressed bytes."""


class InvalidBalanceLine(ValueError):
    """A data line the reference skips."""


def is_balance_file(name: str) -> bool:
    return _NAME.search(name) is not None


def parse_instant(text: str) -> int:
    """Java's ``Instant.parse`` of an ISO-8601 UTC instant, as nanoseconds; ValueError otherwise."""
    match = _INSTANT.match(text.strip())
    if match is None:
        raise ValueError(f"not an instant: {text!r}")
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    return seconds * 1_000_000_000 + int((match.group(7) or "").ljust(9, "0"))


def decompressed(name: str, data: bytes) -> bytes:
    """The file's bytes, decompressed when the name ends ``.gz``; raises :class:`StreamParseError`."""
    if not name.endswith(".gz"):
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as error:
        raise StreamParseError(name, f"not gzip: {error}") from None


def file_hash_of(name: str, data: bytes) -> bytes:
    """What the nodes sign: the SHA-384 of the decompressed bytes."""
    return hashlib.sha384(decompressed(name, data)).digest()


def read_balance_file(name: str, data: bytes, *, shard: int = 0) -> BalanceFile:
    """Read ``data`` (gzip-compressed when the name ends ``.gz``); raises :class:`StreamParseError`."""
    data = decompressed(name, data)
    file_hash = hashlib.sha384(data).digest()
    if ".pb" in name.rsplit("_Balances", 1)[-1]:
        timestamp, accounts = _read_protobuf(name, data)
    else:
        text = data.decode("utf-8", errors="replace")
        lines = text.splitlines()
        if lines and lines[0].strip().lower().startswith("# version:2"):
            timestamp, accounts = _read_csv_v2(name, lines, shard)
        else:
            timestamp, accounts = _read_csv_v1(name, lines, shard)
    return BalanceFile(name, timestamp, tuple(accounts), file_hash)


def _read_protobuf(name: str, data: bytes) -> tuple[int, list[AccountBalanceLine]]:
    module = hapi_module("streams.account_balance_file_pb2")
    try:
        message = module.AllAccountBalances.FromString(data)
    except DecodeError as error:
        raise StreamParseError(name, f"not an AllAccountBalances protobuf: {error}") from None
    if not message.HasField("consensusTimestamp"):
        raise StreamParseError(name, "Missing required consensusTimestamp field")
    stamp = message.consensusTimestamp
    accounts = []
    for entry in message.allAccounts:
        account = encode_entity_id(entry.accountID.shardNum, entry.accountID.realmNum, entry.accountID.accountNum)
        tokens = _unique_tokens(
            name,
            account,
            (
                (encode_entity_id(t.tokenId.shardNum, t.tokenId.realmNum, t.tokenId.tokenNum), t.balance)
                for t in entry.tokenUnitBalances
            ),
        )
        accounts.append(AccountBalanceLine(account, entry.hbarBalance, tokens))
    return stamp.seconds * 1_000_000_000 + stamp.nanos, accounts


def _read_csv_v1(name: str, lines: list[str], shard: int) -> tuple[int, list[AccountBalanceLine]]:
    timestamp: int | None = None
    for index, line in enumerate(lines[:_V1_HEADER_LINES]):
        lowered = line.strip().lower()
        if lowered.startswith("timestamp:"):
            try:
                timestamp = parse_instant(line.strip()[len("timestamp:") :])
            except ValueError:
                raise StreamParseError(name, f"Invalid timestamp header line: {line}") from None
        elif lowered.startswith("shard") and timestamp is not None:
            return timestamp, _data_lines(name, lines[index + 1 :], shard, 4)
    raise StreamParseError(name, "Timestamp / column header not found in account balance file")


def _read_csv_v2(name: str, lines: list[str], shard: int) -> tuple[int, list[AccountBalanceLine]]:
    if len(lines) < 2 or not lines[1].startswith("# TimeStamp:"):
        raise StreamParseError(name, "Timestamp not found in account balance file")
    try:
        timestamp = parse_instant(lines[1][len("# TimeStamp:") :])
    except ValueError:
        raise StreamParseError(name, f"Invalid timestamp header line: {lines[1]}") from None
    if len(lines) < 3 or not lines[2].startswith("shard"):
        raise StreamParseError(name, "Column header not found in account balance file")
    return timestamp, _data_lines(name, lines[3:], shard, 5)


def _data_lines(name: str, lines: list[str], shard: int, max_parts: int) -> list[AccountBalanceLine]:
    accounts = []
    for line in lines:
        if not line.strip():
            continue
        try:
            accounts.append(parse_line(line, shard, max_parts))
        except InvalidBalanceLine as error:
            _log.warning("Error reading line of %s: %s", name, error)
    return accounts


def _number(text: str, maximum: int) -> int:
    if not re.fullmatch(r"\d+", text):
        raise ValueError(text)
    value = int(text)
    if value > maximum:
        raise ValueError(text)
    return value


def parse_line(line: str, shard: int = 0, max_parts: int = 5) -> AccountBalanceLine:
    """One CSV data line (v1: ``max_parts`` 4; v2: 5, the 5th optional); raises :class:`InvalidBalanceLine`."""
    parts = [part.strip() for part in line.split(",")]
    parts = [part for part in parts if part]
    if not 4 <= len(parts) <= max_parts:
        raise InvalidBalanceLine(f"Invalid account balance line: {line}")
    try:
        line_shard = _number(parts[0], _INT64_MAX)
        realm = _number(parts[1], _INT32_MAX)
        num = _number(parts[2], _INT32_MAX)
        balance = _number(parts[3], _INT64_MAX)
    except ValueError:
        raise InvalidBalanceLine(f"Invalid account balance line: {line}") from None
    if line_shard != shard:
        raise InvalidBalanceLine(
            f"Invalid account balance line: {line}. Expect shard ({shard}), got shard ({line_shard})"
        )
    account = encode_entity_id(line_shard, realm, num)
    tokens: tuple[tuple[int, int], ...] = ()
    if len(parts) == 5:
        tokens = _unique_tokens(line, account, _token_balances(line, parts[4]))
    return AccountBalanceLine(account, balance, tokens)


def _token_balances(line: str, text: str) -> list[tuple[int, int]]:
    module = hapi_module("services.basic_types_pb2")
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
        message = module.TokenBalances.FromString(raw)
    except (binascii.Error, DecodeError, ValueError):
        raise InvalidBalanceLine(f"Invalid account balance line: {line}") from None
    return [
        (encode_entity_id(t.tokenId.shardNum, t.tokenId.realmNum, t.tokenId.tokenNum), t.balance)
        for t in message.tokenBalances
    ]


def _unique_tokens(where: str, account: int, tokens: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    seen: dict[int, int] = {}
    for token, balance in tokens:
        if token in seen:
            _log.warning("Skipping duplicate token balance: %s account %d token %d", where, account, token)
            continue
        seen[token] = balance
    return tuple(seen.items())
