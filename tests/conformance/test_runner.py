"""The conformance runner judges correctly: it passes right answers, fails wrong ones, and keeps the ratchet."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from ledgermirror.conformance import expected
from ledgermirror.conformance.cases import discover, folder_headers, load_checks
from ledgermirror.conformance.compare import diff_json, judge
from ledgermirror.conformance.runner import Report, fake_time_ns, run, settings_for, update_expected

SPECS = Path(__file__).resolve().parents[3] / "shared" / "upstream" / "specs"

TOKEN_SETUP: dict[str, Any] = {
    "entities": [{"num": 5, "type": "TOKEN"}],
    "tokens": [{"token_id": "0.0.5", "symbol": "FIVE", "created_timestamp": 1}],
}
RIGHT_BODY: dict[str, Any] = {
    "tokens": [
        {
            "admin_key": None,
            "decimals": 1000,
            "metadata": "",
            "name": "Token name",
            "symbol": "FIVE",
            "token_id": "0.0.5",
            "type": "FUNGIBLE_COMMON",
        }
    ],
    "links": {"next": None},
}


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        ({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}, True),
        ({"a": [1, 2]}, {"a": [2, 1]}, False),
        ({"a": 1}, {"a": 1, "b": None}, False),
        ({"a": 1, "b": None}, {"a": 1}, False),
        ({"a": True}, {"a": 1}, False),
        ({"a": "1"}, {"a": 1}, False),
        ({"a": 1}, {"a": 1.0}, True),
        ({"a": 9223372036854775807}, {"a": 9223372036854775806}, False),
        ([], {}, False),
    ],
)
def test_body_comparison(left: Any, right: Any, equal: bool) -> None:
    assert (diff_json(left, right) == []) is equal


def test_judge_headers_only_on_success() -> None:
    common: dict[str, Any] = {"expected_body": {}, "expected_headers": {"cache-control": "public, max-age=10"}}
    ok = judge(
        expected_status=200,
        status=200,
        headers={"content-type": "application/json", "Cache-Control": "public, max-age=10"},
        body=b"{}",
        **common,
    )
    assert ok == []
    wrong = judge(
        expected_status=200,
        status=200,
        headers={"content-type": "application/json", "cache-control": "public, max-age=1"},
        body=b"{}",
        **common,
    )
    assert wrong == ["header cache-control: expected 'public, max-age=10', got 'public, max-age=1'"]
    error = judge(
        expected_status=400, status=400, headers={"content-type": "application/json"}, body=b"{}", **common
    )
    assert error == []


def test_settings_for_maps_reference_config() -> None:
    settings, unsupported = settings_for(
        {"response": {"limit": {"default": 3, "max": 4}}, "query": {"topicMessageLookup": True, "notASetting": 1}}
    )
    assert (settings.limit_default, settings.limit_max) == (3, 4)
    assert settings.max_repeated_query_parameters == 8
    assert settings.topic_message_lookup is True
    assert unsupported == ["query.notASetting"]


def test_fake_time() -> None:
    assert fake_time_ns({"features": {"fakeTime": 1600000000}}) == 1600000000 * 10**9
    assert fake_time_ns({"features": {"fakeTime": "2009-02-13T23:40:00Z"}}) == 1234568400 * 10**9
    assert fake_time_ns({}) is None


def write_spec(root: Path, name: str, spec: dict[str, Any]) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(spec))


def test_check_expansion_and_headers(tmp_path: Path) -> None:
    write_spec(tmp_path, "tokens/responseHeaders.json", {"cache-control": "public, max-age=10"})
    write_spec(
        tmp_path,
        "tokens/deep/x.json",
        {
            "setup": {},
            "tests": [
                {"urls": ["/api/v1/tokens?a", "/api/v1/tokens?b"], "responseStatus": 200, "responseJson": {}},
                {"url": "/api/v1/tokens?c", "responseStatus": 200, "responseJson": {}, "responseHeaders": {}},
            ],
        },
    )
    checks = load_checks(tmp_path, tmp_path / "tokens/deep/x.json")
    assert [check.id for check in checks] == [
        "tokens/deep/x.json #1 /api/v1/tokens?a",
        "tokens/deep/x.json #2 /api/v1/tokens?b",
        "tokens/deep/x.json #3 /api/v1/tokens?c",
    ]
    assert checks[0].headers == {"cache-control": "public, max-age=10"}
    assert checks[2].headers == {}
    assert folder_headers(tmp_path, tmp_path / "other/y.json") == {"cache-control": "public, max-age=1"}
    assert discover(tmp_path) == [tmp_path / "tokens/deep/x.json"]


def test_url_given_as_a_list_is_one_request_joined_by_commas(tmp_path: Path) -> None:
    # The reference's harness (rest/__tests__/integration/template.js) takes `test.urls || [test.url]` and hands
    # each item to its HTTP client, which sends an array as its items joined by commas; some of the reference's
    # own spec files give `url` as a list and write their expectations for that request.
    write_spec(
        tmp_path,
        "accounts/list-url.json",
        {
            "setup": {},
            "tests": [
                {"url": ["/api/v1/accounts?account.id=0.0.1", "account.id=0.0.2"], "responseStatus": 400},
                {"urls": [["/api/v1/tokens?limit=1", "2"], "/api/v1/tokens"], "responseStatus": 200},
            ],
        },
    )
    checks = load_checks(tmp_path, tmp_path / "accounts/list-url.json")
    assert [check.url for check in checks] == [
        "/api/v1/accounts?account.id=0.0.1,account.id=0.0.2",
        "/api/v1/tokens?limit=1,2",
        "/api/v1/tokens",
    ]
    assert all(check.in_scope for check in checks)


def run_quiet(root: Path, **kwargs: Any) -> tuple[Report, str]:
    out = io.StringIO()
    report = run(root, out=out, **kwargs)
    return report, out.getvalue()


def test_runner_passes_right_and_fails_wrong_expectations(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    write_spec(specs, "tokens/responseHeaders.json", {"cache-control": "public, max-age=10"})
    right = {"setup": TOKEN_SETUP, "url": "/api/v1/tokens", "responseStatus": 200, "responseJson": RIGHT_BODY}
    wrong_body = json.loads(json.dumps(RIGHT_BODY))
    wrong_body["tokens"][0]["symbol"] = "SIX"
    write_spec(specs, "tokens/right.json", right)
    write_spec(specs, "tokens/wrong.json", {**right, "responseJson": wrong_body})
    write_spec(specs, "tokens/wrong-status.json", {**right, "responseStatus": 404})
    write_spec(specs, "other/out-of-scope.json", {**right, "url": "/api/v1/unknown/0.0.5"})
    report, text = run_quiet(specs, expected_file=tmp_path / "none.txt")
    by_spec = {outcome.check.spec: outcome for outcome in report.outcomes}
    assert by_spec["tokens/right.json"].passed
    assert by_spec["tokens/wrong.json"].problems == ['$.tokens[0].symbol: expected "SIX", got "FIVE"']
    assert by_spec["tokens/wrong-status.json"].problems[0] == "status: expected 404, got 200"
    assert report.skipped == 1
    assert not report.ok
    assert "FAIL tokens/wrong.json (0/1 checks pass)" in text
    assert text.rstrip().splitlines()[-1] == "1 passed, 2 failed, 1 skipped"


def test_ratchet(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    right = {
        "setup": TOKEN_SETUP,
        "url": "/api/v1/tokens",
        "responseStatus": 200,
        "responseJson": RIGHT_BODY,
        "responseHeaders": {"cache-control": "public, max-age=10"},
    }
    write_spec(specs, "tokens/right.json", right)
    write_spec(specs, "tokens/wrong.json", {**right, "responseStatus": 500})
    listed = tmp_path / "expected.txt"
    expected.write(listed, {"tokens/wrong.json #1 /api/v1/tokens": "deliberate: because"})
    report, _ = run_quiet(specs, expected_file=listed)
    assert report.ok
    expected.write(listed, {"tokens/right.json #1 /api/v1/tokens": "endpoint not built yet"})
    report, text = run_quiet(specs, expected_file=listed)
    assert not report.ok
    assert "now passes, remove from the expected failures: tokens/right.json #1 /api/v1/tokens" in text
    assert text.rstrip().splitlines()[-1] == "0 passed, 2 failed, 0 skipped"
    assert update_expected(report, listed, "new reason") == 1
    assert expected.read(listed) == {"tokens/wrong.json #1 /api/v1/tokens": "new reason"}


def test_expected_list_format(tmp_path: Path) -> None:
    path = tmp_path / "list.txt"
    path.write_text("# comment\n\nspec.json #1 /api/v1/x\tbecause\n")
    assert expected.read(path) == {"spec.json #1 /api/v1/x": "because"}
    path.write_text("spec.json #1 /api/v1/x no tab\n")
    with pytest.raises(ValueError, match="TAB"):
        expected.read(path)
    assert "tokens/all-params.json" in expected.bundled_path().read_text()


@pytest.mark.skipif(not SPECS.is_dir(), reason="the reference specs are not beside this checkout")
def test_every_tokens_list_spec_passes_in_reference_pagination_mode() -> None:
    report, text = run_quiet(SPECS, only=["tokens/*", "route/*"], reference_pagination=True)
    failures = [outcome.check.id for outcome in report.outcomes if not outcome.passed]
    assert failures == [], text
    assert len(report.outcomes) >= 58


def test_transaction_hash_v1_matrix_nulls_the_hash_payers(tmp_path: Path) -> None:
    """The matrix runs every check twice; the second run's setup ends with no payer on the hash rows, so a hash
    lookup no longer narrows to the first row's payer (here: 0.0.1002 pays the older row, 0.0.1001's nonce 5
    child is found only without payers)."""
    digest = "ab" * 48
    spec = {
        "matrix": "transactionHashV1Matrix.js",
        "setup": {
            "transactions": [
                {"consensus_timestamp": "1000", "payerAccountId": "0.0.1002", "transaction_hash": digest},
                {
                    "consensus_timestamp": "2000",
                    "payerAccountId": "0.0.1001",
                    "nonce": 5,
                    "transaction_hash": digest,
                },
            ]
        },
        "url": f"/api/v1/transactions/{digest}?nonce=5",
        "responseStatus": 404,
        "responseJson": {"_status": {"messages": [{"message": "Not found"}]}},
    }
    specs = tmp_path / "specs"
    write_spec(specs, "transactions/{id}/hash.json", spec)
    checks = load_checks(specs, specs / "transactions/{id}/hash.json")
    assert [check.id for check in checks] == [
        f"transactions/{{id}}/hash.json #1 /api/v1/transactions/{digest}?nonce=5",
        f"transactions/{{id}}/hash.json #2 /api/v1/transactions/{digest}?nonce=5 [transactionHashV1]",
    ]
    assert all(check.config == {} for check in checks)
    report, _ = run_quiet(specs, expected_file=tmp_path / "none.txt")
    default, nulled = report.outcomes
    assert default.passed
    assert nulled.problems[0] == "status: expected 404, got 200"
