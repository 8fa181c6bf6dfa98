"""The cyclic garbage collector while an import runs: collected less often.

An import allocates millions of small containers that live for a batch (row dicts, their lists, parsed
records), and almost none of them form cycles. With the interpreter's default thresholds (a young collection every
700 allocations, an older one every 10 young ones) the collector scans the batch's live rows over and over: on the
simulator's mix that was about a fifth of the importer's own CPU (docs/performance.md, "The importer's own CPU").
:func:`import_thresholds` raises the thresholds for the length of an import and restores them after; cycles are
still collected, only later (at most ``IMPORT_THRESHOLDS[0]`` allocations of garbage wait for it).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

IMPORT_THRESHOLDS = (200_000, 20, 100)
"""``gc.set_threshold`` while importing: young collections every 200,000 net allocations (not 700), the middle
generation every 20 of them, the oldest every 100 of those (and, as always, only once its pending objects reach a
quarter of it). Net: a freed container counts off, so a batch whose rows (value tuples and lists since the rows
work, about ten containers a transaction) stay under the threshold until they are freed is never scanned; at
50,000 the young collections scanned every batch's rows, 0.35 s of CPU on the 100 k stream (3.5 µs a
transaction, docs/performance.md "Rows as tuples"). At most that many containers of cyclic garbage wait for a
collection."""


@contextlib.contextmanager
def import_thresholds() -> Iterator[None]:
    """The collector's thresholds at :data:`IMPORT_THRESHOLDS` inside the block, as they were after it."""
    before = gc.get_threshold()
    gc.set_threshold(*IMPORT_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
