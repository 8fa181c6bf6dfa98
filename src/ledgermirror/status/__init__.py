"""The status service: a Statuspage v2-compatible status page for the network and the mirror.

A separate ASGI app on the mirror's database (schema ``status``). Public JSON under ``/api/v2`` is read through
the read-only role; the management API under ``/manage`` writes through the owner connection. Nothing here
imports :mod:`ledgermirror.api`.
"""
