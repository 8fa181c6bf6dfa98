"""The one TTL cache (``ttl_cache.py``) and the one ETag rule (``etag.py``) that the API and the status service
share."""

from __future__ import annotations

from ledgermirror.etag import etag_matches, etag_of
from ledgermirror.ttl_cache import TtlCache


class FakeTime:
    def __init__(self) -> None:
        self.seconds = 100.0

    def __call__(self) -> float:
        return self.seconds


def test_entries_expire_on_the_injected_clock() -> None:
    now = FakeTime()
    cache: TtlCache[str] = TtlCache(10, ttl_seconds=5, now=now)
    cache.put("default", "a")
    cache.put("own", "b", 1)
    assert (cache.get("default"), cache.get("own")) == ("a", "b")
    now.seconds += 1
    assert (cache.get("default"), cache.get("own")) == ("a", None)
    now.seconds += 4
    assert cache.get("default") is None
    assert len(cache) == 0


def test_bounded_least_recently_used_first() -> None:
    cache: TtlCache[int] = TtlCache(2, ttl_seconds=60)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)


def test_no_capacity_or_no_lifetime_keeps_nothing() -> None:
    empty: TtlCache[int] = TtlCache(0, ttl_seconds=60)
    empty.put("a", 1)
    timeless: TtlCache[int] = TtlCache(5)
    timeless.put("a", 1)
    timeless.put("b", 2, 0)
    assert (empty.get("a"), timeless.get("a"), timeless.get("b")) == (None, None, None)
    timeless.put("c", 3, 10)
    timeless.clear()
    assert timeless.get("c") is None


def test_a_value_read_before_a_clear_is_not_kept() -> None:
    cache: TtlCache[str] = TtlCache(10, ttl_seconds=60)
    before = cache.generation
    cache.clear()  # a write lands while the value is being read
    cache.put("stale", "old", read_in=before)
    cache.put("fresh", "new", read_in=cache.generation)
    cache.put("unstamped", "any")
    assert (cache.get("stale"), cache.get("fresh"), cache.get("unstamped")) == (None, "new", "any")


def test_etag() -> None:
    tag = etag_of(b"body")
    assert tag.startswith('"') and tag.endswith('"') and len(tag) == 34
    assert tag == etag_of(b"body") != etag_of(b"other")
    assert etag_matches(tag, tag)
    assert etag_matches(f'"x", W/{tag}', tag)
    assert etag_matches(" * ", tag)
    assert not etag_matches(None, tag)
    assert not etag_matches("", tag)
    assert not etag_matches('"x"', tag)
