"""The status service's settings, read once from ``LEDGERMIRROR_STATUS_*`` environment variables
(``environment.load``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ledgermirror.environment import NonNegative, Port, Positive, SettingsError, load
from ledgermirror.status.rules import Rules

PREFIX = "LEDGERMIRROR_STATUS_"


@dataclass(frozen=True, slots=True)
class StatusSettings:
    host: str = "127.0.0.1"
    port: Port = 5552
    page_name: str = "Ledger Mirror"
    page_url: str | None = None
    """Public URL of the page (shortlinks are ``<page_url>/incidents/<id>``); unset: the address served
    (``http://<host>:<port>``, see :attr:`public_url`)."""
    time_zone: str = "Etc/UTC"
    cache_seconds: NonNegative = 30
    """Cache-Control max-age of the public JSON, and how long a rendered body is reused in memory."""
    wire: Literal["superset", "subset"] = "superset"
    """``superset``: emit ``under_maintenance`` and the ``maintenance`` indicator; ``subset``: only the four
    documented values of each (components under maintenance shown ``operational``)."""
    pool_max_size: Positive = 4
    max_body_bytes: Positive = 64 * 1024
    """Largest management request body; a larger one is refused with 413 before it is read in full."""
    automation: bool = True
    """Run the evaluator in ``status serve`` (components from the address book, automatic statuses)."""
    evaluate_seconds: Positive = 15
    """The evaluator's schedule (it also runs on every import commit notification)."""
    window: Positive = 30
    """Files a consensus node's status looks back over."""
    missed_degraded: Positive = 3
    """Consecutive files without a node's signature before it is ``degraded_performance``."""
    missed_major: Positive = 10
    """Consecutive files without a node's signature before it is ``major_outage``."""
    lag_degraded_seconds: Positive = 60
    """Importer ``degraded_performance`` when the newest consensus end is this far behind the clock."""
    stall_seconds: Positive = 300
    """Importer ``major_outage`` when no file was imported for this long."""
    rest_readiness_url: str | None = None
    """The REST API's readiness URL (e.g. ``http://127.0.0.1:5551/health/readiness``): its component follows it."""
    grpc_target: str | None = None
    """The gRPC API's ``host:port``: a "gRPC API" component follows whether a channel to it gets ready."""
    auto_incidents: bool = False
    """Open, update and resolve incidents when a rule moves a component to partial or major outage."""
    maintenance_minutes: Positive = 60
    """The expected length of a network upgrade announced by a freeze transaction."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> StatusSettings:
        """The settings of ``env`` (the process's environment when None); a bad value is a one-line
        :class:`~ledgermirror.environment.SettingsError` naming the variable."""
        settings = load(cls, PREFIX, os.environ if env is None else env)
        settings.validate()
        return settings

    def validate(self) -> None:
        """What the types do not say: the time zone is one the system knows."""
        try:
            ZoneInfo(self.time_zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise SettingsError(f"{PREFIX}TIME_ZONE is not a known zone: {self.time_zone!r}") from None

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
    def rules(self) -> Rules:
        """The evaluator's default thresholds (a component's ``rules`` override them)."""
        return Rules(
            self.window, self.missed_degraded, self.missed_major, self.lag_degraded_seconds, self.stall_seconds
        )

    @property
    def superset(self) -> bool:
        return self.wire == "superset"
