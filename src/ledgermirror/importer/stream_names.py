"""Stream file names: the consensus instant they carry and the names of a file's companions.

A name is an ISO-8601 UTC instant with ``:`` replaced by ``_`` plus an extension, e.g.
``2022-07-13T08_46_11.304284003Z.rcd.gz``; the fraction has 9 digits from the network, fewer in old files.
"""

from __future__ import annotations

import calendar
import posixpath
import re
import time

_INSTANT = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2})_(\d{2})_(\d{2})(?:\.(\d{1,9}))?Z")
_SIDECAR_ID_DIGITS = 2


def instant_of(name: str) -> int:
    """Nanoseconds since the epoch named by a stream file name (any extension, any folder)."""
    base = posixpath.basename(name)
    match = _INSTANT.match(base)
    if match is None:
        raise ValueError(f"not a stream file name: {name!r}")
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    fraction = match.group(7) or ""
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    return seconds * 1_000_000_000 + int(fraction.ljust(9, "0"))


def stem_of(nanos: int) -> str:
    """The name stem of an instant, 9 fraction digits: ``2022-07-13T08_46_11.304284003Z``."""
    seconds, fraction = divmod(nanos, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H_%M_%S", time.gmtime(seconds)) + f".{fraction:09d}Z"


def data_name_of_signature(signature_name: str, signature_version: int) -> str:
    """The record file a signature file signs: ``_sig`` stripped, and ``.gz`` added from v6 on."""
    if not signature_name.endswith("_sig"):
        raise ValueError(f"not a signature file name: {signature_name!r}")
    data_name = signature_name[: -len("_sig")]
    return data_name + ".gz" if signature_version >= 6 else data_name


def sidecar_name(record_name: str, sidecar_id: int) -> str:
    """``<ts>_NN.rcd.gz`` for sidecar ``sidecar_id`` of the record file ``<ts>.rcd[.gz]`` (same folder)."""
    base = posixpath.basename(record_name)
    stem = base.split(".rcd", 1)[0]
    return f"{stem}_{sidecar_id:0{_SIDECAR_ID_DIGITS}d}.rcd.gz"
