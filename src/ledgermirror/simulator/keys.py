"""Node RSA keys derived from the seed: our own prime search (Miller-Rabin) fed by a seeded PRNG.

The same seed and node id always give the same 3072-bit key, so a simulated network is reproducible to the
byte (RSA PKCS#1 v1.5 signatures are deterministic too). ``cryptography`` only assembles the key from its
numbers; it never generates randomness here. Nothing is cached between calls.
"""

from __future__ import annotations

import hashlib
import random

from cryptography.hazmat.primitives.asymmetric import rsa

KEY_BITS = 3072
PUBLIC_EXPONENT = 65537
_MILLER_RABIN_ROUNDS = 5
_SIEVE_LIMIT = 30000
_SIEVE_WINDOW = 4096


def _small_primes(limit: int) -> list[int]:
    flags = bytearray([1]) * (limit + 1)
    flags[0:2] = b"\x00\x00"
    for number in range(2, int(limit**0.5) + 1):
        if flags[number]:
            flags[number * number :: number] = bytearray(len(flags[number * number :: number]))
    return [number for number, flag in enumerate(flags) if flag]


def is_probable_prime(candidate: int, rng: random.Random, rounds: int = _MILLER_RABIN_ROUNDS) -> bool:
    """Miller-Rabin with ``rounds`` bases drawn from ``rng``. Five rounds suffice for sieved random
    candidates of 1536 bits (FIPS 186-5 table B.1 asks for 4 for an error below 2^-100)."""
    if candidate < 4:
        return candidate in (2, 3)
    if candidate % 2 == 0:
        return False
    odd, twos = candidate - 1, 0
    while odd % 2 == 0:
        odd //= 2
        twos += 1
    for _ in range(rounds):
        witness = pow(rng.randrange(2, candidate - 1), odd, candidate)
        if witness in (1, candidate - 1):
            continue
        for _ in range(twos - 1):
            witness = pow(witness, 2, candidate)
            if witness == candidate - 1:
                break
        else:
            return False
    return True


def random_prime(bits: int, rng: random.Random, small_primes: list[int]) -> int:
    """A prime of exactly ``bits`` bits, top two bits set (so two of them make a modulus of 2*bits bits),
    with ``p - 1`` coprime to the public exponent. Candidates are sieved by small primes in windows."""
    while True:
        base = rng.getrandbits(bits) | (0b11 << (bits - 2)) | 1
        sieve = bytearray([1]) * _SIEVE_WINDOW  # sieve[i] stands for base + 2 i
        for prime in small_primes[1:]:
            offset = (-base) % prime  # base + offset ≡ 0 (mod prime)
            if offset % 2:
                offset += prime
            start = offset // 2
            sieve[start::prime] = bytearray(len(sieve[start::prime]))
        for index, alive in enumerate(sieve):
            candidate = base + 2 * index
            if not alive or candidate.bit_length() != bits:
                continue
            if (candidate - 1) % PUBLIC_EXPONENT == 0:
                continue
            if is_probable_prime(candidate, rng):
                return candidate


def node_key_rng(seed: int, node_id: int) -> random.Random:
    """The PRNG of one node's key: seeded by SHA-256 of the network seed and the node id."""
    digest = hashlib.sha256(f"ledgermirror-simulator:node-key:{seed}:{node_id}".encode()).digest()
    return random.Random(int.from_bytes(digest, "big"))


def node_private_key(seed: int, node_id: int, bits: int = KEY_BITS) -> rsa.RSAPrivateKey:
    """The RSA key of node ``node_id`` of the network of ``seed``."""
    rng = node_key_rng(seed, node_id)
    small_primes = _small_primes(_SIEVE_LIMIT)
    half = bits // 2
    while True:
        p = random_prime(half, rng, small_primes)
        q = random_prime(bits - half, rng, small_primes)
        if p != q:
            break
    p, q = max(p, q), min(p, q)
    modulus = p * q
    phi = (p - 1) * (q - 1)
    private_exponent = pow(PUBLIC_EXPONENT, -1, phi)
    numbers = rsa.RSAPrivateNumbers(
        p=p,
        q=q,
        d=private_exponent,
        dmp1=private_exponent % (p - 1),
        dmq1=private_exponent % (q - 1),
        iqmp=pow(q, -1, p),
        public_numbers=rsa.RSAPublicNumbers(PUBLIC_EXPONENT, modulus),
    )
    return numbers.private_key()
