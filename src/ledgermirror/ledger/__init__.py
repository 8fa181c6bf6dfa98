"""What the ledger's values mean: entity ids, aliases, timestamps, keys, transaction codes, system files, the
hbar supply, EVM hashing, and the one lazy loader of the HAPI protobuf classes. No I/O, no SQL, and no import
from the rest of the package."""
