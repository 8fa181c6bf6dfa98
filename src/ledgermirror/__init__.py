"""Ledger Mirror: a fast, honest, wire-compatible mirror for Hiero/Hedera-style ledgers."""

__version__ = "0.1.0"
