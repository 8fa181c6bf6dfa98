"""A posted ``Transaction`` -> its body, transaction type, signature count and serialized size.

The body comes from ``signedTransactionBytes`` (a ``SignedTransaction``) when it is set, else from the
deprecated ``bodyBytes``; the signatures are the ``sigPair``s of the matching ``sigMap``. The size is that of
the ``Transaction`` re-encoded without unknown fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledgermirror.ledger.protobuf import hapi

UNPARSEABLE = "Unable to parse transaction"
NO_BODY_BYTES = "Transaction must contain body bytes or signed transaction bytes"
UNKNOWN_TYPE = "Unknown transaction type"

# TransactionBody ``data`` case -> HederaFunctionality name, where the two differ.
_FUNCTIONALITY = {
    "contractCall": "ContractCall",
    "contractCreateInstance": "ContractCreate",
    "contractUpdateInstance": "ContractUpdate",
    "contractDeleteInstance": "ContractDelete",
    "cryptoCreateAccount": "CryptoCreate",
    "cryptoUpdateAccount": "CryptoUpdate",
    "tokenCreation": "TokenCreate",
    "tokenFreeze": "TokenFreezeAccount",
    "tokenUnfreeze": "TokenUnfreezeAccount",
    "tokenGrantKyc": "TokenGrantKycToAccount",
    "tokenRevokeKyc": "TokenRevokeKycFromAccount",
    "tokenDeletion": "TokenDelete",
    "tokenWipe": "TokenAccountWipe",
    "tokenAssociate": "TokenAssociateToAccount",
    "tokenDissociate": "TokenDissociateFromAccount",
    "history_proof_signature": "HistoryAssemblySignature",
    "hook_store": "HookStore",
    "hook_dispatch": "HookDispatch",
}


class TransactionError(ValueError):
    """The bytes are not an estimable transaction; the message says why (safe to show)."""


@dataclass(frozen=True, slots=True)
class ParsedTransaction:
    body: Any
    """The ``TransactionBody`` message."""
    data_case: str
    """The set field of the body's ``data`` oneof, e.g. ``cryptoTransfer``."""
    functionality: str
    """Its ``HederaFunctionality`` name, e.g. ``CryptoTransfer``."""
    signatures: int
    size: int
    """Bytes of the re-encoded ``Transaction``."""


def functionality_of(data_case: str) -> str:
    """``cryptoTransfer`` -> ``CryptoTransfer``, ``token_pause`` -> ``TokenPause``, ``tokenMint`` -> ..."""
    known = _FUNCTIONALITY.get(data_case)
    if known is not None:
        return known
    return "".join(part[:1].upper() + part[1:] for part in data_case.split("_"))


def _parse(message_type: Any, data: bytes) -> Any:
    try:
        return message_type.FromString(data)
    except Exception:  # DecodeError, and anything else the parser may raise on hostile bytes
        raise TransactionError(UNPARSEABLE) from None


def parse(data: bytes) -> ParsedTransaction:
    """Raises :class:`TransactionError` for bytes that are not a ``Transaction`` with a known body."""
    classes = hapi()
    transaction = _parse(classes.Transaction, data)
    if transaction.signedTransactionBytes:
        signed = _parse(classes.SignedTransaction, transaction.signedTransactionBytes)
        body_bytes, signatures = signed.bodyBytes, len(signed.sigMap.sigPair)
    elif transaction.bodyBytes:
        body_bytes, signatures = transaction.bodyBytes, len(transaction.sigMap.sigPair)
    else:
        raise TransactionError(NO_BODY_BYTES)
    body = _parse(classes.TransactionBody, body_bytes)
    data_case = body.WhichOneof("data")
    if data_case is None:
        raise TransactionError(UNKNOWN_TYPE)
    transaction.DiscardUnknownFields()
    return ParsedTransaction(body, data_case, functionality_of(data_case), signatures, transaction.ByteSize())
