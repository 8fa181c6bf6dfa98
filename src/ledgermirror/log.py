"""Logging on stderr: one JSON object per line for machines, plain text for people.

The format ``auto`` (the default) picks ``text`` when stderr is a terminal and ``json`` otherwise (a file, a
pipe, a container's log collector)."""

from __future__ import annotations

import logging
import sys
import time
from typing import Any, TextIO

import orjson

_RESERVED = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's copy of the message with ANSI colour codes
}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _RESERVED and not key.startswith("_"):
                payload[key] = value
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(payload, default=str).decode()


class TextFormatter(logging.Formatter):
    """For people: time, level, logger and message, then the record's structured fields as ``key=value``
    (the same fields the JSON format carries, so nothing is lost on a terminal)."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        fields = [
            f"{key}={value}"
            for key, value in record.__dict__.items()
            if key not in _RESERVED and not key.startswith("_")
        ]
        if not fields:
            return text
        head, newline, rest = text.partition("\n")  # a traceback stays below the fields
        return head + " " + " ".join(fields) + newline + rest


def resolve(fmt: str, stream: TextIO | None = None) -> str:
    """``json`` or ``text``: ``auto`` is ``text`` on a terminal, else ``json``; anything else but ``text`` is
    ``json``."""
    if fmt == "auto":
        target = sys.stderr if stream is None else stream
        return "text" if target.isatty() else "json"
    return "text" if fmt == "text" else "json"


def configure(level: str, fmt: str) -> str:
    """Log to stderr in ``fmt`` (``auto``, ``json`` or ``text``); returns the format chosen."""
    fmt = resolve(fmt)
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        formatter: logging.Formatter = JsonFormatter()
        formatter.converter = time.gmtime
    else:
        formatter = TextFormatter()
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("pgserver").setLevel(logging.WARNING)
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    return fmt
