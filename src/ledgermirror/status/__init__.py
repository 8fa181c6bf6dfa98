"""The status service: a Statuspage-compatible status page for the network and the mirror.

A separate ASGI app on the mirror's database (schema ``status``). Public JSON under ``/api/v2`` is read through
the read-only role; the management APIs under ``/manage/v1`` and ``/v1/pages/{page_id}`` (Statuspage's v1) write
through the owner connection, as does the evaluator that sets automatic statuses from the mirror's evidence.
Nothing here imports :mod:`ledgermirror.api`.
"""
