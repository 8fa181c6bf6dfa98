"""Node keys from the seed: our Miller-Rabin, exact sizes, determinism, and the keys the address book and
keys/ folder hold."""

from __future__ import annotations

import inspect
import random

import pytest
from cryptography.hazmat.primitives.asymmetric.padding import PKCS1v15
from cryptography.hazmat.primitives.hashes import SHA384
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ledgermirror.simulator import keys, system
from ledgermirror.simulator.hapi import load


@pytest.fixture(autouse=True)
def uncached(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every call here derives its key again: the suite's conftest caches the derivation for the simulated
    networks (``node_keys_derived_once``), and these tests are the ones that check it."""
    monkeypatch.setattr(keys, "node_private_key", inspect.unwrap(keys.node_private_key))


def test_miller_rabin_knows_primes_composites_and_carmichael_numbers() -> None:
    rng = random.Random(1)
    primes = [2, 3, 5, 7, 97, 7919, 2**61 - 1, 2**89 - 1, 2**127 - 1]
    composites = [1, 4, 9, 561, 1105, 1729, 2465, 3215031751, (2**61 - 1) * (2**31 - 1), 2**128 + 1]
    assert all(keys.is_probable_prime(p, rng) for p in primes)
    assert not any(keys.is_probable_prime(c, rng) for c in composites)


def test_random_prime_has_exactly_the_bits_asked() -> None:
    rng = random.Random(7)
    prime = keys.random_prime(256, rng, keys._small_primes(1000))
    assert prime.bit_length() == 256
    assert prime >> 254 == 0b11
    assert keys.is_probable_prime(prime, random.Random(0), rounds=30)
    assert (prime - 1) % keys.PUBLIC_EXPONENT


def test_node_keys_are_3072_bit_deterministic_and_distinct() -> None:
    first = keys.node_private_key(3, 0)
    again = keys.node_private_key(3, 0)
    other_node = keys.node_private_key(3, 1, bits=1024)
    other_seed = keys.node_private_key(4, 0, bits=1024)
    assert again is not first  # derived twice, not taken from the suite's cache
    assert first.key_size == 3072
    numbers = first.private_numbers()
    assert numbers.public_numbers.e == 65537
    assert numbers == again.private_numbers()
    assert len({k.public_key().public_numbers().n for k in (first, other_node, other_seed)}) == 3
    signature = first.sign(b"\x01" * 48, PKCS1v15(), SHA384())
    assert signature == again.sign(b"\x01" * 48, PKCS1v15(), SHA384())  # PKCS#1 v1.5 is deterministic
    assert len(signature) == 384


def test_address_book_lists_every_node_with_its_key() -> None:
    from ledgermirror.importer.address_book import read_address_book

    node_keys = [keys.node_private_key(9, node_id, bits=1024) for node_id in range(3)]
    book = read_address_book(system.address_book(load(), [k.public_key() for k in node_keys]))
    assert [(n.node_id, str(n.account)) for n in book.nodes] == [(0, "0.0.3"), (1, "0.0.4"), (2, "0.0.5")]
    for entry, key in zip(book.nodes, node_keys, strict=True):
        der = key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
        assert entry.public_key_hex == der.hex()
