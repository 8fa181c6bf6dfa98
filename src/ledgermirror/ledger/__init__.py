"""Ledger value types: entity ids, timestamps, keys and byte encodings. No I/O, no SQL."""
