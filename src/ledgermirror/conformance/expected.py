"""The expected-failures list: one line per URL check that may fail, with the reason a user would accept.

Format (UTF-8 text): ``<check id><TAB><reason>``; blank lines and lines starting with ``#`` are ignored. The
list is a ratchet: a listed check that passes, or an unlisted one that fails, fails the run.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

HEADER = """\
# Conformance checks that are allowed to fail, one per line: <check id><TAB><reason>.
# A check id is "<spec file relative to the specs folder> #<n> <url>[ [matrix variant]]".
# Regenerate entries with: ledgermirror conformance --specs DIR --update-expected
# (existing reasons are kept; see docs/conformance.md before adding a deliberate deviation).
"""


def bundled_path() -> Path:
    return Path(str(resources.files("ledgermirror.conformance") / "expected-failures.txt"))


def read(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    entries: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        check_id, tab, reason = line.partition("\t")
        if not tab or not reason.strip():
            raise ValueError(f"{path}:{number}: expected '<check id><TAB><reason>'")
        entries[check_id] = reason.strip()
    return entries


def write(path: Path, entries: dict[str, str]) -> None:
    lines = [f"{check_id}\t{reason}" for check_id, reason in sorted(entries.items())]
    path.write_text(HEADER + "\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
