"""Errors of the data layer, for the layers above to translate (the API answers ``503`` for
:class:`DatabaseUnavailable`); nothing here knows about HTTP."""

from __future__ import annotations


class DatabaseUnavailable(Exception):
    """The database cannot be reached, refused the connection, or a statement ran out of time."""
