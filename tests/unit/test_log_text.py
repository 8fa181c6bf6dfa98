"""The text log format keeps a record's structured fields, as the JSON format does."""

from __future__ import annotations

import logging

from ledgermirror.log import TextFormatter


def _record(**extra: object) -> logging.LogRecord:
    record = logging.LogRecord("ledgermirror.importer", logging.INFO, __file__, 1, "imported", None, None)
    record.__dict__.update(extra)
    return record


def test_fields_follow_the_message() -> None:
    text = TextFormatter().format(_record(files=3, transactions=120))
    assert text.endswith("INFO ledgermirror.importer: imported files=3 transactions=120")


def test_no_fields_no_trailing_text() -> None:
    assert TextFormatter().format(_record()).endswith("ledgermirror.importer: imported")


def test_uvicorn_colour_copy_is_not_a_field() -> None:
    assert "color_message" not in TextFormatter().format(_record(color_message="\x1b[36mimported\x1b[0m"))


def test_traceback_stays_below_the_fields() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", None, sys.exc_info())
    record.__dict__["file"] = "a.rcd.gz"
    first, _, rest = TextFormatter().format(record).partition("\n")
    assert first.endswith("x: failed file=a.rcd.gz")
    assert rest.startswith("Traceback") and "ValueError: boom" in rest
