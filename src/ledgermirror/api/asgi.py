"""The uvicorn factory for worker processes: settings from the environment, the API's connection URL from
``LEDGERMIRROR_API_DB_URL`` (the ``serve`` command sets it for its workers)."""

from __future__ import annotations

from starlette.applications import Starlette

from ledgermirror import log
from ledgermirror.api.app import create_app
from ledgermirror.settings import Settings


def app_from_env() -> Starlette:
    settings = Settings.from_env()
    log.configure(settings.log_level, settings.log_format)
    dsn = settings.api_db_url or settings.db_url
    if not dsn:
        raise SystemExit("LEDGERMIRROR_API_DB_URL (or LEDGERMIRROR_DB_URL) must be set for API workers")
    return create_app(settings, dsn)
