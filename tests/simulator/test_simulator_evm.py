"""The EVM helpers against the published RLP examples and a known Keccak-256 digest."""

from __future__ import annotations

import random

from ledgermirror.simulator.evm import ecdsa_key, keccak256, rlp


def test_rlp_matches_the_published_examples() -> None:
    assert rlp(b"dog") == bytes.fromhex("83646f67")
    assert rlp([b"cat", b"dog"]) == bytes.fromhex("c88363617483646f67")
    assert rlp(b"") == bytes.fromhex("80")
    assert rlp([]) == bytes.fromhex("c0")
    assert rlp(0) == bytes.fromhex("80")
    assert rlp(b"\x0f") == bytes.fromhex("0f")
    assert rlp(1024) == bytes.fromhex("820400")
    assert rlp([[], [[]], [[], [[]]]]) == bytes.fromhex("c7c0c1c0c3c0c1c0")
    sentence = b"Lorem ipsum dolor sit amet, consectetur adipisicing elit"
    assert rlp(sentence) == bytes.fromhex("b838") + sentence


def test_keccak_and_addresses() -> None:
    assert keccak256(b"").hex() == "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
    first, again = ecdsa_key(random.Random(1)), ecdsa_key(random.Random(1))
    assert first == again
    compressed, address = first
    assert len(compressed) == 33 and compressed[0] in (2, 3)
    assert len(address) == 20
