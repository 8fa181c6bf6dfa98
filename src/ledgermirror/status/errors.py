"""Errors of the management side, turned into 400/401/404 answers by the HTTP layer and messages by the CLI."""

from __future__ import annotations


class ManageError(Exception):
    status_code = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(ManageError):
    status_code = 400


class Unauthorized(ManageError):
    status_code = 401


class NotFound(ManageError):
    status_code = 404


class Conflict(ManageError):
    status_code = 409
