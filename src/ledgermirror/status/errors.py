"""Errors of the management side: 400/401/404/409/413 answers in the HTTP layer, messages in the CLI."""

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


class BodyTooLarge(ManageError):
    status_code = 413
