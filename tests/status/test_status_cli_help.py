"""The ``status`` commands' help: correct English, only the options that apply, the allowed
status values, and every argument described."""

from __future__ import annotations

import argparse
import re

import pytest

from ledgermirror.cli import build_parser
from ledgermirror.status.model import (
    INCIDENT_STATES,
    MAINTENANCE_STATES,
    SETTABLE_COMPONENT_STATUSES,
    UNRESOLVED_INCIDENT_STATES,
)


def _children(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def status_parsers() -> dict[str, argparse.ArgumentParser]:
    """Every parser under ``ledgermirror status``, by its command words."""
    found: dict[str, argparse.ArgumentParser] = {}
    pending = [("status", _children(build_parser())["status"])]
    while pending:
        words, parser = pending.pop()
        found[words] = parser
        pending.extend((f"{words} {name}", child) for name, child in _children(parser).items())
    return found


def option_strings(words: str) -> set[str]:
    return {flag for action in status_parsers()[words]._actions for flag in action.option_strings}


def test_no_help_text_puts_a_before_a_vowel() -> None:
    for words, parser in status_parsers().items():
        text = " ".join(parser.format_help().split())
        assert not re.search(r"\ba [aeiou]", text, re.IGNORECASE), (words, text)
    assert "open an incident" in status_parsers()["status incident"].format_help()


@pytest.mark.parametrize(
    ("words", "absent"),
    [
        ("status component add", {"--body", "--component"}),
        ("status component update", {"--body", "--component"}),
        ("status group add", {"--body", "--status"}),
        ("status incident open", {"--description"}),
        ("status incident resolve", {"--name", "--status", "--description", "--component"}),
        ("status incident postmortem", {"--name", "--status", "--description", "--component"}),
        ("status maintenance schedule", {"--status", "--description"}),
        ("status maintenance cancel", {"--name", "--status", "--description", "--component"}),
    ],
)
def test_commands_offer_only_options_that_apply(words: str, absent: set[str]) -> None:
    assert option_strings(words) & absent == set()
    assert "--data" in option_strings(words)


def test_an_option_that_does_not_apply_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["status", "component", "add", "--name", "x", "--body", "y"])
    assert stopped.value.code == 2
    assert "--body" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("words", "values"),
    [
        ("status component add", SETTABLE_COMPONENT_STATUSES),
        ("status component update", SETTABLE_COMPONENT_STATUSES),
        ("status incident open", UNRESOLVED_INCIDENT_STATES),
        ("status incident update", tuple(state for state in INCIDENT_STATES if state != "postmortem")),
        ("status maintenance update", MAINTENANCE_STATES),
    ],
)
def test_help_lists_the_allowed_status_values(
    words: str, values: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    text = " ".join(status_parsers()[words].format_help().split())
    assert "one of: " + ", ".join(values) in text
    with pytest.raises(SystemExit):
        build_parser().parse_args([*words.split(), *(["id"] if "update" in words else []), "--status", "bogus"])
    assert "invalid choice: 'bogus'" in capsys.readouterr().err


def test_every_positional_argument_is_described() -> None:
    for words, parser in status_parsers().items():
        for action in parser._actions:
            if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
                assert action.help, (words, action.dest)
    key_create = " ".join(status_parsers()["status key create"].format_help().split())
    assert "a name for the key" in key_create
