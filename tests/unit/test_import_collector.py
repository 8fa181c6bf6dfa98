"""importer/collector.py: the collector's thresholds while an import runs, restored after (even on an error)."""

from __future__ import annotations

import gc

import pytest

from ledgermirror.importer.collector import IMPORT_THRESHOLDS, import_thresholds


def test_thresholds_inside_and_restored_after() -> None:
    before = gc.get_threshold()
    with import_thresholds():
        assert gc.get_threshold() == IMPORT_THRESHOLDS
        assert gc.isenabled()
    assert gc.get_threshold() == before


def test_restored_after_an_error() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), import_thresholds():
        raise RuntimeError("stop")
    assert gc.get_threshold() == before
