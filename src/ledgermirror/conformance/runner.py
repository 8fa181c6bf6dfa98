"""``ledgermirror conformance``: every URL check of the reference's spec files, through our in-process app.

One throwaway embedded PostgreSQL and one app serve the whole run. For each check: reset the data, load the
spec's setup, apply its config and fake clock, send the request, judge the reply. Checks outside our product's
routes are skipped and counted; the expected-failures list turns the rest into a ratchet.
"""

from __future__ import annotations

import asyncio
import dataclasses
import fnmatch
import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import asyncpg

from ledgermirror.api.app import create_app
from ledgermirror.api.context import AppContext
from ledgermirror.clock import FixedClock, SystemClock
from ledgermirror.conformance import expected as expected_list
from ledgermirror.conformance.cases import HASH_PAYER_NULLED, Check, SpecError, discover, load_checks
from ledgermirror.conformance.compare import judge
from ledgermirror.conformance.inprocess import Lifespan, get
from ledgermirror.conformance.loader import LoaderError, load_setup
from ledgermirror.db.reset import reset
from ledgermirror.db.sql import template
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings
from ledgermirror.users import ApiUser, hash_password

BASELINE = Settings(
    max_repeated_query_parameters=8,
    enable_delegation_address=True,
    response_cache_entries=0,
    contract_result_defaults=False,  # the spec files predate the reference's defaults (0.157)
)
"""The reference harness's test configuration, in our settings."""
NULL_HASH_PAYERS = template("update transaction_hash set payer_account_id = null")
"""The ``transactionHashV1`` matrix's post-setup step: hash rows as the older schema wrote them."""

_CONFIG_KEYS: dict[tuple[str, ...], str] = {
    ("response", "limit", "default"): "limit_default",
    ("response", "limit", "max"): "limit_max",
    ("query", "maxRepeatedQueryParameters"): "max_repeated_query_parameters",
    ("response", "enableDelegationAddress"): "enable_delegation_address",
    ("response", "limit", "tokenBalance", "multipleAccounts"): "token_balance_limit_multiple_accounts",
    ("response", "limit", "tokenBalance", "singleAccount"): "token_balance_limit_single_account",
    ("query", "bindTimestampRange"): "bind_timestamp_range",
    ("query", "maxTransactionsTimestampRangeNs"): "max_transactions_timestamp_range_ns",
    ("query", "topicMessageLookup"): "topic_message_lookup",
}


@dataclass(slots=True)
class Outcome:
    check: Check
    problems: list[str]
    expected_reason: str | None = None

    @property
    def passed(self) -> bool:
        return not self.problems


@dataclass(slots=True)
class Report:
    outcomes: list[Outcome]
    skipped: int
    seconds: float

    @property
    def unexpected_failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.passed and o.expected_reason is None]

    @property
    def unexpected_passes(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.passed and o.expected_reason is not None]

    @property
    def ok(self) -> bool:
        return not self.unexpected_failures and not self.unexpected_passes


def settings_for(config: dict[str, Any], base: Settings = BASELINE) -> tuple[Settings, list[str]]:
    """Map the reference's ``hiero.mirror.rest.*`` overrides onto our settings; report keys we lack."""
    changes: dict[str, Any] = {}
    unsupported: list[str] = []

    def walk(prefix: tuple[str, ...], node: Any) -> None:
        if prefix == ("users",) and isinstance(node, list):
            changes["users"] = spec_users(node)
        elif isinstance(node, dict):
            for key, value in node.items():
                walk((*prefix, key), value)
        elif prefix in _CONFIG_KEYS:
            changes[_CONFIG_KEYS[prefix]] = node
        else:
            unsupported.append(".".join(prefix))

    walk((), config)
    return dataclasses.replace(base, **changes), unsupported


SPEC_HASH_ITERATIONS = 1_000
"""PBKDF2 rounds for the specs' users: they are hashed per check, so cheaply (the check is the same)."""


def spec_users(entries: list[Any]) -> tuple[ApiUser, ...]:
    """The reference's ``users`` config (plain passwords) as our users (password hashes)."""
    return tuple(
        ApiUser(
            str(entry["username"]),
            hash_password(str(entry["password"]), iterations=SPEC_HASH_ITERATIONS),
            entry.get("limit"),
        )
        for entry in entries
    )


def fake_time_ns(setup: dict[str, Any]) -> int | None:
    value = setup.get("features", {}).get("fakeTime")
    if value is None:
        return None
    if isinstance(value, int | float):
        return int(value * 1_000_000_000)
    return int(datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp() * 1_000_000_000)


def collect(root: Path, only: Sequence[str]) -> tuple[list[Check], int]:
    checks: list[Check] = []
    skipped = 0
    for path in discover(root):
        name = path.relative_to(root).as_posix()
        if only and not any(fnmatch.fnmatch(name, pattern) for pattern in only):
            continue
        for check in load_checks(root, path):
            if check.in_scope:
                checks.append(check)
            else:
                skipped += 1
    return checks, skipped


async def run_checks(checks: list[Check], owner_url: str, api_url: str, base: Settings) -> list[Outcome]:
    app = create_app(base, api_url)
    ctx: AppContext = app.state.ctx
    outcomes: list[Outcome] = []
    conn = await asyncpg.connect(owner_url)
    try:
        async with Lifespan(app):
            for check in checks:
                outcomes.append(await _run_one(check, app, ctx, conn, base))
    finally:
        await conn.close()
    return outcomes


async def _run_one(check: Check, app: Any, ctx: AppContext, conn: asyncpg.Connection, base: Settings) -> Outcome:
    await reset(conn)
    settings, unsupported = settings_for(check.config, base)
    try:
        await load_setup(conn, check.setup, spec=check.spec, topic_message_lookup=settings.topic_message_lookup)
    except LoaderError as error:
        return Outcome(check, [f"setup: {error}"])
    if check.variant == HASH_PAYER_NULLED:
        await conn.execute(NULL_HASH_PAYERS.text)
    fake = fake_time_ns(check.setup)
    clock = SystemClock() if fake is None else FixedClock(fake)
    app.state.ctx = AppContext(settings, clock, ctx.db)  # the spec's config, an empty response cache
    reply = await get(app, check.url, check.request_headers)
    problems = judge(
        expected_status=check.status,
        expected_body=check.body,
        expected_headers=check.headers,
        status=reply.status,
        headers=reply.headers,
        body=reply.body,
    )
    if problems and unsupported:
        problems.append(f"config not supported: {', '.join(unsupported)}")
    return Outcome(check, problems)


def run(
    specs: Path,
    *,
    only: Sequence[str] = (),
    expected_file: Path | None = None,
    out: TextIO,
    verbose: bool = False,
    reference_pagination: bool = False,
) -> Report:
    """Run the checks; ``reference_pagination`` uses the reference's "a full page has a next link" rule."""
    started = time.monotonic()
    base = dataclasses.replace(BASELINE, pagination_probe=not reference_pagination)
    checks, skipped = collect(specs, only)
    expected = expected_list.read(expected_file or expected_list.bundled_path())
    with tempfile.TemporaryDirectory(prefix="ledgermirror-conformance-") as folder:
        prepared = prepare(dataclasses.replace(base, data_dir=Path(folder)), durable=False)
        try:
            outcomes = asyncio.run(run_checks(checks, prepared.owner_url, prepared.api_url, base))
        finally:
            prepared.stop()
    for outcome in outcomes:
        outcome.expected_reason = expected.get(outcome.check.id)
    report = Report(outcomes, skipped, time.monotonic() - started)
    print_report(report, out, verbose=verbose)
    return report


def print_report(report: Report, out: TextIO, *, verbose: bool) -> None:
    by_file: dict[str, list[Outcome]] = {}
    for outcome in report.outcomes:
        by_file.setdefault(outcome.check.spec, []).append(outcome)
    for name, outcomes in by_file.items():
        failed = [o for o in outcomes if not o.passed]
        surprising = [o for o in outcomes if (not o.passed) != (o.expected_reason is not None)]
        if not failed:
            label = "PASS"
        elif not surprising:
            label = "XFAIL"
        else:
            label = "FAIL"
        print(f"{label} {name} ({len(outcomes) - len(failed)}/{len(outcomes)} checks pass)", file=out)
        for outcome in outcomes:
            if outcome.passed and outcome.expected_reason is not None:
                print(f"    now passes, remove from the expected failures: {outcome.check.id}", file=out)
            elif not outcome.passed and (verbose or outcome.expected_reason is None):
                print(f"    {outcome.check.id}", file=out)
                for problem in outcome.problems:
                    print(f"        {problem}", file=out)
    passed = sum(o.passed for o in report.outcomes)
    expected_failures = sum(not o.passed and o.expected_reason is not None for o in report.outcomes)
    print(
        f"conformance: {len(report.outcomes)} checks in scope, {expected_failures} expected failures, "
        f"{len(report.unexpected_failures)} unexpected failures, {len(report.unexpected_passes)} unexpected "
        f"passes, {report.skipped} skipped (out of scope), {report.seconds:.1f} s",
        file=out,
    )
    # The closing line in the test runners' form: an expected failure is not a failure (pytest's xfail); what
    # breaks the ratchet (an unexpected failure, or a listed check that now passes) is.
    broken = len(report.unexpected_failures) + len(report.unexpected_passes)
    print(f"{passed - len(report.unexpected_passes)} passed, {broken} failed, {report.skipped} skipped", file=out)


def write_json(report: Report, path: Path) -> None:
    rows = [
        {
            "id": o.check.id,
            "spec": o.check.spec,
            "url": o.check.url,
            "passed": o.passed,
            "expected_failure": o.expected_reason,
            "problems": o.problems,
        }
        for o in report.outcomes
    ]
    path.write_text(json.dumps({"skipped": report.skipped, "checks": rows}, indent=1, ensure_ascii=False))


def update_expected(report: Report, path: Path, default_reason: str) -> int:
    """Rewrite the list to the current failures, keeping known reasons. Returns the number of entries."""
    current = expected_list.read(path)
    ran = {o.check.id for o in report.outcomes}
    entries = {check_id: reason for check_id, reason in current.items() if check_id not in ran}
    for outcome in report.outcomes:
        if not outcome.passed:
            entries[outcome.check.id] = current.get(outcome.check.id) or default_reason
    expected_list.write(path, entries)
    return len(entries)


__all__ = ["SpecError", "run", "update_expected", "write_json"]
