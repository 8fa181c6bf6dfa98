"""The ``notes`` of an estimate in the described form: caveats about what the figures do not account for.

Each note is a fact about this request, never a generic disclaimer: the schedule was the shipped default; an
INTRINSIC estimate left out what state would have added (custom fees of the involved tokens or topic, the
token transfer base fee, high-volume pricing); a STATE estimate priced a token or topic the database does not
know as if it had no custom fees; the high-volume flag was set on a type without high-volume pricing.
"""

from __future__ import annotations

from collections.abc import Collection

from ledgermirror.fees import curve, usage
from ledgermirror.fees.transaction import ParsedTransaction
from ledgermirror.ledger.entity_id import EntityId, InvalidEntityId

DEFAULT_SCHEDULE = (
    "The fee schedule file 0.0.113 has no decodable version in the database: priced with the shipped default "
    "schedule, which may differ from the network's"
)
INTRINSIC_TOKENS = (
    "INTRINSIC mode: the custom fees of the transferred tokens and the token transfer base fee were not "
    "charged; mode=STATE charges them"
)
INTRINSIC_TOPIC = "INTRINSIC mode: the custom fees of the topic were not read; mode=STATE charges them"
INTRINSIC_HIGH_VOLUME = (
    "INTRINSIC mode: the high-volume flag is set but high-volume pricing applies only with mode=STATE"
)


def _name(entity: tuple[int, int, int]) -> str:
    try:
        return str(EntityId(*entity))
    except InvalidEntityId:
        return ".".join(str(part) for part in entity)


def notes(
    parsed: ParsedTransaction,
    *,
    state: bool,
    default_schedule: bool,
    unknown: Collection[tuple[int, int, int]] = (),
) -> list[str]:
    """The caveats of one estimate; ``unknown`` are the involved tokens and topic (STATE mode) that the
    database does not have."""
    found: list[str] = []
    if default_schedule:
        found.append(DEFAULT_SCHEDULE)
    tokens = usage.token_ids(parsed.body)
    topic = usage.topic_id(parsed.body)
    high_volume = bool(parsed.body.high_volume)
    if not state:
        if tokens:
            found.append(INTRINSIC_TOKENS)
        if topic is not None:
            found.append(INTRINSIC_TOPIC)
        if high_volume and parsed.functionality in curve.HIGH_VOLUME_PRICED:
            found.append(INTRINSIC_HIGH_VOLUME)
    else:
        for token in sorted(set(tokens) & set(unknown)):
            found.append(f"Token {_name(token)} was not found: priced as a fungible token without custom fees")
        if topic is not None and topic in unknown:
            found.append(f"Topic {_name(topic)} was not found: priced as a topic without custom fees")
    if high_volume and parsed.functionality not in curve.HIGH_VOLUME_PRICED:
        found.append(f"{parsed.functionality} has no high-volume pricing: the high-volume flag changes nothing")
    return found
