"""npm packages the tests run on the machine's Node.js (the JavaScript SDK, solc-js), installed once into
``.cache/`` (ignored by git) and shared by every test that needs one. An install holds a lock on its folder, so
two test processes (``pytest -n 2``) never install into the same folder at once."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

import pytest

CACHE = Path(__file__).resolve().parents[1] / ".cache"
_OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "network")


def installed(folder: str, package: str, version: str, timeout: float) -> Path:
    """The folder whose ``node_modules`` holds ``package@version``, installed on first use; skips, saying why,
    only when Node.js or npm is missing or the registry cannot be reached."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js or npm is not installed")
    prefix = CACHE / folder / version
    prefix.mkdir(parents=True, exist_ok=True)
    with (prefix / ".install-lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if (prefix / "node_modules" / package / "package.json").is_file():
            return prefix
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), f"{package}@{version}"],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    if done.returncode != 0:
        if any(text in done.stderr for text in _OFFLINE):
            pytest.skip(f"the npm registry cannot be reached: {done.stderr.strip().splitlines()[-1]}")
        raise AssertionError(f"npm install failed: {done.stderr}")
    return prefix
