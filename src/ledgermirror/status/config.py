"""The status service's settings, read once from ``LEDGERMIRROR_STATUS_*`` environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

PREFIX = "LEDGERMIRROR_STATUS_"


class StatusSettingsError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class StatusSettings:
    host: str = "127.0.0.1"
    port: int = 5552
    page_name: str = "Ledger Mirror"
    page_url: str | None = None
    """Public URL of the page (shortlinks are ``<page_url>/incidents/<id>``); unset: the address served
    (``http://<host>:<port>``, see :attr:`public_url`)."""
    time_zone: str = "Etc/UTC"
    cache_seconds: int = 30
    """Cache-Control max-age of the public JSON, and how long a rendered body is reused in memory."""
    wire: str = "superset"
    """``superset``: emit ``under_maintenance`` and the ``maintenance`` indicator; ``subset``: only the four
    documented values of each (components under maintenance shown ``operational``)."""
    pool_max_size: int = 4
    max_body_bytes: int = 64 * 1024
    """Largest management request body; a larger one is refused with 413 before it is read in full."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> StatusSettings:
        source = os.environ if env is None else env
        values: dict[str, str | int | None] = {}
        for name in ("host", "page_name", "page_url", "time_zone", "wire"):
            raw = source.get(PREFIX + name.upper())
            if raw:
                values[name] = raw
        for name in ("port", "cache_seconds", "pool_max_size", "max_body_bytes"):
            raw = source.get(PREFIX + name.upper())
            if raw:
                try:
                    values[name] = int(raw)
                except ValueError:
                    raise StatusSettingsError(f"{PREFIX}{name.upper()} must be an integer, not {raw!r}") from None
        settings = cls(**values)  # type: ignore[arg-type]
        settings.validate()
        return settings

    def validate(self) -> None:
        if self.wire not in ("superset", "subset"):
            raise StatusSettingsError(f"{PREFIX}WIRE must be superset or subset, not {self.wire!r}")
        try:
            ZoneInfo(self.time_zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise StatusSettingsError(f"{PREFIX}TIME_ZONE is not a known zone: {self.time_zone!r}") from None
        if self.max_body_bytes < 1:
            raise StatusSettingsError(f"{PREFIX}MAX_BODY_BYTES must be positive")
        if self.cache_seconds < 0:
            raise StatusSettingsError(f"{PREFIX}CACHE_SECONDS must not be negative")

    @property
    def public_url(self) -> str:
        """``page_url`` when configured, else the address actually served (after ``--host``/``--port``)."""
        return self.page_url or self.listen_url

    @property
    def listen_url(self) -> str:
        """``http://<host>:<port>``, the address ``status serve`` listens on."""
        host = f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") else self.host
        return f"http://{host}:{self.port}"

    @property
    def superset(self) -> bool:
        return self.wire == "superset"
