"""Users of per-user limits: password hashes, the configuration's checks and messages, reading from the
environment or a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgermirror.settings import Settings, SettingsError
from ledgermirror.users import UsersError, hash_password, parse_users, verify_password


def test_hash_and_verify() -> None:
    stored = hash_password("s3cret", iterations=1_000)
    assert stored.startswith("pbkdf2_sha256$1000$")
    assert verify_password("s3cret", stored)
    assert not verify_password("s3cret ", stored)
    assert stored != hash_password("s3cret", iterations=1_000)  # salted
    assert hash_password("x", iterations=1, salt=b"0" * 16) == hash_password("x", iterations=1, salt=b"0" * 16)


def _user(**fields: object) -> dict[str, object]:
    return {"username": "a", "password_hash": hash_password("p", iterations=1), **fields}


@pytest.mark.parametrize(
    ("users", "message"),
    [
        ({"username": "a"}, "users must be an array"),
        (["a"], "users[0] must be an object"),
        ([{"password_hash": "x"}], "users[0] must have a username string"),
        ([{"username": "a"}], "users[0] must have a password_hash string"),
        ([{"username": "a", "password_hash": "plain"}], "a password hash must be pbkdf2_sha256$"),
        ([{"username": "a", "password_hash": "pbkdf2_sha256$1$!!$!!"}], "a password hash has invalid base64"),
        ([_user(limit=0)], "users[0].limit must be a positive integer"),
        ([_user(limit="5")], "users[0].limit must be a positive integer"),
        ([_user(limit=True)], "users[0].limit must be a positive integer"),
        ([_user(), _user()], "Duplicate usernames in users configuration: a"),
    ],
)
def test_invalid_configurations(users: object, message: str) -> None:
    with pytest.raises(UsersError, match=message.replace("$", r"\$").replace("[", r"\[")):
        parse_users(users)


def test_users_from_the_environment_and_a_file(tmp_path: Path) -> None:
    listed = [_user(limit=7)]
    from_file = [{**_user(), "username": "b"}]
    path = tmp_path / "users.json"
    path.write_text(json.dumps(from_file))
    settings = Settings.from_env({"LEDGERMIRROR_USERS": json.dumps(listed), "LEDGERMIRROR_USERS_FILE": str(path)})
    assert [(user.username, user.limit) for user in settings.users] == [("a", 7), ("b", None)]
    assert settings.users_file == path
    assert settings.users[0].verify("p")
    assert Settings.from_env({}).users == ()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"LEDGERMIRROR_USERS": "[oops"}, "LEDGERMIRROR_USERS is not JSON"),
        ({"LEDGERMIRROR_USERS_FILE": "/nonexistent/users.json"}, "cannot read the users file"),
        ({"LEDGERMIRROR_USERS": '[{"username": 1}]'}, "must have a username string"),
    ],
)
def test_bad_settings(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        Settings.from_env(env)


def test_duplicates_across_environment_and_file(tmp_path: Path) -> None:
    path = tmp_path / "users.json"
    path.write_text(json.dumps([_user()]))
    with pytest.raises(SettingsError, match="Duplicate usernames in users configuration: a"):
        Settings.from_env({"LEDGERMIRROR_USERS": json.dumps([_user()]), "LEDGERMIRROR_USERS_FILE": str(path)})
