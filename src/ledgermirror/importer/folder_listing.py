"""A local folder's file names after a cursor, scanned once for several pages while the folder does not change.

A stream kept in a local folder has every file of a node in one folder (tens of thousands of names a day), and
the importer asks for the next page of signature files after its cursor again and again. Scanning the whole
folder for each page cost 160 ms on a folder of 100,000 files (the simulator's ten million transactions). So a
scan keeps the names of :data:`KEPT_PAGES` pages after its cursor, and the next pages are served from them while
the folder's modification time (``st_mtime_ns``, which adding or removing an entry changes) is the one it had
when it was scanned.

Only a folder that had not changed for :data:`SETTLED_NS` before the scan is kept: an entry added within the same
tick of the file system's clock as the scan (FAT's tick is 2 s) would leave the modification time as it was, so a
folder still being written to is scanned again on each call, as before. A later change moves the time past the
kept one. (A network file system that caches attributes can report a change late; the names are then late by
as much, never lost.)
"""

from __future__ import annotations

import bisect
import os
import time
from dataclasses import dataclass

SETTLED_NS = 3_000_000_000
"""How long a folder must have been unchanged when it is scanned for its names to be kept."""
KEPT_PAGES = 10
"""Pages of names a scan keeps after its cursor (a bound on the memory of a folder of millions of files)."""


@dataclass(frozen=True, slots=True)
class _Kept:
    changed: int
    """The folder's ``st_mtime_ns`` when it was scanned."""
    after: str | None
    """The names kept sort after this one (None: from the first)."""
    names: list[str]
    """Sorted."""
    complete: bool
    """The names run to the folder's last."""


class FolderListings:
    """Sorted file names of folders (see the module text); ``scans`` counts the folders actually read."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, str], _Kept] = {}
        self.scans = 0

    def names_after(self, folder: str, after: str | None, suffix: str, limit: int) -> list[str]:
        """The first ``limit`` names of files in ``folder`` that end with ``suffix`` and sort after ``after`` (any
        when None), in order; none when the folder does not exist."""
        try:
            changed = os.stat(folder).st_mtime_ns
        except (FileNotFoundError, NotADirectoryError):
            self._kept.pop((folder, suffix), None)
            return []
        kept = self._kept.get((folder, suffix))
        if kept is not None and kept.changed == changed and (kept.after is None or (after or "") >= kept.after):
            start = 0 if after is None else bisect.bisect_right(kept.names, after)
            found = kept.names[start : start + limit]
            if len(found) == limit or kept.complete:
                return found
        return self._scan(folder, changed, after, suffix, limit)

    def _scan(self, folder: str, changed: int, after: str | None, suffix: str, limit: int) -> list[str]:
        started = time.time_ns()
        self.scans += 1
        try:
            with os.scandir(folder) as entries:
                names = sorted(
                    entry.name
                    for entry in entries
                    if entry.name.endswith(suffix) and (after is None or entry.name > after) and entry.is_file()
                )
        except (FileNotFoundError, NotADirectoryError):
            self._kept.pop((folder, suffix), None)
            return []
        if changed < started - SETTLED_NS:
            kept = limit * KEPT_PAGES
            self._kept[(folder, suffix)] = _Kept(changed, after, names[:kept], len(names) <= kept)
        else:
            self._kept.pop((folder, suffix), None)
        return names[:limit]
